"""Trust Flow / Citation Flow: counts of every matching listing, and a region's domains.

The TF x CF density, the TF / CF ratio and the "CF far above TF" share per topic or source,
drawn from counts over all matches (`state.chart_counts`); sliders pick a TF x CF region whose
domains are listed below and open in Explore; an opt-in sample of points to lasso any shape.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from ...errors import ApiError
from .. import navigation, state, table
from ..navigation import open_all_link, widget_from_url, widget_to_url
from .shared import chart_page, show_error

__all__ = ["trust_flow"]


def trust_flow() -> None:
    """Counts of ALL matching listings (`state.chart_counts`): the TF x CF density, the TF / CF
    ratio, the "CF far above TF" share per topic and per source; a TF x CF region (sliders
    kept in the URL) lists its domains through the query layer and opens in Explore. The
    sampled point cloud (to lasso any shape) is opt-in: WebGL without a GPU is slow."""
    from ...analysis import charts  # Plotly and pandas: loaded by the pages that draw charts

    from .. import echarts

    filters, counts = chart_page("Trust Flow / Citation Flow")
    if counts is None:
        return
    st.caption(
        f"Counts over all {counts.total:,} matching listings (not a sample); "
        f"{counts.without_tf_cf:,} without both Trust Flow and Citation Flow are left out."
    )
    left, right = st.columns([3, 2])
    made = state.made_from(state.params_key(filters))
    echarts.show_made(lambda: charts.tf_cf_heatmap(counts), (*made, "tfcf"), key="tfcf", where=left)
    echarts.show_made(lambda: charts.tf_cf_ratio_bars(counts), (*made, "ratio"), key="ratio", where=right)
    left, right = st.columns([2, 3])
    widget_from_url("zone_by", "zone_by", lambda v: {"topic": "topic", "source": "source"}[v], "topic")
    zone_by = left.radio("Share in the zone by", ["topic", "source"], horizontal=True, key="zone_by")
    widget_to_url("zone_by", "" if zone_by == "topic" else zone_by)
    echarts.show_made(
        lambda: charts.zone_share_bars(counts, zone_by), (*made, "zone", zone_by), key="zone_share", where=left
    )
    _tf_cf_region(filters, right)
    _tf_cf_points(filters)


_FULL_RANGE = (0, 100)


def _range(text: str) -> tuple[int, int]:
    """`10-40` as (10, 40), within 0-100; ValueError otherwise."""
    low, high = (int(part) for part in text.split("-"))
    if not _FULL_RANGE[0] <= low <= high <= _FULL_RANGE[1]:
        raise ValueError(text)
    return low, high


def _region_filters(filters: dict[str, str], tf: tuple[int, int], cf: tuple[int, int]) -> dict[str, str]:
    """The sidebar's filters narrowed to a TF x CF region (the tighter of each bound)."""
    region = dict(filters)
    for metric, (low, high) in (("tf", tf), ("cf", cf)):
        region[f"{metric}_min"] = str(max(low, int(float(filters.get(f"{metric}_min") or 0))))
        region[f"{metric}_max"] = str(min(high, int(float(filters.get(f"{metric}_max") or 100))))
    return region


def _tf_cf_region(filters: dict[str, str], where: Any) -> None:
    """Sliders (in `where`) that pick a TF x CF region (in the URL as `tf_range`, `cf_range`),
    and below, the first matching listings in it, highest TF first, with a link that opens all
    of them in Explore."""
    where.subheader("List the domains of a region")
    chosen = {}
    for metric, label in (("tf", "Trust Flow"), ("cf", "Citation Flow")):
        key, name = f"region_{metric}", f"{metric}_range"
        widget_from_url(key, name, _range, _FULL_RANGE)
        chosen[metric] = where.slider(label, *_FULL_RANGE, key=key)
        widget_to_url(name, "" if chosen[metric] == _FULL_RANGE else "-".join(map(str, chosen[metric])))
    region = _region_filters(filters, chosen["tf"], chosen["cf"])
    try:
        found = state.search({**region, "sort": "-trust_flow", "per_page": "25"})
    except ApiError as exc:
        show_error(exc)
        return
    total = found["meta"]["total"]
    bounds = f"TF {region['tf_min']}–{region['tf_max']}, CF {region['cf_min']}–{region['cf_max']}"
    with where:
        navigation.show_html(
            f"<p><b>{total:,}</b> matching listings in {bounds} (enriched ones only) · "
            f"{open_all_link('explore', {**region, 'sort': '-trust_flow'})}</p>",
            key="region_summary",
        )
    if total:
        columns = table.chosen_columns(table.LISTING_TABLE, None)
        navigation.show_html(
            table.render(table.LISTING_TABLE, columns, found["data"], {}, state.reader().now(), sortable=False),
            key="region_table",
        )
        if total > len(found["data"]):
            st.caption(f"The {len(found['data'])} highest Trust Flow of {total:,}; Explore pages through all of them.")


def _tf_cf_points(filters: dict[str, str]) -> None:
    """Opt-in: an even sample of the matching rows as points (WebGL), to lasso any shape."""
    from ...analysis import charts  # Plotly and pandas: loaded by the pages that draw charts

    widget_from_url("tf_points", "points", lambda v: v == "1", False)
    shown = st.toggle(
        f"Show a sample of {state.CHART_SAMPLE:,} listings as points, to lasso any shape (slow without a GPU)",
        key="tf_points",
    )
    widget_to_url("points", "1" if shown else "")
    if not shown:
        return
    widget_from_url("color_by", "color_by", lambda v: {"topic": "topic", "source": "source"}[v], "topic")
    color_by = st.radio("Colour by", ["topic", "source"], horizontal=True, key="color_by")
    widget_to_url("color_by", "" if color_by == "topic" else color_by)
    columns = ["id", "name", "source", "trust_flow", "citation_flow", "ttf_topic", "score"]
    try:
        rows = state.frame(filters, columns)
    except ApiError as exc:
        show_error(exc)
        return
    st.caption(f"{len(rows):,} rows drawn (an even sample by id when more match).")
    event = st.plotly_chart(
        charts.tf_cf_scatter(rows, color_by=color_by),
        on_select="rerun",
        selection_mode=("points", "box", "lasso"),
        key="tfcf_points",
    )
    picked = charts.frame_ids(list(event.selection.get("points", []))) if event and event.selection else []
    if picked:
        st.subheader(f"{len(picked)} selected")
        st.dataframe(rows[rows["id"].isin(picked)], hide_index=True, key="picked")
