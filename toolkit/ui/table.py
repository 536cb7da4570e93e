"""The results tables of Explore and Pending-delete (also the drop calendar's day and TF / CF's
region): columns declared once, drawn as HTML.

Each table is one list of `Column`s: what it shows, how a cell reads (blank when the value is
absent, prices with their currency, "ends in" as a countdown) and which API `sort` its header
asks for. A header is a link that sets `sort` in the URL, so a click orders *all* matching
rows through the query layer, never just the page on screen. Adding a column is one line.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any
from urllib.parse import quote, urlencode

from ..names import shown_name
from ..store.labels import language_name, pipeline_name, platform_name, status_meaning, status_words
from ..store.schema import deal_ratio

__all__ = [
    "Column",
    "LISTING_TABLE",
    "PENDING_TABLE",
    "default_keys",
    "chosen_columns",
    "render",
    "money",
    "ends_in",
    "moment",
    "day_month",
    "blank",
    "next_sort",
    "fields_html",
    "grouped_fields_html",
    "plain_table",
    "keep_cell",
    "name_link",
    "when",
    "window_text",
    "platform",
    "status",
    "KEPT",
    "WATCHED",
]

Cell = Callable[[Mapping[str, Any], datetime], str]  # a record and now -> the cell's HTML


@dataclass(frozen=True)
class Column:
    key: str  # its name in the URL's column chooser (`cols=`)
    title: str
    cell: Cell
    sort: str | None = None  # the API sort field its header asks for
    descending_first: bool = True  # a first click shows the highest first (metrics, prices)
    numeric: bool = False  # right-aligned
    wraps: bool = False  # words that may go onto two lines when the row would not fit the page
    default: bool = True  # shown before the user chooses
    help: str = ""
    needs: str | None = None  # shown by default only when the mirror has this ("values": price ranges)


def blank(value: Any) -> str:
    """A value as cell text: empty for None, thousands separated for whole numbers."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.0f}" if value.is_integer() else f"{value:,.2f}"
    return html.escape(str(value))


def money(value: Any, currency: str | None, *, exact: bool = False) -> str:
    """`1,468 USD`, `12.50 EUR` (cents below 100 only: `5,754 EUR`, not `5,753.67 EUR`, unless
    `exact`, as a record's every field shows it); blank when there is no price."""
    text = blank(round(value) if not exact and isinstance(value, float) and abs(value) >= 100 else value)
    return f"{text} {html.escape(currency)}" if text and currency else text


def when(value: Any) -> datetime | None:
    if not value:
        return None
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def moment(value: Any) -> str:
    """An ISO timestamp as people read it, `23 Nov 2026 07:00 UTC`; blank without one."""
    found = when(value)
    if found is None:
        return blank(value)
    at = found.astimezone(timezone.utc)
    return f"{day_month(at)} {at:%Y %H:%M} UTC"


def day_month(day: date | datetime, *, weekday: bool = False) -> str:
    """A day as the pages write it, unpadded: `7 Nov`, with `weekday` `Sat 7 Nov`."""
    return (f"{day:%a} " if weekday else "") + f"{day.day} {day:%b}"


def ends_in(value: Any, now: datetime) -> str:
    """A countdown to an ISO timestamp: `2d 4h`, `5h 12m`, `40m`, `ended`; blank without one."""
    end = when(value)
    if end is None:
        return ""
    seconds = int((end - now).total_seconds())
    if seconds <= 0:
        return "ended"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    text = f"{days}d {hours}h" if days else (f"{hours}h {minutes}m" if hours else f"{max(minutes, 1)}m")
    return f'<span title="{html.escape(end.strftime("%Y-%m-%d %H:%M UTC"))}">{text}</span>'


def _day(value: Any) -> date | None:
    """The date of an ISO date or timestamp; None for a blank or anything else."""
    try:
        return datetime.fromisoformat(str(value)[:10]).date() if value else None
    except ValueError:
        return None


def _drops(value: Any, now: datetime) -> str:
    day = _day(value)
    if day is None:
        return blank(value) if value else ""
    days = (day - now.date()).days
    said = "today" if days == 0 else (f"in {days} d" if days > 0 else f"{-days} d ago")
    return f'{day_month(day, weekday=True)} <span class="edt-dim">({said})</span>'


def window_text(record: Mapping[str, Any]) -> str:
    """The days a pending name may drop (`24 Nov – 26 Nov (3 days)`); one day when the date is known."""
    start, end = _day(record.get("drop_window_start")), _day(record.get("drop_window_end"))
    if start is None or end is None:
        return ""
    days = (end - start).days + 1
    return day_month(start) if days <= 1 else f"{day_month(start)} – {day_month(end)} ({days} days)"


def _window(record: Mapping[str, Any], now: datetime) -> str:
    text = html.escape(window_text(record))
    return text.replace(" (", ' <span class="edt-dim">(', 1) + "</span>" if " (" in text else text


def name_link(name: str, listing_id: Any = None) -> str:
    """A name linked to its domain page (followed in place); with `listing_id`, to that listing
    of the name (a name listed on two platforms opens the row clicked)."""
    href = f"?view=detail&name={quote(name)}" + (f"&id={int(listing_id)}" if listing_id is not None else "")
    shown = shown_name(name)  # an IDN in letters, its xn-- form on hover
    title = f' title="{html.escape(name)}"' if shown != name else ""
    return f'<a href="{html.escape(href)}" target="_self" class="edt-name"{title}>{html.escape(shown)}</a>'


def _field(name: str) -> Cell:
    return lambda record, now: blank(record.get(name))


def _value(record: Mapping[str, Any], now: datetime) -> str:
    """The 80% price range in EUR, `40 – 180` (blank before an appraisal or without a range)."""
    low, high = record.get("value_low"), record.get("value_high")
    if low is None or high is None:
        return ""
    return f"{low:,.0f} – {high:,.0f}"


def _live(record: Mapping[str, Any], now: datetime) -> str:
    """The live estimate of an auction with bids, `120 – 260` in EUR (blank otherwise)."""
    low, high = record.get("live_low"), record.get("live_high")
    return "" if low is None or high is None else f"{low:,.0f} – {high:,.0f}"


def _deal(record: Mapping[str, Any], now: datetime) -> str:
    """The value over the EUR price, `×2.4` (the live estimate's middle for an auction with
    bids, else the range's): above 1, priced under its value."""
    ratio = deal_ratio(record)
    return "" if ratio is None else f"×{ratio:,.1f}"


def platform(slug: str | None) -> str:
    """A listing's source by its name (`godaddy` -> `GoDaddy Auctions`)."""
    return platform_name(slug)


def status(code: str | None) -> str:
    """A registry status in words, its EPP code (and what it means) on hover."""
    if not code:
        return ""
    return f'<span title="{html.escape(status_meaning(code))}">{html.escape(status_words(code))}</span>'


def _buy(record: Mapping[str, Any], now: datetime) -> str:
    url = record.get("purchase_url")
    return f'<a href="{html.escape(url)}" target="_blank" rel="noopener">buy ↗</a>' if url else ""


KEPT = "_kept"  # a record's mark (ui/actions.py): the listing is on the shortlist
WATCHED = "_watched"  # a record's mark: its name is watched


def _act_button(action: str, face: str, tip: str) -> str:
    return (
        f'<button type="button" class="edt-act" data-edt-act="{html.escape(action)}" title="{html.escape(tip)}" '
        f'aria-label="{html.escape(tip)}">{face}</button>'
    )


def keep_cell(name_field: str, *, shortlist: bool = True) -> Cell:
    """A row's buttons (ui/actions.py does what they ask): shortlist (a listing's) and watch."""

    def cell(record: Mapping[str, Any], now: datetime) -> str:
        name = record[name_field]
        out = []
        if shortlist and name_field == "name" and record.get("id") is not None:
            kept = bool(record.get(KEPT))
            out.append(
                _act_button(
                    f"shortlist:{'off' if kept else 'on'}:{record['id']}:{name}",
                    "★" if kept else "☆",
                    f"On your shortlist: take {name} off" if kept else f"Shortlist {name}",
                )
            )
        watched = bool(record.get(WATCHED))
        out.append(
            _act_button(
                f"watch:{'off' if watched else 'on'}:{name}",
                "◉" if watched else "◎",
                f"Watched: stop watching {name}"
                if watched
                else f"Watch {name} through expiry, redemption, pending delete and release",
            )
        )
        return "".join(out)

    return cell


# The Explore table, in the order an investor reads a row: the name and what to do with it,
# what it costs and when, its link metrics, then where it is listed. The whole default row fits
# the page at 1400 px (the actions beside the name, never scrolled out of sight; the TLD is
# in the name, so its own column is on demand).
LISTING_TABLE: tuple[Column, ...] = (
    Column("name", "Domain", lambda r, now: name_link(r["name"], r.get("id")), "name", descending_first=False),
    Column(
        "keep", "Keep", keep_cell("name"), help="☆ shortlist it, ◎ watch its name (★ and ◉: done; click again to undo)"
    ),
    Column(
        "price",
        "Price",
        lambda r, now: money(r.get("effective_price"), r.get("currency")),
        "effective_price_eur",  # sorted in one currency: 100 JPY is not above 90 USD
        numeric=True,
        help="current bid, else the price, in the platform's currency (sorted by its value in euros)",
    ),
    Column(
        "eur",
        "EUR",
        lambda r, now: money(r.get("effective_price_eur"), "EUR"),
        "effective_price_eur",
        numeric=True,
        help="the price in euros, at the ECB rate of the day it was seen",
    ),
    Column(
        "value",
        "Value (EUR)",
        _value,
        "value_mid",
        numeric=True,
        needs="values",
        help="80% price range in EUR, learnt from the auctions this mirror saw end (edt appraise); sorts by its middle",
    ),
    Column(
        "live",
        "Live (EUR)",
        _live,
        "live_mid",
        numeric=True,
        needs="values",
        help="what an auction with bids will sell for, given its bidding: 80% range in EUR, never below the bid; "
        "sorts by its middle",
    ),
    Column(
        "deal",
        "Value/price",
        _deal,
        "deal",
        numeric=True,
        default=False,
        help="the value over the EUR price (the live estimate for an auction with bids, else the range's middle): "
        "above 1, priced under its value",
    ),
    Column("bids", "Bids", _field("bids_count"), "bids_count", numeric=True),
    Column(
        "ends",
        "Ends in",
        lambda r, now: ends_in(r.get("auction_end_date"), now),
        "auction_end_date",
        descending_first=False,
    ),
    Column("tf", "TF", _field("trust_flow"), "trust_flow", numeric=True, help="Trust Flow"),
    Column("cf", "CF", _field("citation_flow"), "citation_flow", numeric=True, help="Citation Flow"),
    Column("da", "DA", _field("domain_authority"), "domain_authority", numeric=True, help="Domain Authority"),
    Column("rd", "RD", _field("referring_domains"), "referring_domains", numeric=True, help="referring domains"),
    Column("age", "Age", _field("age"), "age", numeric=True, help="years since the first web-archive snapshot"),
    Column("score", "Score", _field("score"), "score", numeric=True),
    Column("source", "Source", lambda r, now: blank(platform(r.get("source"))), wraps=True),
    Column("tld", "TLD", _field("tld"), default=False),
    Column("type", "Type", _field("type"), default=False),
    Column("backlinks", "Backlinks", _field("backlinks_count"), "backlinks_count", numeric=True, default=False),
    Column("snapshots", "Snapshots", _field("wayback_snapshots"), "wayback_snapshots", numeric=True, default=False),
    Column(
        "traffic",
        "Traffic",
        _field("historical_traffic_etv"),
        "historical_traffic_etv",
        numeric=True,
        default=False,
        help="estimated monthly organic traffic",
    ),
    Column("language", "Lang", lambda r, now: blank(language_name(r.get("language"))), default=False),
    Column("topic", "Topic", _field("ttf_topic"), default=False),
    Column("added", "Added", lambda r, now: moment(r.get("created_at")).rsplit(" ", 2)[0], "created_at", default=False),
    Column("buy", "Buy", _buy),
)

# The pending-delete table: the name and its watch, when it drops, its state, then the metrics when known.
PENDING_TABLE: tuple[Column, ...] = (
    Column("domain", "Domain", lambda r, now: name_link(r["domain"]), "domain", descending_first=False),
    Column(
        "keep", "Watch", keep_cell("domain"), help="◎ watch the name through its drop (◉: watched; click again to undo)"
    ),
    Column(
        "drops", "Drops", lambda r, now: _drops(r.get("estimated_drop_date"), now), "drop_date", descending_first=False
    ),
    Column(
        "window",
        "Window",
        _window,
        default=False,
        help="the days it may drop: one when the registry lists it, else between two zone snapshots",
    ),
    Column(
        "status",
        "Status",
        lambda r, now: status(r.get("whois_status")),
        help="the registry's status, its code on hover",
        wraps=True,
    ),
    Column("tld", "TLD", lambda r, now: blank("." + r["tld"] if r.get("tld") else None), default=False),
    Column("length", "Length", _field("sld_length"), numeric=True),
    Column("tf", "TF", _field("trust_flow"), numeric=True, help="Trust Flow, when known"),
    Column("cf", "CF", _field("citation_flow"), numeric=True, help="Citation Flow, when known"),
    Column("da", "DA", _field("domain_authority"), numeric=True, help="Domain Authority, when known"),
    Column("rd", "RD", _field("referring_domains"), numeric=True, help="referring domains, when known"),
    Column("snapshots", "Snapshots", _field("wayback_snapshots"), numeric=True),
    Column("score", "Score", _field("score"), numeric=True),
    Column("source", "Pipeline", lambda r, now: blank(pipeline_name(r.get("source"))), wraps=True),
    Column("dns", "DNS", _field("dns_status"), default=False),
    Column("language", "Lang", lambda r, now: blank(language_name(r.get("language"))), default=False),
)


def default_keys(table: Sequence[Column], has: Iterable[str] = ()) -> list[str]:
    """The columns shown before the user chooses; those that `need` something only when the
    mirror `has` it (the value column once `edt appraise` has run)."""
    present = set(has)
    return [c.key for c in table if c.default and (c.needs is None or c.needs in present)]


def chosen_columns(table: Sequence[Column], keys: str | Sequence[str] | None) -> list[Column]:
    """The columns named in `keys` (the URL's `cols`, comma-separated), in the table's order;
    the defaults when none of them is known."""
    wanted = set(keys.split(",") if isinstance(keys, str) else keys or ())
    chosen = [c for c in table if c.key in wanted]
    return chosen or [c for c in table if c.default]


def next_sort(column: Column, current: str | None, pending: bool = False) -> str:
    """The `sort` a click on this header asks for: its first direction, or the other one
    when the table is already sorted by it."""
    sort = column.sort or ""  # a column without a sort has no link to ask for one
    if pending:  # the pending-delete API sorts by drop date (either way) or domain only
        if sort == "drop_date":
            return "drop_date_desc" if current in (None, "", "drop_date") else "drop_date"
        return sort
    first = f"-{sort}" if column.descending_first else sort
    other = sort if column.descending_first else f"-{sort}"
    return other if current == first else first


def _arrow(column: Column, current: str | None, pending: bool) -> str:
    if not column.sort or not current:
        return ""
    if pending:
        if column.sort == "drop_date" and current in ("drop_date", "drop_date_desc"):
            return " ▲" if current == "drop_date" else " ▼"
        return " ▲" if current == column.sort else ""
    if current.lstrip("-") == column.sort:
        return " ▼" if current.startswith("-") else " ▲"
    return ""


_STYLE = """<style>
.edt-table {border-collapse: collapse; width: 100%; font-size: 0.84rem;}
.edt-table th, .edt-table td {padding: 0.25rem 0.3rem; border-bottom: 1px solid rgba(128,128,128,0.2);
  white-space: nowrap; text-align: left;}
.edt-table th {position: sticky; top: 0; background: var(--background-color, #fff); font-weight: 600;}
.edt-table th a {text-decoration: none; color: inherit;}
.edt-table td.num, .edt-table th.num {text-align: right; font-variant-numeric: tabular-nums;}
.edt-table td.words {white-space: normal; min-width: 4rem;}
.edt-table tr:hover td {background: rgba(128,128,128,0.08);}
.edt-table a.edt-name {font-weight: 600;}
.edt-dim {opacity: 0.6;}
.edt-wrap {overflow-x: auto;}
.edt-fields td {white-space: normal; word-break: break-word;}
.edt-act {border: none; background: none; cursor: pointer; padding: 0 0.15rem; font-size: 1rem; color: inherit;}
.edt-act:hover {color: #ff4b4b;}
</style>"""


_TD = {  # a cell's opening tag by (numeric, wraps)
    (False, False): "<td>",
    (True, False): '<td class="num">',
    (False, True): '<td class="words">',
    (True, True): '<td class="num words">',
}


def render(
    table: Sequence[Column],
    columns: Sequence[Column],
    records: Sequence[Mapping[str, Any]],
    url_params: Mapping[str, str],
    now: datetime,
    *,
    pending: bool = False,
    sortable: bool = True,
    sort_key: str = "sort",
) -> str:
    """The HTML of one page of results. With `sortable`, headers of sortable columns link to
    the same URL with the next sort (in `sort_key`) and page 1."""
    current = url_params.get(sort_key)
    heads = []
    for column in columns:
        css = ' class="num"' if column.numeric else ""
        title = html.escape(column.title) + _arrow(column, current, pending)
        tip = f' title="{html.escape(column.help)}"' if column.help else ""
        if column.sort and sortable:
            query = {k: v for k, v in url_params.items() if k != "page"}
            query[sort_key] = next_sort(column, current, pending)
            href = html.escape("?" + urlencode(query))
            heads.append(f'<th{css}{tip}><a href="{href}" target="_self">{title}</a></th>')
        else:
            heads.append(f"<th{css}{tip}>{title}</th>")
    rows = []
    for record in records:
        cells = "".join(_TD[c.numeric, c.wraps] + c.cell(record, now) + "</td>" for c in columns)
        rows.append(f"<tr>{cells}</tr>")
    return (
        f'{_STYLE}<div class="edt-wrap"><table class="edt-table"><thead><tr>{"".join(heads)}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def fields_html(rows: Sequence[tuple[str, str]], header: Sequence[str] = ("field", "value")) -> str:
    """A plain two-column table (a record's fields): static HTML the browser lays out at once."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in rows)
    return f'{_STYLE}<div class="edt-wrap"><table class="edt-table edt-fields"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def grouped_fields_html(groups: Sequence[tuple[str, Sequence[tuple[str, str, str]]]]) -> str:
    """A record's fields under their groups' titles: (title, [(label, value, hover)]), the
    hover (the field's own name and meaning) on the label."""
    body = []
    for title, rows in groups:
        body.append(f'<tr><th colspan="2">{html.escape(title)}</th></tr>')
        body += [
            f'<tr><td title="{html.escape(tip)}">{html.escape(label)}</td><td>{html.escape(value)}</td></tr>'
            for label, value, tip in rows
        ]
    return (
        f'{_STYLE}<div class="edt-wrap"><table class="edt-table edt-fields"><tbody>{"".join(body)}</tbody>'
        "</table></div>"
    )


def plain_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A small static table of plain texts (escaped), as the results tables look."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return (
        f'{_STYLE}<div class="edt-wrap"><table class="edt-table edt-fields"><thead><tr>{head}</tr></thead>'
        f"<tbody>{body}</tbody></table></div>"
    )
