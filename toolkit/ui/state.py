"""What every page shares: the mirror, the plan in force, cached queries and the filters.

Reads go through a read-only `Mirror` (a sync writing at the same time never breaks a page)
and are cached by (filters, plan, mirror generation): a committed write changes the
generation, so a page never shows rows older than the mirror. The app has no SQL of its own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import streamlit as st

from ..config import DEFAULT_DB
from ..params import DOMAIN_PARAMS
from ..plans import normalize_plan
from ..query import Mirror

__all__ = [
    "db_path",
    "writable_mirror",
    "reader",
    "plan_in_force",
    "search",
    "frame",
    "day_counts",
    "is_empty",
    "current_filters",
    "set_filters",
    "FILTER_GROUPS",
]

# Sidebar groups, in the order an investor narrows a search (names as params.py's `group`).
FILTER_GROUPS = {
    "source": "Source and type",
    "names": "Names",
    "seo": "SEO metrics",
    "archive": "Archive",
    "price": "Price",
    "dates": "Dates",
    "output": "Also show",
}
# Parameters the sidebar does not show: paging and sorting live beside the table.
NOT_FILTERS = {"sort", "after_id", "per_page", "limit", "page", "include_historical_traffic"}


def db_path() -> str:
    return os.environ.get("EDT_DB") or DEFAULT_DB


@st.cache_resource
def writable_mirror(path: str) -> Mirror:
    """Opens (creating or upgrading) the mirror: the watchlist and the demo loader write."""
    return Mirror(path)


@st.cache_resource
def _reader(path: str) -> Mirror:
    # Long-lived: after a write it rebuilds the columnar index in the background.
    return Mirror(path, readonly=True, engine=os.environ.get("EDT_ENGINE") or "background")


def reader() -> Mirror:
    path = db_path()
    writable_mirror(path)  # creates or upgrades the file before it is opened read-only
    return _reader(path)


def plan_in_force() -> str:
    """`EDT_PLAN` (else the top plan: your own mirror), or the plan chosen in the sidebar."""
    default = reader().plan
    chosen = st.session_state.get("plan") or st.query_params.get("plan") or default
    try:
        return normalize_plan(chosen)
    except ValueError:
        return default


def _key(params: Mapping[str, Any]) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in params.items() if v not in (None, "", [])))


@st.cache_data(max_entries=256, show_spinner=False)
def _search(path: str, generation: int, plan: str, key: tuple, pending: bool) -> dict[str, Any]:
    mirror = _reader(path)
    params = dict(key)
    return mirror.search_pending_delete(params, plan=plan) if pending else mirror.search_domains(params, plan=plan)


def search(params: Mapping[str, Any], *, pending: bool = False) -> dict[str, Any]:
    """One page of results (the API envelope), cached by filters, plan and mirror version."""
    mirror = reader()
    return _search(mirror.path, mirror.generation(), plan_in_force(), _key(params), pending)


@st.cache_data(max_entries=64, show_spinner=False)
def _frame(path: str, generation: int, plan: str, key: tuple, columns: tuple[str, ...], sample: int | None,
           pending: bool):  # fmt: skip
    mirror = _reader(path)
    if pending:
        return mirror.pending_df(dict(key), plan=plan, columns=list(columns))
    return mirror.domains_df(dict(key), plan=plan, columns=list(columns), sample=sample)


def frame(params: Mapping[str, Any], columns: list[str], *, sample: int | None = 20_000, pending: bool = False):
    """The matching rows' chosen columns as a DataFrame (about `sample` rows at most)."""
    mirror = reader()
    return _frame(mirror.path, mirror.generation(), plan_in_force(), _key(params), tuple(columns), sample, pending)


@st.cache_data(max_entries=64, show_spinner=False)
def _day_counts(path: str, generation: int, plan: str, key: tuple, pending: bool):
    return _reader(path).day_counts(dict(key), plan=plan, pending=pending)


def day_counts(params: Mapping[str, Any], *, pending: bool = False):
    """Matching rows per day (auction ends, or pending-delete drops), cached like `search`."""
    mirror = reader()
    return _day_counts(mirror.path, mirror.generation(), plan_in_force(), _key(params), pending)


@st.cache_data(max_entries=8, show_spinner=False)
def _is_empty(path: str, generation: int) -> bool:
    return _reader(path).is_empty()


def is_empty() -> bool:
    """A first run? Asked on every rerun, so two EXISTS probes cached by generation, never
    whole-mirror counts."""
    path = db_path()
    if not os.path.isfile(path):
        return True
    mirror = reader()
    return _is_empty(mirror.path, mirror.generation())


def current_filters() -> dict[str, str]:
    """The filters in the URL (`st.query_params`): what the sidebar shows and a bookmark keeps."""
    return {k: v for k, v in st.query_params.to_dict().items() if k in DOMAIN_PARAMS and k not in NOT_FILTERS and v}


def set_filters(params: Mapping[str, str]) -> None:
    """Replace the URL's filters (other keys such as the page stay)."""
    for name in list(st.query_params.keys()):
        if name in DOMAIN_PARAMS and name not in NOT_FILTERS:
            del st.query_params[name]
    for name, value in params.items():
        if value not in (None, "") and name in DOMAIN_PARAMS:
            st.query_params[name] = str(value)
    for name in list(st.session_state.keys()):
        if str(name).startswith("f:"):
            del st.session_state[name]
