// The parts of Apache ECharts the app draws (what toolkit/ui/echarts_option.py writes):
// line, bar and heatmap series on a cartesian grid (category, value, time and log axes),
// titles, tooltips, scrolling legends, continuous visual maps, mark lines and points, and
// text graphics, drawn on a canvas. Built by `npm run build` (see ../README.md); a browser
// test sets every chart the pages draw and checks that each of its parts was drawn.
import * as echarts from "echarts/core";
import * as charts from "echarts/charts";
import * as components from "echarts/components";
import { LabelLayout } from "echarts/features";
import { CanvasRenderer } from "echarts/renderers";

echarts.use([
  charts.BarChart,
  charts.HeatmapChart,
  charts.LineChart,
  charts.ScatterChart,
  components.GraphicComponent,
  components.GridComponent,
  components.LegendScrollComponent,
  components.MarkLineComponent,
  components.MarkPointComponent,
  components.TitleComponent,
  components.TooltipComponent,
  components.VisualMapContinuousComponent,
  LabelLayout,
  CanvasRenderer,
]);

export * from "echarts/core";
