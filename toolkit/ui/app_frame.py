"""The app's frame around every page: its Streamlit options, the page chosen in the sidebar
(kept in the URL as `?view=`), the mirror named and a demo said on every page."""

from __future__ import annotations

__all__ = ["main", "STREAMLIT_OPTIONS", "streamlit_flags"]

# Streamlit's options for users (also in the repository's .streamlit/config.toml, which
# `streamlit run app.py` reads; `edt app` and the browser check pass them as flags).
STREAMLIT_OPTIONS: dict[str, object] = {"client.toolbarMode": "viewer", "browser.gatherUsageStats": False}


def streamlit_flags() -> list[str]:
    """STREAMLIT_OPTIONS as `streamlit run` flags."""
    return [
        f"--{name}={str(value).lower() if isinstance(value, bool) else value}"
        for name, value in STREAMLIT_OPTIONS.items()
    ]


def main() -> None:
    """The app's script: the page chosen in the sidebar (kept in the URL as `?view=`)."""
    import streamlit as st  # here, so the options above are read without loading Streamlit

    from . import navigation, state
    from .pages import PAGES

    st.set_page_config(page_title="Expired Domains Toolkit", page_icon="🔎", layout="wide")
    if state.is_empty():
        from .pages.welcome import first_run

        first_run()
        return
    views = list(PAGES)
    current = st.query_params.get("view", "explore")
    if current not in views:
        current = "explore"
    if current in views and st.session_state.get("_view_in_url") != current:
        st.session_state["view"] = current  # a link or a page's button changed the URL
    view = st.sidebar.radio("Page", views, format_func=lambda v: PAGES[v].title, key="view")
    if view != current:  # chosen in the sidebar: each page keeps its own settings
        navigation.move_to(view)
    st.query_params["view"] = st.session_state["_view_in_url"] = view
    st.sidebar.caption(f"Mirror: `{state.db_path()}`")
    demo = state.demo()
    if demo:  # said on every page: what is shown is generated, not synced
        from ..store.labels import demo_words

        st.sidebar.markdown(f":orange-badge[Demo data] {demo_words(demo)}")
    PAGES[view].draw()
