"""Explore and Pending-delete: one results page over either table.

The searchable table of listings (`/api/domains`) or of pending-delete names
(`/api/pending-delete`): sidebar filters, header sorting over all results, paging that
restarts at page 1 when the search changes, and the CSV of every match. The table's columns
are declared in `ui/table.py`; its sort, page and columns are kept in the URL.
"""

from __future__ import annotations

import html
import shlex
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from ...analysis.range_notes import coverage_note, value_model
from ...errors import ApiError
from ...plans import PLAN_LABELS, plan_allows
from ...query.params import DOMAIN_PARAMS, DOMAIN_SORTS, PENDING_PARAMS, PENDING_SORTS
from ...store.labels import sort_field_label
from .. import actions, assets, exports, navigation, state, table
from ..filters import sidebar_filters
from ..navigation import put_in_url, url_choice
from .shared import show_error

__all__ = ["explore", "pending_delete", "results_page", "sort_label", "csv_of_all"]


def explore() -> None:
    results_page(pending=False)


def pending_delete() -> None:
    results_page(pending=True)


_ASCENDING_FIRST = {"id", "name", "auction_end_date"}
_DATE_SORTS = {"auction_end_date", "created_at", "first_seen_at"}


def sort_label(sort: str) -> str:
    """`-trust_flow` -> `Trust Flow, highest first`; `name` -> `Domain, A to Z` (the words of
    `toolkit.store.labels`)."""
    if not sort:
        return "Best score first (default)"
    if sort in PENDING_SORTS:
        return {
            "drop_date": "Drop date, soonest first",
            "drop_date_desc": "Drop date, latest first",
            "domain": "Domain, A to Z",
        }[sort]
    field, descending = sort.lstrip("-"), sort.startswith("-")
    label = sort_field_label(field)
    if field == "name":
        return f"{label}, {'Z to A' if descending else 'A to Z'}"
    if field in _DATE_SORTS:
        return f"{label}, {'latest' if descending else 'soonest' if field == 'auction_end_date' else 'earliest'} first"
    return f"{label}, {'highest' if descending else 'lowest'} first"


def _sort_options(pending: bool) -> list[str]:
    if pending:
        return list(PENDING_SORTS)
    ordered = sorted(DOMAIN_SORTS, key=lambda s: (s == "id", sort_field_label(s)))
    return [
        "",
        *[s if s in _ASCENDING_FIRST else f"-{s}" for s in ordered],
        *[f"-{s}" if s in _ASCENDING_FIRST else s for s in ordered],
    ]


_ENDING_SOON = (1, 6, 24)  # Explore's quick filters: auctions ending in the next N hours (`ends_within`)


def results_page(pending: bool) -> None:
    """The searchable table of listings (`/api/domains`) or of pending-delete names
    (`/api/pending-delete`): sidebar filters, header sorting over all results, paging that
    restarts at page 1 when the search changes, and the CSV of all. The sort menu, the rows
    per page and the column chooser wait in a closed group (drawn when opened, like the
    sidebar's): the page opens on its table, read from the URL."""
    params_table = PENDING_PARAMS if pending else DOMAIN_PARAMS
    columns_table = table.PENDING_TABLE if pending else table.LISTING_TABLE
    st.header("Pending-delete names" if pending else "Explore listings")
    filters = sidebar_filters(params_table)
    plan = state.plan_in_force()
    if pending and not plan_allows(plan, "pending_delete"):
        st.warning(
            f"The pending-delete inventory needs the Authority+ plan; the plan in force is {PLAN_LABELS.get(plan, plan)}."
        )
        return
    actions.say_done()
    sorts = _sort_options(pending)
    sort = url_choice("sort", sorts, sorts[0])
    sizes = [25, 50, 100] + ([200] if pending else [])
    per_page = url_choice("per_page", [str(n) for n in sizes], "50")
    valued = None if pending else value_model(state.reader())  # the price ranges, once appraised
    defaults = table.default_keys(columns_table, has=("values",) if valued else ())
    keys = [c.key for c in columns_table]
    shown = [k for k in st.query_params.get("cols", "").split(",") if k in keys] or defaults
    # One title whatever is chosen: a new title is a new group to Streamlit, drawn closed while the
    # browser still showed it open, and the next change in it was lost. The line above the table
    # says the sort in force.
    box = st.expander("Sort, rows per page and columns", key="table_settings", on_change="rerun")
    if box.open:
        with box:
            sort, size, shown = _table_settings(columns_table, sorts, sort, sizes, int(per_page), shown)
            per_page = str(size)
    chosen = table.chosen_columns(columns_table, shown)
    put_in_url("sort", sort, sorts[0])
    put_in_url("per_page", per_page, "50")
    put_in_url("cols", ",".join(c.key for c in chosen), ",".join(defaults))

    # The page: from the URL, back to 1 whenever the search itself changes.
    signature = (tuple(sorted(filters.items())), sort, str(per_page), plan)
    in_url = str(st.query_params.get("page", "1"))
    page = max(1, int(in_url)) if in_url.isdigit() else 1
    searched = f"_search:{'pending' if pending else 'explore'}"
    if st.session_state.get(searched, signature) != signature:
        page = 1
    st.session_state[searched] = signature
    params = {**filters, "per_page": str(per_page), **({"sort": sort} if sort else {})}
    try:
        envelope = state.search({**params, "page": str(page)}, pending=pending)
        if page > envelope["meta"]["last_page"]:  # a bookmark past the end: its last page
            page = envelope["meta"]["last_page"]
            envelope = state.search({**params, "page": str(page)}, pending=pending)
    except ApiError as exc:
        show_error(exc)
        return
    put_in_url("page", page, 1)
    meta = envelope["meta"]
    noun = "names" if pending else "listings"
    st.metric(f"Matching {noun}", f"{meta['total']:,}")
    if not meta["total"]:
        try:  # why, when it can be told: a minimum above its maximum, a TLD no row has (Mirror.explain_empty)
            why = state.reader().explain_empty(filters, pending=pending)
        except ApiError:
            why = []
        st.caption(f"No {noun[:-1]} matches: {'; '.join(why) if why else 'loosen a filter in the sidebar'}.")
    else:
        st.caption(
            f"Page {page:,} of {meta['last_page']:,} · rows {meta['from']:,}–{meta['to']:,} · "
            f"{sort_label(sort)} · click a column title to sort all {meta['total']:,} by it"
        )
    url_params = {k: (v[-1] if isinstance(v, list) else v) for k, v in st.query_params.to_dict().items()}
    records = envelope["data"]
    if any(c.key == "keep" for c in chosen):
        records = actions.marked(records, name_field="domain" if pending else "name")
    parts = [] if pending else [_ending_soon(filters.get("ends_within"))]
    parts.append(table.render(columns_table, chosen, records, url_params, state.reader().now(), pending=pending))
    parts.append(_pager(page, meta["last_page"]))
    download = _download_all(params, pending) if meta["total"] else None
    navigation.show_html("".join(parts) + (download or ""), key="pending_table" if pending else "explore_table")
    if valued and any(c.key in ("value", "deal") for c in chosen) and coverage_note(valued):
        st.caption(f"Value: {coverage_note(valued)} (`edt appraise --backtest` measures it on this mirror).")


def _table_settings(
    columns_table: tuple[table.Column, ...],
    sorts: list[str],
    sort: str,
    sizes: list[int],
    per_page: int,
    shown: list[str],
) -> tuple[str, int, list[str]]:
    """The sort menu, the rows per page and the column chooser (the group is open), kept in step
    with the URL: a header link or a bookmark changes the URL, the widgets follow it."""
    left, middle, right = st.columns([3, 1, 4])
    if st.session_state.get("_sort_in_url") != sort or st.session_state.get("sort") not in sorts:
        st.session_state["sort"] = sort
    sort = left.selectbox("Sort", sorts, key="sort", format_func=sort_label)
    st.session_state["_sort_in_url"] = sort
    per_page = middle.selectbox("Per page", sizes, key="per_page", index=sizes.index(per_page))
    if "cols" not in st.session_state or st.session_state.get("_cols_in_url") != shown:
        st.session_state["cols"] = shown
    titles = {c.key: c.title for c in columns_table}
    shown = right.multiselect("Columns", list(titles), key="cols", format_func=lambda key: titles[key])
    st.session_state["_cols_in_url"] = [c.key for c in table.chosen_columns(columns_table, shown)]
    return sort, per_page, shown


def _ending_soon(current: str | None) -> str:
    """Explore's quick filters: auctions ending in the next 1, 6 or 24 hours (`ends_within`)."""
    links = []
    for hours in (*_ENDING_SOON, None):
        text = f"{hours} h" if hours else "any time"
        value = str(hours) if hours else ""
        if (current or "") == value:
            links.append(f"<b>{text}</b>")
        else:
            links.append(f'<a href="?{html.escape(urlencode({"ends_within": value}))}" target="_self">{text}</a>')
    return f'<p class="edt-quick">Ending in the next: {" · ".join(links)}</p>'


def _pager(page: int, last: int) -> str:
    """Links to the first, previous, next and last pages (in place; none on a single page)."""
    if last <= 1:
        return ""

    def link(text: str, target: int, enabled: bool) -> str:
        if not enabled:
            return f'<span class="edt-dim">{text}</span>'
        return f'<a href="?{html.escape(urlencode({"page": target if target > 1 else ""}))}" target="_self">{text}</a>'

    return (
        f'<p class="edt-pager">{link("« First", 1, page > 1)} · {link("‹ Previous", page - 1, page > 1)} · '
        f"page {page:,} of {last:,} · {link('Next ›', page + 1, page < last)} · "
        f"{link('Last »', last, page < last)}</p>"
    )


def _download_all(params: dict[str, str], pending: bool) -> str | None:
    """Every matching row as CSV, with exactly the rows the count above says (the export
    reads the mirror with its clock stopped at the moment that count was taken). Served by
    `app.py`, a link (returned, drawn with the table) to a route that streams the file from
    the query layer in constant memory; run without it (AppTest, `streamlit run
    toolkit/ui/script/page_script.py`), Streamlit's download button, which holds the file in memory."""
    search = {k: v for k, v in params.items() if k not in ("page", "per_page")}
    total = state.search(params, pending=pending)["meta"]["total"]
    at = state.searched_at(params, pending=pending)
    plan = state.plan_in_force()
    if not pending and not plan_allows(plan, "export"):
        return (
            f'<p class="edt-dim">The CSV of all {total:,} rows needs the Business plan (the plan in force is '
            f"{PLAN_LABELS.get(plan, plan)}).</p>"
        )
    label = f"Download all {total:,} rows (CSV)"
    if assets.served():
        url = exports.export_url(search, plan=plan, at=at, pending=pending)
        return f'<p><a class="edt-csv" href="{html.escape(url)}" download>⬇ {label}</a></p>'

    def all_rows_csv() -> bytes:
        return csv_of_all(search, mirror=state.exporter(at), plan=plan, pending=pending)

    st.download_button(
        label, all_rows_csv, file_name=exports.csv_name(pending), mime="text/csv", on_click="ignore", key="csv"
    )
    command = "edt export --format csv --out listings.csv" if not pending else None
    if command:
        args = " ".join(shlex.quote(f"{k}={v}") for k, v in search.items())
        st.caption(f"Or from a terminal, streamed to disk: `{command}{' ' + args if args else ''}`")
    return None


def csv_of_all(search: dict[str, str], *, mirror: Any, plan: str, pending: bool) -> bytes:
    """Every row of a search as CSV bytes, the same file the export routes stream."""
    return b"".join(exports.search_csv(mirror, search, plan=plan, pending=pending))
