"""The app's ECharts module against another build of ECharts, in headless Chromium:
`python -m toolkit.bench.chart_module --vs PATH [--rounds N]`.

`PATH` is the peer, for instance the whole library as ECharts' npm package ships it
(`package/dist/echarts.esm.min.js` of `npm pack echarts@6.1.0`). Each round opens a fresh
browser (empty cache) once per module, in turn, and times in the page: importing the module,
then drawing the app's three warm-up charts (`assets.WARM_OPTIONS`); then the page is loaded
again, the module now in the browser's cache, and timed the same way. Prints the medians of
each and their ratio to the peer's.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ..ui import assets
from .app_server import browser
from .feed_ingest import folder_server

__all__ = ["main"]

_PAGE = """<!doctype html><title>chart module</title><div id="box" style="width:480px;height:320px"></div>
<script type="module">
const started = performance.now();
const echarts = await import(new URLSearchParams(location.search).get("module"));
const imported = performance.now();
for (const option of await (await fetch("./warm.json")).json()) {
  const chart = echarts.init(document.getElementById("box"));
  chart.setOption(option);
  chart.dispose();
}
window.timed = { import: imported - started, draw: performance.now() - imported };
</script>"""
_TIMES = ("import", "draw", "import, cached", "draw, cached")


def _timed(driver: Any, url: str) -> dict[str, float]:
    driver.get(url)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        timed = driver.execute_script("return window.timed")
        if timed:
            return timed
        time.sleep(0.02)
    raise TimeoutError(f"{url}: the charts were not drawn in 30 s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.bench.chart_module", description=__doc__.split("\n\n")[0])
    parser.add_argument("--vs", required=True, type=Path, help="the peer: another ECharts ES module")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    site = Path(tempfile.mkdtemp(prefix="edt-bench-charts-"))
    modules = {"the app's module": assets.ECHARTS_FILE, f"peer: {args.vs.name}": args.vs}
    for number, path in enumerate(modules.values()):
        shutil.copyfile(path, site / f"module{number}.js")
    shutil.copyfile(assets.WARM_OPTIONS, site / "warm.json")
    (site / "index.html").write_text(_PAGE)
    server, base = folder_server(site)
    times: dict[str, list[tuple[float, ...]]] = {name: [] for name in modules}
    try:
        for _ in range(args.rounds):
            for number, name in enumerate(modules):
                url = f"{base}/index.html?module=./module{number}.js"
                with browser() as driver:
                    first, again = _timed(driver, url), _timed(driver, f"{url}&again")
                times[name].append((first["import"], first["draw"], again["import"], again["draw"]))
    finally:
        server.shutdown()
        shutil.rmtree(site, ignore_errors=True)
    medians = {name: [statistics.median(column) for column in zip(*rows)] for name, rows in times.items()}
    peer = medians[f"peer: {args.vs.name}"]
    print(f"| module | size | {' | '.join(_TIMES)} |")
    print(f"|---|---:|{'---:|' * len(_TIMES)}")
    for name, path in modules.items():
        cells = [
            f"{ms:.0f} ms ({ms / base_ms:.2f}x)" if base_ms else f"{ms:.0f} ms"
            for ms, base_ms in zip(medians[name], peer)
        ]
        print(f"| {name} | {path.stat().st_size / 1024:,.0f} KB | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
