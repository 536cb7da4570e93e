"""The app's pages: thin shells over the query layer (`state`) and the charts (`toolkit.charts`)."""

from __future__ import annotations

import asyncio
import calendar as calendar_module
import os
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pandas as pd
import streamlit as st

from .. import charts
from ..errors import ApiError
from ..params import DOMAIN_SORTS, PENDING_STATUSES
from ..plans import plan_allows
from . import state
from .filters import sidebar_filters
from .signals import show_signals

__all__ = ["PAGES", "first_run"]

TABLE_COLUMNS = ["id", "name", "source", "type", "price", "max_bid", "effective_price_eur", "bids_count", "auction_end_date", "score",
                 "trust_flow", "citation_flow", "referring_domains", "age", "language", "purchase_url"]  # fmt: skip
COLUMN_CONFIG = {
    "purchase_url": st.column_config.LinkColumn("Buy", display_text="open"),
    "effective_price_eur": st.column_config.NumberColumn("Price (EUR)", format="€ %.2f"),
    "score": st.column_config.ProgressColumn("Score", min_value=0, max_value=100, format="%d"),
    "trust_flow": st.column_config.ProgressColumn("TF", min_value=0, max_value=100, format="%d"),
    "citation_flow": st.column_config.ProgressColumn("CF", min_value=0, max_value=100, format="%d"),
}


def _show_error(exc: ApiError) -> None:
    field = exc.field
    st.error(f"{field + ': ' if field else ''}{exc.body.get('message', exc)}")


def _sort_options() -> list[str]:
    return ["", *[f"-{s}" for s in DOMAIN_SORTS], *DOMAIN_SORTS]


# -- Explore ---------------------------------------------------------------------------------


def explore() -> None:
    st.header("Explore listings")
    filters = sidebar_filters()
    left, middle, right = st.columns([2, 1, 1])
    sort_options = _sort_options()
    in_url = st.query_params.get("sort", "")
    sort = left.selectbox("Sort", sort_options, index=sort_options.index(in_url) if in_url in sort_options else 0,
                          format_func=lambda s: s or "default (best score first)", key="sort")  # fmt: skip
    per_page = middle.selectbox("Per page", [25, 50, 100], index=1, key="per_page")
    page = right.number_input("Page", min_value=1, value=int(st.query_params.get("page", 1) or 1), key="page")
    for name, value in (("sort", sort), ("page", str(page) if page > 1 else "")):
        if value:
            st.query_params[name] = value
        elif name in st.query_params:
            del st.query_params[name]
    params = {**filters, "per_page": str(per_page), "page": str(page), **({"sort": sort} if sort else {})}
    try:
        envelope = state.search(params)
    except ApiError as exc:
        _show_error(exc)
        return
    meta = envelope["meta"]
    st.metric("Matching listings", f"{meta['total']:,}")
    st.caption(f"Page {meta['current_page']} of {meta['last_page']}" if meta["total"] else "No listing matches.")
    rows = pd.DataFrame(envelope["data"], columns=TABLE_COLUMNS) if envelope["data"] else pd.DataFrame(columns=TABLE_COLUMNS)
    st.dataframe(rows[TABLE_COLUMNS], hide_index=True, column_config=COLUMN_CONFIG, key="results")
    if envelope["data"]:
        names = {r["id"]: r["name"] for r in envelope["data"]}
        chosen = st.selectbox("Open a domain", ["", *names], format_func=lambda i: names.get(i, "choose…"), key="open")
        if chosen:
            st.query_params["id"] = str(chosen)
            st.query_params["view"] = "detail"
            st.rerun()
    if meta["total"]:
        csv_params = {k: v for k, v in params.items() if k not in ("page", "per_page")}

        def all_rows_csv() -> bytes:
            table = state.reader().domains_df(csv_params, plan=state.plan_in_force())
            return table.to_csv(index=False).encode()

        st.download_button(f"Download all {meta['total']:,} rows (CSV)", all_rows_csv, file_name="listings.csv",
                           mime="text/csv", on_click="ignore", key="csv")  # fmt: skip


# -- Domain detail ---------------------------------------------------------------------------


def detail() -> None:
    st.header("Domain detail")
    given = st.text_input("Listing id", value=st.query_params.get("id", ""), key="detail_id")
    if not given:
        st.info("Open a domain from Explore, or type its id.")
        return
    try:
        record = state.reader().get_domain(given, plan=state.plan_in_force())["data"]
        history = state.reader().listing_history(given, plan=state.plan_in_force())
    except ApiError as exc:
        _show_error(exc)
        return
    st.query_params["id"] = str(record["id"])
    st.subheader(record["name"])
    cols = st.columns(4)
    cols[0].metric("Score", record.get("score"))
    cols[1].metric("TF / CF", f"{record.get('trust_flow')} / {record.get('citation_flow')}")
    cols[2].metric("Price", f"{record.get('effective_price') or '-'} {record.get('currency') or ''}")
    cols[3].metric("Bids", record.get("bids_count") or 0)
    st.caption(f"First seen {record.get('first_seen_at')}, last seen {record.get('last_seen_at')}"
               + (f", left its source {record['closed_at']}" if record.get("closed_at") else ""))  # fmt: skip
    links = [f"[Wayback calendar](https://web.archive.org/web/*/{record['name']})"]
    if record.get("purchase_url"):
        links.append(f"[Purchase page]({record['purchase_url']})")
    st.markdown(" · ".join(links))
    st.plotly_chart(charts.price_history(history), key="history_chart")
    show_signals(record, history)
    st.dataframe(pd.DataFrame({"field": list(record), "value": [str(v) for v in record.values()]}), hide_index=True,
                 key="fields")  # fmt: skip


# -- Trust Flow / Citation Flow --------------------------------------------------------------


def trust_flow() -> None:
    st.header("Trust Flow / Citation Flow")
    filters = sidebar_filters()
    color_by = st.radio("Colour by", ["topic", "source"], horizontal=True, key="color_by")
    columns = ["id", "name", "source", "trust_flow", "citation_flow", "ttf_topic", "score"]
    try:
        rows = state.frame(filters, columns)
    except ApiError as exc:
        _show_error(exc)
        return
    st.caption(f"{len(rows):,} rows drawn (an even sample by id when more match).")
    event = st.plotly_chart(charts.tf_cf_scatter(rows, color_by=color_by), on_select="rerun",
                            selection_mode=("points", "box", "lasso"), key="tfcf")  # fmt: skip
    st.plotly_chart(charts.tf_cf_ratio_histogram(rows), key="ratio")
    picked = charts.frame_ids(list(event.selection.get("points", []))) if event and event.selection else []
    if picked:
        st.subheader(f"{len(picked)} selected")
        st.dataframe(rows[rows["id"].isin(picked)], hide_index=True, key="picked")


# -- Archive age -----------------------------------------------------------------------------


def archive() -> None:
    st.header("Archive age")
    filters = sidebar_filters()
    try:
        rows = state.frame(filters, ["id", "age", "wayback_first_date", "wayback_snapshots", "language"])
    except ApiError as exc:
        _show_error(exc)
        return
    st.caption(f"{len(rows):,} rows drawn (an even sample by id when more match).")
    left, right = st.columns(2)
    left.plotly_chart(charts.age_histogram(rows), key="age")
    right.plotly_chart(charts.first_snapshot_year_histogram(rows), key="first_year")
    left.plotly_chart(charts.snapshots_vs_age(rows), key="snapshots")
    right.plotly_chart(charts.language_breakdown(rows), key="languages")


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


def drop_calendar() -> None:
    st.header("Drop calendar")
    plan = state.plan_in_force()
    kinds = ["Auction ends"] + (["Pending-delete drops"] if plan_allows(plan, "pending_delete") else [])
    kind = st.radio("Dates", kinds, horizontal=True, key="cal_kind")
    pending = kind == "Pending-delete drops"
    today = state.reader().now().date()
    month = st.date_input("Month", value=today.replace(day=1), key="cal_month").replace(day=1)
    first, last = _month_bounds(month)
    tld = st.text_input("TLD (comma-separated)", key="cal_tld")
    if pending:
        statuses = st.multiselect("Status", list(PENDING_STATUSES), key="cal_status")
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
    st.plotly_chart(charts.drop_calendar(counts, month, title=f"{kind}, {month:%B %Y}"), key="calendar")
    in_month = {d: n for d, n in counts.items() if first <= d <= last and n}
    st.caption(f"{sum(in_month.values()):,} domains in {month:%B %Y}")
    if pending:
        st.caption("Each drop is counted on its most likely day. A drop predicted from a daily zone snapshot is a "
                   "window (the name left the zone between two snapshots): the table and the .ics show it. On the "
                   ".nu backtest the most likely day was exact for 92% of names and the window held the official "
                   "day for 99.8% (README, \"Drop dates\").")  # fmt: skip
    if not in_month:
        return
    day = st.selectbox("Day", sorted(in_month), format_func=lambda d: f"{d:%a %d %b} ({in_month[d]:,})", key="cal_day")
    if pending:
        st.dataframe(_window_table(_drops_on(day, params, limit=200)), hide_index=True)
    else:
        st.dataframe(pd.DataFrame({"domain": _names_on(day, params, pending, limit=200)}), hide_index=True)
    if in_month[day] > 200:
        st.caption(f"The first 200 of {in_month[day]:,}; the .ics file lists every one.")

    def calendar_file() -> bytes:
        if pending:
            return ics_for_windows([d for day in sorted(in_month) for d in _drops_on(day, params)], kind)
        return ics_for_days({d: _names_on(d, params, pending) for d in sorted(in_month)}, kind)

    st.download_button("Download the days (.ics)", calendar_file, file_name="drops.ics", mime="text/calendar",
                       on_click="ignore", key="ics")  # fmt: skip


def _drops_on(day: date, params: dict[str, str],
              limit: int | None = None) -> list[tuple[str, date, date | None, date | None]]:  # fmt: skip
    """(domain, most likely day, window start, window end) of the pending drops counted on `day`."""
    mirror, plan = state.reader(), state.plan_in_force()
    rows = mirror.pending_df({**params, "drop_date_from": day.isoformat(), "drop_date_to": day.isoformat()}, plan=plan,
                             columns=["domain", "drop_window_start", "drop_window_end"])  # fmt: skip
    found = [(name, day, _as_day(start), _as_day(end))
             for name, start, end in zip(rows["domain"], rows["drop_window_start"], rows["drop_window_end"])]  # fmt: skip
    return found[:limit] if limit else found


def _as_day(value: object) -> date | None:
    return date.fromisoformat(str(value)[:10]) if isinstance(value, str) and value else None


def _window_table(drops: list[tuple[str, date, date | None, date | None]]) -> pd.DataFrame:
    return pd.DataFrame({
        "domain": [d[0] for d in drops],
        "most likely": [d[1] for d in drops],
        "window": [f"{(d[2] or d[1]):%d %b} – {(d[3] or d[1]):%d %b}" for d in drops],
        "days": [((d[3] or d[1]) - (d[2] or d[1])).days + 1 for d in drops],
    })  # fmt: skip


def _names_on(day: date, params: dict[str, str], pending: bool, limit: int | None = None) -> list[str]:
    """The domains of one calendar day (through the query layer, as the counts were)."""
    mirror, plan = state.reader(), state.plan_in_force()
    if pending:
        rows = mirror.pending_df({**params, "drop_date_from": day.isoformat(), "drop_date_to": day.isoformat()},
                                 plan=plan, columns=["domain"])  # fmt: skip
        names = list(rows["domain"])
    else:
        rows = mirror.domains_df({**params, "ends_after": day.isoformat(),
                                  "ends_before": (day + timedelta(days=1)).isoformat()}, plan=plan,
                                 columns=["name"])  # fmt: skip
        names = list(rows["name"])
    return names[:limit] if limit else names


# -- Watchlist -------------------------------------------------------------------------------


def watchlist() -> None:
    from .. import watchlist as saved

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
    try:
        searches = saved.saved_searches(mirror)
    except ApiError as exc:  # a search saved under older rules no longer validates
        _show_error(exc)
        searches = []
    if not searches:
        st.caption("No saved search yet: set filters on Explore, then save them here.")
    for entry in searches:
        cols = st.columns([3, 2, 1, 1])
        cols[0].markdown(f"**{entry['name']}**  \n" + ", ".join(f"{k}={v}" for k, v in entry["params"].items()))
        cols[1].metric("New since last opened", entry["new_matches"])
        if cols[2].button("Open", key=f"open:{entry['name']}"):
            params = saved.open_search(mirror, entry["name"])
            state.set_filters(params)
            st.query_params["view"] = "explore"
            st.rerun()
        if cols[3].button("Delete", key=f"delete:{entry['name']}"):
            saved.delete_search(mirror, entry["name"])
            st.rerun()
    st.subheader("Shortlist")
    with st.form("shortlist_add"):
        listing_id = st.text_input("Listing id", key="short_id")
        note = st.text_input("Note", key="short_note")
        if st.form_submit_button("Add to shortlist"):
            try:
                saved.shortlist_add(mirror, int(listing_id), note)
            except (ValueError, ApiError) as exc:
                st.error(f"Listing id: {exc}")
    items = saved.shortlist(mirror)
    if items:
        st.dataframe(pd.DataFrame(items), hide_index=True, key="shortlist")


# -- Sync ------------------------------------------------------------------------------------


def sync_page() -> None:
    from ..sync import JOBS

    st.header("Sync")
    info = state.reader().status()
    table = pd.DataFrame(info["freshness"])
    table["state"] = ["never synced" if r["last_ok"] is None else ("fresh" if r["fresh"] else "stale")
                      for r in info["freshness"]]  # fmt: skip
    st.dataframe(table[["job", "schedule", "last_ok", "age_hours", "state"]], hide_index=True, key="freshness")
    if info["last_sync"]:
        st.subheader("Last runs")
        st.dataframe(pd.DataFrame([{"job": j, **r} for j, r in info["last_sync"].items()]), hide_index=True,
                     key="runs")  # fmt: skip
    if not os.environ.get("EDT_API_KEY"):
        st.info("Set EDT_API_KEY (and EDT_PLAN) before starting the app to sync from the live service.")
        return
    job = st.selectbox("Job", list(JOBS), key="sync_job")
    if st.button("Run this job now", key="sync_run"):
        _run_job(job)


def _run_job(job: str) -> None:
    from ..config import load_settings
    from ..plans import RATE_LIMITS
    from ..remote import RemoteClient
    from ..sync import SyncBusy, SyncStopped, sync

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
    "detail": ("Domain detail", detail),
    "trust-flow": ("Trust Flow / Citation Flow", trust_flow),
    "archive": ("Archive age", archive),
    "calendar": ("Drop calendar", drop_calendar),
    "watchlist": ("Watchlist", watchlist),
    "sync": ("Sync", sync_page),
}
