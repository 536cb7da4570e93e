"""What every page shares: the mirror, the plan in force, cached queries and the filters.

Reads go through a read-only `Mirror` (a sync writing at the same time never breaks a page)
and are cached by (filters, plan, mirror generation): a committed write changes the
generation, so a page never shows rows older than the mirror. The app has no SQL of its own.
"""

from __future__ import annotations

import re

import os
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

import streamlit as st

from ..config import mirror_path
from ..query.params import DOMAIN_PARAMS, PENDING_PARAMS, Param
from ..plans import normalize_plan
from ..query import Mirror

__all__ = [
    "db_path",
    "writable_mirror",
    "reader",
    "plan_in_force",
    "search",
    "searched_at",
    "frame",
    "chart_counts",
    "status",
    "exporter",
    "day_counts",
    "is_empty",
    "demo",
    "current_filters",
    "set_filters",
    "keep_filters_of",
    "redraw_filters",
    "read_only_words",
    "made_from",
    "params_key",
    "FILTER_GROUPS",
    "NOT_FILTERS",
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
# The pending-delete filters are in the URL under their own names, which some share with the
# listing filters (tld, source, contains); a page keeps only the ones its table accepts.


def db_path() -> str:
    return mirror_path()


# No spinner on these two: the server's warm-up (asgi.warm_up) fills them outside any script
# run, where a spinner has no page to draw on (Streamlit warns "missing ScriptRunContext").
@st.cache_resource(show_spinner=False)
def writable_mirror(path: str) -> Mirror:
    """Opens (creating or upgrading) the mirror: the watchlist and the demo loader write."""
    return Mirror(path, create=True)


@st.cache_resource(show_spinner=False)
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


def params_key(params: Mapping[str, Any]) -> tuple:
    """A search's parameters as a key to cache its answer by: sorted, blank values left out."""
    return tuple(sorted((k, str(v)) for k, v in params.items() if v not in (None, "", [])))


@st.cache_data(max_entries=256, show_spinner=False)
def _search(path: str, generation: int, plan: str, key: tuple, pending: bool) -> tuple[dict[str, Any], str]:
    mirror = _reader(path)
    params = dict(key)
    at = mirror.now().isoformat()
    found = mirror.search_pending_delete(params, plan=plan) if pending else mirror.search_domains(params, plan=plan)
    return found, at


def search(params: Mapping[str, Any], *, pending: bool = False) -> dict[str, Any]:
    """One page of results (the API envelope), cached by filters, plan and mirror version."""
    return _searched(params, pending)[0]


def searched_at(params: Mapping[str, Any], *, pending: bool = False) -> datetime:
    """When the cached answer of `search(params)` was computed: its live set is as of then."""
    return datetime.fromisoformat(_searched(params, pending)[1])


def _searched(params: Mapping[str, Any], pending: bool) -> tuple[dict[str, Any], str]:
    mirror = reader()
    return _search(mirror.path, mirror.generation(), plan_in_force(), params_key(params), pending)


def exporter(at: datetime | None) -> Mirror:
    """A reader whose clock stands at `at`: an export from it holds exactly the rows a search
    answered at `at` counted (same generation, same live set); with None, the real clock."""
    return Mirror(db_path(), readonly=True, engine="sqlite", clock=(lambda: at) if at else None)


@st.cache_data(max_entries=8, show_spinner=False)
def _status(path: str, generation: int) -> dict[str, Any]:
    return _reader(path).status()


def status() -> dict[str, Any]:
    """`Mirror.status()` (whole-mirror counts: about a second on the full demo), once per
    mirror generation; the sync page is the only one that shows it."""
    mirror = reader()
    return _status(mirror.path, mirror.generation())


@st.cache_data(max_entries=64, show_spinner=False)
def _frame(
    path: str, generation: int, plan: str, key: tuple, columns: tuple[str, ...], sample: int | None, pending: bool
):
    mirror = _reader(path)
    if pending:
        return mirror.pending_df(dict(key), plan=plan, columns=list(columns))
    return mirror.domains_df(dict(key), plan=plan, columns=list(columns), sample=sample)


# Rows a point chart draws at most (the chart pages draw counts of all matches, `chart_counts`;
# only the TF/CF page's opt-in "points to lasso" reads a sample): TF, CF and ages are whole
# numbers, so 5,000 points already show every shape of the distribution, and a browser draws
# them in a fraction of the time 20,000 take (WebGL without a GPU is slow).
CHART_SAMPLE = 5_000


def frame(params: Mapping[str, Any], columns: list[str], *, sample: int | None = CHART_SAMPLE, pending: bool = False):
    """The matching rows' chosen columns as a DataFrame (about `sample` rows at most, an even
    sample by id picked through the columnar index)."""
    mirror = reader()
    return _frame(
        mirror.path, mirror.generation(), plan_in_force(), params_key(params), tuple(columns), sample, pending
    )


@st.cache_data(max_entries=64, show_spinner=False)
def _chart_counts(path: str, generation: int, plan: str, key: tuple):
    return _reader(path).chart_counts(dict(key), plan=plan)


def chart_counts(params: Mapping[str, Any]):
    """The chart pages' counts over ALL matching listings (`Mirror.chart_counts`: TF x CF
    cells, zone shares, ages, first years, snapshots x age, languages), cached like `search`."""
    mirror = reader()
    return _chart_counts(mirror.path, mirror.generation(), plan_in_force(), params_key(params))


def made_from(*what: Any) -> tuple:
    """What a chart drawn from the mirror depends on: the mirror, its generation, the plan in
    force, and `what` (the filters, a listing, ...): the key its option is kept under."""
    mirror = reader()
    return (mirror.path, mirror.generation(), plan_in_force(), *what)


@st.cache_data(max_entries=64, show_spinner=False)
def _day_counts(path: str, generation: int, plan: str, key: tuple, pending: bool):
    return _reader(path).day_counts(dict(key), plan=plan, pending=pending)


def day_counts(params: Mapping[str, Any], *, pending: bool = False):
    """Matching rows per day (auction ends, or pending-delete drops), cached like `search`."""
    mirror = reader()
    return _day_counts(mirror.path, mirror.generation(), plan_in_force(), params_key(params), pending)


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


@st.cache_data(max_entries=8, show_spinner=False)
def _demo(path: str, generation: int) -> dict[str, str]:
    return {k: v for k, v in _reader(path).meta().items() if k.startswith("demo_")}


def demo() -> dict[str, str]:
    """The demo's settings when the mirror holds the demo (`demo_scale`, `demo_seed`,
    `demo_today`, `demo_days` for a time-lapse), else empty; once per mirror generation."""
    mirror = reader()
    return _demo(mirror.path, mirror.generation())


def current_filters(table: Mapping[str, Param] = DOMAIN_PARAMS) -> dict[str, str]:
    """The filters in the URL (`st.query_params`): what the sidebar shows and a bookmark keeps."""
    return {k: v for k, v in st.query_params.to_dict().items() if k in table and k not in NOT_FILTERS and v}


def keep_filters_of(table: Mapping[str, Param]) -> None:
    """Drop from the URL the filters this page's table does not take, or takes with another
    meaning (a listing's `source=dynadot` on the pending-delete page): moving between the
    listing and pending-delete pages never carries a filter that would refuse the query. What
    the other page takes is set aside and comes back when a page that takes it opens again."""
    others = (set(DOMAIN_PARAMS) | set(PENDING_PARAMS)) - NOT_FILTERS
    other_table = PENDING_PARAMS if table is DOMAIN_PARAMS else DOMAIN_PARAMS
    # Filters the other page set aside come back where they apply (Explore's TF 20+ after a
    # look at Pending-delete), unless the URL has its own value for them by now.
    aside = st.session_state.setdefault("_set_aside", {})
    for name, value in list(aside.items()):
        if _takes(table, name, value):
            del aside[name]
            if name not in st.query_params:
                st.query_params[name] = value
                redraw_filters([name])
    ignored = []
    for name, value in list(st.query_params.to_dict().items()):
        if name not in others:
            continue
        param = table.get(name)
        try:
            if param is None or name in NOT_FILTERS:
                raise ValueError(name)
            param.parse(value)
        except Exception as exc:  # noqa: BLE001 - ApiError or ValueError: not a filter of this page
            del st.query_params[name]
            redraw_filters([name])
            if _takes(other_table, name, value):
                aside[name] = value
            elif param is not None:
                # this page's filter with a value no page takes (not one the other page meant): said
                why = str(getattr(exc, "body", {}).get("message", "") or exc).removeprefix(f"{name} ")
                why = re.sub(r"\s*\(got .*\)\.?$", "", why).rstrip(".")  # the value is shown beside it
                ignored.append(f"{param.caption or name} “{value}” ({why})")
    if ignored:
        st.warning(f"Left out of the link's filters: {'; '.join(ignored)}.")


def _takes(table: Mapping[str, Param], name: str, value: Any) -> bool:
    """Whether `table` has the filter `name` and takes `value`."""
    param = table.get(name)
    if param is None or name in NOT_FILTERS:
        return False
    try:
        param.parse(value)
    except Exception:  # noqa: BLE001 - ApiError or ValueError
        return False
    return True


def redraw_filters(names: Iterable[str]) -> None:
    """Forget the sidebar widgets of these filters (listing and pending-delete), so the next
    run draws them anew from the URL: a widget keeps its own value over the URL's otherwise."""
    for name in names:
        for prefix in ("f:", "p:"):
            st.session_state.pop(prefix + name, None)


def set_filters(params: Mapping[str, str]) -> None:
    """Replace the URL's filters (other keys such as the page stay)."""
    for name in list(st.query_params.keys()):
        if name in DOMAIN_PARAMS and name not in NOT_FILTERS:
            del st.query_params[name]
    st.session_state.pop("_set_aside", None)  # a new search replaces those too
    for name, value in params.items():
        if value not in (None, "") and name in DOMAIN_PARAMS:
            st.query_params[name] = str(value)
    redraw_filters([str(n)[2:] for n in st.session_state.keys() if str(n).startswith("f:")])


def read_only_words(mirror: Mirror, exc: Exception) -> str | None:
    """What to say when `exc` is SQLite refusing a write: to a mirror opened read-only (a
    read-only file, folder or mount), or locked by a load at work: the mirror and the fix;
    None for any other error."""
    import sqlite3

    from ..store.access import read_only_place

    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):  # a load is writing (a sync, an ingest)
        from ..store.access import locked_message

        return locked_message(mirror.path).replace("run this again", "click again")
    if not (isinstance(exc, sqlite3.OperationalError) and "readonly database" in str(exc)):
        return None
    why = read_only_place(mirror.path) or "opened read-only"
    return (
        f"The mirror {mirror.path} is {why}: the watchlist and the shortlist cannot be saved in it. "
        "Copy it to a writable place and start the app on the copy (edt app --db PATH); reading works as it is."
    )
