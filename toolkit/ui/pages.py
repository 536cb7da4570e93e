"""The app's pages: thin shells over the query layer (`state`) and the charts (`toolkit.analysis.charts`)."""

from __future__ import annotations

import asyncio
import calendar as calendar_module
import html
import json
import os
import shlex
from datetime import date, datetime, timedelta, timezone
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from ..analysis import charts
from ..analysis.appraise import coverage_note, value_model
from ..errors import ApiError
from ..query.params import DOMAIN_PARAMS, DOMAIN_SORTS, PENDING_PARAMS, PENDING_SORTS, PENDING_STATUSES
from ..plans import plan_allows
from . import assets, echarts, exports, navigation, state, table
from .filters import sidebar_filters
from .signals import show_signals

__all__ = ["PAGES", "first_run", "results_page", "sort_label", "csv_of_all", "ics_for_days", "ics_for_windows"]


def _show_error(exc: ApiError) -> None:
    field = exc.field
    st.error(f"{field + ': ' if field else ''}{exc.body.get('message', exc)}")


def _said_read_only(mirror: Any, exc: Exception) -> bool:
    """Whether `exc` is SQLite refusing a write to a mirror opened read-only (a read-only file,
    folder or mount); if so, an st.error naming the mirror and the fix, not a traceback."""
    import sqlite3

    from ..store.access import read_only_place

    if not (isinstance(exc, sqlite3.OperationalError) and "readonly database" in str(exc)):
        return False
    why = read_only_place(mirror.path) or "opened read-only"
    st.error(f"The mirror {mirror.path} is {why}: the watchlist and the shortlist cannot be saved in it. "
             "Copy it to a writable place and start the app on the copy (edt app --db PATH); reading works as it is.")
    return True


def _dash(value: Any, unit: str = "") -> str:
    """A metric for display: a dash when absent, thousands separated, whole floats as integers."""
    if value is None or value == "":
        return "—"
    text = table.blank(value)
    return f"{text} {unit}".strip() if unit else text


# -- Explore and Pending-delete: one results page over either table ---------------------------

_SORT_NAMES = {
    "id": "Listing id", "name": "Domain", "score": "Score", "age": "Age", "price": "Price", "effective_price": "Price",
    "max_bid": "Max bid", "bids_count": "Bids", "auction_end_date": "Ends", "trust_flow": "Trust Flow",
    "citation_flow": "Citation Flow", "domain_authority": "Domain Authority", "referring_domains": "Referring domains",
    "backlinks_count": "Backlinks", "wayback_snapshots": "Snapshots", "historical_traffic_etv": "Traffic",
    "created_at": "Added", "first_seen_at": "First seen",
}  # fmt: skip
_ASCENDING_FIRST = {"id", "name", "auction_end_date"}


def sort_label(sort: str) -> str:
    """`-trust_flow` -> `Trust Flow, highest first`; `name` -> `Domain, A to Z`."""
    if not sort:
        return "Best score first (default)"
    if sort in PENDING_SORTS:
        return {"drop_date": "Drop date, soonest first", "drop_date_desc": "Drop date, latest first",
                "domain": "Domain, A to Z"}[sort]  # fmt: skip
    field, descending = sort.lstrip("-"), sort.startswith("-")
    label = _SORT_NAMES.get(field, field)
    if field == "name":
        return f"{label}, {'Z to A' if descending else 'A to Z'}"
    if field in ("auction_end_date", "created_at", "first_seen_at"):
        return f"{label}, {'latest' if descending else 'soonest' if field == 'auction_end_date' else 'earliest'} first"
    return f"{label}, {'highest' if descending else 'lowest'} first"


def _sort_options(pending: bool) -> list[str]:
    if pending:
        return list(PENDING_SORTS)
    ordered = sorted(DOMAIN_SORTS, key=lambda s: (s == "id", _SORT_NAMES.get(s, s)))
    return ["", *[s if s in _ASCENDING_FIRST else f"-{s}" for s in ordered],
            *[f"-{s}" if s in _ASCENDING_FIRST else s for s in ordered]]  # fmt: skip


def _url_choice(name: str, options: list[Any], default: Any) -> Any:
    value = st.query_params.get(name, default)
    return value if value in options else default


def _set_url(name: str, value: Any, default: Any = "") -> None:
    if value in (None, "", default):
        st.query_params.pop(name, None)
    else:
        st.query_params[name] = str(value)


def _turn_page(key: str, page: int) -> None:
    st.session_state[key] = page


def results_page(pending: bool) -> None:
    """The searchable table of listings (`/api/domains`) or of pending-delete names
    (`/api/pending-delete`): sidebar filters, header sorting over all results, a column
    chooser, paging that restarts at page 1 when the search changes, and the CSV of all."""
    params_table = PENDING_PARAMS if pending else DOMAIN_PARAMS
    columns_table = table.PENDING_TABLE if pending else table.LISTING_TABLE
    st.header("Pending-delete names" if pending else "Explore listings")
    filters = sidebar_filters(params_table)
    plan = state.plan_in_force()
    if pending and not plan_allows(plan, "pending_delete"):
        st.warning(f"The pending-delete inventory needs the Authority+ plan; the plan in force is {plan}.")
        return
    sorts = _sort_options(pending)
    left, middle, right = st.columns([3, 1, 4])
    url_sort = _url_choice("sort", sorts, sorts[0])
    if st.session_state.get("_sort_in_url") != url_sort or st.session_state.get("sort") not in sorts:
        st.session_state["sort"] = url_sort  # a header link (or a bookmark) changed the URL
    sort = left.selectbox("Sort", sorts, key="sort", format_func=sort_label)
    _set_url("sort", sort, sorts[0])
    st.session_state["_sort_in_url"] = sort
    sizes = [25, 50, 100] + ([200] if pending else [])
    url_size = st.query_params.get("per_page", "50")
    per_page = middle.selectbox("Per page", sizes, key="per_page",
                                index=sizes.index(int(url_size)) if url_size in [str(n) for n in sizes] else 1)
    _set_url("per_page", per_page, 50)
    keys = [c.key for c in columns_table]
    titles = {c.key: c.title for c in columns_table}
    valued = None if pending else value_model(state.reader())  # the price ranges, once appraised
    defaults = table.default_keys(columns_table, has=("values",) if valued else ())
    in_url = [k for k in st.query_params.get("cols", "").split(",") if k in keys] or defaults
    if "cols" not in st.session_state or st.session_state.get("_cols_in_url") != in_url:
        st.session_state["cols"] = in_url
    shown = right.multiselect("Columns", keys, key="cols", format_func=titles.get)
    chosen = table.chosen_columns(columns_table, shown)
    st.session_state["_cols_in_url"] = [c.key for c in chosen]
    _set_url("cols", ",".join(c.key for c in chosen), ",".join(defaults))

    # The page: from the URL on a new session, back to 1 whenever the search itself changes.
    signature = (pending, tuple(sorted(filters.items())), sort, per_page, state.plan_in_force())
    page_key = "_page"
    if page_key not in st.session_state:
        in_url = str(st.query_params.get("page", "1"))
        st.session_state[page_key] = max(1, int(in_url)) if in_url.isdigit() else 1
    elif st.session_state.get("_search") != signature:
        st.session_state[page_key] = 1
    st.session_state["_search"] = signature
    params = {**filters, "per_page": str(per_page), **({"sort": sort} if sort else {})}
    try:
        envelope = state.search({**params, "page": str(st.session_state[page_key])}, pending=pending)
        last = envelope["meta"]["last_page"]
        if st.session_state[page_key] > last:  # a bookmark past the end: its last page
            st.session_state[page_key] = last
            envelope = state.search({**params, "page": str(last)}, pending=pending)
    except ApiError as exc:
        _show_error(exc)
        return
    page = st.session_state[page_key]
    _set_url("page", page, 1)
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
        st.caption(f"Page {page:,} of {meta['last_page']:,} · rows {meta['from']:,}–{meta['to']:,} · "
                   f"{sort_label(sort)} · click a column title to sort all {meta['total']:,} by it")  # fmt: skip
    url_params = {k: (v[-1] if isinstance(v, list) else v) for k, v in st.query_params.to_dict().items()}
    html_table = table.render(columns_table, chosen, envelope["data"], url_params, state.reader().now(), pending=pending)
    navigation.show_html(html_table, key="pending_table" if pending else "explore_table")
    if valued and any(c.key in ("value", "deal") for c in chosen) and coverage_note(valued):
        st.caption(f"Value: {coverage_note(valued)} (`edt appraise --backtest` measures it on this mirror).")
    if meta["last_page"] > 1:
        buttons = st.columns([1, 1, 1, 1, 6])
        for column, (label, target, enabled) in zip(buttons, (
                ("« First", 1, page > 1), ("‹ Previous", page - 1, page > 1),
                ("Next ›", page + 1, page < meta["last_page"]), ("Last »", meta["last_page"], page < meta["last_page"]))):
            column.button(label, disabled=not enabled, on_click=_turn_page, args=(page_key, target), key=f"to:{label}")
    if meta["total"]:
        _download_all(params, pending)


def _download_all(params: dict[str, str], pending: bool) -> None:
    """Every matching row as CSV, with exactly the rows the count above says (the export
    reads the mirror with its clock stopped at the moment that count was taken). Served by
    `app.py`, a link to a route that streams the file from the query layer in constant
    memory; run without it (AppTest, `streamlit run toolkit/ui/run.py`), Streamlit's download
    button, which holds the file in memory."""
    search = {k: v for k, v in params.items() if k not in ("page", "per_page")}
    total = state.search(params, pending=pending)["meta"]["total"]
    at = state.searched_at(params, pending=pending)
    plan = state.plan_in_force()
    if not pending and not plan_allows(plan, "export"):
        st.caption(f"The CSV of all {total:,} rows needs the Business plan (the plan in force is {plan}).")
        return
    label = f"Download all {total:,} rows (CSV)"
    if assets.served():
        st.link_button(label, exports.export_url(search, plan=plan, at=at, pending=pending), key="csv")
        return

    def all_rows_csv() -> bytes:
        return csv_of_all(search, mirror=state.exporter(at), plan=plan, pending=pending)

    st.download_button(label, all_rows_csv, file_name=exports.csv_name(pending), mime="text/csv", on_click="ignore",
                       key="csv")  # fmt: skip
    command = "edt export --format csv --out listings.csv" if not pending else None
    if command:
        args = " ".join(shlex.quote(f"{k}={v}") for k, v in search.items())
        st.caption(f"Or from a terminal, streamed to disk: `{command}{' ' + args if args else ''}`")


def csv_of_all(search: dict[str, str], *, mirror: Any, plan: str, pending: bool) -> bytes:
    """Every row of a search as CSV bytes, the same file the export routes stream."""
    return b"".join(exports.search_csv(mirror, search, plan=plan, pending=pending))


def explore() -> None:
    results_page(pending=False)


def pending_delete() -> None:
    results_page(pending=True)


# -- Domain detail ---------------------------------------------------------------------------

_SIDE_BY_SIDE = (
    ("Source", lambda r: r["source"]), ("Type", lambda r: r.get("type")),
    ("Price", lambda r: _dash(table.money(r.get("effective_price"), r.get("currency")) or None)),
    ("Bids", lambda r: _dash(r.get("bids_count"))),
    ("Ends", lambda r: _dash((r.get("auction_end_date") or "")[:16].replace("T", " ") or None)),
    ("Live", lambda r: "no (closed)" if r.get("closed_at") else "yes"),
    ("Trust Flow", lambda r: _dash(r.get("trust_flow"))), ("Citation Flow", lambda r: _dash(r.get("citation_flow"))),
    ("Domain Authority", lambda r: _dash(r.get("domain_authority"))),
    ("Referring domains", lambda r: _dash(r.get("referring_domains"))),
    ("Age (years)", lambda r: _dash(r.get("age"))), ("Score", lambda r: _dash(r.get("score"))),
    ("First seen", lambda r: _dash((r.get("first_seen_at") or "")[:10] or None)),
    ("Listing id", lambda r: str(r["id"])),
)  # fmt: skip


@st.cache_data(max_entries=256, show_spinner=False)
def _suggestions(path: str, generation: int, plan: str, text: str) -> list[str]:
    """Up to 20 live names containing `text`, best score first (through the query layer)."""
    found = state.reader().search_domains({"contains": text, "per_page": "20"}, plan=plan)["data"]
    return list(dict.fromkeys(r["name"] for r in found))


def detail() -> None:
    st.header("Domain detail")
    plan = state.plan_in_force()
    mirror = state.reader()
    legacy_id = st.query_params.get("id", "")
    if legacy_id and not st.query_params.get("name"):  # an older bookmark by listing id
        try:
            st.query_params["name"] = mirror.get_domain(legacy_id, plan=plan)["data"]["name"]
        except ApiError as exc:
            _show_error(exc)
            return
    in_url = st.query_params.get("name", "")
    if st.session_state.get("_name_in_url") != in_url:
        st.session_state["detail_name"] = in_url
        st.session_state["_name_in_url"] = in_url
    typed = st.text_input("Domain name", key="detail_name", placeholder="a name, or part of one (e.g. travel)")
    typed = typed.strip().lower().rstrip(".")
    if not typed:
        st.info("Type a domain name (or part of one), or open a name from Explore or Pending-delete.")
        return
    listings = mirror.listings_named(typed)
    if not listings and _pending_detail(typed, plan):
        st.query_params["name"] = st.session_state["_name_in_url"] = typed
        return
    if not listings:
        try:
            options = _suggestions(mirror.path, mirror.generation(), plan, typed) if len(typed) >= 2 else []
        except ApiError as exc:
            _show_error(exc)
            return
        if not options:
            st.warning(f"No listing is named or contains “{typed}”.")
            return
        picked = st.selectbox(f"{len(options)} names contain “{typed}”", ["", *options], key="detail_pick",
                              format_func=lambda n: n or "choose one…")  # fmt: skip
        if not picked:
            return
        typed = picked
        listings = mirror.listings_named(typed)
    st.query_params["name"] = st.session_state["_name_in_url"] = typed
    st.query_params.pop("id", None)
    records = []
    for listing_id, _source, _live in listings:
        try:
            records.append(mirror.get_domain(listing_id, plan=plan)["data"])
        except ApiError:
            continue  # a regfree row below the plan in force
    _pending_note(typed, plan)
    if not records:
        st.warning(f"{typed}: no listing the {plan} plan may read.")
        return
    wanted = legacy_id if legacy_id.isdigit() else None
    record = next((r for r in records if str(r["id"]) == wanted), records[0])
    st.subheader(record["name"])
    cols = st.columns(4)
    cols[0].metric("Score", _dash(record.get("score")))
    cols[1].metric("TF / CF", f"{_dash(record.get('trust_flow'))} / {_dash(record.get('citation_flow'))}")
    cols[2].metric("Price", _dash(table.money(record.get("effective_price"), record.get("currency")) or None))
    cols[3].metric("Bids", _dash(record.get("bids_count") or 0))
    # Readable times, and no "T07:00:00Z" in Markdown: Streamlit reads ":00:" as an emoji
    # name and loads its emoji code (260 kB) to look it up.
    st.caption(f"First seen {table.moment(record.get('first_seen_at'))}, last seen "
               f"{table.moment(record.get('last_seen_at'))}"
               + (f", left its source {table.moment(record['closed_at'])}" if record.get("closed_at") else ""))  # fmt: skip
    links = [f"[Wayback calendar](https://web.archive.org/web/*/{record['name']})"]
    if record.get("purchase_url"):
        links.append(f"[Purchase page]({record['purchase_url']})")
    st.markdown(" · ".join(links))
    if len(records) > 1:
        st.subheader(f"Listed {len(records)} times")
        side = pd.DataFrame({f"{r['source']} #{r['id']}": [cell(r) or "—" for _, cell in _SIDE_BY_SIDE]
                             for r in records}, index=[label for label, _ in _SIDE_BY_SIDE])  # fmt: skip
        st.table(side, border="horizontal")
    history = mirror.listing_history(record["id"], plan=plan)
    echarts.show(charts.price_history(history), key="history_chart")
    show_signals(record, history)
    _price_range(record["id"])
    _comparable_results(record["name"])
    fields = [(k, v) for k, v in record.items() if k != "historical_traffic"]
    _fields_table(fields)


def _price_range(listing_id: int) -> None:
    """The listing's price range and the backtest's coverage beside it (analysis/appraise.py)."""
    mirror = state.reader()
    row = mirror.connection().execute("SELECT value_low, value_mid, value_high, value_reason, valued_at, live_low, "
                                      "live_mid, live_high FROM listings WHERE id = ?", [listing_id]).fetchone()  # fmt: skip
    if row is None or row[4] is None:
        return  # not appraised yet (`edt appraise`, or the next sync)
    low, mid, high, reason, _, live_low, live_mid, live_high = row
    st.subheader("Price range")
    if live_mid is not None:  # an auction with bids: what the bidding already says first
        st.metric("Live estimate (EUR, 80% range, given the bidding)", f"{live_low:,.0f} – {live_high:,.0f}",
                  help=f"middle {live_mid:,.0f} EUR; never below the current bid")  # fmt: skip
    if reason:
        st.caption(f"No range: {reason}.")
        return
    st.metric("Value (EUR, 80% range)", f"{low:,.0f} – {high:,.0f}", help=f"middle {mid:,.0f} EUR")
    note = coverage_note(value_model(mirror))
    if note:
        st.caption(note + " (`edt appraise --backtest` measures it on this mirror).")


def _comparable_results(name: str) -> None:
    """The closed auctions most like this name, what they sold for and why (analysis/comps.py)."""
    from ..analysis.comps import comparables

    st.subheader("Comparable results")
    found = comparables(state.reader(), name, limit=8)
    if found.empty:
        st.caption("No sale known yet: results come from the auctions the mirror sees end, and from the sales reported "
                   "elsewhere (edt ingest sales FILE).")  # fmt: skip
        return
    rows = []
    for r in found.itertuples():
        eur = f" ({r.final_price_eur:,.0f} EUR)" if r.final_price_eur == r.final_price_eur and r.final_price_eur else ""
        how = (f"{r.bids} bids, ended {r.ended_at[:10]} on {r.source}" if r.origin == "auction"
               else f"reported sale of {r.ended_at[:10]}" + (f" on {r.source}" if r.source else "") + f" ({r.origin})")
        rows.append((r.name, f"{table.money(r.final_price, r.currency)}{eur}, {how}. {r.why}"))
    navigation.show_html(table.fields_html(rows, header=("sold", "for, and why it is alike")), key="comps")


def _fields_table(fields: list[tuple[str, Any]]) -> None:
    """Every field of a record, a dash for an absent value, as static HTML: the browser lays
    it out at once (an interactive grid, or `st.table`'s cells, take about a second more on
    the full page). Not Markdown: its timestamps would load Streamlit's emoji code."""
    st.subheader("Every field")
    navigation.show_html(table.fields_html([(k, _field_text(v)) for k, v in fields]), key="fields")


def _field_text(value: Any) -> str:
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, (list, dict)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float) and value.is_integer():
        return f"{value:.0f}"
    return str(value)


def _pending_detail(name: str, plan: str) -> bool:
    """A name that is pending delete and listed nowhere: its drop, status and metrics."""
    if not plan_allows(plan, "pending_delete"):
        return False
    try:
        row = state.reader().get_pending_delete(name, plan=plan)["data"]
    except ApiError:
        return False
    st.subheader(row["domain"])
    st.caption("Pending delete: not listed on any platform this mirror follows.")
    cols = st.columns(4)
    cols[0].metric("Drops", _dash(row.get("estimated_drop_date")))
    cols[1].metric("Status", row["whois_status"])
    cols[2].metric("TF / CF", f"{_dash(row.get('trust_flow'))} / {_dash(row.get('citation_flow'))}")
    cols[3].metric("Referring domains", _dash(row.get("referring_domains")))
    st.markdown(f"[Wayback calendar](https://web.archive.org/web/*/{row['domain']})")
    _fields_table(list(row.items()))
    return True


def _pending_note(name: str, plan: str) -> None:
    if not plan_allows(plan, "pending_delete"):
        return
    try:
        row = state.reader().get_pending_delete(name, plan=plan)["data"]
    except ApiError:
        return
    st.info(f"{name} is also pending delete: {row['whois_status']}, estimated drop "
            f"{row.get('estimated_drop_date') or 'unknown'} ({row['source']}).")  # fmt: skip


# -- Trust Flow / Citation Flow --------------------------------------------------------------


def _chart_page(title: str) -> tuple[dict[str, str], Any]:
    """A chart page's header, its sidebar filters and the counts of every match (None, with
    the error shown, when a filter is refused)."""
    st.header(title)
    filters = sidebar_filters()
    try:
        return filters, state.chart_counts(filters)
    except ApiError as exc:
        _show_error(exc)
        return filters, None


def trust_flow() -> None:
    """Counts of ALL matching listings (`state.chart_counts`): the TF x CF density, the TF / CF
    ratio, the "CF far above TF" share per topic and per source; a TF x CF region (sliders
    kept in the URL) lists its domains through the query layer and opens in Explore. The
    sampled point cloud (to lasso any shape) is opt-in: WebGL without a GPU is slow."""
    filters, counts = _chart_page("Trust Flow / Citation Flow")
    if counts is None:
        return
    st.caption(f"Counts over all {counts.total:,} matching listings (not a sample); "
               f"{counts.without_tf_cf:,} without both Trust Flow and Citation Flow are left out.")  # fmt: skip
    left, right = st.columns([3, 2])
    echarts.show(charts.tf_cf_heatmap(counts), key="tfcf", where=left)
    echarts.show(charts.tf_cf_ratio_bars(counts), key="ratio", where=right)
    left, right = st.columns([2, 3])
    _from_url("zone_by", "zone_by", lambda v: {"topic": "topic", "source": "source"}[v], "topic")
    zone_by = left.radio("Share in the zone by", ["topic", "source"], horizontal=True, key="zone_by")
    _to_url("zone_by", "" if zone_by == "topic" else zone_by)
    echarts.show(charts.zone_share_bars(counts, zone_by), key="zone_share", where=left)
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
        _from_url(key, name, _range, _FULL_RANGE)
        chosen[metric] = where.slider(label, *_FULL_RANGE, key=key)
        _to_url(name, "" if chosen[metric] == _FULL_RANGE else "-".join(map(str, chosen[metric])))
    region = _region_filters(filters, chosen["tf"], chosen["cf"])
    try:
        found = state.search({**region, "sort": "-trust_flow", "per_page": "25"})
    except ApiError as exc:
        _show_error(exc)
        return
    total = found["meta"]["total"]
    bounds = f"TF {region['tf_min']}–{region['tf_max']}, CF {region['cf_min']}–{region['cf_max']}"
    with where:
        navigation.show_html(f"<p><b>{total:,}</b> matching listings in {bounds} (enriched ones only) · "
                             f"{_open_all_link('explore', {**region, 'sort': '-trust_flow'})}</p>",
                             key="region_summary")  # fmt: skip
    if total:
        columns = table.chosen_columns(table.LISTING_TABLE, None)
        navigation.show_html(table.render(table.LISTING_TABLE, columns, found["data"], {}, state.reader().now(),
                                          sortable=False), key="region_table")  # fmt: skip
        if total > len(found["data"]):
            st.caption(f"The {len(found['data'])} highest Trust Flow of {total:,}; Explore pages through all of them.")


def _tf_cf_points(filters: dict[str, str]) -> None:
    """Opt-in: an even sample of the matching rows as points (WebGL), to lasso any shape."""
    _from_url("tf_points", "points", lambda v: v == "1", False)
    shown = st.toggle(f"Show a sample of {state.CHART_SAMPLE:,} listings as points, to lasso any shape (slow "
                      "without a GPU)", key="tf_points")  # fmt: skip
    _to_url("points", "1" if shown else "")
    if not shown:
        return
    _from_url("color_by", "color_by", lambda v: {"topic": "topic", "source": "source"}[v], "topic")
    color_by = st.radio("Colour by", ["topic", "source"], horizontal=True, key="color_by")
    _to_url("color_by", "" if color_by == "topic" else color_by)
    columns = ["id", "name", "source", "trust_flow", "citation_flow", "ttf_topic", "score"]
    try:
        rows = state.frame(filters, columns)
    except ApiError as exc:
        _show_error(exc)
        return
    st.caption(f"{len(rows):,} rows drawn (an even sample by id when more match).")
    event = st.plotly_chart(charts.tf_cf_scatter(rows, color_by=color_by), on_select="rerun",
                            selection_mode=("points", "box", "lasso"), key="tfcf_points")  # fmt: skip
    picked = charts.frame_ids(list(event.selection.get("points", []))) if event and event.selection else []
    if picked:
        st.subheader(f"{len(picked)} selected")
        st.dataframe(rows[rows["id"].isin(picked)], hide_index=True, key="picked")


# -- Archive age -----------------------------------------------------------------------------


def archive() -> None:
    """Counts of ALL matching listings (`state.chart_counts`): ages, first-snapshot years,
    snapshots x age and languages."""
    _, counts = _chart_page("Archive age")
    if counts is None:
        return
    st.caption(f"Counts over all {counts.total:,} matching listings (not a sample); "
               f"{counts.without_first_date:,} without a first web-archive snapshot date are left out of the age "
               "charts.")  # fmt: skip
    left, right = st.columns(2)
    echarts.show(charts.age_bars(counts), key="age", where=left)
    echarts.show(charts.first_year_bars(counts), key="first_year", where=right)
    echarts.show(charts.snapshots_age_heatmap(counts), key="snapshots", where=left)
    echarts.show(charts.language_bars(counts), key="languages", where=right)


# -- Drop calendar ---------------------------------------------------------------------------


def _month_bounds(month: date) -> tuple[date, date]:
    last = calendar_module.monthrange(month.year, month.month)[1]
    return month.replace(day=1), month.replace(day=last)


def ics_for_days(days: dict[date, list[str]], title: str) -> bytes:
    """An .ics calendar with one all-day event per day listing its domains."""
    from icalendar import Calendar, Event

    cal = Calendar()
    cal.add("prodid", "-//Expired Domains Toolkit//edt//EN")
    cal.add("version", "2.0")
    for day, names in sorted(days.items()):
        event = Event()
        event.add("uid", f"{day.isoformat()}-{abs(hash(title)) % 10**8}@edt")
        event.add("dtstamp", datetime.now(timezone.utc))
        event.add("dtstart", day)
        event.add("summary", f"{title}: {len(names)} domain{'s' if len(names) != 1 else ''}")
        event.add("description", "\n".join(names[:200]) + (f"\n… and {len(names) - 200} more" if len(names) > 200 else ""))
        cal.add_component(event)
    return cal.to_ical()


def ics_for_windows(drops: list[tuple[str, date, date | None, date | None]], title: str) -> bytes:
    """An .ics calendar of pending-delete drops that shows their uncertainty: names sharing a
    window are one all-day event spanning the whole window (DTEND is the day after its last
    day), its summary naming the most likely day. A row without a window is a one-day event."""
    from icalendar import Calendar, Event

    groups: dict[tuple[date, date, date], list[str]] = {}
    for name, likely, start, end in drops:
        start, end = start or likely, end or likely
        groups.setdefault((start, end, likely), []).append(name)
    cal = Calendar()
    cal.add("prodid", "-//Expired Domains Toolkit//edt//EN")
    cal.add("version", "2.0")
    for (start, end, likely), names in sorted(groups.items()):
        event = Event()
        span = (end - start).days + 1
        event.add("uid", f"{start.isoformat()}-{end.isoformat()}-{likely.isoformat()}-{abs(hash(title)) % 10**8}@edt")
        event.add("dtstamp", datetime.now(timezone.utc))
        event.add("dtstart", start)
        event.add("dtend", end + timedelta(days=1))
        count = f"{len(names)} domain{'s' if len(names) != 1 else ''}"
        when = (f"most likely {likely:%a %d %b}, window {start:%d %b}–{end:%d %b} ({span} days)" if span > 1
                else f"on {likely:%a %d %b}")  # fmt: skip
        event.add("summary", f"{title}: {count}, {when}")
        note = ("The day each name is released lies in this window; a daily zone snapshot only says a name left "
                "the zone between two snapshots." if span > 1 else "A one-day window (the registry published it).")
        listed = "\n".join(names[:200]) + (f"\n… and {len(names) - 200} more" if len(names) > 200 else "")
        event.add("description", f"{note}\n\n{listed}")
        cal.add_component(event)
    return cal.to_ical()


def _from_url(key: str, name: str, parse: Callable[[str], Any], default: Any) -> None:
    """Before widget `key` is drawn: take its value from the URL's `name` on a new session or
    when the URL changed under it (a bookmark, a link); a value that does not parse is the default."""
    raw = st.query_params.get(name, "")
    if key not in st.session_state or st.session_state.get(f"_url:{name}") != raw:
        try:
            st.session_state[key] = parse(raw) if raw else default
        except (ValueError, KeyError):
            st.session_state[key] = default
        st.session_state[f"_url:{name}"] = raw


def _to_url(name: str, text: str) -> None:
    _set_url(name, text)
    st.session_state[f"_url:{name}"] = text


_CALENDAR_KINDS = {"ends": "Auction ends", "drops": "Pending-delete drops"}
DAY_ROWS = 100  # a calendar day's names listed on the page; its link opens all of them


def drop_calendar() -> None:
    """Auction ends or pending-delete drops per day of a month; every setting is in the URL
    (`dates`, `month`, `cal_tld`, `cal_status`, `day`), so a calendar is a bookmark."""
    st.header("Drop calendar")
    plan = state.plan_in_force()
    kinds = ["ends"] + (["drops"] if plan_allows(plan, "pending_delete") else [])
    _from_url("cal_kind", "dates", lambda t: t if t in kinds else kinds[0], kinds[0])
    if st.session_state["cal_kind"] not in kinds:
        st.session_state["cal_kind"] = kinds[0]
    kind = st.radio("Dates", kinds, horizontal=True, key="cal_kind", format_func=_CALENDAR_KINDS.get)
    _to_url("dates", "" if kind == "ends" else kind)
    pending = kind == "drops"
    today = state.reader().now().date()
    this_month = today.replace(day=1)
    _from_url("cal_month", "month", lambda t: date.fromisoformat(f"{t}-01"), this_month)
    month = st.date_input("Month", key="cal_month").replace(day=1)
    _to_url("month", "" if month == this_month else f"{month:%Y-%m}")
    first, last = _month_bounds(month)
    _from_url("cal_tld", "cal_tld", str, "")
    tld = st.text_input("TLD (comma-separated; uk also means .co.uk, .org.uk, ...)" if pending
                        else "TLD (comma-separated)", key="cal_tld").strip()  # fmt: skip
    _to_url("cal_tld", tld)
    if pending:
        _from_url("cal_status", "cal_status", lambda t: [v for v in t.split(",") if v in PENDING_STATUSES], [])
        statuses = st.multiselect("Status", list(PENDING_STATUSES), key="cal_status")
        _to_url("cal_status", ",".join(statuses))
        params = {"drop_date_from": first.isoformat(), "drop_date_to": last.isoformat(), "include_past": "1"}
        params |= {"status": ",".join(statuses)} if statuses else {}
    else:
        params = {"ends_after": first.isoformat(), "ends_before": (last + timedelta(days=1)).isoformat()}
    params |= {"tld": tld} if tld else {}
    try:
        counts = state.day_counts(params, pending=pending)
    except ApiError as exc:
        _show_error(exc)
        return
    title = _CALENDAR_KINDS[kind]
    echarts.show(charts.drop_calendar(counts, month, title=f"{title}, {month:%B %Y}"), key="calendar")
    in_month = {d: n for d, n in counts.items() if first <= d <= last and n}
    st.caption(f"{sum(in_month.values()):,} domains in {month:%B %Y}")
    if pending:
        st.caption("Each drop is counted on its most likely day. A drop predicted from a daily zone snapshot is a "
                   "window (the name left the zone between two snapshots): the table and the .ics show it. On the "
                   ".nu backtest the most likely day was exact for 92% of names and the window held the official "
                   "day for 99.8% (docs/guides/drop-dates.md).")  # fmt: skip
    if not in_month:
        return
    days = sorted(in_month)
    # The menu's key names its search: after a filter change its counts are the new ones.
    menu = f"cal_day:{kind}:{month:%Y-%m}:{tld}:{params.get('status', '')}"
    _from_url(menu, "day", lambda t: date.fromisoformat(t) if date.fromisoformat(t) in in_month else days[0], days[0])
    if st.session_state[menu] not in in_month:
        st.session_state[menu] = days[0]
    day = st.selectbox("Day", days, format_func=lambda d: f"{d:%a %d %b} ({in_month[d]:,})", key=menu)
    _to_url("day", day.isoformat())
    _day_table(day, params, pending)

    def calendar_file() -> bytes:
        if pending:
            return ics_for_windows([d for day in sorted(in_month) for d in _drops_on(day, params)], title)
        return ics_for_days({d: _names_on(d, params) for d in sorted(in_month)}, title)

    st.download_button("Download the days (.ics)", calendar_file, file_name="drops.ics", mime="text/calendar",
                       on_click="ignore", key="ics")  # fmt: skip


def _on_day(day: date, params: dict[str, str], pending: bool) -> dict[str, str]:
    """The calendar's search narrowed to one day: its drops, or the auctions ending that day."""
    if pending:
        return {**params, "drop_date_from": day.isoformat(), "drop_date_to": day.isoformat()}
    return {**params, "ends_after": day.isoformat(), "ends_before": (day + timedelta(days=1)).isoformat()}


def _day_table(day: date, params: dict[str, str], pending: bool) -> None:
    """The day's names as Pending-delete's table (with each drop window) or Explore's (the
    auctions ending that day, soonest first): the first page, and a link that opens them all there."""
    search = _on_day(day, params, pending)
    if pending:
        columns_table, keys, view = table.PENDING_TABLE, [*table.default_keys(table.PENDING_TABLE), "window"], "pending"
    else:
        search["sort"] = "auction_end_date"
        columns_table, keys, view = table.LISTING_TABLE, table.default_keys(table.LISTING_TABLE), "explore"
    try:
        found = state.search({**search, "per_page": str(DAY_ROWS)}, pending=pending)
    except ApiError as exc:
        _show_error(exc)
        return
    total, shown = found["meta"]["total"], len(found["data"])
    what = f"The first {shown} of {total:,}" if total > shown else f"All {total:,}"
    rows = table.render(columns_table, table.chosen_columns(columns_table, keys), found["data"], {},
                        state.reader().now(), pending=pending, sortable=False)  # fmt: skip
    navigation.show_html(f"<p>{what} · {_open_all_link(view, search)}</p>{rows}", key="day_table")


def _open_all_link(view: str, search: dict[str, str]) -> str:
    """A link that opens `search` in page `view` (Explore, Pending-delete), the plan kept."""
    query = {k: v for k, v in st.query_params.to_dict().items() if k == "plan"} | {"view": view, **search}
    page = "Explore" if view == "explore" else "Pending-delete"
    return f'<a href="?{html.escape(urlencode(query))}">open them all in {page} →</a>'


def _drops_on(day: date, params: dict[str, str]) -> list[tuple[str, date, date | None, date | None]]:
    """(domain, most likely day, window start, window end) of the pending drops counted on `day`."""
    rows = state.reader().pending_df(_on_day(day, params, True), plan=state.plan_in_force(),
                                     columns=["domain", "drop_window_start", "drop_window_end"])  # fmt: skip
    return [(name, day, _as_day(start), _as_day(end))
            for name, start, end in zip(rows["domain"], rows["drop_window_start"], rows["drop_window_end"])]  # fmt: skip


def _as_day(value: object) -> date | None:
    return date.fromisoformat(str(value)[:10]) if isinstance(value, str) and value else None


def _names_on(day: date, params: dict[str, str]) -> list[str]:
    """The domains whose auction ends on `day` (through the query layer, as the counts were)."""
    rows = state.reader().domains_df(_on_day(day, params, False), plan=state.plan_in_force(), columns=["name"])
    return list(rows["name"])


# -- Watchlist -------------------------------------------------------------------------------


def watchlist() -> None:
    from ..sync import watchlist as saved

    st.header("Watchlist")
    mirror = state.writable_mirror(state.db_path())
    filters = state.current_filters()
    st.subheader("Saved searches")
    with st.form("save_search"):
        name = st.text_input("Save the current filters as", key="search_name")
        st.caption("Current filters: " + (", ".join(f"{k}={v}" for k, v in filters.items()) or "none (all listings)"))
        if st.form_submit_button("Save"):
            try:
                saved.save_search(mirror, name, filters)
                st.success(f"Saved “{name.strip()}”.")
            except (ValueError, ApiError) as exc:
                st.error(str(exc.body.get("message")) if isinstance(exc, ApiError) else str(exc))
            except Exception as exc:
                if not _said_read_only(mirror, exc):
                    raise
    try:
        searches = saved.saved_searches(mirror)
    except ApiError as exc:  # a search saved under older rules no longer validates
        _show_error(exc)
        searches = []
    if not searches:
        st.caption("No saved search yet: set filters on Explore, then save them here.")
    for entry in searches:
        cols = st.columns([3, 1, 1, 1, 1])
        cols[0].markdown(f"**{entry['name']}**  \n" + (", ".join(f"{k}={v}" for k, v in entry["params"].items())
                                                       or "all listings"))  # fmt: skip
        cols[1].metric("New", f"{entry['new_matches']:,}", help="first seen since you last marked them seen")
        cols[2].metric("Matches now", f"{entry['matches']:,}")
        if cols[3].button("Open in Explore", key=f"open:{entry['name']}"):
            state.set_filters(saved.search_params(mirror, entry["name"]))  # its new matches stay new
            st.query_params["view"] = "explore"
            st.rerun()
        if cols[4].button("Delete", key=f"delete:{entry['name']}"):
            try:
                saved.delete_search(mirror, entry["name"])
            except Exception as exc:
                if not _said_read_only(mirror, exc):
                    raise
            else:
                st.rerun()
        if entry["new_matches"]:
            with st.expander(f"The {entry['new_matches']:,} new matches of “{entry['name']}”"):
                _new_matches(mirror, entry)
    st.subheader("Shortlist")
    with st.form("shortlist_add"):
        listing_id = st.text_input("Listing id", key="short_id")
        note = st.text_input("Note", key="short_note")
        if st.form_submit_button("Add to shortlist"):
            try:
                saved.shortlist_add(mirror, int(listing_id), note)
            except (ValueError, ApiError) as exc:
                st.error(f"Listing id: {exc}")
            except Exception as exc:
                if not _said_read_only(mirror, exc):
                    raise
    items = saved.shortlist(mirror)
    if items:
        st.dataframe(pd.DataFrame(items), hide_index=True, key="shortlist")
    _watched_names(mirror)


def _watched_names(mirror: Any) -> None:
    """Names watched through their registration lifecycle (`edt watch name`): their stage, what
    comes next and when, where the mirror lists them; add and remove."""
    from ..sync import watched_names as watched

    st.subheader("Watched names")
    with st.form("watch_names"):
        typed = st.text_area("Names to watch, one a line or comma-separated", key="watch_names_input")
        note = st.text_input("Note", key="watch_names_note")
        if st.form_submit_button("Watch"):
            names = [n.strip() for n in typed.replace(",", "\n").splitlines() if n.strip()]
            try:
                added = watched.watch_names(mirror, names, note=note or None)
                st.success(f"Watching {', '.join(added)}: each registry is asked by the daily `names` job "
                           "(`edt watch names --check` asks now).")  # fmt: skip
            except ValueError as exc:
                st.error(f"{exc}; nothing was added.")
            except Exception as exc:
                if not _said_read_only(mirror, exc):
                    raise
    rows = watched.watched_names(mirror)
    if not rows:
        st.caption("No watched name yet: any name, listed or not, followed through expiry, redemption, pending "
                   "delete and release, with an alert at each stage. Only the registries' RDAP servers are asked.")  # fmt: skip
        return
    shown = []
    for row in rows:
        when = watched.window_text(row["expected_from"], row["expected_to"], sep=" – ") or ""
        shown.append({"name": row["name"], "stage": watched.STAGE_WORDS.get(row["stage"] or "", "not checked yet"),
                      "since": (row["stage_since"] or "")[:10],
                      "next": watched.STAGE_WORDS.get(row["next_stage"] or "", ""), "expected": when,
                      "listed": "; ".join(e["where"] for e in row["listed"]),
                      "checked": (row["checked_at"] or "")[:16].replace("T", " "),
                      "problem": row["last_error"] or (row["rdap"] if row["rdap"] not in (None, "ok") else ""),
                      "note": row["note"] or ""})  # fmt: skip
    st.dataframe(pd.DataFrame(shown), hide_index=True, key="watched_names")
    gone = st.multiselect("Stop watching", [r["name"] for r in rows], key="unwatch_pick")
    if gone and st.button("Stop watching these", key="unwatch"):
        try:
            watched.unwatch_names(mirror, gone)
        except Exception as exc:
            if not _said_read_only(mirror, exc):
                raise
        else:
            st.rerun()


def _new_matches(mirror: Any, entry: dict[str, Any]) -> None:
    """The new matches as a table (the first 100 by first-seen time), and the one action that
    marks them seen: up to the moment they were listed, so later arrivals stay new."""
    from ..sync import watchlist as saved

    listed_at = mirror.now().replace(microsecond=0).isoformat()
    params = {**saved.new_matches_params(entry), "sort": "-first_seen_at", "per_page": "100"}
    try:
        found = mirror.search_domains(params)
    except ApiError as exc:
        _show_error(exc)
        return
    navigation.show_html(table.render(table.LISTING_TABLE, table.chosen_columns(table.LISTING_TABLE, None),
                                      found["data"], {}, mirror.now(), sortable=False), key=f"new_matches:{entry['name']}")  # fmt: skip
    if found["meta"]["total"] > len(found["data"]):
        st.caption(f"The 100 most recent of {found['meta']['total']:,}.")
    if st.button(f"Mark these {found['meta']['total']:,} seen", key=f"seen:{entry['name']}"):
        try:
            saved.mark_seen(mirror, entry["name"], upto=listed_at)
        except Exception as exc:
            if not _said_read_only(mirror, exc):
                raise
        else:
            st.rerun()


# -- Sync ------------------------------------------------------------------------------------


def sync_page() -> None:
    from ..store.jobs import JOBS

    st.header("Sync")
    info = state.status()
    table = pd.DataFrame(info["freshness"])
    table["state"] = ["never synced" if r["last_ok"] is None else ("fresh" if r["fresh"] else "stale")
                      for r in info["freshness"]]  # fmt: skip
    st.dataframe(table[["job", "schedule", "last_ok", "age_hours", "state"]], hide_index=True, key="freshness")
    if info["last_sync"]:
        st.subheader("Last runs")
        st.dataframe(pd.DataFrame([{"job": j, **r} for j, r in info["last_sync"].items()]), hide_index=True,
                     key="runs")  # fmt: skip
    if not os.environ.get("EDT_API_KEY"):
        st.info("Set EDT_API_KEY (and EDT_PLAN) before starting the app to sync from the live service; "
                "the free public feeds below need no key.")  # fmt: skip
    else:
        job = st.selectbox("Job", list(JOBS), key="sync_job")
        if st.button("Run this job now", key="sync_run"):
            _run_job(job)
    _feeds_section(info)


def _feeds_section(info: dict[str, Any]) -> None:
    """The free public feeds (docs/guides/feeds.md): freshness, and a button that fetches them."""
    from ..store.feeds import feed_table

    st.subheader("Free public feeds")
    try:
        feeds = feed_table()
    except ValueError as exc:
        st.error(str(exc))
        return
    if info["feeds"]:
        table = pd.DataFrame(info["feeds"])
        table["state"] = ["never fetched" if r["last_ok"] is None else ("fresh" if r["fresh"] else "stale")
                          for r in info["feeds"]]  # fmt: skip
        st.dataframe(table[["job", "schedule", "last_ok", "age_hours", "state", "enabled"]].rename(columns={"job": "feed"}),
                     hide_index=True, key="feeds")  # fmt: skip
    for failed, line in st.session_state.pop("feed_lines", []):  # the last run's, said after the rerun
        (st.error if failed else st.success)(line)
    runnable = [name for name, feed in feeds.items() if feed.url]
    chosen = st.multiselect("Feeds", runnable, default=[n for n in runnable if feeds[n].enabled], key="feeds_pick")
    if st.button("Fetch these feeds now", key="feeds_run", disabled=not chosen):
        _run_feeds(chosen)


def _run_feeds(names: list[str]) -> None:
    """Fetch `names`, then draw the page again: its freshness table then shows this run."""
    from ..ingest.feeds import run_feeds
    from ..store.lock import MirrorBusy

    with st.spinner(f"Fetching {len(names)} feed(s)…"):
        try:
            reports = run_feeds(state.db_path(), names)
        except (MirrorBusy, ValueError, OSError) as exc:
            st.error(str(exc))
            return
    st.cache_data.clear()
    st.session_state["feed_lines"] = [(r.failed, r.line()) for r in reports]
    st.rerun()


def _run_job(job: str) -> None:
    from ..config import load_settings
    from ..plans import RATE_LIMITS
    from ..sync.remote import RemoteClient
    from ..sync.run import SyncBusy, SyncStopped, sync

    settings = load_settings(db=state.db_path(), plan=os.environ.get("EDT_PLAN") or "pro")
    bar = st.progress(0.0, text=f"{job}: starting")

    def progress(event: str, info: dict[str, Any]) -> None:
        if event == "page" and info.get("left") is not None:
            done = info["requests"] / max(1, info["requests"] + info["left"])
            bar.progress(min(done, 1.0), text=f"{job}: {info['rows']:,} rows, {info['requests']} requests")

    async def run() -> list:
        per_minute = RATE_LIMITS.get(settings.plan) or RATE_LIMITS["business"]
        async with RemoteClient(settings.base_url, settings.api_key or "", plan=settings.plan,
                                per_minute=per_minute) as client:  # fmt: skip
            return await sync(settings.db, client, plan=settings.plan, jobs=[job], progress=progress)

    try:
        reports = asyncio.run(run())
    except (SyncBusy, SyncStopped) as exc:
        st.error(str(exc))
        return
    bar.progress(1.0, text=f"{job}: done")
    for report in reports:
        st.success(report.line())


# -- first run -------------------------------------------------------------------------------


def first_run() -> None:
    st.header("Welcome: the mirror is empty")
    st.write(f"Mirror file: `{state.db_path()}`")
    left, right = st.columns(2)
    with left:
        st.subheader("Try it with demo data")
        st.write("About 5,000 realistic listings, 1,500 deleted ccTLD domains and 1,000 pending-delete domains, "
                 "generated on this machine in a few seconds.")  # fmt: skip
        if st.button("Load the demo data", type="primary", key="load_demo"):
            from ..demo import load_demo

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
                _run_job("listings")
                st.cache_data.clear()
        else:
            st.write("Then reopen this page.")


PAGES: dict[str, tuple[str, Any]] = {
    "explore": ("Explore", explore),
    "pending": ("Pending-delete", pending_delete),
    "detail": ("Domain detail", detail),
    "trust-flow": ("Trust Flow / Citation Flow", trust_flow),
    "archive": ("Archive age", archive),
    "calendar": ("Drop calendar", drop_calendar),
    "watchlist": ("Watchlist", watchlist),
    "sync": ("Sync", sync_page),
}
