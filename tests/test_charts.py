"""`toolkit.analysis.charts`: figures built from small hand-made frames with nulls, empty frames and selections."""

from __future__ import annotations

import calendar
import datetime
import re

import numpy as np
import pandas as pd
import plotly.graph_objects as go

import pytest
from conftest import empty_counts

from toolkit.analysis import charts
from toolkit.analysis.charts import (
    age_bars,
    age_histogram,
    calendar_counts,
    drop_calendar,
    first_snapshot_year_histogram,
    first_year_bars,
    frame_ids,
    language_bars,
    language_breakdown,
    price_history,
    snapshots_age_heatmap,
    snapshots_vs_age,
    tf_cf_heatmap,
    tf_cf_ratio_bars,
    tf_cf_ratio_histogram,
    tf_cf_scatter,
    zone_share_bars,
)
from toolkit.query.aggregates import ChartCounts


def listings(n: int = 6) -> pd.DataFrame:
    """Rows 1..6: row 2 has no TF, row 4 no CF (pd.NA), row 5 CF = 0; nulls in every optional column."""
    base = pd.DataFrame(
        {
            "id": [1, 2, 3, 4, 5, 6],
            "name": ["a.fr", "b.fr", "c.de", "d.com", "e.com", "f.io"],
            "source": ["dynadot", "sedo", "sedo", "godaddy", "sedo", "dynadot"],
            "tld": [".fr", ".fr", ".de", ".com", ".com", ".io"],
            "trust_flow": pd.array([10, None, 30, 5, 0, 40], dtype="Int64"),
            "citation_flow": pd.array([20, 15, 30, pd.NA, 0, 20], dtype="Int64"),
            "score": pd.array([50, 40, 60, 10, 0, 70], dtype="Int64"),
            "ttf_topic": ["Recreation/Travel", "Recreation/Autos", None, "Business/Jobs", "Arts", np.nan],
            "age": pd.array([3, None, 12, 3, 0, 5], dtype="Int64"),
            "wayback_first_date": ["2014-03-01", None, "2010-12-31", "2014-07-07", np.nan, "2021-01-15"],
            "wayback_snapshots": pd.array([120, 4, None, 0, 7, 30], dtype="Int64"),
            "language": ["FR", "FR", "DE", None, "", "EN"],
            "auction_end_date": ["2026-11-02T10:00:00Z", None, None, None, None, None],
            "price": [10.0, 20.0, np.nan, 5.0, 1.0, 99.0],
            "max_bid": [np.nan, 25.0, 30.0, 5.0, 1.0, 99.0],
        }
    )
    return base.head(n)


def data_traces(fig: go.Figure) -> list:
    return [t for t in fig.data if t.type == "scattergl"]


def has_empty_annotation(fig: go.Figure) -> bool:
    return any(a.text == "No rows match" for a in fig.layout.annotations)


# ---------------------------------------------------------------- tf_cf_scatter


def test_scatter_plots_rows_with_both_flows_as_webgl():
    fig = tf_cf_scatter(listings())
    traces = data_traces(fig)
    assert traces and all(isinstance(t, go.Scattergl) for t in traces)
    # rows 2 (TF null) and 4 (CF null) are dropped
    assert sum(len(t.x) for t in traces) == 4
    points = {row[0]: (x, y) for t in traces for x, y, row in zip(t.x, t.y, t.customdata)}
    assert points == {1: (20, 10), 3: (30, 30), 5: (0, 0), 6: (20, 40)}
    assert not has_empty_annotation(fig)


def test_scatter_groups_by_topic_category_with_unknown():
    fig = tf_cf_scatter(listings())
    groups = {t.name: sorted(row[0] for row in t.customdata) for t in data_traces(fig)}
    assert groups == {"Recreation": [1], "Unknown": [3, 6], "Arts": [5]}


def test_scatter_groups_by_source():
    fig = tf_cf_scatter(listings(), color_by="source")
    groups = {t.name: sorted(row[0] for row in t.customdata) for t in data_traces(fig)}
    assert groups == {"dynadot": [1, 6], "sedo": [3, 5]}
    with pytest.raises(ValueError):
        tf_cf_scatter(listings(), color_by="tld")


def test_scatter_customdata_is_id_and_name():
    fig = tf_cf_scatter(listings())
    rows = [list(row) for t in data_traces(fig) for row in t.customdata]
    assert [1, "a.fr"] in rows and [6, "f.io"] in rows
    assert all(isinstance(row[0], int) for row in rows)


def test_scatter_has_diagonal_zone_and_axes():
    fig = tf_cf_scatter(listings())
    diagonal = [t for t in fig.data if t.name == "TF = CF"]
    assert len(diagonal) == 1
    assert list(diagonal[0].x) == list(diagonal[0].y) == [0, 100]
    zone = [t for t in fig.data if t.name == "CF far above TF (bought links?)"]
    assert len(zone) == 1 and zone[0].fill == "toself"
    # every vertex of the zone satisfies CF >= 2 TF + 10
    assert all(cf >= 2 * tf + 10 for cf, tf in zip(zone[0].x, zone[0].y))
    assert max(zone[0].x) == 100 and max(zone[0].y) == 45
    assert fig.layout.xaxis.title.text == "Citation Flow"
    assert fig.layout.yaxis.title.text == "Trust Flow"
    assert list(fig.layout.xaxis.range) == [0, 100] and list(fig.layout.yaxis.range) == [0, 100]


def test_scatter_collapses_groups_beyond_twelve_into_other():
    # 14 sources: s00 has 15 rows, s01 14, ... s13 2 rows; the two smallest go to "Other"
    rows = []
    for i in range(14):
        rows += [f"s{i:02d}"] * (15 - i)
    df = pd.DataFrame(
        {
            "id": range(len(rows)),
            "name": [f"d{i}.com" for i in range(len(rows))],
            "source": rows,
            "trust_flow": pd.array([10] * len(rows), dtype="Int64"),
            "citation_flow": pd.array([20] * len(rows), dtype="Int64"),
            "ttf_topic": [None] * len(rows),
        }
    )
    fig = tf_cf_scatter(df, color_by="source")
    names = [t.name for t in data_traces(fig)]
    assert len(names) == 13
    assert "Other" in names and "s12" not in names and "s13" not in names and "s11" in names
    other = next(t for t in data_traces(fig) if t.name == "Other")
    assert len(other.x) == 3 + 2
    assert sum(len(t.x) for t in data_traces(fig)) == len(rows)


def test_scatter_subsamples_deterministically():
    n = 1000
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "id": rng.permutation(n) + 1,
            "name": [f"d{i}.com" for i in range(n)],
            "source": ["x"] * n,
            "trust_flow": pd.array(rng.integers(0, 100, n), dtype="Int64"),
            "citation_flow": pd.array(rng.integers(0, 100, n), dtype="Int64"),
            "ttf_topic": ["Arts/Music"] * n,
        }
    )
    fig = tf_cf_scatter(df, max_points=300)
    traces = data_traces(fig)
    shown = sum(len(t.x) for t in traces)
    assert shown <= 300
    assert f"showing {shown} of {n}" in fig.layout.title.text
    ids = sorted(row[0] for t in traces for row in t.customdata)
    # every 4th id after sorting: 1, 5, 9, ...
    assert ids == list(range(1, n + 1, 4))
    again = tf_cf_scatter(df.sample(frac=1, random_state=1), max_points=300)
    assert sorted(row[0] for t in data_traces(again) for row in t.customdata) == ids
    assert "showing" not in tf_cf_scatter(df, max_points=n).layout.title.text


def test_scatter_empty_and_all_null():
    assert has_empty_annotation(tf_cf_scatter(listings().iloc[0:0]))
    assert has_empty_annotation(tf_cf_scatter(pd.DataFrame()))
    nulls = listings().assign(trust_flow=pd.array([None] * 6, dtype="Int64"))
    fig = tf_cf_scatter(nulls)
    assert has_empty_annotation(fig) and not data_traces(fig)


# ---------------------------------------------------------------- ratio histogram


def test_ratio_histogram_values_and_line():
    fig = tf_cf_ratio_histogram(listings(), bins=10)
    hist = fig.data[0]
    assert isinstance(hist, go.Histogram) and hist.nbinsx == 10
    # rows 1 (10/20), 3 (30/30), 6 (40/20); row 5 has CF 0, rows 2 and 4 a null
    assert sorted(hist.x) == [0.5, 1.0, 2.0]
    assert fig.layout.xaxis.title.text == "TF / CF"
    assert any(s.x0 == 1.0 and s.x1 == 1.0 for s in fig.layout.shapes)


def test_ratio_histogram_empty():
    assert has_empty_annotation(tf_cf_ratio_histogram(listings().iloc[0:0]))
    zero_cf = listings().assign(citation_flow=pd.array([0] * 6, dtype="Int64"))
    assert has_empty_annotation(tf_cf_ratio_histogram(zero_cf))


# ---------------------------------------------------------------- years


def test_age_histogram_one_bar_per_year():
    fig = age_histogram(listings())
    bar = fig.data[0]
    assert list(bar.x) == list(range(0, 13))
    counts = dict(zip(bar.x, bar.y))
    assert counts[3] == 2 and counts[0] == 1 and counts[5] == 1 and counts[12] == 1 and counts[7] == 0
    assert sum(bar.y) == 5  # the null age is dropped
    assert has_empty_annotation(age_histogram(listings().iloc[0:0]))


def test_first_snapshot_year_histogram():
    fig = first_snapshot_year_histogram(listings())
    counts = dict(zip(fig.data[0].x, fig.data[0].y))
    assert counts[2014] == 2 and counts[2010] == 1 and counts[2021] == 1 and counts[2015] == 0
    assert min(counts) == 2010 and max(counts) == 2021
    assert has_empty_annotation(first_snapshot_year_histogram(pd.DataFrame()))


def test_snapshots_vs_age_log_scatter():
    fig = snapshots_vs_age(listings())
    (trace,) = fig.data
    assert isinstance(trace, go.Scattergl)
    assert fig.layout.yaxis.type == "log"
    # row 2: null age, row 3: null snapshots, row 4: zero snapshots (not on a log axis)
    assert sorted(row[0] for row in trace.customdata) == [1, 5, 6]
    assert sorted(zip(trace.x, trace.y)) == [(0, 7), (3, 120), (5, 30)]
    big = pd.DataFrame(
        {
            "id": range(50),
            "name": ["x"] * 50,
            "age": pd.array([1] * 50, dtype="Int64"),
            "wayback_snapshots": pd.array([2] * 50, dtype="Int64"),
        }
    )
    small = snapshots_vs_age(big, max_points=20)
    assert len(small.data[0].x) <= 20 and "showing 17 of 50" in small.layout.title.text
    assert has_empty_annotation(snapshots_vs_age(listings().iloc[0:0]))


def test_language_breakdown_top_and_other():
    fig = language_breakdown(listings())
    bar = fig.data[0]
    assert bar.orientation == "h"
    counts = dict(zip(bar.y, bar.x))
    assert counts == {"French": 2, "Unknown": 2, "German": 1, "English": 1}  # by name, not ISO code
    narrow = language_breakdown(listings(), top=2)
    counts = dict(zip(narrow.data[0].y, narrow.data[0].x))
    assert counts == {"French": 2, "Unknown": 2, "Other": 2}
    mixed = language_breakdown(pd.DataFrame({"language": ["en", "EN", "xx"]}))  # one language in either case
    assert dict(zip(mixed.data[0].y, mixed.data[0].x)) == {"English": 2, "xx": 1}  # an unknown code as it is
    assert list(narrow.data[0].y)[-1] == "Other"
    assert has_empty_annotation(language_breakdown(listings().iloc[0:0]))


# ---------------------------------------------------------------- from counts (Mirror.chart_counts)

# 10 listings: 7 with TF and CF (one at CF 0), ages of 3 (twice) and 5, four languages.
COUNTS = ChartCounts(
    total=10,
    tf_cf={(10, 30): 3, (20, 20): 2, (0, 0): 1, (40, 20): 1},
    zone_by_topic={"Health": (3, 1), None: (0, 3)},
    zone_by_source={"sedo": (3, 2), "dynadot": (0, 2)},
    ages={3: 2, 5: 1},
    first_years={2014: 2, 2021: 1},
    snapshots_by_age={(3, 5): 2, (5, 3): 1},
    languages={"FR": 4, None: 3, "EN": 2, "DE": 1},
)
NONE = empty_counts(4, languages={None: 4})


def test_heatmap_counts_each_tf_cf_cell_on_a_log_colour_scale():
    fig = tf_cf_heatmap(COUNTS)
    heat = fig.data[0]
    assert heat.type == "heatmap" and not [t for t in fig.data if t.type.endswith("gl")]
    cells = np.asarray(heat.customdata)
    assert cells.shape == (41, 31) and cells[10, 30] == 3 and cells[40, 20] == 1 and cells.sum() == 7
    z = np.asarray(heat.z, dtype=float)
    assert z[10, 30] == pytest.approx(np.log10(3), abs=1e-6) and np.isnan(z[30, 25])  # empty cells are blank
    assert "%{customdata:,} listings" in heat.hovertemplate and "TF %{y}" in heat.hovertemplate
    assert len(fig.data) == 1  # the zone and the diagonal are shapes, not traces
    shapes = {shape.name: shape for shape in fig.layout.shapes}
    corners = [
        tuple(float(v) for v in point.split(","))
        for point in re.findall(r"[\d.]+,[\d.]+", shapes[charts.ZONE_NAME].path)
    ]
    assert all(cf >= 2 * tf + 10 for cf, tf in corners) and max(tf for _, tf in corners) == 45
    diagonal = shapes["TF = CF"]
    assert (diagonal.x0, diagonal.y0, diagonal.x1, diagonal.y1) == (0, 0, 100, 100)
    assert {a.text for a in fig.layout.annotations} >= {charts.ZONE_NAME, "TF = CF"}
    assert "7 listings with both" in fig.layout.title.text
    assert has_empty_annotation(tf_cf_heatmap(NONE))


def test_ratio_bars_weight_each_cell_by_its_count():
    fig = tf_cf_ratio_bars(COUNTS)
    bars = dict(zip(fig.data[0].customdata, fig.data[0].y))
    # 10/30 -> 0.30-0.35 (three), 20/20 -> 1.00-1.05 (two), 40/20 = 2 -> the last bar; CF 0 has no ratio
    assert bars["0.30–0.35"] == 3 and bars["1.00–1.05"] == 2 and bars["2.00 or more"] == 1 and sum(bars.values()) == 6
    assert "6 with CF > 0" in fig.layout.title.text
    assert has_empty_annotation(tf_cf_ratio_bars(NONE))


def test_zone_share_bars_per_topic_and_source():
    topics = zone_share_bars(COUNTS, "topic").data[0]
    assert list(topics.y) == ["Health", "Unknown"] and list(topics.x) == [75.0, 0.0]
    assert [list(c) for c in topics.customdata] == [[3, 4], [0, 3]]
    sources = zone_share_bars(COUNTS, "source").data[0]
    assert list(sources.y) == ["Sedo", "Dynadot"] and sources.x[0] == pytest.approx(60.0)  # platforms by name
    with pytest.raises(ValueError):
        zone_share_bars(COUNTS, "tld")
    assert has_empty_annotation(zone_share_bars(empty_counts(0)))


def test_count_charts_of_listings_without_archive_data_say_so_not_that_no_row_matches():
    """Rows matched (a feeds-only mirror: no archive data, no TF/CF): the charts say what they lack."""
    for figure in (age_bars(NONE), first_year_bars(NONE), snapshots_age_heatmap(NONE), zone_share_bars(NONE, "source")):
        [annotation] = [a.text for a in figure.layout.annotations]
        assert annotation.startswith("None of the 4 listings has "), annotation
    assert [a.text for a in age_bars(empty_counts(0)).layout.annotations] == [charts.EMPTY_TEXT]


def test_age_year_and_language_bars_from_counts():
    ages = age_bars(COUNTS).data[0]
    assert list(ages.x) == [3, 4, 5] and list(ages.y) == [2, 0, 1]  # the empty year shows as a gap
    years = first_year_bars(COUNTS).data[0]
    assert len(years.x) == 8 and sum(years.y) == 3
    languages = language_bars(COUNTS).data[0]
    assert dict(zip(languages.y, languages.x)) == {"French": 4, "Unknown": 3, "English": 2, "German": 1}
    narrow = language_bars(COUNTS, top=2).data[0]
    assert dict(zip(narrow.y, narrow.x)) == {"French": 4, "Unknown": 3, "Other": 3}
    assert has_empty_annotation(age_bars(empty_counts(0))) and has_empty_annotation(first_year_bars(empty_counts(0)))
    assert dict(zip(language_bars(NONE).data[0].y, language_bars(NONE).data[0].x)) == {"Unknown": 4}


def test_snapshots_age_heatmap_has_log_spaced_bins():
    heat = snapshots_age_heatmap(COUNTS).data[0]
    assert list(heat.x) == [3, 4, 5] and list(heat.y) == ["5–9", "10–19", "20–49"]
    cells = np.asarray(heat.customdata)
    assert cells[2, 0] == 2 and cells[0, 2] == 1 and cells.sum() == 3
    assert has_empty_annotation(snapshots_age_heatmap(empty_counts(0)))


# ---------------------------------------------------------------- calendar


NOV = datetime.date(2026, 11, 1)


def test_calendar_counts_month_only():
    dates = [
        "2026-11-02",
        "2026-11-02T23:59:00Z",
        datetime.date(2026, 11, 30),
        "2026-10-31",
        "2026-12-01",
        None,
        np.nan,
        pd.NA,
        "not a date",
        datetime.datetime(2026, 11, 15, 8, 0),
    ]
    counts = calendar_counts(dates, NOV)
    assert len(counts) == 30 and min(counts) == datetime.date(2026, 11, 1)
    assert counts[datetime.date(2026, 11, 2)] == 2
    assert counts[datetime.date(2026, 11, 30)] == 1
    assert counts[datetime.date(2026, 11, 15)] == 1
    assert sum(counts.values()) == 4
    assert datetime.date(2026, 10, 31) not in counts
    # same from a Series, with the month given by any of its days
    assert calendar_counts(pd.Series(dates, dtype=object), datetime.date(2026, 11, 20)) == counts


def test_drop_calendar_cells():
    fig = drop_calendar(pd.Series(["2026-11-02", "2026-11-02", "2026-11-30", "2026-10-30"]), NOV, title="Drops")
    (heat,) = fig.data
    assert isinstance(heat, go.Heatmap)
    assert list(heat.x) == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    weeks = calendar.Calendar(firstweekday=0).monthdatescalendar(2026, 11)
    assert len(heat.z) == len(weeks) and all(len(row) == 7 for row in heat.z)

    def cell(day: datetime.date) -> tuple[int, int]:
        first_col = datetime.date(2026, 11, 1).weekday()
        offset = first_col + day.day - 1
        return offset // 7, offset % 7

    row, col = cell(datetime.date(2026, 11, 2))
    assert heat.z[row][col] == 2 and heat.text[row][col] == "2<br>2"
    row, col = cell(datetime.date(2026, 11, 30))
    assert heat.z[row][col] == 1
    row, col = cell(datetime.date(2026, 11, 3))
    assert heat.z[row][col] == 0 and heat.text[row][col] == "3"
    # Oct 26..31 fill the first row before Sunday Nov 1: blank, not counted (Oct 30 is in the input)
    assert list(heat.z[0][:6]) == [None] * 6
    assert heat.text[0][4] == ""
    assert fig.layout.title.text == "Drops"
    assert not has_empty_annotation(fig)


def test_a_calendar_of_what_is_to_come_leaves_the_days_gone_blank():
    counts = {datetime.date(2026, 11, d): n for d, n in ((3, 0), (20, 4), (27, 0), (28, 5))}
    fig = drop_calendar(counts, NOV, counted="Auctions ending", blank_before=datetime.date(2026, 11, 27))
    (heat,) = fig.data
    cells = {c: z for row_c, row_z in zip(heat.customdata, heat.z) for c, z in zip(row_c, row_z) if c}
    assert min(cells) == "2026-11-27" and cells["2026-11-27"] == 0 and cells["2026-11-28"] == 5
    assert (
        sum(z is not None for row in heat.z for z in row) == 4
    )  # 27 to 30 Nov; the 3rd's 0 and the 20th's 4 not shown


def test_drop_calendar_empty_month_says_so():
    fig = drop_calendar([], NOV)
    assert has_empty_annotation(fig)
    assert fig.layout.title.text == "November 2026"
    assert all(v in (0, None) for row in fig.data[0].z for v in row)


# ---------------------------------------------------------------- price history


def test_price_history_steps_and_bids():
    history = pd.DataFrame(
        {
            "observed_at": ["2026-11-03T00:00:00Z", "2026-11-01T00:00:00Z", "2026-11-02T00:00:00+00:00", None],
            "price": [30.0, 10.0, np.nan, 99.0],
            "max_bid": [35.0, 12.0, 20.0, 99.0],
            "bids_count": pd.array([3, 1, None, 9], dtype="Int64"),
            "effective_price": [35.0, 12.0, 20.0, 99.0],
        }
    )
    fig = price_history(history, currency="EUR")
    by_name = {t.name: t for t in fig.data}
    paid, asked = "Price (highest bid, else asked)", "Start or asking price"
    assert set(by_name) == {paid, asked, "Bids"}
    assert by_name[paid].line.shape == "hv" and by_name[asked].line.shape == "hv"
    assert list(by_name[paid].y) == [12.0, 20.0, 35.0]  # sorted by time, the null timestamp dropped: the bids moved it
    assert list(by_name[asked].y) == [10.0, 30.0]  # NaN dropped
    assert fig.layout.yaxis.title.text == "Price (EUR)"
    assert by_name["Bids"].yaxis == "y2" and by_name["Bids"].mode == "markers"
    assert list(by_name["Bids"].y) == [1, 3]
    assert fig.layout.yaxis2.overlaying == "y"
    assert has_empty_annotation(price_history(history.iloc[0:0]))


# ---------------------------------------------------------------- selection


def test_frame_ids_list_and_scalar_customdata():
    points = [
        {"customdata": [7, "a.fr"], "x": 1, "y": 2},
        {"customdata": 9},
        {"customdata": [7, "a.fr"]},  # duplicate
        {"x": 0, "y": 0},  # a reference-line point without customdata
        {"customdata": "12"},
        {"customdata": 3.0},
        {"customdata": []},
    ]
    assert frame_ids(points) == [7, 9, 12, 3]
    assert frame_ids([]) == []


def test_frame_ids_round_trip_from_figure():
    fig = tf_cf_scatter(listings())
    points = [{"customdata": list(row)} for t in data_traces(fig) for row in t.customdata]
    assert sorted(frame_ids(points)) == [1, 3, 5, 6]


def test_public_names():
    for name in charts.__all__:
        assert hasattr(charts, name)
    assert "tf_cf_scatter" in charts.__all__ and "calendar_counts" in charts.__all__
