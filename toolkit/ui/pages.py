"""The app's pages: thin shells over the query layer (`state`) and the charts (`toolkit.analysis.charts`)."""

from __future__ import annotations

import asyncio
import calendar as calendar_module
import html
import os
import shlex
from datetime import date, datetime, timedelta, timezone
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from ..analysis.appraise import coverage_note, value_model
from ..errors import ApiError
from ..query.params import DOMAIN_PARAMS, DOMAIN_SORTS, PENDING_PARAMS, PENDING_SORTS, PENDING_STATUSES
from ..plans import plan_allows
from ..store.labels import sort_field_label, status_words
from . import actions, assets, domain, exports, navigation, state, table, watchlist
from .filters import sidebar_filters

__all__ = ["PAGES", "first_run", "results_page", "sort_label", "csv_of_all", "ics_for_days", "ics_for_windows"]


def _show_error(exc: ApiError) -> None:
    field = exc.field
    st.error(f"{field + ': ' if field else ''}{exc.body.get('message', exc)}")


def _said_read_only(mirror: Any, exc: Exception) -> bool:
    """Whether `exc` is SQLite refusing a write to a mirror opened read-only; if so, an
    st.error naming the mirror and the fix, not a traceback."""
    words = state.read_only_words(mirror, exc)
    if words:
        st.error(words)
    return words is not None


def _dash(value: Any, unit: str = "") -> str:
    """A metric for display: a dash when absent, thousands separated, whole floats as integers."""
    if value is None or value == "":
        return "—"
    text = table.blank(value)
    return f"{text} {unit}".strip() if unit else text


# -- Explore and Pending-delete: one results page over either table ---------------------------

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


def _url_choice(name: str, options: list[Any], default: Any) -> Any:
    value = st.query_params.get(name, default)
    return value if value in options else default


def _set_url(name: str, value: Any, default: Any = "") -> None:
    if value in (None, "", default):
        st.query_params.pop(name, None)
    else:
        st.query_params[name] = str(value)


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
        st.warning(f"The pending-delete inventory needs the Authority+ plan; the plan in force is {plan}.")
        return
    actions.say_done()
    sorts = _sort_options(pending)
    sort = _url_choice("sort", sorts, sorts[0])
    sizes = [25, 50, 100] + ([200] if pending else [])
    per_page = _url_choice("per_page", [str(n) for n in sizes], "50")
    valued = None if pending else value_model(state.reader())  # the price ranges, once appraised
    defaults = table.default_keys(columns_table, has=("values",) if valued else ())
    keys = [c.key for c in columns_table]
    shown = [k for k in st.query_params.get("cols", "").split(",") if k in keys] or defaults
    box = st.expander(
        f"Sort ({sort_label(sort).lower()}), rows per page ({per_page}), columns ({len(shown)})",
        key="table_settings",
        on_change="rerun",
    )
    if box.open:
        with box:
            sort, size, shown = _table_settings(columns_table, sorts, sort, sizes, int(per_page), shown)
            per_page = str(size)
    chosen = table.chosen_columns(columns_table, shown)
    _set_url("sort", sort, sorts[0])
    _set_url("per_page", per_page, "50")
    _set_url("cols", ",".join(c.key for c in chosen), ",".join(defaults))

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
        _show_error(exc)
        return
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
    shown = right.multiselect("Columns", list(titles), key="cols", format_func=titles.get)
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
    toolkit/ui/run.py`), Streamlit's download button, which holds the file in memory."""
    search = {k: v for k, v in params.items() if k not in ("page", "per_page")}
    total = state.search(params, pending=pending)["meta"]["total"]
    at = state.searched_at(params, pending=pending)
    plan = state.plan_in_force()
    if not pending and not plan_allows(plan, "export"):
        return (
            f'<p class="edt-dim">The CSV of all {total:,} rows needs the Business plan (the plan in force is '
            f"{plan}).</p>"
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


def explore() -> None:
    results_page(pending=False)


def pending_delete() -> None:
    results_page(pending=True)


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
    from ..analysis import charts  # Plotly and pandas: loaded by the pages that draw charts

    from . import echarts

    filters, counts = _chart_page("Trust Flow / Citation Flow")
    if counts is None:
        return
    st.caption(
        f"Counts over all {counts.total:,} matching listings (not a sample); "
        f"{counts.without_tf_cf:,} without both Trust Flow and Citation Flow are left out."
    )
    left, right = st.columns([3, 2])
    made = state.made_from(state._key(filters))
    echarts.show_made(lambda: charts.tf_cf_heatmap(counts), (*made, "tfcf"), key="tfcf", where=left)
    echarts.show_made(lambda: charts.tf_cf_ratio_bars(counts), (*made, "ratio"), key="ratio", where=right)
    left, right = st.columns([2, 3])
    _from_url("zone_by", "zone_by", lambda v: {"topic": "topic", "source": "source"}[v], "topic")
    zone_by = left.radio("Share in the zone by", ["topic", "source"], horizontal=True, key="zone_by")
    _to_url("zone_by", "" if zone_by == "topic" else zone_by)
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
        navigation.show_html(
            f"<p><b>{total:,}</b> matching listings in {bounds} (enriched ones only) · "
            f"{_open_all_link('explore', {**region, 'sort': '-trust_flow'})}</p>",
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
    from ..analysis import charts  # Plotly and pandas: loaded by the pages that draw charts

    _from_url("tf_points", "points", lambda v: v == "1", False)
    shown = st.toggle(
        f"Show a sample of {state.CHART_SAMPLE:,} listings as points, to lasso any shape (slow without a GPU)",
        key="tf_points",
    )
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


# -- Archive age -----------------------------------------------------------------------------


def archive() -> None:
    """Counts of ALL matching listings (`state.chart_counts`): ages, first-snapshot years,
    snapshots x age and languages."""
    from ..analysis import charts  # Plotly and pandas: loaded by the pages that draw charts

    from . import echarts

    filters, counts = _chart_page("Archive age")
    if counts is None:
        return
    st.caption(
        f"Counts over all {counts.total:,} matching listings (not a sample); "
        f"{counts.without_first_date:,} without a first web-archive snapshot date are left out of the age "
        "charts."
    )
    left, right = st.columns(2)
    made = state.made_from(state._key(filters))
    echarts.show_made(lambda: charts.age_bars(counts), (*made, "age"), key="age", where=left)
    echarts.show_made(lambda: charts.first_year_bars(counts), (*made, "years"), key="first_year", where=right)
    echarts.show_made(lambda: charts.snapshots_age_heatmap(counts), (*made, "snapshots"), key="snapshots", where=left)
    echarts.show_made(lambda: charts.language_bars(counts), (*made, "languages"), key="languages", where=right)


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
        event.add(
            "description", "\n".join(names[:200]) + (f"\n… and {len(names) - 200} more" if len(names) > 200 else "")
        )
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
        when = (
            f"most likely {likely:%a %d %b}, window {start:%d %b}–{end:%d %b} ({span} days)"
            if span > 1
            else f"on {likely:%a %d %b}"
        )
        event.add("summary", f"{title}: {count}, {when}")
        note = (
            "The day each name is released lies in this window; a daily zone snapshot only says a name left "
            "the zone between two snapshots."
            if span > 1
            else "A one-day window (the registry published it)."
        )
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
    from ..analysis import charts  # Plotly and pandas: loaded by the pages that draw charts

    from . import echarts

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
    tld = st.text_input(
        "TLD (comma-separated; uk also means .co.uk, .org.uk, ...)" if pending else "TLD (comma-separated)",
        key="cal_tld",
    ).strip()
    _to_url("cal_tld", tld)
    if pending:
        _from_url("cal_status", "cal_status", lambda t: [v for v in t.split(",") if v in PENDING_STATUSES], [])
        statuses = st.multiselect("Status", list(PENDING_STATUSES), key="cal_status", format_func=status_words)
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
    echarts.show_made(
        lambda: charts.drop_calendar(
            counts, month, title=f"{title}, {month:%B %Y}", counted="Drops" if pending else "Auctions ending"
        ),
        state.made_from(state._key(params), pending, month),
        key="calendar",
    )
    in_month = {d: n for d, n in counts.items() if first <= d <= last and n}
    st.caption(f"{sum(in_month.values()):,} domains in {month:%B %Y}")
    if pending:
        st.caption(
            "Each drop is counted on its most likely day. A drop predicted from a daily zone snapshot is a "
            "window (the name left the zone between two snapshots): the table and the .ics show it. On the "
            ".nu backtest the most likely day was exact for 92% of names and the window held the official "
            "day for 99.8% (docs/guides/drop-dates.md)."
        )
    if not in_month:
        return
    days = sorted(in_month)
    # The day it opens on: today, else the next day with names, else the month's last (a past month).
    first_day = next((d for d in days if d >= today), days[-1])
    # The menu's key names its search: after a filter change its counts are the new ones.
    menu = f"cal_day:{kind}:{month:%Y-%m}:{tld}:{params.get('status', '')}"
    _from_url(
        menu, "day", lambda t: date.fromisoformat(t) if date.fromisoformat(t) in in_month else first_day, first_day
    )
    if st.session_state[menu] not in in_month:
        st.session_state[menu] = first_day
    day = st.selectbox("Day", days, format_func=lambda d: f"{d:%a %d %b} ({in_month[d]:,})", key=menu)
    _to_url("day", day.isoformat())
    _day_table(day, params, pending)

    def calendar_file() -> bytes:
        if pending:
            return ics_for_windows([d for day in sorted(in_month) for d in _drops_on(day, params)], title)
        return ics_for_days({d: _names_on(d, params) for d in sorted(in_month)}, title)

    st.download_button(
        "Download the days (.ics)",
        calendar_file,
        file_name="drops.ics",
        mime="text/calendar",
        on_click="ignore",
        key="ics",
    )


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
    rows = table.render(
        columns_table,
        table.chosen_columns(columns_table, keys),
        found["data"],
        {},
        state.reader().now(),
        pending=pending,
        sortable=False,
    )
    navigation.show_html(f"<p>{what} · {_open_all_link(view, search)}</p>{rows}", key="day_table")


def _open_all_link(view: str, search: dict[str, str]) -> str:
    """A link that opens `search` in page `view` (Explore, Pending-delete), the plan kept."""
    query = {k: v for k, v in st.query_params.to_dict().items() if k == "plan"} | {"view": view, **search}
    page = "Explore" if view == "explore" else "Pending-delete"
    return f'<a href="?{html.escape(urlencode(query))}">open them all in {page} →</a>'


def _drops_on(day: date, params: dict[str, str]) -> list[tuple[str, date, date | None, date | None]]:
    """(domain, most likely day, window start, window end) of the pending drops counted on `day`."""
    rows = state.reader().pending_df(
        _on_day(day, params, True),
        plan=state.plan_in_force(),
        columns=["domain", "drop_window_start", "drop_window_end"],
    )
    return [
        (name, day, _as_day(start), _as_day(end))
        for name, start, end in zip(rows["domain"], rows["drop_window_start"], rows["drop_window_end"])
    ]


def _as_day(value: object) -> date | None:
    return date.fromisoformat(str(value)[:10]) if isinstance(value, str) and value else None


def _names_on(day: date, params: dict[str, str]) -> list[str]:
    """The domains whose auction ends on `day` (through the query layer, as the counts were)."""
    rows = state.reader().domains_df(_on_day(day, params, False), plan=state.plan_in_force(), columns=["name"])
    return list(rows["name"])


# -- Sync ------------------------------------------------------------------------------------


_RUN_WORDS = {
    "ok": "done",
    "failed": "failed",
    "stopped": "refused by the service",
    "interrupted": "stopped midway",
    "running": "running",
    "skipped": "skipped",
}


def _age(hours: float | None) -> str:
    if hours is None:
        return ""
    return f"{hours:,.1f} h ago" if hours < 48 else f"{hours / 24:,.0f} days ago"


def _freshness_words(row: dict[str, Any], done: str, demo: bool = False) -> str:
    if row["last_ok"] is None:
        return f"not {done} yet (demo data)" if demo else f"never {done}"
    return "fresh" if row["fresh"] else "stale"


def sync_page() -> None:
    from ..store.jobs import JOBS

    st.header("Sync")
    info = state.status()
    demo = state.demo()
    if demo:
        _demo_runs(demo)
    st.subheader("Datasets from the live service")
    rows = [
        (
            f"{r['job']}: {JOBS[r['job']].description.split(' (')[0]}",
            r["schedule"],
            table.moment(r["last_ok"]) or "—",
            _age(r["age_hours"]) or "—",
            _freshness_words(r, "synced", bool(demo)),
        )
        for r in info["freshness"]
    ]
    navigation.show_html(
        table.plain_table(("dataset", "the service refreshes it", "last synced", "", "state"), rows), key="freshness"
    )
    if info["last_sync"]:
        st.subheader("Last runs")
        runs = [
            (
                job,
                table.moment(r["started_at"]),
                table.moment(r["finished_at"]) or "—",
                _RUN_WORDS.get(r["status"], r["status"]),
                f"{r['rows_seen']:,}" if r["rows_seen"] is not None else "—",
                r["error"] or "",
            )
            for job, r in info["last_sync"].items()
        ]
        navigation.show_html(
            table.plain_table(("job", "started", "finished", "result", "rows seen", "problem"), runs), key="runs"
        )
    if not os.environ.get("EDT_API_KEY"):
        st.info(
            "Set EDT_API_KEY (and EDT_PLAN) before starting the app to sync from the live service; "
            "the free public feeds below need no key."
        )
    else:
        job = st.selectbox("Job", list(JOBS), key="sync_job")
        if st.button("Run this job now", key="sync_run"):
            _run_job(job)
    _feeds_section(info)


def _demo_runs(meta: dict[str, str]) -> None:
    """What the demo lived: its window and the runs of each job it played on the service's schedules."""
    from ..demo.timelapse import played_runs
    from ..store.labels import demo_words
    from ..sync.schedule import DEFAULT_SCHEDULES, schedule_words

    played = played_runs(meta)
    st.info(
        f"This mirror holds {demo_words(meta)}: generated data, not a sync. `edt sync --feeds --clear-demo` swaps "
        "it for the free public feeds, `edt demo --clear` removes it."
    )
    if not played:
        return
    st.subheader("What the demo lived")
    rows = [
        (job, schedule_words(DEFAULT_SCHEDULES[job]), f"{runs:,}", table.moment(last))
        for job, (runs, last) in sorted(played.items(), key=lambda item: -item[1][0])
    ]
    navigation.show_html(table.plain_table(("job", "played", "runs", "last run"), rows), key="demo_runs")


def _feeds_section(info: dict[str, Any]) -> None:
    """The free public feeds (docs/guides/feeds.md): freshness, and a button that fetches them."""
    from ..store.feeds import feed_table
    from ..sync.schedule import schedule_words

    st.subheader("Free public feeds")
    try:
        feeds = feed_table()
    except ValueError as exc:
        st.error(str(exc))
        return
    if info["feeds"]:
        rows = [
            (
                f"{r['job']}: {feeds[r['job']].description}" if r["job"] in feeds else r["job"],
                schedule_words(r["schedule"]),
                table.moment(r["last_ok"]) or "—",
                _age(r["age_hours"]) or "—",
                _freshness_words(r, "fetched"),
                "yes" if r["enabled"] else "no",
            )
            for r in info["feeds"]
        ]
        navigation.show_html(
            table.plain_table(("feed", "published", "last fetched", "", "state", "on"), rows), key="feeds"
        )
    for failed, line in st.session_state.pop("feed_lines", []):  # the last run's, said after the rerun
        (st.error if failed else st.success)(line)
    runnable = [name for name, feed in feeds.items() if feed.url]
    chosen = st.multiselect("Feeds", runnable, default=[n for n in runnable if feeds[n].enabled], key="feeds_pick")
    if st.button("Fetch these feeds now", key="feeds_run", disabled=not chosen):
        _run_feeds(chosen)


def _run_feeds(names: list[str]) -> None:
    """Fetch `names`, then draw the page again: its freshness table then shows this run."""
    from ..ingest.feed_runner import run_feeds
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
        async with RemoteClient(
            settings.base_url, settings.api_key or "", plan=settings.plan, per_minute=per_minute
        ) as client:
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
        st.write(
            "About 5,000 realistic listings, 1,500 deleted ccTLD domains and 1,000 pending-delete domains, "
            "generated on this machine in a few seconds."
        )
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
    "detail": ("Domain detail", domain.detail),
    "trust-flow": ("Trust Flow / Citation Flow", trust_flow),
    "archive": ("Archive age", archive),
    "calendar": ("Drop calendar", drop_calendar),
    "watchlist": ("Watchlist", watchlist.watchlist),
    "sync": ("Sync", sync_page),
}
