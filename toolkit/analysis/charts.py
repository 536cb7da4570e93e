"""Plotly figures built from listings, pending-delete and history DataFrames.

Pure functions: a DataFrame (or a list of dates) in, a ``go.Figure`` out; no I/O, no SQL,
no Streamlit. They are the one definition of every chart, shared by the notebooks and the
Streamlit app. The notebooks show the Plotly figures as they are; the app converts each into
an ECharts option and draws it with Streamlit's built-in ECharts element
(`toolkit.ui.echarts.show`: a smaller front-end chunk, drawn on a canvas), except the opt-in
point cloud, which needs Plotly's lasso:

    from toolkit.analysis.charts import tf_cf_heatmap, tf_cf_scatter, frame_ids
    echarts.show(tf_cf_heatmap(counts), key="tfcf")             # the app's charts
    event = st.plotly_chart(tf_cf_scatter(df), on_select="rerun")  # the point cloud
    ids = frame_ids(event.selection["points"])

Every function returns a figure with the annotation "No rows match" for an empty input and
drops, per chart, the rows whose plotted values are null (NaN, None or pd.NA).

The app's chart pages draw counts instead of rows: `Mirror.chart_counts` counts every
matching listing (a `ChartCounts`), and `tf_cf_heatmap`, `tf_cf_ratio_bars`,
`zone_share_bars`, `age_bars`, `first_year_bars`, `snapshots_age_heatmap` and
`language_bars` draw them: no WebGL, a figure of a few thousand cells whatever the number
of listings.
"""

from __future__ import annotations

import calendar
import datetime
import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import qualitative

from ..query.aggregates import ZONE_OFFSET, ZONE_SLOPE, ChartCounts, snapshot_bin_label
from ..store.labels import language_name, platform_name

__all__ = [
    "EMPTY_TEXT",
    "age_bars",
    "age_histogram",
    "calendar_counts",
    "drop_calendar",
    "first_snapshot_year_histogram",
    "first_year_bars",
    "frame_ids",
    "language_bars",
    "language_breakdown",
    "metric_history",
    "price_history",
    "snapshots_age_heatmap",
    "snapshots_vs_age",
    "tf_cf_heatmap",
    "tf_cf_ratio_bars",
    "tf_cf_ratio_histogram",
    "tf_cf_scatter",
    "zone_share_bars",
]

EMPTY_TEXT = "No rows match"
MAX_GROUPS = 12
ZONE_NAME = "CF far above TF (bought links?)"
DIAGONAL_NAME = "TF = CF"
WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

_PALETTE = qualitative.Plotly + qualitative.Dark2
_MUTED = {"Other": "#9e9e9e", "Unknown": "#c7c7c7"}


# ---------------------------------------------------------------- helpers


def _empty_figure(title: str = "", text: str = EMPTY_TEXT) -> go.Figure:
    fig = go.Figure()
    fig.update_layout(title=title, xaxis={"visible": False}, yaxis={"visible": False})
    fig.add_annotation(text=text, x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False, font={"size": 16})
    return fig


_NO_ARCHIVE = "a first web-archive snapshot yet (edt enrich looks them up)"


def _none_has(df: pd.DataFrame, what: str) -> str:
    """The empty figure's words: no row matched, or rows matched and none has `what`."""
    if df.empty:
        return EMPTY_TEXT
    return (
        f"None of the {len(df):,} listings has {what}" if len(df) > 1 else f"The listing has no {what.split(' ', 1)[1]}"
    )


def _numeric(series: pd.Series) -> pd.Series:
    """Float64 numpy series with NaN for every kind of null (Int64 pd.NA, None, junk)."""
    return pd.to_numeric(series, errors="coerce").astype("float64")


def _plottable(df: pd.DataFrame, positive: str = "", **columns: str) -> pd.DataFrame:
    """A frame with `id`, `name` and the given columns as floats, rows with a null value dropped,
    and those where the column `positive` names is not above 0 (none from an empty frame, which
    may not even hold the columns)."""
    if df.empty:
        df = pd.DataFrame(columns=list(columns.values()))
    out = pd.DataFrame({key: _numeric(df[col]) for key, col in columns.items()}, index=df.index)
    out["id"] = df["id"] if "id" in df.columns else pd.Series(range(len(df)), index=df.index)
    out["name"] = df["name"].astype("string").fillna("") if "name" in df.columns else ""
    out = out.dropna(subset=list(columns))
    return out[out[positive] > 0] if positive else out


def _subsample(df: pd.DataFrame, max_points: int) -> tuple[pd.DataFrame, str]:
    """Every k-th row after sorting by id, so the same frame always yields the same points."""
    if max_points < 1:
        raise ValueError("max_points must be at least 1")
    total = len(df)
    if total <= max_points:
        return df, ""
    step = math.ceil(total / max_points)
    kept = df.sort_values("id", kind="stable").iloc[::step]
    return kept, f" (showing {len(kept)} of {total})"


def _add_zone_and_diagonal(fig: go.Figure) -> None:
    """The "CF far above TF" zone (CF >= ZONE_SLOPE TF + ZONE_OFFSET, clipped to the 0-100
    square; x is CF, y is TF), filled, and the TF = CF line, as two traces (for the scatter)."""
    top = (100 - ZONE_OFFSET) / ZONE_SLOPE
    fig.add_trace(
        go.Scatter(
            x=[ZONE_OFFSET, 100, 100, ZONE_OFFSET],
            y=[0, 0, top, 0],
            mode="lines",
            name=ZONE_NAME,
            hoverinfo="skip",
            fill="toself",
            fillcolor="rgba(214, 39, 40, 0.12)",
            line={"width": 0},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[0, 100],
            y=[0, 100],
            mode="lines",
            name=DIAGONAL_NAME,
            line={"color": "#555", "dash": "dash", "width": 1},
            hoverinfo="skip",
        )
    )


def _zone_and_diagonal_shapes(fig: go.Figure) -> None:
    """The zone's outline and the TF = CF line as layout shapes, each named by a label on the
    plot: over a heatmap, a shape costs the browser far less than a line trace and its legend."""
    top = (100 - ZONE_OFFSET) / ZONE_SLOPE
    fig.add_shape(
        type="path",
        path=f"M {ZONE_OFFSET},0 L 100,0 L 100,{top:g} Z",
        name=ZONE_NAME,
        line={"color": "#b22222", "width": 2, "dash": "dot"},
    )
    fig.add_shape(
        type="line", x0=0, y0=0, x1=100, y1=100, name=DIAGONAL_NAME, line={"color": "#555", "dash": "dash", "width": 1}
    )
    fig.add_annotation(x=78, y=12, text=ZONE_NAME, showarrow=False, font={"size": 11, "color": "#b22222"})
    fig.add_annotation(x=88, y=92, text=DIAGONAL_NAME, showarrow=False, font={"size": 11, "color": "#555"})


def _log_colorbar(most: int) -> dict:
    """A colour bar for log10(count) whose ticks read as counts (1, 10, 100, ...)."""
    powers = range(0, max(1, math.ceil(math.log10(max(most, 1)))) + 1)
    return {"title": {"text": "Listings"}, "tickvals": list(powers), "ticktext": [f"{10**p:,}" for p in powers]}


def _log_heatmap(counts: np.ndarray, x: list, y: list, hover: str) -> go.Heatmap:
    """A heatmap of counts coloured by log10(count) so sparse cells show beside dense ones;
    empty cells are blank; `hover` reads the count as %{customdata}."""
    present = counts > 0
    z = np.where(present, np.log10(np.where(present, counts, 1)), np.nan).astype(np.float32)
    return go.Heatmap(  # NumPy arrays: validated at once and sent as typed arrays, not lists of numbers
        z=z,
        x=x,
        y=y,
        customdata=counts.astype(np.int32),
        colorscale="Viridis",
        zmin=0,
        colorbar=_log_colorbar(int(counts.max(initial=0))),
        hoverongaps=False,
        hovertemplate=hover + "<extra></extra>",
    )


def _customdata(df: pd.DataFrame) -> list[list]:
    # Plain Python ints so a Streamlit selection hands back JSON-friendly [id, name] pairs.
    return df[["id", "name"]].astype(object).to_numpy().tolist()


def _top_with_other(labels: pd.Series, top: int) -> pd.Series:
    """Keep the `top` most frequent labels (ties broken by label) and relabel the rest "Other"."""
    counts = labels.value_counts()
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    keep = {label for label, _ in ranked[:top]}
    return labels.where(labels.isin(keep), "Other")


def _label(series: pd.Series) -> pd.Series:
    """Strings with null or blank values as "Unknown"."""
    s = series.astype("string").str.strip()
    return s.mask(s.isna() | (s == ""), "Unknown").astype(object)


def _as_dates(values: pd.Series | Iterable) -> pd.Series:
    """datetime64 (midnight) series from date objects, "YYYY-MM-DD" or ISO timestamp strings; NaT for nulls.

    Timestamps keep the calendar date as written (no time-zone shift).
    """
    s = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    if pd.api.types.is_datetime64_any_dtype(s):
        if getattr(s.dt, "tz", None) is not None:
            s = s.dt.tz_localize(None)
        return s.dt.normalize()
    if s.dtype == object:
        s = s.map(lambda v: v.isoformat() if isinstance(v, datetime.date) else v)
    text = s.astype("string").str.slice(0, 10)
    return pd.to_datetime(text, format="%Y-%m-%d", errors="coerce")


# ---------------------------------------------------------------- authority (TF / CF)


def tf_cf_scatter(df: pd.DataFrame, color_by: str = "topic", max_points: int = 20_000) -> go.Figure:
    """Trust Flow against Citation Flow, one WebGL trace per topic category or source.

    `customdata` holds [id, name] per point so `frame_ids` can read a box selection.
    """
    if color_by not in ("topic", "source"):
        raise ValueError("color_by must be 'topic' or 'source'")
    title = "Trust Flow vs Citation Flow"
    points = _plottable(df, cf="citation_flow", tf="trust_flow")
    if points.empty:
        return _empty_figure(title)
    if color_by == "topic":
        raw = df.loc[points.index, "ttf_topic"].astype("string").str.split("/").str[0]
    else:
        raw = df.loc[points.index, "source"]
    # Group before subsampling so "Other" means the same thing whatever max_points is.
    points["group"] = _top_with_other(_label(raw), MAX_GROUPS)
    points, shown = _subsample(points, max_points)

    fig = go.Figure()
    _add_zone_and_diagonal(fig)
    order = points["group"].value_counts()
    ordered = sorted(order.index, key=lambda g: (g in _MUTED, -order[g], str(g)))
    for i, group in enumerate(ordered):
        part = points[points["group"] == group]
        fig.add_trace(
            go.Scattergl(
                x=part["cf"].tolist(),
                y=part["tf"].tolist(),
                mode="markers",
                name=str(group),
                customdata=_customdata(part),
                marker={"size": 5, "opacity": 0.7, "color": _MUTED.get(group, _PALETTE[i % len(_PALETTE)])},
                hovertemplate="%{customdata[1]}<br>id %{customdata[0]}<br>CF %{x} · TF %{y}<extra>%{fullData.name}</extra>",
            )
        )
    fig.add_annotation(x=78, y=12, text=ZONE_NAME, showarrow=False, font={"size": 11, "color": "#b22222"})
    fig.update_layout(title=title + shown, dragmode="select", legend={"itemsizing": "constant"})
    fig.update_xaxes(title_text="Citation Flow", range=[0, 100])
    fig.update_yaxes(title_text="Trust Flow", range=[0, 100])
    return fig


def tf_cf_ratio_histogram(df: pd.DataFrame, bins: int = 40) -> go.Figure:
    """Distribution of TF / CF over the rows with both values and CF > 0, with a line at 1.0."""
    title = "Trust Flow / Citation Flow"
    points = _plottable(df, positive="cf", cf="citation_flow", tf="trust_flow")
    if points.empty:
        return _empty_figure(title)
    ratio = points["tf"] / points["cf"]
    fig = go.Figure(go.Histogram(x=ratio.tolist(), nbinsx=bins, name="TF / CF"))
    fig.add_vline(x=1.0, line_dash="dash", line_color="#555", annotation_text="TF = CF")
    fig.update_layout(title=f"{title} ({len(ratio)} domains with CF > 0)", bargap=0.05)
    fig.update_xaxes(title_text="TF / CF")
    fig.update_yaxes(title_text="Domains")
    return fig


# ---------------------------------------------------------------- age and history


def _year_bars(counts: Mapping[int, int], title: str, x_title: str, total: str, empty: str = EMPTY_TEXT) -> go.Figure:
    """One bar per whole year from min to max ({year: domains}), zero-count years included so gaps
    show, titled "title (total domains)"; no counts, the empty figure saying `empty`."""
    if not counts:
        return _empty_figure(title, empty)
    span = range(min(counts), max(counts) + 1)
    fig = go.Figure(go.Bar(x=list(span), y=[int(counts.get(year, 0)) for year in span], name=x_title))
    fig.update_layout(title=f"{title} ({total} domains)", bargap=0.1)
    fig.update_xaxes(title_text=x_title, dtick=1 if len(span) <= 30 else None)
    fig.update_yaxes(title_text="Domains")
    return fig


def _tally(values: pd.Series) -> dict[int, int]:
    return {int(v): int(n) for v, n in values.astype("int64").value_counts().items()}


def age_histogram(df: pd.DataFrame) -> go.Figure:
    """Domains per age in whole years, one bar per year."""
    ages = _plottable(df, age="age")["age"]
    return _year_bars(_tally(ages.round()), "Domain age", "Age (years)", str(len(ages)), _none_has(df, _NO_ARCHIVE))


def first_snapshot_year_histogram(df: pd.DataFrame) -> go.Figure:
    """Domains per year of their first Wayback Machine snapshot."""
    years = pd.Series(dtype="int64") if df.empty else _as_dates(df["wayback_first_date"]).dropna().dt.year
    return _year_bars(
        _tally(years), "First Wayback snapshot", "Year of first snapshot", str(len(years)), _none_has(df, _NO_ARCHIVE)
    )


def snapshots_vs_age(df: pd.DataFrame, max_points: int = 20_000) -> go.Figure:
    """Wayback snapshots (log scale) against age, WebGL, subsampled like `tf_cf_scatter`."""
    title = "Wayback snapshots vs age"
    # A log axis cannot place zero or negative counts.
    points = _plottable(df, positive="snapshots", age="age", snapshots="wayback_snapshots")
    if points.empty:
        return _empty_figure(title, _none_has(df, "an archive age and snapshot count yet (edt enrich looks them up)"))
    points, shown = _subsample(points, max_points)
    fig = go.Figure(
        go.Scattergl(
            x=points["age"].tolist(),
            y=points["snapshots"].tolist(),
            mode="markers",
            name="Domains",
            customdata=_customdata(points),
            marker={"size": 5, "opacity": 0.6},
            hovertemplate="%{customdata[1]}<br>id %{customdata[0]}<br>age %{x} · %{y} snapshots<extra></extra>",
        )
    )
    fig.update_layout(title=title + shown, dragmode="select")
    fig.update_xaxes(title_text="Age (years)")
    fig.update_yaxes(title_text="Wayback snapshots", type="log")
    return fig


def language_breakdown(df: pd.DataFrame, top: int = 15) -> go.Figure:
    """Horizontal bars of domains per language by name (`labels.language_name`), nulls as "Unknown",
    the tail beyond `top` as "Other"."""
    title = "Language"
    if df.empty:
        return _empty_figure(title)
    counts = df["language"].astype("string").value_counts(dropna=False)
    return _label_bars(_by_language_name(counts.items()), title, top)


def _by_language_name(counts: Iterable[tuple[Any, int]]) -> dict[str, int]:
    """Counts per language code summed per language name (EN and en as one); none: "Unknown"."""
    labels: dict[str, int] = {}
    for language, n in counts:
        label = language_name(None if language is None or pd.isna(language) else str(language)) or "Unknown"
        labels[label] = labels.get(label, 0) + int(n)
    return labels


def _label_bars(counts: Mapping[str, int], title: str, top: int) -> go.Figure:
    """Horizontal bars of domains per label, the largest on top, the tail beyond `top` as "Other"."""
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], str(kv[0])))
    rest = sum(n for _, n in ranked[top:])
    ranked = ranked[:top] + ([("Other", rest)] if rest else [])
    fig = go.Figure(
        go.Bar(x=[n for _, n in ranked], y=[str(label) for label, _ in ranked], orientation="h", name="Domains")
    )
    fig.update_layout(title=f"{title} ({sum(counts.values()):,} domains)", height=max(300, 28 * len(ranked) + 120))
    fig.update_xaxes(title_text="Domains")
    # Categories are drawn bottom-up: reverse so the largest language sits on top.
    fig.update_yaxes(autorange="reversed")
    return fig


# ---------------------------------------------------------------- from counts (Mirror.chart_counts)


def tf_cf_heatmap(counts: ChartCounts) -> go.Figure:
    """Listings per (CF, TF) cell over all matches, coloured by log10(count) so a lone cell
    shows beside thousands; the TF = CF line and the "CF far above TF" zone outlined."""
    title = "Trust Flow vs Citation Flow"
    if not counts.tf_cf:
        return _empty_figure(title)
    # Only up to the highest TF and CF held (the axes still show 0-100): a smaller figure to send and draw.
    grid = counts.tf_cf_grid()
    tf_top, cf_top = (int(np.flatnonzero(grid.any(axis=a)).max()) for a in (1, 0))
    fig = go.Figure(
        _log_heatmap(
            grid[: tf_top + 1, : cf_top + 1],
            list(range(cf_top + 1)),
            list(range(tf_top + 1)),
            "CF %{x} · TF %{y}<br>%{customdata:,} listings",
        )
    )
    _zone_and_diagonal_shapes(fig)
    shown = sum(counts.tf_cf.values())
    fig.update_layout(title=f"{title} ({shown:,} listings with both)")
    fig.update_xaxes(title_text="Citation Flow", range=[-0.5, 100.5])
    fig.update_yaxes(title_text="Trust Flow", range=[-0.5, 100.5])
    return fig


def tf_cf_ratio_bars(counts: ChartCounts, step: float = 0.05, top: float = 2.0) -> go.Figure:
    """Listings per TF / CF ratio (bins of `step`; `top` and above in the last bar) over the
    TF x CF cells with CF > 0, each cell weighted by its count; a line at 1.0."""
    title = "Trust Flow / Citation Flow"
    cells = [(tf / cf, n) for (tf, cf), n in counts.tf_cf.items() if cf > 0]
    if not cells:
        return _empty_figure(title)
    bins = int(round(top / step))
    ratios, weights = np.array([r for r, _ in cells]), np.array([n for _, n in cells])
    # A whole-number bin per ratio (rounded first, so 0.3 / 0.05 lands in bin 6, not 5.999...).
    slot = np.minimum(np.floor(np.round(ratios / step, 9)).astype(int), bins)
    per_bin = np.bincount(slot, weights=weights, minlength=bins + 1).astype(int)
    lows = [round(i * step, 6) for i in range(bins + 1)]
    labels = [f"{low:.2f}–{low + step:.2f}" for low in lows[:-1]] + [f"{top:.2f} or more"]
    fig = go.Figure(
        go.Bar(
            x=[low + step / 2 for low in lows],
            y=per_bin.tolist(),
            width=step * 0.95,
            customdata=labels,
            name="TF / CF",
            hovertemplate="TF / CF %{customdata}: %{y:,} listings<extra></extra>",
        )
    )
    fig.add_vline(x=1.0, line_dash="dash", line_color="#555", annotation_text="TF = CF")
    fig.update_layout(title=f"{title} ({int(weights.sum()):,} with CF > 0)", bargap=0.05)
    fig.update_xaxes(title_text=f"TF / CF (the last bar: {top:g} or more)", range=[0, top + step])
    fig.update_yaxes(title_text="Listings")
    return fig


def zone_share_bars(counts: ChartCounts, by: str = "topic") -> go.Figure:
    """Per topic (first segment of `ttf_topic`) or per source: the share of its listings
    with TF and CF that lie in the "CF far above TF" zone, highest first; a line at the share
    over all of them."""
    if by not in ("topic", "source"):
        raise ValueError("by must be 'topic' or 'source'")
    title = f"{ZONE_NAME} by {by}"
    groups = counts.zone_by_topic if by == "topic" else counts.zone_by_source
    if not groups:
        return _empty_figure(title, _none_counted(counts, "both Trust Flow and Citation Flow"))
    named = platform_name if by == "source" else str
    rows = sorted(
        ((named(label) if label else "Unknown", inside, outside) for label, (inside, outside) in groups.items()),
        key=lambda r: (-r[1] / (r[1] + r[2]), r[0]),
    )
    shares = [100 * inside / (inside + outside) for _, inside, outside in rows]
    fig = go.Figure(
        go.Bar(
            # No bar labels: every text is measured by the browser on each redraw; the hover says it.
            x=shares,
            y=[label for label, _, _ in rows],
            orientation="h",
            name="In the zone",
            customdata=[[inside, inside + outside] for _, inside, outside in rows],
            marker={"color": "#d62728"},
            hovertemplate="%{y}: %{customdata[0]:,} of %{customdata[1]:,} in the zone (%{x:.1f}%)<extra></extra>",
        )
    )
    inside_all = sum(inside for _, inside, _ in rows)
    overall = 100 * inside_all / sum(inside + outside for _, inside, outside in rows)
    fig.add_vline(x=overall, line_dash="dash", line_color="#555", annotation_text=f"all: {overall:.0f}%")
    fig.update_layout(title=title, height=max(300, 26 * len(rows) + 120))
    fig.update_xaxes(title_text="Share in the zone (%)", range=[0, max(shares) * 1.1 + 1])
    fig.update_yaxes(autorange="reversed")
    return fig


def _none_counted(counts: ChartCounts, what: str) -> str:
    """The words of an empty chart of counts: no listing matched, or some did and none has `what`."""
    if not counts.total:
        return EMPTY_TEXT
    return f"None of the {counts.total:,} listings has {what}" if counts.total > 1 else f"The listing has no {what}"


def age_bars(counts: ChartCounts) -> go.Figure:
    """Listings per age in whole years (as the API's `age`), one bar per year."""
    total = f"{sum(counts.ages.values()):,}"
    return _year_bars(counts.ages, "Domain age", "Age (years)", total, _none_counted(counts, _NO_ARCHIVE))


def first_year_bars(counts: ChartCounts) -> go.Figure:
    """Listings per year of their first Wayback Machine snapshot."""
    total = f"{sum(counts.first_years.values()):,}"
    empty = _none_counted(counts, _NO_ARCHIVE)
    return _year_bars(counts.first_years, "First Wayback snapshot", "Year of first snapshot", total, empty)


def snapshots_age_heatmap(counts: ChartCounts) -> go.Figure:
    """Listings per (age, snapshot-count bin): bins 1-2-5 per decade (log-spaced), coloured
    by log10(count)."""
    title = "Wayback snapshots vs age"
    if not counts.snapshots_by_age:
        return _empty_figure(
            title, _none_counted(counts, "an archive age and snapshot count yet (edt enrich looks them up)")
        )
    ages = [a for a, _ in counts.snapshots_by_age]
    bins = [k for _, k in counts.snapshots_by_age]
    x = list(range(min(ages), max(ages) + 1))
    y = list(range(min(bins), max(bins) + 1))
    grid = np.zeros((len(y), len(x)), dtype=np.int64)
    for (age, k), n in counts.snapshots_by_age.items():
        grid[k - y[0], age - x[0]] = n
    labels = [snapshot_bin_label(k) for k in y]
    fig = go.Figure(_log_heatmap(grid, x, labels, "age %{x} · %{y} snapshots<br>%{customdata:,} listings"))
    fig.update_layout(title=f"{title} ({int(grid.sum()):,} domains)")
    fig.update_xaxes(title_text="Age (years)")
    fig.update_yaxes(title_text="Wayback snapshots", type="category")
    return fig


def language_bars(counts: ChartCounts, top: int = 15) -> go.Figure:
    """Horizontal bars of listings per language by name (none known: "Unknown"), the tail beyond
    `top` as "Other"."""
    title = "Language"
    if not counts.languages:
        return _empty_figure(title)
    return _label_bars(_by_language_name(counts.languages.items()), title, top)


# ---------------------------------------------------------------- calendar


def calendar_counts(dates: pd.Series | list, month: datetime.date) -> dict[datetime.date, int]:
    """Number of `dates` on each day of `month` (every day present, zeros included, in order).

    `dates` may hold "YYYY-MM-DD" strings, ISO timestamps or date objects; nulls and
    dates in other months are ignored. Only the year and month of `month` are used.
    """
    days = calendar.monthrange(month.year, month.month)[1]
    counts = {datetime.date(month.year, month.month, d): 0 for d in range(1, days + 1)}
    parsed = _as_dates(dates).dropna()
    in_month = parsed[(parsed.dt.year == month.year) & (parsed.dt.month == month.month)]
    for day, n in in_month.dt.day.value_counts().items():
        counts[datetime.date(month.year, month.month, int(day))] = int(n)
    return counts


def drop_calendar(
    dates: pd.Series | list | Mapping[datetime.date, int],
    month: datetime.date,
    title: str = "",
    counted: str = "Drops",
    blank_before: datetime.date | None = None,
) -> go.Figure:
    """Month calendar heatmap: columns Mon..Sun, one row per week, z = dates on that day.

    `dates` are the dates themselves, or already counted ({day: count}, as
    `Mirror.day_counts` gives). Days outside the month have z None (blank). Week 1 is the top row.
    `counted` names what a day's number counts (the colour bar's title: drops, auctions ending).
    Days before `blank_before` are blank too: counts of what is still to come (live auctions'
    ends) know nothing of days gone, and a 0 there would read as nothing ended.
    """
    if isinstance(dates, Mapping):
        counts = {day: 0 for day in calendar_counts([], month)}
        counts.update({d: int(n) for d, n in dates.items() if d in counts})
    else:
        counts = calendar_counts(dates, month)
    if blank_before is not None:
        counts = {d: n for d, n in counts.items() if d >= blank_before}
    weeks = calendar.Calendar(firstweekday=calendar.MONDAY).monthdatescalendar(month.year, month.month)
    z: list[list[int | None]] = []
    text: list[list[str]] = []
    custom: list[list[str | None]] = []
    for week in weeks:
        z.append([counts.get(d) for d in week])
        text.append([_day_text(d, counts.get(d)) for d in week])
        custom.append([d.isoformat() if d in counts else None for d in week])
    rows = [f"Week of {week[0].day} {week[0]:%b}" for week in weeks]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=WEEKDAYS,
            y=rows,
            text=text,
            texttemplate="%{text}",
            customdata=custom,
            colorscale="Reds",
            zmin=0,
            xgap=3,
            ygap=3,
            hoverongaps=False,
            colorbar={"title": {"text": counted}},
            hovertemplate="%{customdata}: %{z}<extra></extra>",
        )
    )
    fig.update_layout(title=title or f"{month:%B %Y}")
    fig.update_xaxes(side="top")
    fig.update_yaxes(autorange="reversed")
    if sum(counts.values()) == 0:
        # Keep the empty calendar visible; say why it is blank above it.
        fig.add_annotation(text=EMPTY_TEXT, x=0.5, y=1.12, xref="paper", yref="paper", showarrow=False)
    return fig


def _day_text(day: datetime.date, count: int | None) -> str:
    if count is None:
        return ""
    return f"{day.day}<br>{count}" if count else str(day.day)


# ---------------------------------------------------------------- price history


def _by_observation(history: pd.DataFrame) -> pd.DataFrame:
    """`listing_history` rows with a parsed `_at` (from `observed_at`), oldest first."""
    if history.empty:
        return history
    when = pd.to_datetime(history["observed_at"], utc=True, errors="coerce", format="ISO8601")
    return history.assign(_at=when).dropna(subset=["_at"]).sort_values("_at", kind="stable")


def _add_observed(fig: go.Figure, frame: pd.DataFrame, values: pd.Series, **trace: object) -> None:
    """A trace of `values` over `frame`'s `_at`, null values left out (and no trace when all are)."""
    keep = values.notna()
    if keep.any():
        fig.add_trace(go.Scatter(x=frame.loc[keep, "_at"].tolist(), y=values[keep].tolist(), **trace))


def _right_axis(title: str, **settings: object) -> dict:
    """A second y axis on the right, over the first, without a grid of its own."""
    return {"title": {"text": title}, "overlaying": "y", "side": "right", "showgrid": False, **settings}


def price_history(history: pd.DataFrame, currency: str | None = None) -> go.Figure:
    """The price a buyer pays over `observed_at` (the highest bid, else the asking or start
    price: `effective_price`, so every bid moves it) as a step line, the start or asking price
    beside it when it differs, and the bid count as markers on a right axis; the price axis
    names `currency`."""
    title = "Price history"
    frame = _by_observation(history)
    if frame.empty:
        return _empty_figure(title)
    fig = go.Figure()
    asked = _numeric(frame["price"]) if "price" in frame.columns else pd.Series(float("nan"), index=frame.index)
    paid = _numeric(frame["effective_price"]).fillna(asked) if "effective_price" in frame.columns else asked
    lines = [("Price (highest bid, else asked)", paid)]
    if (asked.notna() & (asked != paid)).any():
        lines.append(("Start or asking price", asked))
    for label, values in lines:
        _add_observed(fig, frame, values, mode="lines+markers", line={"shape": "hv"}, name=label)
    if "bids_count" in frame.columns:
        bids = _numeric(frame["bids_count"])
        _add_observed(
            fig, frame, bids, mode="markers", name="Bids", yaxis="y2", marker={"symbol": "diamond", "size": 8}
        )
    if not fig.data:
        return _empty_figure(title)
    most_bids = (
        int(_numeric(frame["bids_count"]).max())
        if "bids_count" in frame.columns and _numeric(frame["bids_count"]).notna().any()
        else 1
    )
    fig.update_layout(
        title=title,
        hovermode="x unified",
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.02, "xanchor": "right", "x": 1},  # clear of the axes
        xaxis={"title": {"text": "Observed at"}},
        yaxis={"title": {"text": f"Price ({currency})" if currency else "Price"}, "rangemode": "tozero"},
        # bids are counted: whole ticks only (a step of at least 1), never 2.05
        yaxis2=_right_axis("Bids", rangemode="tozero", tickformat=",d", dtick=max(1, -(-most_bids // 5))),
    )
    return fig


# ---------------------------------------------------------------- metric history

_METRIC_LINES = (
    ("trust_flow", "Trust Flow", "y"),
    ("citation_flow", "Citation Flow", "y"),
    ("domain_authority", "Domain Authority", "y"),
    ("referring_domains", "Referring domains", "y2"),
    ("backlinks_count", "Backlinks", "y2"),
)


def metric_history(history: pd.DataFrame, jump_at: str | None = None) -> go.Figure:
    """TF, CF and DA (0-100, left axis) and referring domains and backlinks (right axis,
    log scale) over `observed_at`, as steps; `jump_at` (an ISO time) marks where a flagged
    rise peaked."""
    title = "Metric history"
    frame = _by_observation(history)
    if frame.empty:
        return _empty_figure(title)
    fig = go.Figure()
    for column, label, axis in _METRIC_LINES:
        if column not in frame.columns:
            continue
        line = {"shape": "hv", "dash": "dot" if axis == "y2" else "solid"}
        _add_observed(fig, frame, _numeric(frame[column]), mode="lines+markers", line=line, name=label, yaxis=axis)
    if not fig.data:
        return _empty_figure(title)
    if jump_at:
        peak = pd.to_datetime(jump_at, utc=True, errors="coerce")
        if pd.notna(peak):
            fig.add_vline(x=peak, line={"color": "crimson", "dash": "dash"})
            fig.add_annotation(x=peak, y=1, yref="paper", text="sharp rise", showarrow=False, font={"color": "crimson"})
    fig.update_layout(
        title=title,
        hovermode="x unified",
        xaxis={"title": {"text": "Observed at"}},
        yaxis={"title": {"text": "TF / CF / DA"}, "range": [0, 100]},
        yaxis2=_right_axis("Referring domains, backlinks", type="log"),
    )
    return fig


# ---------------------------------------------------------------- selection


def frame_ids(points: list[dict]) -> list[int]:
    """Listing ids from Streamlit's `event.selection["points"]`, in order, without duplicates.

    Each point's "customdata" is [id, name, ...] or a bare id; points without one (the
    reference lines) are skipped.
    """
    ids: dict[int, None] = {}
    for point in points or []:
        data = point.get("customdata") if isinstance(point, dict) else None
        if isinstance(data, (list, tuple)):
            data = data[0] if data else None
        if data is None or isinstance(data, bool):
            continue
        try:
            ids[int(data)] = None
        except (TypeError, ValueError):
            continue
    return list(ids)
