"""The domain page, built around the bid: should one bid on this name, and how much?

Top first: the name, what it is (an auction, a closeout, a backorder, a dropped ccTLD name,
a name pending delete), where it stands (time left; ended; sold for how much and when;
unsold), its price in its currency and in EUR against the price ranges with how often such a
range held, and what the mirror does not know about it ("no link data", "no archive data")
rather than an all-clear. Then the price history, the comparable sales, the signals, and
every field, labelled and grouped (`toolkit.store.labels`).
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any
from urllib.parse import quote

import streamlit as st

from ...errors import ApiError
from ...plans import PLAN_LABELS, plan_allows
from ...names import normalize_tld, shown_name
from ...sources import REGFREE
from ...store.fields import LISTING_EXTRA_FIELDS, LISTING_FIELDS, PENDING_EXTRA_FIELDS, PENDING_FIELDS
from ...store.labels import (
    GROUPS,
    INTERNAL_FIELDS,
    LISTING_LABELS,
    PENDING_LABELS,
    TYPE_WORDS,
    language_name,
    origin_words,
    pipeline_name,
    status_meaning,
    status_words,
)
from .. import actions, navigation, state, table
from .shared import show_error

__all__ = ["detail", "PriceRange", "price_ranges", "what_it_is", "where_it_stands", "unknowns"]

_LINK_FIELDS = ("trust_flow", "citation_flow", "domain_authority", "referring_domains", "backlinks_count")
_ARCHIVE_FIELDS = ("wayback_snapshots", "wayback_first_date", "archive_years", "archive_continuity")


def _dash(value: Any) -> str:
    text = table.blank(value) if value not in (None, "") else ""
    return html.unescape(text) if text else "—"


def _day(value: Any) -> str:
    """`15 Nov` (and the year when it is not this one)."""
    when = table.when(value)
    if when is None:
        return ""
    return table.day_month(when) + ("" if when.year == datetime.now(timezone.utc).year else f" {when.year}")


# -- what it is, where it stands ---------------------------------------------------------------


def what_it_is(record: Mapping[str, Any]) -> str:
    """`Auction on GoDaddy Auctions`, `Closeout on Dynadot`, `Dropped ccTLD name (the deleted-ccTLD database)`."""
    if record.get("source") == REGFREE:
        return "Dropped ccTLD name (the deleted-ccTLD database)"
    kind = TYPE_WORDS.get(record.get("type") or "", ("listing", ""))[0].capitalize()
    return f"{kind} on {table.platform(record.get('source'))}"


def where_it_stands(record: Mapping[str, Any], result: Mapping[str, Any] | None, now: datetime) -> str:
    """Time left, or how it ended: `Ends in 4h 41m (Fri 27 Nov 09:26 UTC)`, `Sold for 3,776
    USD on 15 Nov`, `Unsold: no bid by its end on 26 Nov`, `Ended 26 Nov 06:43 UTC`."""
    if result is not None:
        if result["sold"]:
            eur = f" ({result['final_price_eur']:,.0f} EUR)" if result.get("final_price_eur") else ""
            bids = result.get("bids") or 0
            return (
                f"Sold for {html.unescape(table.money(result['final_price'], result['currency']))}{eur} on "
                f"{_day(result['ended_at'])}, after {bids:,} bid{'s' if bids != 1 else ''}"
            )
        if result.get("last_seen_before_end") is None:  # first seen after its end: its bidding was never read
            return (
                f"Ended on {_day(result['ended_at'])}; its result is not known (the mirror first saw it after its end)"
            )
        return f"Unsold: no bid by its end on {_day(result['ended_at'])}"
    end, closed = table.when(record.get("auction_end_date")), record.get("closed_at")
    if end is not None and end > now and not closed:
        left = html.unescape(table.ends_in(record["auction_end_date"], now).split(">", 1)[-1].split("<", 1)[0])
        return f"Ends in {left} ({table.day_month(end, weekday=True)} {end:%H:%M} UTC)"
    if end is not None and end <= now:
        said = f"Ended {table.moment(record['auction_end_date'])}"
        return said + ("" if closed else "; its result is not known yet (the next sync tells)")
    if closed:
        return f"Left {table.platform(record.get('source'))} {table.moment(closed)}"
    if record.get("source") == REGFREE:
        return "Free to register"
    return "For sale now" if record.get("type") != "backorder" else "Open for backorders"


def unknowns(record: Mapping[str, Any]) -> list[str]:
    """What the mirror does not know about a listing, said as badges (never an all-clear)."""
    out = []
    if all(record.get(f) is None for f in _LINK_FIELDS):
        out.append("no link data")
    if all(record.get(f) is None for f in _ARCHIVE_FIELDS):
        out.append("no archive data")
    if record.get("effective_price") is not None and record.get("effective_price_eur") is None:
        out.append("no EUR price")
    return out


# -- the price against its ranges ------------------------------------------------------------


@dataclass(frozen=True)
class PriceRange:
    title: str  # "Live estimate", "Pre-auction range" (an auction's), "Value range" (a closeout's)
    low: float
    mid: float | None
    high: float
    note: str  # how often such a range held ("80% range, right 79% of the time on ...")


def price_ranges(record: Mapping[str, Any], coverage: str | None, live_coverage: str | None = None) -> list[PriceRange]:
    """The ranges (EUR) a listing's price is judged against: the live estimate of an auction
    with bids first (`live_low`, `live_mid`, `live_high`, with `live_coverage`), then the
    pre-auction range, a closeout's value range (`value_low`, `value_mid`, `value_high`, with
    `coverage`, the backtest's note)."""
    out = []
    if record.get("live_low") is not None and record.get("live_high") is not None:
        out.append(
            PriceRange(
                "Live estimate",
                record["live_low"],
                record.get("live_mid"),
                record["live_high"],
                live_coverage or "80% range of its final price given the bidding so far, never below the current bid",
            )
        )
    if record.get("value_low") is not None and record.get("value_high") is not None:
        out.append(
            PriceRange(
                "Pre-auction range" if record.get("type") == "auction" else "Value range",  # a closeout has no auction
                record["value_low"],
                record.get("value_mid"),
                record["value_high"],
                coverage or "80% range, learnt from the sales this mirror knows",
            )
        )
    return out


def _against(eur: float, found: PriceRange) -> str:
    """Where a EUR price stands against a range, in words."""
    if eur > found.high:
        return f"{eur / found.high:,.1f} times the top of the {found.title.lower()}"
    if eur < found.low:
        return f"below the {found.title.lower()} ({eur / found.low:.0%} of its low end)"
    return f"within the {found.title.lower()}"


def _ended(record: Mapping[str, Any], result: Mapping[str, Any] | None) -> bool:
    """Whether the listing is over: a result, a closing, or its end passed."""
    end = table.when(record.get("auction_end_date"))
    return bool(result is not None or record.get("closed_at") or (end is not None and end <= state.reader().now()))


def _price_label(record: Mapping[str, Any], result: Mapping[str, Any] | None) -> str:
    if result is not None and result["sold"]:
        return "Sold for"
    if record.get("type") == "auction":
        over = _ended(record, result)
        if record.get("bids_count"):
            return "Last bid seen" if over else "Current bid"
        return "Last price asked" if over else "Start price"
    return "Price"


def _show_price(record: Mapping[str, Any], result: Mapping[str, Any] | None) -> None:
    """The price in its currency and in EUR, the ranges with their coverage, and where the
    price stands against each."""
    from ...analysis.range_notes import coverage_note, live_coverage_note, value_model

    from .domain_signals import eur_price_text

    sale = result if result is not None and result["sold"] else None
    native = (
        table.money(sale["final_price"], sale["currency"])
        if sale
        else table.money(record.get("effective_price"), record.get("currency"))
    )
    eur = sale.get("final_price_eur") if sale else record.get("effective_price_eur")
    model = value_model(state.reader())
    ranges = price_ranges(record, coverage_note(model), live_coverage_note(model))
    bid_on = sale is not None or record.get("type") == "auction"  # a closeout has no bids to count
    # The prices on one row, the ranges on the next, each at half the width: five figures on one
    # row cut a range of four-digit prices short ("3,433 – 3,…" at 1400 px).
    cols = st.columns(3)
    cols[0].metric(_price_label(record, result), html.unescape(native) or "—")
    cols[1].metric(  # without one, the reason on hover (a "no EUR price" badge stands above)
        "In EUR",
        f"{eur:,.0f} EUR" if eur is not None else "—",
        help="at the ECB reference rate of the day it was seen"
        if eur is not None
        else eur_price_text(record).replace("-", "no price"),
    )
    if bid_on:
        bids = (sale.get("bids") if sale else record.get("bids_count")) or 0
        cols[2].metric("Bids", f"{bids:,}")
    for column, found in zip(st.columns(2) if ranges else [], ranges):
        column.metric(
            f"{found.title} (EUR)",
            f"{found.low:,.0f} – {found.high:,.0f}",
            help=found.note + (f"; middle {found.mid:,.0f} EUR" if found.mid is not None else ""),
        )
    said = [f"{found.title}: {found.note}." for found in ranges]
    if eur is not None and ranges:
        against = "; ".join(_against(eur, r) for r in ranges)
        said.append(f"{_price_label(record, result)} {eur:,.0f} EUR: {against}.")
    if not ranges:
        said.append(_no_range(record, result, model))
    st.caption("  \n".join(said))


def _no_range(record: Mapping[str, Any], result: Mapping[str, Any] | None, model: Any) -> str:
    if record.get("value_reason"):
        return f"No price range: {record['value_reason']}."
    if not model:
        return (
            "No price range yet: `edt appraise` learns them from the sales this mirror knows (the auctions it saw "
            "end, the sales reported elsewhere)."
        )
    if _ended(record, result):
        return "No price range: ranges are given to live listings, and this one had ended before the last appraisal."
    return "No price range yet: the next appraisal gives one (`edt appraise`, or after the next sync)."


# -- the page --------------------------------------------------------------------------------


@st.cache_data(max_entries=256, show_spinner=False)
def _suggestions(path: str, generation: int, plan: str, text: str) -> tuple[list[str], int]:
    """Up to 20 live names containing `text`, best score first (through the query layer), and
    how many live listings contain it."""
    found = state.reader().search_domains({"contains": text, "per_page": "20"}, plan=plan)
    return list(dict.fromkeys(r["name"] for r in found["data"])), int(found["meta"]["total"])


def detail() -> None:
    st.header("Domain")
    plan = state.plan_in_force()
    mirror = state.reader()
    legacy_id = st.query_params.get("id", "")
    if legacy_id and not st.query_params.get("name"):  # an older bookmark by listing id
        try:
            st.query_params["name"] = mirror.get_domain(legacy_id, plan=plan)["data"]["name"]
        except ApiError as exc:
            show_error(exc)
            return
    in_url = st.query_params.get("name", "")
    if st.session_state.get("_name_in_url") != in_url or "detail_name" not in st.session_state:
        st.session_state["detail_name"] = in_url  # a link or the sidebar brought a name (or none)
        st.session_state["_name_in_url"] = in_url
    typed = st.text_input("Domain name", key="detail_name", placeholder="a name, or part of one (e.g. travel)")
    typed = typed.strip().lower().rstrip(".")
    if not typed:
        st.info("Type a domain name (or part of one), or open a name from Explore or Pending-delete.")
        return
    actions.say_done()
    listings = mirror.listings_named(typed)
    if not listings and _pending_page(typed, plan):
        st.query_params["name"] = st.session_state["_name_in_url"] = typed
        return
    if not listings:
        try:
            options, total = _suggestions(mirror.path, mirror.generation(), plan, typed) if len(typed) >= 2 else ([], 0)
        except ApiError as exc:
            show_error(exc)
            return
        if not options and len(typed) < 2:
            st.warning(f"No listing is named “{typed}”; type two letters or more to find the names that contain them.")
        elif not options:
            st.warning(f"No listing is named or contains “{typed}”.")
            return
        many = f"{total:,} live listings contain “{typed}”"
        picked = st.selectbox(
            many if total <= len(options) else f"{many}: the {len(options)} best-scored names",
            ["", *options],
            key="detail_pick",
            format_func=lambda n: n or "choose one…",
        )
        if not picked:
            return
        typed = picked
        listings = mirror.listings_named(typed)
    if typed != in_url:  # another name: the listing the URL named is not one of it
        st.query_params.pop("id", None)
        legacy_id = ""
    st.query_params["name"] = st.session_state["_name_in_url"] = typed
    records = []
    for listing_id, _source, _live in listings:
        try:
            records.append(mirror.get_domain(listing_id, plan=plan)["data"])
        except ApiError:
            continue  # a regfree row below the plan in force
    if not records:
        st.warning(f"{typed}: no listing the {PLAN_LABELS.get(plan, plan)} plan may read.")
        return
    wanted = legacy_id if legacy_id.isdigit() else None
    _listing_page(next((r for r in records if str(r["id"]) == wanted), records[0]), records, plan)


def _ascii_form(name: str) -> str | None:
    """An IDN's hover text: the xn-- form registries and the mirror use (None for any other name)."""
    return f"Written {name} at registries and in the mirror" if shown_name(name) != name else None


def _listing_page(record: dict[str, Any], records: list[dict[str, Any]], plan: str) -> None:
    mirror = state.reader()
    now = mirror.now()
    result = mirror.auction_result(record["id"]) if record.get("type") == "auction" else None
    top, buttons = st.columns([3, 1])
    top.subheader(shown_name(record["name"]), help=_ascii_form(record["name"]))
    badges = " ".join(f":orange-badge[{b}]" for b in unknowns(record))
    # Readable times, and no "T07:00:00Z" in Markdown: Streamlit reads ":00:" as an emoji
    # name and loads its emoji code (260 kB) to look it up.
    top.markdown(f"**{what_it_is(record)}** · {where_it_stands(record, result, now)} {badges}".strip())
    actions.page_buttons(record, buttons)
    _pending_note(record["name"], plan)
    if record.get("source") != REGFREE:
        _show_price(record, result)
    left = f", left its source {table.moment(record['closed_at'])}" if record.get("closed_at") else ""
    st.caption(
        f"First seen {table.moment(record.get('first_seen_at'))}, last seen "
        f"{table.moment(record.get('last_seen_at'))}{left}"
    )
    links = [f"[Wayback calendar](https://web.archive.org/web/*/{record['name']})"]
    if record.get("purchase_url"):
        links.append(f"[Purchase page]({record['purchase_url']})")
    st.markdown(" · ".join(links))
    if len(records) > 1:
        _side_by_side(records, mirror, now)
    history = mirror.listing_history(record["id"], plan=plan)
    _history(record, history)
    _comparables(record["name"])
    from .domain_signals import show_signals

    show_signals(record, history, unknown=unknowns(record))
    _fields(record, pending=False)


def _history(record: Mapping[str, Any], history: Any) -> None:
    from ...analysis import charts

    from .. import echarts

    st.subheader("Price history")
    if record.get("source") == REGFREE:
        st.caption("No price: a dropped ccTLD name is free to register at its registry's price.")
        return
    priced = [c for c in ("price", "max_bid", "effective_price") if c in history]
    if history.empty or not priced or history[priced].isna().all().all():
        st.caption("No price recorded yet.")
        return
    echarts.show_made(
        lambda: charts.price_history(history, currency=record.get("currency")),
        state.made_from("price history", record["id"]),
        key="history_chart",
    )


def _side_by_side(records: list[dict[str, Any]], mirror: Any, now: datetime) -> None:
    """Every listing of the name, one column each: where, what it costs, where it stands."""
    import pandas as pd

    rows = {
        "What": lambda r, res: what_it_is(r),
        "Price": lambda r, res: html.unescape(table.money(r.get("effective_price"), r.get("currency"))) or "—",
        "Bids": lambda r, res: _dash(r.get("bids_count")),
        "Stands": lambda r, res: where_it_stands(r, res, now),
        "Trust Flow": lambda r, res: _dash(r.get("trust_flow")),
        "Citation Flow": lambda r, res: _dash(r.get("citation_flow")),
        "Domain Authority": lambda r, res: _dash(r.get("domain_authority")),
        "Referring domains": lambda r, res: _dash(r.get("referring_domains")),
        "Age (years)": lambda r, res: _dash(r.get("age")),
        "Score": lambda r, res: _dash(r.get("score")),
        "First seen": lambda r, res: _day(r.get("first_seen_at")) or "—",
    }
    st.subheader(f"Listed {len(records)} times")
    columns = {}
    for r in records:
        res = mirror.auction_result(r["id"]) if r.get("type") == "auction" else None
        columns[f"{table.platform(r['source'])} #{r['id']}"] = [cell(r, res) for cell in rows.values()]
    st.table(pd.DataFrame(columns, index=list(rows)), border="horizontal")
    opens = " · ".join(
        table.name_link(r["name"], r["id"]).replace(
            f">{html.escape(r['name'])}<", f">{html.escape(table.platform(r['source']))} #{r['id']}<"
        )
        for r in records
    )
    navigation.show_html(f"<p>Open a listing of its own: {opens}</p>", key="detail_listings")


# -- comparable sales ------------------------------------------------------------------------


def _where_sold(sale: Mapping[str, Any]) -> str:
    """The platform an auction ended on, or the venue of a reported sale and where it was reported."""
    where = table.platform(sale.get("source"))
    if sale.get("origin") in (None, "auction"):
        return where
    return f"{where}, reported ({sale['origin']})" if where else f"reported ({sale['origin']})"


# The column each title's sort key orders by (which way a first click sorts is the Column's).
_COMPS_SORTS = {"alike": "score", "name": "name", "eur": "final_price_eur", "bids": "bids", "ended": "ended_at"}
_COMPS_TABLE: tuple[table.Column, ...] = (
    table.Column("name", "Sold", lambda r, now: table.name_link(r["name"]), "name", descending_first=False),
    table.Column(
        "price", "For", lambda r, now: table.money(r.get("final_price"), r.get("currency")), "eur", numeric=True
    ),
    table.Column("eur", "EUR", lambda r, now: table.money(r.get("final_price_eur"), "EUR"), "eur", numeric=True),
    table.Column("bids", "Bids", lambda r, now: table.blank(r.get("bids")), "bids", numeric=True),
    table.Column("ended", "Ended", lambda r, now: html.escape(_day(r.get("ended_at"))), "ended"),
    table.Column("where", "On", lambda r, now: html.escape(_where_sold(r))),
    table.Column("why", "Why alike", lambda r, now: html.escape(r.get("why") or ""), "alike"),
)


def _comparables(name: str) -> None:
    """The closed auctions most like this name, what they sold for and why (analysis/comps.py),
    as a table sorted by any of its titles, each name a link to its own page."""
    from ...analysis.comps import comparables

    st.subheader("Comparable sales")
    found = comparables(state.reader(), name, limit=8)
    if found.empty:
        st.caption(
            "No sale known yet: sales come from the auctions the mirror sees end, and from the sales reported "
            "elsewhere (edt ingest sales FILE)."
        )
        return
    sort = st.query_params.get("comps_sort") or "-alike"
    field = _COMPS_SORTS.get(sort.lstrip("-"), _COMPS_SORTS["alike"])
    found = found.sort_values(field, ascending=not sort.startswith("-"), kind="stable", na_position="last")
    records = json.loads(found.to_json(orient="records"))
    url = {k: (v[-1] if isinstance(v, list) else v) for k, v in st.query_params.to_dict().items()}
    navigation.show_html(
        table.render(
            _COMPS_TABLE,
            _COMPS_TABLE,
            records,
            {**url, "comps_sort": sort},
            state.reader().now(),
            sort_key="comps_sort",
        ),
        key="comps",
    )


# -- every field -----------------------------------------------------------------------------

_MONEY = {"price", "max_bid", "effective_price"}
_EUR = {"price_eur", "effective_price_eur", "value_low", "value_mid", "value_high", "live_low", "live_mid", "live_high"}


def field_text(name: str, value: Any, record: Mapping[str, Any], kind: str) -> str:
    """A field's value as a person reads it: dates and moments, money with its currency,
    statuses and platforms in words, yes/no; a dash when absent."""
    if value is None or value == "" or value == []:
        return "—"
    if name == "source":
        return pipeline_name(value) if kind == "pending" else table.platform(value)
    if name == "origin":
        return origin_words(value)
    if name == "language":
        return language_name(value)
    if name == "whois_status":
        codes = value if isinstance(value, list) else [value]
        return ", ".join(status_words(c) for c in codes)
    if name == "id":
        return str(value)
    if name in _MONEY:
        return html.unescape(table.money(value, record.get("currency"), exact=True))
    if name in _EUR:
        return f"{value:,.2f} EUR"
    if name == "estibot_appraisal":
        return f"{value:,.0f} USD"
    if name == "archive_redirect_share":
        return f"{value:.0%}"
    if name == "metrics_jump" and isinstance(value, dict):
        return str(value.get("reason") or f"{value.get('metric')} rose by {value.get('rise')}")
    declared = (
        {**LISTING_FIELDS, **LISTING_EXTRA_FIELDS} if kind == "listing" else {**PENDING_FIELDS, **PENDING_EXTRA_FIELDS}
    )
    sort = declared.get(name)
    if sort == "datetime":
        return table.moment(value)
    if sort == "date":
        return _day(value) or str(value)
    if isinstance(value, bool) or sort == "bool":
        return "yes" if value else "no"
    if name == "tld":
        return normalize_tld(str(value))  # .com, as on every page (a pending row keeps it bare)
    if isinstance(value, list):
        return ", ".join(_number(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}: {_number(v)}" for k, v in value.items())
    return _number(value)


def _number(value: Any) -> str:
    """A number with its thousands separated (as the tables write it), anything else as text."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return html.unescape(table.blank(value))
    return str(value)


def _fields(record: Mapping[str, Any], *, pending: bool) -> None:
    """Every field of a record, labelled and grouped by kind (`toolkit.store.labels`), the
    field's own name on hover; static HTML the browser lays out at once (an interactive grid
    takes about a second more). Not Markdown: its timestamps would load Streamlit's emoji code."""
    labels = PENDING_LABELS if pending else LISTING_LABELS
    grouped: dict[str, list[tuple[str, str, str]]] = {group: [] for group in GROUPS}
    for name, value in record.items():
        if name in ("historical_traffic", *INTERNAL_FIELDS) or name not in labels:
            continue
        label = labels[name]
        tip = f"{name}: {label.meaning}" if label.meaning else name
        grouped[label.group].append(
            (label.label, field_text(name, value, record, "pending" if pending else "listing"), tip)
        )
    st.subheader("Every field")
    navigation.show_html(
        table.grouped_fields_html([(GROUPS[g], rows) for g, rows in grouped.items() if rows]), key="fields"
    )


# -- pending delete --------------------------------------------------------------------------


def _past_pending(name: str, plan: str) -> dict[str, Any] | None:
    """The latest pending-delete row of `name` whose drop date has passed (the API answers only
    for names still to drop), or None. Only a whole name is looked for (a part goes to the
    suggestions)."""
    if "." not in name:
        return None
    try:
        found = state.reader().search_pending_delete(
            {"contains": name, "week_end": "all", "include_past": "1", "per_page": "100"}, plan=plan
        )["data"]
    except ApiError:
        return None
    return next((r for r in found if r["domain"].lower() == name), None)


def _pending_page(name: str, plan: str) -> bool:
    """A name that is pending delete and listed nowhere: when it drops, its status, its metrics."""
    if not plan_allows(plan, "pending_delete"):
        return False
    mirror = state.reader()
    try:
        row = mirror.get_pending_delete(name, plan=plan)["data"]
    except ApiError:
        past = _past_pending(name, plan)
        if past is None:
            return False
        row = past
    top, buttons = st.columns([3, 1])
    top.subheader(shown_name(row["domain"]), help=_ascii_form(row["domain"]))
    badges = " ".join(
        f":orange-badge[{b}]" for b in unknowns(row) if b != "no archive data" or row.get("wayback_snapshots") is None
    )
    passed = row.get("estimated_drop_date") and str(row["estimated_drop_date"]) < mirror.now().date().isoformat()
    stage = status_words(row["whois_status"])
    stage = f" ({stage})" if stage and stage != "pending delete" else ""  # the heading says it already
    top.markdown(
        (
            f"**Was pending delete**{stage}: its drop date, "
            f"{_day(row['estimated_drop_date'])}, has passed; it may have dropped (watch it to be told) · "
            if passed
            else f"**Pending delete**{stage} · "
        )
        + f"not listed on any platform this mirror follows · {pipeline_name(row['source'])} {badges}".strip()
    )
    (marks,) = actions.marked([row], name_field="domain")
    actions.watch_button(row["domain"], bool(marks[table.WATCHED]), buttons)
    # Two figures a row: a status in words ("on hold at the registrar") is cut short in a quarter.
    cols = [*st.columns(2), *st.columns(2)]
    window = table.window_text(row)
    cols[0].metric(
        "Drops",
        _day(row.get("estimated_drop_date")) or "—",
        help=f"the most likely day; it may drop {window}" if window else None,
    )
    cols[1].metric("Status", status_words(row["whois_status"]), help=status_meaning(row["whois_status"]))
    cols[2].metric("TF / CF", f"{_dash(row.get('trust_flow'))} / {_dash(row.get('citation_flow'))}")
    cols[3].metric("Referring domains", _dash(row.get("referring_domains")))
    st.markdown(f"[Wayback calendar](https://web.archive.org/web/*/{quote(row['domain'])})")
    _fields(row, pending=True)
    return True


def _pending_note(name: str, plan: str) -> None:
    if not plan_allows(plan, "pending_delete"):
        return
    try:
        row = state.reader().get_pending_delete(name, plan=plan)["data"]
    except ApiError:
        return
    drop = _day(row.get("estimated_drop_date")) or "on a day not known"
    st.info(
        f"{name} is also pending delete: {status_words(row['whois_status'])}, expected to drop {drop} "
        f"({pipeline_name(row['source'])})."
    )
