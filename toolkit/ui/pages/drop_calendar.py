"""The drop calendar: auction ends, or pending-delete drops, per day of a month.

Every setting is in the URL (`dates`, `month`, `cal_tld`, `cal_status`, `day`), so a calendar
is a bookmark. A day opens its names as Explore's or Pending-delete's table; the month's days
download as an .ics calendar, a pending drop spanning the window it may drop in.
"""

from __future__ import annotations

import calendar as calendar_module
from datetime import date, datetime, timedelta, timezone

import streamlit as st

from ...errors import ApiError
from ...plans import plan_allows
from ...query.params import PENDING_STATUSES
from ...store.labels import status_words
from .. import navigation, state, table
from ..navigation import open_all_link, widget_from_url, widget_to_url
from .shared import show_error

__all__ = ["drop_calendar", "ics_for_days", "ics_for_windows", "DAY_ROWS"]


_CALENDAR_KINDS = {"ends": "Auction ends", "drops": "Pending-delete drops"}
DAY_ROWS = 100  # a calendar day's names listed on the page; its link opens all of them


def drop_calendar() -> None:
    """Auction ends or pending-delete drops per day of a month; every setting is in the URL
    (`dates`, `month`, `cal_tld`, `cal_status`, `day`), so a calendar is a bookmark."""
    from ...analysis import charts  # Plotly and pandas: loaded by the pages that draw charts

    from .. import echarts

    st.header("Drop calendar")
    plan = state.plan_in_force()
    kinds = ["ends"] + (["drops"] if plan_allows(plan, "pending_delete") else [])
    widget_from_url("cal_kind", "dates", lambda t: t if t in kinds else kinds[0], kinds[0])
    if st.session_state["cal_kind"] not in kinds:
        st.session_state["cal_kind"] = kinds[0]
    kind = st.radio("Dates", kinds, horizontal=True, key="cal_kind", format_func=_CALENDAR_KINDS.get)
    widget_to_url("dates", "" if kind == "ends" else kind)
    pending = kind == "drops"
    today = state.reader().now().date()
    this_month = today.replace(day=1)
    widget_from_url("cal_month", "month", _month_of, this_month)
    month = st.date_input("Month", key="cal_month").replace(day=1)
    widget_to_url("month", "" if month == this_month else f"{month:%Y-%m}")
    first, last = _month_bounds(month)
    widget_from_url("cal_tld", "cal_tld", str, "")
    tld = st.text_input(
        "TLD (comma-separated; uk also means .co.uk, .org.uk, ...)" if pending else "TLD (comma-separated)",
        key="cal_tld",
    ).strip()
    widget_to_url("cal_tld", tld)
    if pending:
        widget_from_url("cal_status", "cal_status", lambda t: [v for v in t.split(",") if v in PENDING_STATUSES], [])
        statuses = st.multiselect("Status", list(PENDING_STATUSES), key="cal_status", format_func=status_words)
        widget_to_url("cal_status", ",".join(statuses))
        params = {"drop_date_from": first.isoformat(), "drop_date_to": last.isoformat(), "include_past": "1"}
        params |= {"status": ",".join(statuses)} if statuses else {}
    else:
        params = {"ends_after": first.isoformat(), "ends_before": (last + timedelta(days=1)).isoformat()}
    params |= {"tld": tld} if tld else {}
    try:
        counts = state.day_counts(params, pending=pending)
    except ApiError as exc:
        show_error(exc)
        return
    title = _CALENDAR_KINDS[kind]
    echarts.show_made(
        lambda: charts.drop_calendar(
            counts,
            month,
            title=f"{title}, {month:%B %Y}",
            counted="Drops" if pending else "Auctions ending",
            blank_before=None if pending else today,
        ),
        state.made_from(state.params_key(params), pending, month, None if pending else today),
        key="calendar",
    )
    in_month = {d: n for d, n in counts.items() if first <= d <= last and n}
    st.caption(f"{sum(in_month.values()):,} domains in {month:%B %Y}")
    if not pending:
        st.caption("Days gone are blank: this counts live auctions by the day they end.")
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
    widget_from_url(
        menu, "day", lambda t: date.fromisoformat(t) if date.fromisoformat(t) in in_month else first_day, first_day
    )
    if st.session_state[menu] not in in_month:
        st.session_state[menu] = first_day
    day = st.selectbox(
        "Day", days, format_func=lambda d: f"{table.day_month(d, weekday=True)} ({in_month[d]:,})", key=menu
    )
    widget_to_url("day", day.isoformat())
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
        show_error(exc)
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
    navigation.show_html(f"<p>{what} · {open_all_link(view, search)}</p>{rows}", key="day_table")


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


def _month_of(text: str) -> date:
    """A bookmark's `month` (YYYY-MM) as its first day; ValueError outside the years a drop can
    fall in (a month whose end or label cannot be written, as 9999-12 or 0001-01)."""
    month = date.fromisoformat(f"{text}-01")
    if not 1990 <= month.year <= 2100:
        raise ValueError(f"{text}: not a month of drops")
    return month


def _month_bounds(month: date) -> tuple[date, date]:
    last = calendar_module.monthrange(month.year, month.month)[1]
    return month.replace(day=1), month.replace(day=last)


# -- the .ics files ----------------------------------------------------------------------------


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
            f"most likely {table.day_month(likely, weekday=True)}, window {table.day_month(start)}–{table.day_month(end)} ({span} days)"
            if span > 1
            else f"on {table.day_month(likely, weekday=True)}"
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
