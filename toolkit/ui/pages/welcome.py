"""The page of an empty mirror: load the demo data, or sync a subscription."""

from __future__ import annotations

import os

import streamlit as st

from .. import state
from .sync_status import run_job

__all__ = ["first_run"]


def first_run() -> None:
    st.header("Welcome: the mirror is empty")
    st.write(f"Mirror file: `{state.db_path()}`")
    left, right = st.columns(2)
    with left:
        st.subheader("Try it with demo data")
        st.write(
            "About 5,000 realistic listings, 1,500 deleted ccTLD domains and 1,000 pending-delete domains, "
            "generated on this machine in a few seconds."
        )
        if st.button("Load the demo data", type="primary", key="load_demo"):
            from ...demo import load_demo

            with st.spinner("Generating…"):
                counts = load_demo(state.writable_mirror(state.db_path()).connection(), scale="small")
            st.cache_data.clear()
            st.success(f"Loaded {counts['listings']:,} listings.")
            st.rerun()
    with right:
        st.subheader("Or sync your subscription")
        st.code("export EDT_API_KEY=...   # your CatchDoms key\nexport EDT_PLAN=pro\nedt sync", language="bash")
        if os.environ.get("EDT_API_KEY"):
            if st.button("Sync the listings now", key="first_sync"):
                run_job("listings")
                st.cache_data.clear()
        else:
            st.write("Then reopen this page.")
