// `npm run build`: entry.js bundled into ../echarts-<version>-app.esm.min.js, one ES module.
import { readFileSync } from "node:fs";
import { build } from "esbuild";

const { version } = JSON.parse(readFileSync(new URL("node_modules/echarts/package.json", import.meta.url)));
await build({
  entryPoints: ["entry.js"],
  bundle: true,
  format: "esm",
  minify: true,
  legalComments: "none",
  banner: {
    js: `/*! Apache ECharts ${version} (Apache License 2.0, see echarts-LICENSE.txt): the parts the app draws, built from build/entry.js */`,
  },
  outfile: `../echarts-${version}-app.esm.min.js`,
});
