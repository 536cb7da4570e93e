"""Archive age: what the web archive says of every matching listing, as counts."""

from __future__ import annotations

import streamlit as st

from .. import state
from .shared import chart_page

__all__ = ["archive_age"]


def archive_age() -> None:
    """Counts of ALL matching listings (`state.chart_counts`): ages, first-snapshot years,
    snapshots x age and languages."""
    from ...analysis import charts  # Plotly and pandas: loaded by the pages that draw charts

    from .. import echarts

    filters, counts = chart_page("Archive age")
    if counts is None:
        return
    st.caption(
        f"Counts over all {counts.total:,} matching listings (not a sample); "
        f"{counts.without_first_date:,} without a first web-archive snapshot date are left out of the age "
        "charts."
    )
    left, right = st.columns(2)
    made = state.made_from(state.params_key(filters))
    echarts.show_made(lambda: charts.age_bars(counts), (*made, "age"), key="age", where=left)
    echarts.show_made(lambda: charts.first_year_bars(counts), (*made, "years"), key="first_year", where=right)
    echarts.show_made(lambda: charts.snapshots_age_heatmap(counts), (*made, "snapshots"), key="snapshots", where=left)
    echarts.show_made(lambda: charts.language_bars(counts), (*made, "languages"), key="languages", where=right)
