"""`toolkit.ui.echarts`: the app's ECharts options carry each Plotly figure of
`toolkit.analysis.charts` exactly (data, labels, order, axes, shapes) and say in their tooltips what
Plotly's hover says. Counts come from a small demo mirror, as the app's pages draw them."""

from __future__ import annotations

import calendar
import dataclasses
import json
import math
import re
from datetime import date

import numpy as np
import plotly.colors
import pytest
from conftest import chart_history, empty_counts, small_demo

from toolkit import Mirror
from toolkit.analysis import charts
from toolkit.query.aggregates import ZONE_OFFSET, ZONE_SLOPE, ChartCounts, snapshot_bin_label
from toolkit.ui import echarts
from toolkit.ui.echarts import option

COUNT_CHARTS = (
    charts.tf_cf_heatmap,
    charts.tf_cf_ratio_bars,
    charts.zone_share_bars,
    charts.age_bars,
    charts.first_year_bars,
    charts.snapshots_age_heatmap,
    charts.language_bars,
)
VIRIDIS = [c for c in plotly.colors.sequential.Viridis]


@pytest.fixture(scope="module")
def counts(tmp_path_factory) -> ChartCounts:
    path = small_demo(tmp_path_factory.mktemp("echarts") / "demo.db", 9)
    found = Mirror(path).chart_counts({})
    assert found.tf_cf and found.ages and found.snapshots_by_age and found.languages
    return found


def tooltip(series: dict, item: list) -> str:
    """The tooltip ECharts shows for a data item: the series' formatter with {@[k]} filled in."""
    return re.sub(r"\{@\[(\d+)\]\}", lambda m: str(item[int(m.group(1))]), series["tooltip"]["formatter"])


def label(series: dict, item: list) -> str:
    return re.sub(r"\{@\[(\d+)\]\}", lambda m: str(item[int(m.group(1))]), series["label"]["formatter"])


def mark_lines(series: dict) -> list:
    return series["markLine"]["data"]


def segments(series: dict, name: str) -> list[tuple[tuple, tuple]]:
    return [
        (tuple(a["coord"]), tuple(b["coord"]))
        for a, b in (m for m in mark_lines(series) if isinstance(m, list))
        if a["name"] == name
    ]


def test_the_module_exports_exactly_its_api():
    assert sorted(echarts.__all__) == ["DEFAULT_HEIGHT", "option", "show", "show_made", "warm_options"]
    assert all(getattr(echarts, name) is not None for name in echarts.__all__)


def test_the_tf_cf_heatmap_sends_every_non_empty_cell_once_with_its_count(counts):
    busy = dataclasses.replace(counts, tf_cf={**counts.tf_cf, (7, 12): 1234})
    out = option(charts.tf_cf_heatmap(busy))
    heat = out["series"][0]
    assert heat["type"] == "heatmap" and out["xAxis"]["type"] == out["yAxis"][0]["type"] == "category"
    # Both axes span 0-100 as Plotly's range [-0.5, 100.5]: category i is the value i.
    assert out["xAxis"]["data"] == out["yAxis"][0]["data"] == [str(n) for n in range(101)]
    assert (out["xAxis"]["name"], out["yAxis"][0]["name"]) == ("Citation Flow", "Trust Flow")
    cells = {
        (int(out["yAxis"][0]["data"][item[1]]), int(out["xAxis"]["data"][item[0]])): int(item[5].replace(",", ""))
        for item in heat["data"]
    }
    assert cells == busy.tf_cf  # sparse: exactly the non-empty cells, keyed (TF, CF)
    assert len(heat["data"]) == len(busy.tf_cf) < 101 * 101
    for item in heat["data"]:
        assert item[2] == pytest.approx(math.log10(busy.tf_cf[(item[1], item[0])]), abs=1e-3)  # coloured by log10
    item = next(i for i in heat["data"] if (i[0], i[1]) == (12, 7))
    assert tooltip(heat, item) == "CF 12 · TF 7<br>1,234 listings"
    (tf, cf), n = min(counts.tf_cf.items())
    item = next(i for i in heat["data"] if (i[0], i[1]) == (cf, tf))
    assert tooltip(heat, item) == f"CF {cf} · TF {tf}<br>{n:,} listings"
    assert out["tooltip"]["trigger"] == "item"


def test_the_heatmap_colour_bar_is_viridis_over_log_counts_labelled_as_counts(counts):
    out = option(charts.tf_cf_heatmap(counts))
    (visual,) = out["visualMap"]
    most = max(counts.tf_cf.values())
    assert visual["inRange"]["color"] == VIRIDIS and visual["dimension"] == 2 and visual["seriesIndex"] == 0
    assert visual["min"] == 0 and visual["max"] == pytest.approx(math.log10(most), abs=1e-4)
    assert visual["text"] == [f"{most:,} listings", "1"]  # the ends read as counts, not log10


def test_the_zone_and_the_diagonal_land_where_plotly_draws_them(counts):
    fig = charts.tf_cf_heatmap(counts)
    out = option(fig)
    heat = out["series"][0]
    top = (100 - ZONE_OFFSET) / ZONE_SLOPE
    zone = segments(heat, charts.ZONE_NAME)
    assert zone == [((ZONE_OFFSET, 0), (100, 0)), ((100, 0), (100, top)), ((100, top), (ZONE_OFFSET, 0))]
    assert segments(heat, charts.DIAGONAL_NAME) == [((0, 0), (100, 100))]
    # On the category axes, coordinate c is category str(c): where Plotly centres cell c.
    assert out["xAxis"]["data"][ZONE_OFFSET] == str(ZONE_OFFSET) and out["yAxis"][0]["data"][int(top)] == str(int(top))
    styles = {m[0]["name"]: m[0]["lineStyle"] for m in mark_lines(heat)}
    assert styles[charts.ZONE_NAME] == {"type": "dotted", "color": "#b22222", "width": 2}
    assert styles[charts.DIAGONAL_NAME] == {"type": "dashed", "color": "#555", "width": 1}
    notes = {p["label"]["formatter"]: p["coord"] for p in heat["markPoint"]["data"]}
    assert notes == {charts.ZONE_NAME: [78, 12], charts.DIAGONAL_NAME: [88, 92]}


def test_the_ratio_bars_stand_at_their_bin_centres_on_a_value_axis(counts):
    fig = charts.tf_cf_ratio_bars(counts)
    out = option(fig)
    bars = out["series"][0]
    trace = fig.data[0]
    assert out["xAxis"]["type"] == "value" and (out["xAxis"]["min"], out["xAxis"]["max"]) == (0, 2.05)
    assert [item[0] for item in bars["data"]] == pytest.approx(list(trace.x))
    assert [item[1] for item in bars["data"]] == list(trace.y)
    assert sum(item[1] for item in bars["data"]) == sum(n for (_, cf), n in counts.tf_cf.items() if cf > 0)
    assert bars["barWidth"] == "95%"  # width 0.95 x step, the step being the gap between centres
    (vline,) = mark_lines(bars)
    assert vline["xAxis"] == 1.0 and vline["label"]["formatter"] == "TF = CF" and vline["lineStyle"]["type"] == "dashed"
    # A bar's hover shows anywhere in its column (an axis tooltip), its template at the top level.
    assert out["tooltip"] == {
        "trigger": "axis",
        "confine": True,
        "axisPointer": {"type": "shadow"},
        "formatter": bars["tooltip"]["formatter"],
    }
    biggest = max(range(len(trace.y)), key=lambda i: trace.y[i])
    assert tooltip(bars, bars["data"][biggest]) == f"TF / CF {trace.customdata[biggest]}: {trace.y[biggest]:,} listings"
    assert out["xAxis"]["name"] == "TF / CF (the last bar: 2 or more)" and out["yAxis"][0]["name"] == "Listings"


@pytest.mark.parametrize("by", ["topic", "source"])
def test_the_zone_shares_are_horizontal_bars_highest_on_top(counts, by):
    fig = charts.zone_share_bars(counts, by)
    out = option(fig)
    bars = out["series"][0]
    groups = counts.zone_by_topic if by == "topic" else counts.zone_by_source
    if by == "source":  # platforms by name, as the tables say them
        from toolkit.store.labels import platform_name

        groups = {platform_name(g) if g else g: v for g, v in groups.items()}
    assert out["yAxis"][0] == {**out["yAxis"][0], "type": "category", "inverse": True}
    labels = out["yAxis"][0]["data"]
    assert labels == list(fig.data[0].y) and set(labels) == {g or "Unknown" for g in groups}
    shares = {item[1]: item[0] for item in bars["data"]}
    for group, (inside, outside) in groups.items():
        assert shares[group or "Unknown"] == pytest.approx(100 * inside / (inside + outside))
    assert [shares[label] for label in labels] == sorted(shares.values(), reverse=True)
    assert bars["itemStyle"] == {"color": "#d62728"}
    first = bars["data"][0]
    inside, outside = groups[None if first[1] == "Unknown" and None in groups else first[1]]
    assert tooltip(bars, first) == (
        f"{first[1]}: {inside:,} of {inside + outside:,} in the zone ({100 * inside / (inside + outside):.1f}%)"
    )
    (vline,) = mark_lines(bars)
    overall = 100 * sum(i for i, _ in groups.values()) / sum(i + o for i, o in groups.values())
    assert vline["xAxis"] == pytest.approx(overall) and vline["label"]["formatter"] == f"all: {overall:.0f}%"
    assert vline["label"]["position"] == "start"  # the top of the plot over a reversed axis, as Plotly's


@pytest.mark.parametrize("draw, field", [(charts.age_bars, "ages"), (charts.first_year_bars, "first_years")])
def test_year_bars_are_one_category_per_year_gaps_included(counts, draw, field):
    per_year = getattr(counts, field)
    out = option(draw(counts))
    years = list(range(min(per_year), max(per_year) + 1))
    assert out["xAxis"]["type"] == "category" and out["xAxis"]["data"] == [str(y) for y in years]
    assert out["series"][0]["data"] == [[str(y), per_year.get(y, 0)] for y in years]
    assert out["yAxis"][0]["name"] == "Domains" and out["series"][0]["barCategoryGap"] == "10%"
    assert "formatter" not in out["series"][0]["tooltip"]  # no hovertemplate: ECharts' own tooltip


def test_the_snapshots_heatmap_has_its_bins_as_labelled_rows(counts):
    fig = charts.snapshots_age_heatmap(counts)
    out = option(fig)
    heat = out["series"][0]
    rows = out["yAxis"][0]["data"]
    bins = [k for _, k in counts.snapshots_by_age]
    assert rows == [snapshot_bin_label(k) for k in range(min(bins), max(bins) + 1)]
    ages = out["xAxis"]["data"]
    cells = {}
    for item in heat["data"]:
        cells[(int(ages[item[0]]), rows[item[1]])] = int(item[5].replace(",", ""))
        assert tooltip(heat, item) == f"age {ages[item[0]]} · {rows[item[1]]} snapshots<br>{item[5]} listings"
    assert cells == {(age, snapshot_bin_label(k)): n for (age, k), n in counts.snapshots_by_age.items()}
    assert out["visualMap"][0]["inRange"]["color"] == VIRIDIS
    assert out["visualMap"][0]["text"][0] == f"{max(counts.snapshots_by_age.values()):,} listings"


def test_language_bars_keep_their_order_and_largest_on_top(counts):
    fig = charts.language_bars(counts)
    out = option(fig)
    assert out["yAxis"][0]["inverse"] is True and out["yAxis"][0]["data"] == list(fig.data[0].y)
    assert [item[::-1] for item in out["series"][0]["data"]] == [[y, x] for x, y in zip(fig.data[0].x, fig.data[0].y)]
    assert out["series"][0]["data"][0][0] == max(fig.data[0].x)


def test_the_drop_calendar_shows_each_day_number_and_count_in_its_cell():
    month = date(2026, 3, 1)
    per_day = {date(2026, 3, 5): 4, date(2026, 3, 9): 1234, date(2026, 3, 31): 2}
    out = option(charts.drop_calendar(per_day, month, title="Pending-delete drops, March 2026"))
    heat = out["series"][0]
    assert out["title"]["text"] == "Pending-delete drops, March 2026"
    assert out["xAxis"]["data"] == charts.WEEKDAYS and out["xAxis"]["position"] == "top"
    weeks = calendar.Calendar(firstweekday=calendar.MONDAY).monthdatescalendar(2026, 3)
    assert (
        out["yAxis"][0]["data"] == [f"Week of {w[0].day} {w[0]:%b}" for w in weeks]
        and out["yAxis"][0]["inverse"] is True
    )
    by_day = {item[3]: item for item in heat["data"]}  # customdata: the ISO day
    assert sorted(by_day) == [date(2026, 3, d).isoformat() for d in range(1, 32)]  # days of other months: no cell
    for day in (date(2026, 3, 1), date(2026, 3, 5), date(2026, 3, 9)):
        item = by_day[day.isoformat()]
        week = next(i for i, w in enumerate(weeks) if day in w)
        assert (item[0], item[1]) == (day.weekday(), week) and item[2] == per_day.get(day, 0)
        n = per_day.get(day, 0)
        assert label(heat, item) == (f"{day.day}\n{n}" if n else str(day.day))
        assert tooltip(heat, item) == f"{day.isoformat()}: {n}"
    (visual,) = out["visualMap"]
    reds = [c for c in plotly.colors.sequential.Reds]
    assert visual["inRange"]["color"] == reds and (visual["min"], visual["max"]) == (0, 1234)
    assert visual["text"] == ["1,234 drops", "0"]
    assert heat["itemStyle"] == {"borderColor": "#ffffff", "borderWidth": 3}  # xgap / ygap


def test_an_empty_month_still_draws_its_days_and_says_why_it_is_blank():
    out = option(charts.drop_calendar({}, date(2026, 2, 1)))
    assert len(out["series"][0]["data"]) == 28
    assert [g["style"]["text"] for g in out["graphic"]] == [charts.EMPTY_TEXT]


def test_price_history_steps_on_a_time_axis_with_the_bids_on_the_right():
    """The price line is what a buyer pays (the highest bid, else the price asked): every bid
    moves it; the start price stays beside it; the price axis names the currency."""
    history = chart_history().assign(price=[10.0, 10.0, 10.0], effective_price=[10.0, 11.0, 25.0])
    out = option(charts.price_history(history, currency="USD"))
    assert out["xAxis"]["type"] == "time" and out["useUTC"] is True and out["tooltip"]["trigger"] == "axis"
    named = {s["name"]: s for s in out["series"]}
    paid = "Price (highest bid, else asked)"
    assert set(named) == {paid, "Start or asking price", "Bids"}
    assert named[paid]["data"] == [
        ["2026-11-01T07:00:00Z", 10.0],
        ["2026-11-05T07:00:00Z", 11.0],
        ["2026-11-20T07:00:00Z", 25.0],
    ]
    assert [v for _, v in named["Start or asking price"]["data"]] == [10.0, 10.0, 10.0]
    assert named[paid]["step"] == "end" and named[paid]["type"] == "line" and named[paid]["showSymbol"]
    assert out["yAxis"][0]["name"] == "Price (USD)"
    bids = named["Bids"]
    assert bids["type"] == "scatter" and bids["yAxisIndex"] == 1 and bids["symbol"] == "diamond"
    assert [v for _, v in bids["data"]] == [0, 1, 7]
    right = out["yAxis"][1]
    assert right["position"] == "right" and right["minInterval"] == 1 and right["interval"] == 2  # ceil(7 / 5)
    assert out["legend"]["data"] == [paid, "Start or asking price", "Bids"]
    closeout = option(charts.price_history(chart_history()))  # asked and paid the same: one line
    assert [s["name"] for s in closeout["series"]] == [paid, "Bids"] and closeout["yAxis"][0]["name"] == "Price"


def test_metric_history_has_a_log_right_axis_and_marks_the_rise():
    out = option(charts.metric_history(chart_history(), jump_at="2026-11-20T07:00:00Z"))
    named = {s["name"]: s for s in out["series"]}
    assert set(named) == {"Trust Flow", "Citation Flow", "Referring domains", "Backlinks"}  # no DA: never observed
    assert (out["yAxis"][0]["min"], out["yAxis"][0]["max"]) == (0, 100) and out["yAxis"][1]["type"] == "log"
    assert [v for _, v in named["Trust Flow"]["data"]] == [8, 9, 31] and named["Trust Flow"]["yAxisIndex"] == 0
    assert named["Backlinks"]["yAxisIndex"] == 1 and named["Backlinks"]["lineStyle"]["type"] == "dotted"
    assert [v for _, v in named["Referring domains"]["data"]] == [None, 95, 120]  # 0 has no place on a log axis
    vline = next(m for s in out["series"] if "markLine" in s for m in mark_lines(s))
    assert vline["xAxis"] == "2026-11-20T07:00:00Z" and vline["label"]["formatter"] == "sharp rise"
    assert vline["lineStyle"]["color"] == "crimson"


@pytest.mark.parametrize("draw", COUNT_CHARTS)
def test_every_empty_chart_says_no_rows_match(draw):
    empty = empty_counts()
    out = option(draw(empty))
    assert out["series"] == [] and out["xAxis"]["show"] is False and out["yAxis"][0]["show"] is False
    assert out["graphic"][0]["style"]["text"] == charts.EMPTY_TEXT
    assert (out["graphic"][0]["left"], out["graphic"][0]["top"]) == ("center", "middle")
    assert out["title"]["text"] == draw(empty).layout.title.text
    for history_chart in (charts.price_history, charts.metric_history):
        assert option(history_chart(chart_history().iloc[0:0]))["graphic"][0]["style"]["text"] == charts.EMPTY_TEXT


def test_every_option_is_plain_json(counts):
    figures = [draw(counts) for draw in COUNT_CHARTS]
    figures += [
        charts.drop_calendar({date(2026, 3, 5): 4}, date(2026, 3, 1)),
        charts.price_history(chart_history()),
        charts.metric_history(chart_history(), jump_at="2026-11-20T07:00:00Z"),
    ]
    for fig in figures:
        text = json.dumps(option(fig), allow_nan=False)  # NumPy scalars, NaN and times converted
        assert json.loads(text)["series"]


def test_numpy_values_become_python_values():
    import plotly.graph_objects as go

    fig = go.Figure(
        go.Bar(
            x=np.array([0.5, 1.5]),
            y=np.array([3, 4], dtype=np.int64),
            width=0.9,
            customdata=np.array([7, 8], dtype=np.int32),
            hovertemplate="%{customdata:,d} at %{x:.1f}",
        )
    )
    out = option(fig)
    assert out["series"][0]["data"] == [[0.5, 3, "7", "0.5"], [1.5, 4, "8", "1.5"]]
    assert all(type(v) in (float, int, str) for item in out["series"][0]["data"] for v in item)
    assert tooltip(out["series"][0], out["series"][0]["data"][1]) == "8 at 1.5"


def test_show_draws_the_option_at_the_figures_height():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_show_two_charts, default_timeout=30).run()
    assert not at.exception
    drawn = at.get("echarts_chart")
    assert len(drawn) == 2
    specs = [json.loads(e.proto.spec) for e in drawn]
    assert specs[0]["series"][0]["data"] == [["a", 1], ["b", 2]] and specs[1]["title"]["text"] == "tall"
    assert all(e.proto.id for e in drawn)  # keyed: a stable identity across reruns


def _show_two_charts() -> None:
    import plotly.graph_objects as go

    from toolkit.ui import echarts

    echarts.show(go.Figure(go.Bar(x=["a", "b"], y=[1, 2])), key="first")
    echarts.show(go.Figure(layout={"title": {"text": "tall"}, "height": 700}), key="second")


def test_show_sizes_the_chart_by_the_figures_height():
    import plotly.graph_objects as go

    # AppTest keeps only the chart's own proto, not the element's height: read the call instead.
    calls = []

    class Column:
        def echarts_chart(self, spec, **options):
            calls.append((spec, options))

    echarts.show(go.Figure(go.Bar(x=["a"], y=[1]), layout={"height": 640}), key="tall", where=Column())
    echarts.show(go.Figure(go.Bar(x=["a"], y=[1])), key="plain", where=Column())
    assert [options for _, options in calls] == [
        {"key": "tall", "height": 640},
        {"key": "plain", "height": echarts.DEFAULT_HEIGHT},
    ]
    assert calls[0][0]["series"][0]["data"] == [["a", 1]]


def test_the_warm_up_charts_file_is_what_the_charts_convert_to():
    """The charts a page without one has the browser draw out of sight (static/warm-charts.json)
    are the converter's own output for the pages' kinds of chart (static/README.md rewrites it)."""
    from toolkit.ui.assets import warm_options as kept
    from toolkit.ui.echarts import warm_options

    assert kept() == warm_options() and {s["type"] for o in kept() for s in o["series"]} >= {"line", "bar", "heatmap"}
