"""A Plotly figure of `toolkit.analysis.charts` as the ECharts option that draws it
(`option`), plain JSON-ready values that `echarts.show` draws in the page.

The conversion covers what our figures use, nothing more:

- `go.Bar`, vertical or horizontal (`orientation="h"`); an axis of labels, or of consecutive
  whole numbers (years, ages) without a bar `width`, is a category axis; other numbers (the
  TF / CF ratio's bin centres) a value axis, the bar `width` a share of the gap between bars.
- `go.Heatmap` on two category axes (ECharts' heatmap needs them), sent sparse: one item per
  cell that has a value (the TF x CF grid holds up to 101 x 101 cells, most of them empty).
  Whole-number categories span the axis `range`, so a data coordinate x is category x and
  layout shapes land where Plotly draws them. Colours: a `visualMap` over the trace's own
  colour scale (Viridis, Reds) and `zmin`; its end labels are the counts the hover reads.
  `texttemplate` becomes each cell's label, `xgap` a white border.
- `go.Scatter`: lines (`line.shape="hv"` as a step, dashes) or markers, on a second y axis
  (`yaxis="y2"`, log type) when asked; `hovermode="x unified"` as an axis tooltip.
- Layout shapes (lines, paths, `add_vline`) as mark lines, annotations in data coordinates
  as mark points, an annotation over a vertical line as that line's label, annotations in
  paper coordinates (the empty figure's "No rows match") as text on the chart.

Tooltips say what Plotly's hover says: each `hovertemplate` is evaluated here per point;
every placeholder (`%{customdata:,}` ...) becomes an extra data dimension holding its
formatted text, and the tooltip formatter is the template with `{@[k]}` in its place
(Streamlit inserts those values as escaped text; the template's `<br>` stays HTML).
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

__all__ = ["option"]

_PLACEHOLDER = re.compile(r"%\{([^}:]+)(?::([^}]*))?\}")
_EXTRA = re.compile(r"<extra>.*?</extra>", re.S)
_TAG = re.compile(r"<[^>]+>")
_PATH_POINT = re.compile(r"[ML]\s*([-\d.eE+]+)\s*,\s*([-\d.eE+]+)")
_DASHES = {
    "dash": "dashed",
    "longdash": "dashed",
    "dashdot": "dashed",
    "longdashdot": "dashed",
    "dot": "dotted",
    "solid": "solid",
}
_STEPS = {"hv": "end", "vh": "start", "hvh": "middle", "vhv": "middle"}
_SYMBOLS = {"circle": "circle", "diamond": "diamond", "square": "rect", "triangle-up": "triangle"}
_PAPER = ("paper", "x domain", "y domain")
_TIME_LABELS = {
    "year": "{yyyy}",
    "month": "{MMM} {yyyy}",
    "day": "{MMM} {d}",
    "hour": "{HH}:{mm}",
    "minute": "{HH}:{mm}",
    "second": "{HH}:{mm}:{ss}",
}


def option(fig: go.Figure) -> dict:
    """The ECharts option (JSON-ready: plain Python values only) that draws `fig`."""
    layout = fig.layout
    traces = list(fig.data)
    x_axis = _Axis(layout.xaxis, traces, "x")
    # A right axis the layout defines is drawn even when no trace uses it (as Plotly does).
    right_defined = _defines(layout, "yaxis2")
    y_names = ["y"] + (["y2"] if any(_y_of(t) == "y2" for t in traces) or right_defined else [])
    y_specs = {"y": layout.yaxis, "y2": layout.yaxis2 if right_defined else go.layout.YAxis()}
    y_axes = [_Axis(y_specs[name], [t for t in traces if _y_of(t) == name], "y") for name in y_names]
    unified = layout.hovermode in ("x unified", "x", "y unified", "y")
    series: list[dict] = []
    visual_maps: list[dict] = []
    for trace in traces:
        y_axis = y_axes[y_names.index(_y_of(trace))]
        if trace.type == "heatmap":
            one, visual = _heatmap(trace, x_axis, y_axis, len(series))
            visual_maps.append(visual)
        elif trace.type == "bar":
            one = _bar(trace, x_axis, y_axis, layout)
        elif trace.type in ("scatter", "scattergl"):
            one = _scatter(trace, x_axis, y_axis)
        else:
            raise ValueError(f"option: a {trace.type} trace is not converted (see toolkit/ui/echarts_option.py)")
        one["yAxisIndex"] = y_names.index(_y_of(trace))
        series.append(one)

    title = layout.title.text or ""
    legend_names = [s["name"] for s, t in zip(series, traces) if s.get("name") and t.showlegend is not False]
    show_legend = len(legend_names) > 1 and layout.showlegend is not False
    out: dict[str, Any] = {
        "animation": False,  # Plotly draws at once; an entry animation only delays the final picture
        "title": {"text": title, "left": 0, "top": 4},
        "tooltip": _tooltip(traces, series, unified),
        # ECharts 6 keeps axis labels and names inside the chart ("outerBounds"); these are the margins.
        "grid": {"left": 8, "right": 104 if visual_maps else 16, "top": 72 if show_legend else 48, "bottom": 8},
        "xAxis": x_axis.echarts(),
        "yAxis": [axis.echarts() for axis in y_axes],
        "series": series,
    }
    if show_legend:
        out["legend"] = {"data": legend_names, "top": 26, "type": "scroll"}
    if visual_maps:
        out["visualMap"] = visual_maps
    if x_axis.type == "time":
        out["useUTC"] = True
    _add_shapes(out, fig, x_axis, y_axes[0])
    return _jsonable(out)


def _tooltip(traces: Sequence[Any], series: list[dict], unified: bool) -> dict:
    """Plotly shows a bar's hover anywhere in its column: bars get an axis tooltip (the
    column shaded), which reads the series' template from the top level."""
    bars = bool(traces) and all(t.type == "bar" for t in traces)
    tooltip: dict[str, Any] = {"trigger": "axis" if unified or bars else "item", "confine": True}
    if bars:
        tooltip["axisPointer"] = {"type": "shadow"}
        templates = [s["tooltip"]["formatter"] for s in series if s["tooltip"].get("formatter")]
        if len(series) == 1 and templates:
            tooltip["formatter"] = templates[0]
    return tooltip


# ---------------------------------------------------------------- axes


def _defines(layout: Any, axis: str) -> bool:
    return axis in layout.to_plotly_json()


def _y_of(trace: Any) -> str:
    return getattr(trace, "yaxis", None) or "y"


def _is_date(value: Any) -> bool:
    return isinstance(value, (datetime.date, np.datetime64, pd.Timestamp))


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _values(seq: Any) -> list:
    if seq is None:
        return []
    return np.asarray(seq).tolist() if isinstance(seq, np.ndarray) else list(seq)


def _time(value: Any) -> str:
    """ISO time in UTC ("...Z"); a naive time is taken as UTC (as Plotly draws it)."""
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.strftime("%Y-%m-%dT%H:%M:%S") + "Z"


def _nice_step(count: int, most_labels: int = 11) -> int:
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000):
        if count / step <= most_labels:
            return step
    return 1000


class _Axis:
    """One Plotly axis and the ECharts axis drawing it: its type and, for a category axis,
    its categories (strings) and where a data value lands."""

    def __init__(self, spec: Any, traces: Sequence[Any], letter: str) -> None:
        self.spec = spec
        self.letter = letter
        self.categories: list[str] = []
        self.first_number: int | None = None  # whole-number categories: the first one's value
        values = [v for t in traces for v in self._trace_values(t)]
        self.type = self._type(traces, values)
        if self.type == "category":
            self._collect(values)

    def _trace_values(self, trace: Any) -> list:
        return _values(getattr(trace, self.letter, None))

    def _is_category_side(self, trace: Any) -> bool:
        """Is this axis the one a bar trace stands on (x for vertical bars, y for horizontal)?"""
        return (trace.orientation == "h") == (self.letter == "y")

    def _type(self, traces: Sequence[Any], values: list) -> str:
        kind = self.spec.type
        if kind in ("log", "category"):
            return kind
        if any(t.type == "heatmap" for t in traces):
            return "category"
        if values and all(_is_date(v) for v in values):
            return "time"
        bars = [t for t in traces if t.type == "bar" and self._is_category_side(t)]
        if bars and values:
            if not all(_is_number(v) for v in values):
                return "category"
            whole = all(float(v).is_integer() for v in values)
            if whole and all(t.width is None for t in bars):
                return "category"  # years, ages: one band each, labelled without thousands separators
        return "value"

    def _collect(self, values: list) -> None:
        if values and all(_is_number(v) and float(v).is_integer() for v in values):
            numbers = sorted({int(v) for v in values})
            low, high = numbers[0], numbers[-1]
            if self.spec.range is not None:  # the axis spans its range: a coordinate x is category x - low
                low = min(low, math.ceil(self.spec.range[0]))
                high = max(high, math.floor(self.spec.range[1]))
            self.first_number = low  # every whole number between: gaps show as Plotly draws them
            self.categories = [str(n) for n in range(low, high + 1)]
            return
        seen: dict[str, None] = {}
        for v in values:
            seen.setdefault(str(v), None)
        self.categories = list(seen)

    def index(self, value: Any) -> int:
        """The category position of a trace value on a category axis."""
        if self.first_number is not None and _is_number(value):
            return int(value) - self.first_number
        return self.categories.index(str(value))

    def coord(self, value: Any) -> Any:
        """Where a layout coordinate (a shape's corner, an annotation) lands on this axis."""
        if self.type == "category":
            if self.first_number is not None and _is_number(value):
                return float(value) - self.first_number  # fractional positions lie between categories
            return self.categories.index(str(value)) if str(value) in self.categories else value
        if self.type == "time" or _is_date(value):
            return _time(value)
        return value

    def echarts(self) -> dict:
        spec = self.spec
        axis: dict[str, Any] = {"type": self.type}
        if self.type == "category":
            axis["data"] = self.categories
            numbered = self.first_number is not None
            if numbered and len(self.categories) > 15:  # labels on round steps, as Plotly's ticks
                axis["axisLabel"] = {"interval": _nice_step(len(self.categories)) - 1}
                axis["axisTick"] = {"interval": _nice_step(len(self.categories)) - 1}
            elif spec.dtick == 1 or not numbered:
                axis["axisLabel"] = {"interval": 0}
        if self.type == "time":  # dates as Plotly writes them ("Nov 16"), not bare day numbers
            axis["axisLabel"] = {"formatter": _TIME_LABELS}
        if spec.title.text:
            axis.update(name=spec.title.text, nameLocation="middle", nameGap=self._name_gap())
        if spec.visible is False:
            axis["show"] = False
        if spec.autorange == "reversed":
            axis["inverse"] = True
        if spec.side in ("top", "right", "left", "bottom"):
            axis["position"] = spec.side
        if spec.range is not None and self.type in ("value", "log"):
            low, high = spec.range
            axis.update(min=10**low if self.type == "log" else low, max=10**high if self.type == "log" else high)
        if spec.dtick is not None and self.type == "value":
            axis["interval"] = spec.dtick
        if spec.tickformat and spec.tickformat.endswith("d"):
            axis["minInterval"] = 1  # whole ticks only
        if spec.showgrid is False:
            axis["splitLine"] = {"show": False}
        return axis

    def _name_gap(self) -> int:
        if self.letter == "x":
            return 28
        widest = max((len(c) for c in self.categories), default=5)
        return min(18 + 7 * widest, 120)


# ---------------------------------------------------------------- hover templates


def _template(template: str | None) -> tuple[list[str], list[tuple[str, str]]]:
    """A hovertemplate as its literal parts and its placeholders ((expression, format) pairs),
    `<extra>` dropped: literal[0] placeholder[0] literal[1] ... literal[n]."""
    text = _EXTRA.sub("", template or "")
    literals, holders, at = [], [], 0
    for match in _PLACEHOLDER.finditer(text):
        literals.append(text[at : match.start()])
        holders.append((match.group(1).strip(), match.group(2) or ""))
        at = match.end()
    literals.append(text[at:])
    return literals, holders


def _format(value: Any, spec: str) -> str:
    """A value formatted as Plotly's d3 format `spec` would (the subset our charts use)."""
    if type(value) is int:  # the common case (counts, whole TF and CF), first
        return format(value, spec) if spec else str(value)
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if spec and _is_number(value):
        if spec.endswith("d"):
            return format(int(round(value)), spec)
        return format(value, spec)
    if _is_date(value):
        return pd.Timestamp(value).isoformat()
    return str(value)


def _formatted(values: Iterable[Any], spec: str) -> list[str]:
    """`_format` over a column, each distinct value formatted once (a heatmap repeats its
    x and y labels across thousands of cells)."""
    done: dict[Any, str] = {}
    out = []
    for value in values:
        try:
            text = done.get(value)
            if text is None:
                text = done[value] = _format(value, spec)
        except TypeError:  # unhashable (a customdata row)
            text = _format(value, spec)
        out.append(text)
    return out


class _Template:
    """A hovertemplate or texttemplate, evaluated column-wise: `columns` gives each distinct
    placeholder's formatted text at every point, from `points` (what a template can name:
    x, y, z, customdata, text as sequences over the points, and the trace's name)."""

    def __init__(self, template: str | None) -> None:
        self.template = template or ""
        self.literals, holders = _template(template)
        self.order = holders
        self.holders = list(dict.fromkeys(holders))

    def __bool__(self) -> bool:
        return bool(self.template)

    def columns(self, points: dict[str, Any], count: int) -> list[list[str]]:
        return [_formatted(_column(expression, points, count), spec) for expression, spec in self.holders]

    def formatter(self, first: int) -> str:
        """The template with ECharts' `{@[k]}` for each placeholder, the columns from dimension `first`."""
        slots = [f"{{@[{first + self.holders.index(h)}]}}" for h in self.order]
        return "".join(part for pair in zip(self.literals, slots + [""]) for part in pair)

    def tooltip(self, first: int) -> dict:
        """A series' tooltip showing the template (ECharts' default tooltip without one)."""
        return {"formatter": self.formatter(first)} if self else {}

    def texts(self, columns: list[list[str]]) -> list[str]:
        """The template filled in at every point, as plain text with line breaks (labels)."""
        slots = [columns[self.holders.index(h)] for h in self.order]
        rows = zip(*slots) if slots else ([] for _ in range(len(columns[0]) if columns else 0))
        filled = ["".join(part for pair in zip(self.literals, [*row, ""]) for part in pair) for row in rows]
        return [_TAG.sub("", text.replace("<br>", "\n")) for text in filled]


def _column(expression: str, points: dict[str, Any], count: int) -> list:
    """A placeholder's raw value at every point: `x`, `customdata`, `customdata[1]`, `fullData.name`."""
    if expression == "fullData.name":
        return [points.get("name")] * count
    name, _, rest = expression.partition("[")
    values = points.get(name)
    if values is None:
        return [None] * count
    if rest:
        index = int(rest.rstrip("]"))
        return [_at(value, index) for value in values]
    return list(values)


def _per_point(seq: Any, count: int) -> Any:
    """A trace's customdata or text over its points (a scalar repeated), or None."""
    if seq is None:
        return None
    if isinstance(seq, str):
        return [seq] * count
    return np.asarray(seq, dtype=object) if not isinstance(seq, np.ndarray) else seq


def _at(seq: Any, index: int) -> Any:
    try:
        return seq[index]
    except (IndexError, TypeError, KeyError):
        return None


class _Data(list):
    """A series' data items, already plain JSON values (`_rows` makes them): `_jsonable`
    passes them through instead of visiting each of thousands of cells again."""


def _rows(*columns: Sequence[Any]) -> _Data:
    """Data items from columns, each value made plain JSON."""
    listed = [column.tolist() if isinstance(column, np.ndarray) else column for column in columns]
    plain = [
        [
            v if type(v) in _PLAIN or v is None or (type(v) is float and math.isfinite(v)) else _jsonable(v)
            for v in column
        ]
        for column in listed
    ]
    return _Data(list(row) for row in zip(*plain))


# ---------------------------------------------------------------- series


def _heatmap(trace: go.Heatmap, x_axis: _Axis, y_axis: _Axis, index: int) -> tuple[dict, dict]:
    z = _grid(trace.z)
    xs = _values(trace.x) or list(range(z.shape[1]))
    ys = _values(trace.y) or list(range(z.shape[0]))
    cell_rows, cell_columns = np.nonzero(np.isfinite(z))  # sparse: only the cells with a value
    count = len(cell_rows)
    points = {
        "x": np.asarray(xs, dtype=object)[cell_columns].tolist(),
        "y": np.asarray(ys, dtype=object)[cell_rows].tolist(),
        "z": z[cell_rows, cell_columns].tolist(),
        "name": trace.name,
        "customdata": _cells(trace.customdata, z.shape, cell_rows, cell_columns),
        "text": _cells(trace.text, z.shape, cell_rows, cell_columns),
    }
    hover = _Template(trace.hovertemplate)
    label = _Template(trace.texttemplate)
    label_dim = 3 + len(hover.holders)
    x_index = np.array([x_axis.index(x) for x in xs])[cell_columns].tolist()
    y_index = np.array([y_axis.index(y) for y in ys])[cell_rows].tolist()
    labels = [label.texts(label.columns(points, count))] if label else []
    data = _rows(
        x_index, y_index, np.round(z[cell_rows, cell_columns], 4).tolist(), *hover.columns(points, count), *labels
    )
    one: dict[str, Any] = {
        "type": "heatmap",
        "name": trace.name or "",
        "data": data,
        "tooltip": hover.tooltip(3),
        "encode": {"x": 0, "y": 1, "value": 2},
    }
    if label:
        one["label"] = {"show": True, "formatter": f"{{@[{label_dim}]}}", "fontSize": 11, "lineHeight": 14}
    gap = max(trace.xgap or 0, trace.ygap or 0)
    if gap:
        one["itemStyle"] = {"borderColor": "#ffffff", "borderWidth": gap}
    return one, _visual_map(trace, z, index)


def _grid(z: Any) -> np.ndarray:
    """z as floats, NaN for an empty cell (None in a list of lists)."""
    if isinstance(z, np.ndarray) and np.issubdtype(z.dtype, np.number):
        return z.astype("float64")
    return np.asarray(pd.DataFrame(list(z)).apply(pd.to_numeric, errors="coerce"), dtype="float64")


def _cells(seq: Any, shape: tuple[int, ...], rows: np.ndarray, columns: np.ndarray) -> list | None:
    """A heatmap's customdata or text at the given cells (None unless it is a grid like z)."""
    if seq is None:
        return None
    grid = seq if isinstance(seq, np.ndarray) else np.array(seq, dtype=object)
    return grid[rows, columns].tolist() if grid.shape[:2] == shape else None


def _visual_map(trace: go.Heatmap, z: np.ndarray, series_index: int) -> dict:
    """The heatmap's colour bar: its colour scale over zmin..zmax, the ends labelled as the
    hover reads them (the log heatmaps' counts are their customdata)."""
    finite = z[np.isfinite(z)]
    low = float(trace.zmin) if trace.zmin is not None else float(finite.min(initial=0))
    high = float(trace.zmax) if trace.zmax is not None else float(finite.max(initial=low))
    colours = [colour for _, colour in trace.colorscale] if trace.colorscale else None
    labels = [_end_label(trace, z, low, lowest=True), _end_label(trace, z, high, lowest=False)]
    title = (trace.colorbar.title.text or "").lower() if trace.colorbar else ""
    visual = {
        "type": "continuous",
        "seriesIndex": series_index,
        "dimension": 2,
        "min": low,
        "max": high if high > low else low + 1,
        "calculable": False,
        "hoverLink": False,
        "text": [f"{labels[1]} {title}".strip(), labels[0]],
        "orient": "vertical",
        "right": 0,
        "top": "middle",
        "itemHeight": 160,
    }
    if colours:
        visual["inRange"] = {"color": colours}
    return visual


def _end_label(trace: go.Heatmap, z: np.ndarray, value: float, lowest: bool) -> str:
    bar = trace.colorbar
    if bar and bar.tickvals is not None and bar.ticktext is not None and value in list(bar.tickvals):
        return str(bar.ticktext[list(bar.tickvals).index(value)])
    if trace.customdata is not None and np.isfinite(z).any():
        custom = np.asarray(trace.customdata)
        if custom.shape == z.shape and np.issubdtype(custom.dtype, np.number):
            where = np.nanargmin(z) if lowest else np.nanargmax(z)
            if z.flat[where] == value:
                return _format(custom.flat[where], ",")
    return _format(value, ",")


def _bar(trace: go.Bar, x_axis: _Axis, y_axis: _Axis, layout: Any) -> dict:
    horizontal = trace.orientation == "h"
    xs, ys = _values(trace.x), _values(trace.y)
    hover = _Template(trace.hovertemplate)
    columns = hover.columns(*_points(trace, xs, ys))
    data = _rows([_value_on(x_axis, x) for x in xs], [_value_on(y_axis, y) for y in ys], *columns)
    one: dict[str, Any] = {
        "type": "bar",
        "name": trace.name or "",
        "data": data,
        "tooltip": hover.tooltip(2),
        "encode": {"x": 0, "y": 1},
    }
    if isinstance(trace.marker.color, str):
        one["itemStyle"] = {"color": trace.marker.color}
    base = y_axis if horizontal else x_axis
    if base.type == "value" and trace.width is not None:
        centres = sorted({float(v) for v in (ys if horizontal else xs)})
        gap = min((b - a for a, b in zip(centres, centres[1:])), default=float(trace.width))
        one["barWidth"] = f"{100 * float(trace.width) / gap:g}%"  # ECharts' band on a value axis: the closest gap
    else:
        one["barCategoryGap"] = f"{100 * (layout.bargap if layout.bargap is not None else 0.2):g}%"
    return one


def _points(trace: Any, xs: list, ys: list) -> tuple[dict[str, Any], int]:
    """What a bar's or a line's hover template may name at each point (`%{x}`,
    `%{customdata[1]}`, ...), and the count of points."""
    count = min(len(xs), len(ys))
    points = {
        "x": xs,
        "y": ys,
        "customdata": _per_point(trace.customdata, count),
        "text": _per_point(trace.text, count),
        "name": trace.name,
    }
    return points, count


def _value_on(axis: _Axis, value: Any) -> Any:
    if axis.type == "category":
        return axis.categories[axis.index(value)]
    if axis.type == "time":
        return _time(value)
    return value


def _scatter(trace: go.Scatter, x_axis: _Axis, y_axis: _Axis) -> dict:
    mode = trace.mode or "lines+markers"
    hover = _Template(trace.hovertemplate)
    xs = _values(trace.x)
    # A log axis cannot place zero or less; Plotly leaves such points out too.
    ys = [None if y_axis.type == "log" and (y is None or y <= 0) else y for y in _values(trace.y)]
    data = _rows([_value_on(x_axis, x) for x in xs], ys, *hover.columns(*_points(trace, xs, ys)))
    one: dict[str, Any] = {"name": trace.name or "", "data": data, "tooltip": hover.tooltip(2)}
    if "lines" in mode:
        one.update(type="line", showSymbol="markers" in mode)
        one["lineStyle"] = _line_style(trace.line)
        if trace.line.shape in _STEPS:
            one["step"] = _STEPS[trace.line.shape]
    else:
        one["type"] = "scatter"
    if "markers" in mode:
        if trace.marker.symbol in _SYMBOLS:
            one["symbol"] = _SYMBOLS[trace.marker.symbol]
        if _is_number(trace.marker.size):
            one["symbolSize"] = trace.marker.size
    colour = trace.marker.color if isinstance(trace.marker.color, str) else trace.line.color
    if isinstance(colour, str):
        one["itemStyle"] = {"color": colour}
    return one


# ---------------------------------------------------------------- shapes and annotations


def _line_style(line: Any) -> dict:
    style: dict[str, Any] = {"type": _DASHES.get(line.dash or "solid", "dashed")}
    if line.color:
        style["color"] = line.color
    if line.width is not None:
        style["width"] = line.width
    return style


def _path_points(path: str) -> list[tuple[float, float]]:
    points = [(float(x), float(y)) for x, y in _PATH_POINT.findall(path)]
    if path.strip().upper().endswith("Z") and points and points[0] != points[-1]:
        points.append(points[0])
    return points


def _add_shapes(out: dict, fig: go.Figure, x_axis: _Axis, y_axis: _Axis) -> None:
    """Shapes as mark lines and annotations as mark points or labels, on the first series
    (marks need a series on the axes; the empty figure's text goes on the chart itself)."""
    lines: list[Any] = []
    vlines: dict[Any, dict] = {}
    for shape in fig.layout.shapes:
        style = _line_style(shape.line)
        name = shape.name or ""
        if shape.type == "line" and shape.yref in _PAPER and shape.x0 == shape.x1:
            vline = {"xAxis": x_axis.coord(shape.x0), "name": name, "lineStyle": style, "label": {"show": False}}
            vlines[_key(shape.x0)] = vline
            lines.append(vline)
        elif shape.type == "line":
            ends = [(shape.x0, shape.y0), (shape.x1, shape.y1)]
            lines.append(_segment(ends, x_axis, y_axis, name, style))
        elif shape.type == "path" and shape.path:
            corners = _path_points(shape.path)
            lines.extend(_segment(pair, x_axis, y_axis, name, style) for pair in zip(corners, corners[1:]))
    points: list[dict] = []  # annotations in data coordinates, as mark points
    texts: list[dict] = []  # annotations on the figure itself (paper coordinates)
    top = "start" if y_axis.spec.autorange == "reversed" else "end"  # a vertical line's label at the top, as Plotly's
    for note in fig.layout.annotations:
        font = {"color": note.font.color} if note.font and note.font.color else {}
        if note.font and note.font.size:
            font["fontSize"] = note.font.size
        if note.xref in _PAPER and note.yref in _PAPER:
            texts.append(_paper_text(note, font))
        elif note.yref in _PAPER and _key(note.x) in vlines:
            vlines[_key(note.x)]["label"] = {"show": True, "formatter": note.text, "position": top, **font}
        elif note.yref in _PAPER:
            lines.append(
                {
                    "xAxis": x_axis.coord(note.x),
                    "lineStyle": {"opacity": 0},
                    "label": {"show": True, "formatter": note.text, "position": top, **font},
                }
            )
        else:
            points.append(
                {
                    "coord": [x_axis.coord(note.x), y_axis.coord(note.y)],
                    "value": note.text,
                    "symbol": "circle",
                    "symbolSize": 0,
                    "label": {"show": True, "formatter": note.text, "position": "inside", **font},
                }
            )
    if texts:
        out["graphic"] = texts
    if not out["series"] or not (lines or points):
        return
    first = out["series"][0]
    if lines:
        first["markLine"] = {"silent": True, "symbol": ["none", "none"], "animation": False, "data": lines}
    if points:
        first["markPoint"] = {"silent": True, "animation": False, "data": points}


def _paper_text(note: Any, font: dict) -> dict:
    """An annotation placed on the figure (paper coordinates) as text on the chart."""
    top = 100 * (1 - note.y)  # above the plot (y > 1) is the chart's top edge
    style = {
        "text": _TAG.sub("", note.text or ""),
        "fill": font.get("color", "#555"),
        "fontSize": font.get("fontSize", 14),
    }
    return {
        "type": "text",
        "z": 100,
        "style": style,
        "left": "center" if note.x == 0.5 else f"{100 * note.x:g}%",
        "top": "middle" if note.y == 0.5 else f"{max(0.0, min(100.0, top)):g}%",
    }


def _segment(ends: Iterable[tuple[Any, Any]], x_axis: _Axis, y_axis: _Axis, name: str, style: dict) -> list[dict]:
    (x0, y0), (x1, y1) = ends
    return [
        {"coord": [x_axis.coord(x0), y_axis.coord(y0)], "name": name, "lineStyle": style, "label": {"show": False}},
        {"coord": [x_axis.coord(x1), y_axis.coord(y1)]},
    ]


def _key(value: Any) -> Any:
    return _time(value) if _is_date(value) else value


# ---------------------------------------------------------------- JSON


_PLAIN = (str, int, bool)


def _jsonable(value: Any) -> Any:
    """Plain Python values only (Streamlit's option must be JSON): NumPy scalars as Python
    numbers, NaN as null, times as ISO strings."""
    kind = type(value)
    if kind in _PLAIN or value is None:
        return value
    if kind is _Data:  # built plain by `_rows`
        return list(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if _is_date(value):
        return _time(value)
    return value
