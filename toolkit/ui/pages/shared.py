"""What several pages draw alike: a refused query said in words, and a chart page's top."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ...errors import ApiError
from .. import state
from ..filters import sidebar_filters

__all__ = ["show_error", "chart_page"]


def show_error(exc: ApiError) -> None:
    """A refused query (a filter out of range, a plan that may not read it) as one line,
    naming the field at fault."""
    st.error(f"{exc.field + ': ' if exc.field else ''}{exc.body.get('message', exc)}")


def chart_page(title: str) -> tuple[dict[str, str], Any]:
    """A chart page's header, its sidebar filters and the counts of every match (None, with
    the error shown, when a filter is refused)."""
    st.header(title)
    filters = sidebar_filters()
    try:
        return filters, state.chart_counts(filters)
    except ApiError as exc:
        show_error(exc)
        return filters, None
