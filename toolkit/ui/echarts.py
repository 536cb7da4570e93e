"""The app's charts: the Plotly figures of `toolkit.analysis.charts` drawn by Apache ECharts.

`toolkit.analysis.charts` stays the one definition of every chart (the notebooks show its
Plotly figures as they are); `option(fig)` (`echarts_option.py`) converts a figure into an
ECharts option and `show` draws it. Plotly's element is a 4.7 MB chunk whose evaluation and
drawing block the browser; ECharts draws on a canvas from a 0.6 MB module (the parts we
draw), so the chart pages open and redraw sooner.

Served by app.py, `show` draws the option with a small component of ours (`_CHART_JS`,
no iframe) that imports ECharts' own module (`assets.ECHARTS_URL`); Streamlit's ECharts
element (`st.echarts_chart`, used where app.py's routes are not served: AppTest,
`streamlit run toolkit/ui/script/page_script.py`) brings 1 MB of Arrow and number-formatting code
with it, 0.2-0.3 s of a chart page's first render. The component gives the charts
Streamlit's look (`themeFor` in `_CHART_JS`) and reads tooltip templates as Streamlit's
element does (`{@[k]}`: dimension k of the point, as escaped text).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from . import assets, navigation
from .echarts_option import option

__all__ = ["DEFAULT_HEIGHT", "option", "show", "show_made", "warm_options"]

DEFAULT_HEIGHT = 450  # Plotly's default figure height


_CHART_JS = """
const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// A tooltip template's {@[k]}: dimension k of the (first) point, as escaped text.
const fill = (template) => (params) => {
  const point = Array.isArray(params) ? params[0] : params;
  if (!point) return "";
  return template.replace(/\\{@\\[(\\d+)\\]\\}/g, (_, k) => {
    const value = Array.isArray(point.value) ? point.value[Number(k)] : point.value;
    return value === undefined || value === null ? "" : escape(value);
  });
};
const withTemplates = (tooltip) =>
  tooltip && typeof tooltip.formatter === "string" && tooltip.formatter.includes("{@")
    ? { ...tooltip, formatter: fill(tooltip.formatter) } : tooltip;

// Streamlit's light theme for ECharts, the parts our charts show (its element builds it in the browser).
let theme;
const themeFor = (element) => {
  if (theme) return theme;
  const font = getComputedStyle(element).fontFamily;
  const line = { lineStyle: { color: "#e6eaf1" } };
  const axis = { axisLine: line, axisTick: line, splitLine: line,
                 axisLabel: { color: "#808495", fontFamily: font, fontSize: 12, hideOverlap: true },
                 nameTextStyle: { color: "#808495", fontFamily: font, fontSize: 12 } };
  return (theme = {
    color: ["#0068c9", "#83c9ff", "#ff2b2b", "#ffabab", "#29b09d", "#7defa1", "#ff8700", "#ffd16a", "#6d3fc0", "#d5dae5"],
    backgroundColor: "transparent",
    textStyle: { fontFamily: font, color: "#808495", fontSize: 12 },
    title: { padding: [0, 0, 24, 0], textStyle: { fontFamily: font, color: "#31333f", fontSize: 14, fontWeight: "normal" } },
    legend: { textStyle: { color: "#808495", fontFamily: font, fontSize: 12 } },
    categoryAxis: axis, valueAxis: axis, logAxis: axis, timeAxis: axis,
  });
};

export default function ({ parentElement, data: [data] }) {
  const root = parentElement.querySelector(".edt-chart");
  root.style.height = `${data.height}px`;
  let observer, current = true;
  import(new URL(data.module, document.baseURI).href).then((echarts) => {
    if (!current || !root.isConnected) return;  // newer data came first: that call draws
    const chart = echarts.getInstanceByDom(root) || echarts.init(root, themeFor(root));
    const option = { ...data.option, tooltip: withTemplates(data.option.tooltip),
                     series: (data.option.series || []).map((s) => ({ ...s, tooltip: withTemplates(s.tooltip) })) };
    chart.setOption(option, true);
    // A ResizeObserver reports the size it starts with: redraw only when the width changed.
    let width = root.clientWidth;
    observer = new ResizeObserver(() => {
      if (root.clientWidth !== width) { width = root.clientWidth; chart.resize(); }
    });
    observer.observe(root);
  });
  return () => {
    current = false;
    if (observer) observer.disconnect();
    // Called before each redraw too: the chart is kept unless its element has left the page.
    setTimeout(() => { if (!root.isConnected) import(new URL(data.module, document.baseURI).href)
      .then((echarts) => echarts.getInstanceByDom(root)?.dispose()); });
  };
}
"""


def warm_options() -> list[dict]:
    """Small charts of the kinds the pages draw: the price history's step lines on a time
    axis with a second axis, and bars beside a heatmap with its colour scale. The browser
    draws them out of sight (`assets.later_script`) from `assets.WARM_OPTIONS`, this
    written as JSON, so a page without a chart loads neither pandas nor Plotly for them."""
    from ..analysis import charts

    days = pd.date_range("2026-01-01", periods=4, freq="D", tz="UTC").strftime("%Y-%m-%dT%H:%M:%SZ")
    history = pd.DataFrame(
        {"observed_at": days, "price": [10, 12, 12, 15], "max_bid": [5, 8, 9, 9], "bids_count": [1, 2, 2, 3]}
    )
    bars = go.Figure(go.Bar(x=["a", "b", "c"], y=[3, 1, 2], hovertemplate="%{x}: %{y:,}<extra></extra>"))
    bars.add_vline(x=1, line_dash="dash", annotation_text="line")
    heat = go.Figure(
        go.Heatmap(
            z=[[1, 2, 0], [3, 0, 4]],
            x=[0, 1, 2],
            y=[0, 1],
            colorscale="Viridis",
            hovertemplate="%{x} · %{y}: %{z}<extra></extra>",
        )
    )
    return [option(charts.price_history(history)), option(bars), option(heat)]


@functools.cache
def _chart_component() -> Any:
    return st.components.v2.component(
        "edt_chart", html='<div class="edt-chart" style="width: 100%"></div>', js=_CHART_JS, isolate_styles=False
    )


def show(fig: go.Figure, *, key: str, where: Any = st) -> None:
    """Draw `fig` in `where` (a column, a container or `st`), as tall as the figure's
    `layout.height` (else `DEFAULT_HEIGHT`): by our component when app.py serves the page,
    else by Streamlit's ECharts element (see the module's docstring)."""
    _draw(*_converted(fig), key=key, where=where)


def show_made(make: Callable[[], go.Figure], made_from: tuple, *, key: str, where: Any = st) -> None:
    """`show(make())`, the figure made and converted once per `made_from` (what it is drawn
    from: the mirror's generation, the plan, the filters, ...): a rerun with the same data,
    or another visitor, skips Plotly (a fifth of a second for a chart page's three)."""
    _draw(*_made(make, made_from), key=key, where=where)


@st.cache_data(max_entries=256, show_spinner=False)
def _made(_make: Callable[[], go.Figure], made_from: tuple) -> tuple[dict, int]:
    return _converted(_make())


def _converted(fig: go.Figure) -> tuple[dict, int]:
    return option(fig), int(fig.layout.height) if fig.layout.height else DEFAULT_HEIGHT


def _draw(chart: dict, height: int, *, key: str, where: Any) -> None:
    if not assets.served():
        where.echarts_chart(chart, key=key, height=height)
        return
    with contextlib.nullcontext() if where is st else where:
        data = {"option": chart, "height": height, "module": assets.ECHARTS_URL}
        _chart_component()(data=navigation.payload(data), key=key)
