"""The Streamlit app for investors (`streamlit run app.py`, or `edt app`).

A page is chosen in the sidebar and kept in the URL (`?view=`) with the filters, so any
view is a bookmark. The pages live in `pages/`, one module each, named in one table
(`pages.PAGES`); they read through `state.py` (the query layer, cached) and draw with
`toolkit.analysis.charts`.
"""

from __future__ import annotations

from .app_frame import STREAMLIT_OPTIONS, main, streamlit_flags

__all__ = ["main", "STREAMLIT_OPTIONS", "streamlit_flags"]
