"""Domain sales reported elsewhere: `edt ingest sales FILE`.

    from toolkit import Mirror
    from toolkit.ingest.sales import ingest_sales
    ingest_sales(Mirror("data/mirror.db"), "namebio-export.csv")   # -> SalesReport(read=..., new=...)

Reads any delimited file with a header naming a domain, a price and a date, and optionally a
venue and a currency, in any column order:

- NameBio's export: `Domain, Price, Date, Venue` (US dollars);
- DNJournal-style tables: `Rank | Domain | Price | Venue | Date` with prices such as `$12,500`
  and dates such as `May 30, 2020` (a rank column, or any other, is ignored);
- any CSV with `domain`, `price` (or `amount`, `sale price`), `date` (or `sold on`,
  `date sold`) and, when present, `venue` (or `marketplace`, `where sold`) and `currency`.

A price is US dollars unless the row says otherwise (a `currency` column, or a `€`, `£` or a
three-letter code beside the amount). The rows go to `reported_sales`, apart from the auctions
the mirror saw end, each with the file it came from; a sale already kept (same name, day,
price, currency and venue) is not written again. One bad row stops the import: the error
names the file and line, and nothing of the file is written. The file (plain, gzip, or a zip
of one file) is read as a stream and its rows written as they are read, in one transaction: a
file of any length takes no more memory than a batch of rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

from ..names import split_domain
from ..store.results import save_reported_sales
from .common import observed, BadRow, IngestError, clean_domain, parse_day
from .feed_csv import csv_table, header_key
from .feed_file import DEFAULT_BOUNDS, Bounds, FeedFile, read_feed

__all__ = ["SalesReport", "ingest_sales", "read_sales", "COLUMNS"]

# What each column may be called (compared as header_key: case, spaces and punctuation ignored).
COLUMNS: dict[str, tuple[str, ...]] = {
    "name": ("domain", "domainname", "name", "domainsold", "domains"),
    "price": ("price", "saleprice", "amount", "soldfor", "priceusd", "usd", "salesprice"),
    "sold_on": ("date", "solddate", "saledate", "datesold", "soldon", "datereported", "reported", "day"),
    "venue": ("venue", "marketplace", "wheresold", "soldat", "soldvia", "platform", "soldthrough"),
    "currency": ("currency", "cur"),
}
REQUIRED = ("name", "price", "sold_on")
_SYMBOLS = {"$": "USD", "us$": "USD", "€": "EUR", "£": "GBP"}
_AMOUNT = re.compile(
    r"^(?P<pre>[A-Za-z]{3}|US\$|[$€£])?\s*(?P<num>(?:\d{1,3}(?:[,\s]\d{3})+|\d+)(?:\.\d+)?)\s*"
    r"(?P<post>[A-Za-z]{3}|[$€£])?$"
)
_LONG_DAYS = ("%B %d, %Y", "%b %d %Y", "%B %d %Y", "%d %B %Y")
_FIRST_DAY = "1985-01-01"  # the first .com was registered in March 1985
_MOST = 1_000_000_000  # above any reported domain sale
_RULE = re.compile(r"^:?-{3,}:?$")
_DOTTED_THOUSANDS = re.compile(r"^\d{1,3}(?:\.\d{3})+$")  # 1.200: a thousand and two hundred in Europe
_BATCH = 5000


@dataclass
class SalesReport:
    file: str
    read: int = 0
    new: int = 0

    def lines(self) -> list[str]:
        kept = self.read - self.new
        return [
            f"{self.file}: {self.read:,} reported sales read, {self.new:,} new"
            + (f" ({kept:,} already kept)" if kept else "")
        ]


def _amount(text: str, currency: str | None, known: frozenset[str]) -> tuple[float, str]:
    match = _AMOUNT.match(text.strip())
    if not match:
        raise BadRow(f"price {text.strip()!r} is not an amount (e.g. 2500, $2,500 or 2,500 EUR)")
    if _DOTTED_THOUSANDS.match(match["num"]):
        raise BadRow(
            f"price {text.strip()!r} is ambiguous (a dot before three digits: {match['num']} or "
            f"{match['num'].replace('.', ',')}?); write the amount without it"
        )
    value = float(re.sub(r"[,\s]", "", match["num"]))
    if not 0 < value <= _MOST:
        raise BadRow(f"price {text.strip()!r} is not above 0 and at most {_MOST:,}")
    marks = {(_SYMBOLS.get(m.lower()) or m.upper()) for m in (match["pre"], match["post"]) if m}
    if currency:
        marks.add(currency.strip().upper())
    if len(marks) > 1:
        raise BadRow(f"price {text.strip()!r}: more than one currency ({', '.join(sorted(marks))})")
    code = marks.pop() if marks else "USD"
    if code not in known:
        raise BadRow(
            f"currency {code!r} is not one the ECB quotes ({', '.join(c for c in ('USD', 'EUR', 'GBP') if c in known)}, "
            f"... {len(known)} in all)"
        )
    return value, code


def _currencies() -> frozenset[str]:
    from ..signals.fx import fx_table

    return fx_table().currencies | {"EUR"}


def _day(text: str, today: str) -> str:
    """The sale's day (YYYY-MM-DD), not after `today` nor before the first domain name."""
    try:
        day = parse_day(text)
    except BadRow:
        for fmt in _LONG_DAYS:
            try:
                day = datetime.strptime(text.strip(), fmt).date().isoformat()
                break
            except ValueError:
                continue
        else:
            raise
    if day > today:
        raise BadRow(f"sale date {day} is after today ({today})")
    if day < _FIRST_DAY:
        raise BadRow(f"sale date {day} is before the first domain name was registered (1985)")
    return day


def read_sales(feed: FeedFile, today: str) -> Iterator[dict[str, Any]]:
    """The sales of a feed file (`common.read_feed`: plain, gzip or a zip of one file, within
    its bounds) as they are read, none after `today` (YYYY-MM-DD): dicts with name, tld,
    sold_on, price, currency, venue; an
    `IngestError` naming the file and line for a file without the needed columns or for the
    first bad row."""
    header, rows = csv_table(feed)
    keys = [header_key(cell) for cell in header]
    where: dict[str, int] = {}
    for field, names in COLUMNS.items():
        found = [i for i, key in enumerate(keys) if key in names]
        if found:
            where[field] = found[0]
    missing = [f for f in REQUIRED if f not in where]
    if missing:
        wanted = {"name": "domain", "price": "price", "sold_on": "date"}
        raise IngestError(
            feed.name,
            1,
            f"no {' or '.join(wanted[f] for f in missing)} column in the header ({', '.join(header)})",
            "name the columns Domain, Price and Date (Venue and Currency optional), as NameBio's export does",
        )
    known = _currencies()  # the ECB's, once a file
    for line, cells in rows:
        if all(_RULE.match(c.strip()) for c in cells if c.strip()):  # a Markdown table's |---|---| line
            continue
        try:
            if len(cells) != len(header):
                raise BadRow(
                    f"{len(cells)} fields, the header has {len(header)}"
                    + (' (an amount with a comma must be quoted: "1,200")' if len(cells) > len(header) else "")
                )
            cell = {field: cells[i].strip() for field, i in where.items()}
            name = clean_domain(cell["name"])
            price, currency = _amount(cell["price"], cell.get("currency") or None, known)
            yield {
                "name": name,
                "tld": split_domain(name)[1],
                "sold_on": _day(cell["sold_on"], today),
                "price": price,
                "currency": currency,
                "venue": cell.get("venue", ""),
            }
        except BadRow as exc:
            raise IngestError(
                feed.name, line, str(exc), "fix or remove the line; nothing of the file was written"
            ) from None


def ingest_sales(mirror: Any, path: str | Path, *, now: Any = None, bounds: Bounds = DEFAULT_BOUNDS) -> SalesReport:
    """Read the file's sales into `reported_sales` in one transaction (all or nothing)."""
    path = Path(path)
    report = SalesReport(str(path))
    stamp = observed(now)  # now: the mirror's clock, else this moment (UTC)
    feed = read_feed(path, bounds)
    conn = mirror.connection()
    with conn:
        batch: list[dict[str, Any]] = []
        for sale in read_sales(feed, stamp[:10]):
            batch.append(sale)
            if len(batch) >= _BATCH:
                report.new += save_reported_sales(conn, batch, origin=path.name, imported_at=stamp)
                report.read, batch = report.read + len(batch), []
        report.new += save_reported_sales(conn, batch, origin=path.name, imported_at=stamp)
        report.read += len(batch)
    return report
