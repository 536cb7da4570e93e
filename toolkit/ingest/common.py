"""What every ingest adapter shares: its errors, ids, names, money, dates and rows (reading
the file itself is `feed_file.py`).

Adapters turn one public feed file into records shaped as the API's listing or pending-delete
records (docs/reference/fields.md). Two kinds of trouble are kept apart:

- `IngestError`: the file as a whole cannot be read as this feed (wrong format, truncated
  archive or JSON, not UTF-8). The message names the file, the line and the fix; nothing
  of the file is written.
- `Skipped`: one row is bad (a name that is not a domain, a date that is not a date) in an
  otherwise valid file. The row is left out and reported as `file:line: reason`.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from ..sources import SOURCES
from ..store.fields import iso_timestamp, utc_seconds
from .. import errors

__all__ = [
    "IngestError",
    "OnBadRow",
    "bad_line",
    "Skipped",
    "BadRow",
    "INGEST_ID_BASE",
    "ingest_id",
    "clean_domain",
    "parse_money",
    "whole_number",
    "parse_day",
    "parse_timestamp",
    "day_in_name",
    "week_monday",
    "strict",
    "truncated",
    "Row",
    "LISTING",
    "PENDING",
    "observed",
    "made",
    "reading_key",
    "text_digest",
    "pending_record",
    "ListingPlatform",
    "UNIT_SEPARATOR",
]


class IngestError(errors.BadInput):
    """A feed file that cannot be ingested as a whole; nothing of it was written."""

    def __init__(self, file: str, line: int | None, problem: str, fix: str):
        self.file, self.line, self.problem, self.fix = file, line, problem, fix
        where = f"{file}: line {line}" if line is not None else file
        super().__init__(f"{where}: {problem}; {fix}")


@dataclass(frozen=True)
class Skipped:
    """A row left out of an otherwise valid file."""

    file: str
    line: int | None
    reason: str
    unit: str = "line"  # "record": `line` counts the records of a JSON array

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.file}: {self.reason}"
        return (
            f"{self.file}:{self.line}: {self.reason}"
            if self.unit == "line"
            else f"{self.file}: {self.unit} {self.line:,}: {self.reason}"
        )


OnBadRow = Callable[[Skipped], None]  # told of each row left out (`strict` refuses the file instead)


class BadRow(errors.BadInput):
    """Raised by the row parsers; becomes a `Skipped`."""


def strict(problem: Skipped) -> None:
    """The default `on_bad_row` of the parse_* generators used on their own: a bad row
    stops the parse (pass `on_bad_row=list.append` to skip and collect them instead)."""
    raise IngestError(problem.file, problem.line, problem.reason, "fix the row, or pass on_bad_row= to skip bad rows")


def bad_line(feed: str, line: int, problem: BadRow, terminated: bool, on_bad_row: OnBadRow) -> None:
    """A text line that is no row: skipped (`on_bad_row`), unless it is the last one and has
    no line end, which is a truncated file (`IngestError`)."""
    if not terminated:
        raise truncated(feed, line, problem) from None
    on_bad_row(Skipped(feed, line, str(problem)))


def truncated(feed: str, line: int | None, problem: Any) -> IngestError:
    """A file whose last line, without its line end, is no row: cut short in transfer."""
    return IngestError(
        feed, line, f"the last line is incomplete ({problem})", "the file is truncated: download it again"
    )


# -- ids --------------------------------------------------------------------------------

# Ingested rows get ids in [2**52, 2**53): far above the remote's ids (auto-increment row
# numbers, tens of millions), and still exact in a JavaScript number (2**53 - 1 is
# Number.MAX_SAFE_INTEGER), so `GET /api/domains/{id}` round-trips through any JSON client.
# The id is the top 52 bits of BLAKE2b("<namespace>:<name>"): the same name from the same
# feed always gets the same id (re-ingesting updates the row), a name from two feeds gets
# two rows. Two names meeting on one id are detected before writing (the row is skipped).
INGEST_ID_BASE = 1 << 52


def ingest_id(namespace: str, name: str) -> int:
    digest = hashlib.blake2b(f"{namespace}:{name}".encode(), digest_size=8).digest()
    return INGEST_ID_BASE + (int.from_bytes(digest, "big") >> 12)


@dataclass(frozen=True)
class ListingPlatform:
    """The platform a listings feed comes from, as `toolkit.sources` declares it."""

    name: str
    currency: str
    purchase_url: str  # a pattern with {name}
    slug: str  # the feed's `source`, and the namespace of its ids

    @classmethod
    def of(cls, slug: str) -> ListingPlatform:
        source = next((s for s in SOURCES if s.slug == slug), None)
        if source is None or source.currency is None or source.purchase_url is None:
            raise LookupError(f"{slug}: not a platform with a currency and a buy link in toolkit/sources.py")
        return cls(source.name, source.currency, source.purchase_url, slug)

    def purchase_link(self, link: Any, name: str) -> str:
        """The feed's own link to the listing when it gives one, else the platform's for `name`."""
        if isinstance(link, str) and link.strip().startswith(("https://", "http://")):
            return link.strip()
        return self.purchase_url.format(name=name)

    def listing(
        self,
        name: str,
        kind: tuple[str, str],
        amount: float | None,
        bids: int | None,
        link: Any,
        original: Any,
        **fields: Any,
    ) -> dict[str, Any]:
        """A listing record of this platform (docs/reference/fields.md). `kind`: (type,
        auction_type); `amount`: an auction's highest bid when it has bids (`max_bid`), else its
        price; `fields`: the feed's other columns, in record order after `bids_count`; `link`:
        the feed's own link (`purchase_link`); `original`: the row as read (`feed_record`)."""
        listing_type, auction_type = kind
        with_bids = listing_type == "auction" and bool(bids)
        return {
            "id": ingest_id(self.slug, name),
            "name": name,
            "source": self.slug,
            "type": listing_type,
            "auction_type": auction_type,
            "price": None if with_bids else amount,
            "max_bid": amount if with_bids else None,
            "currency": self.currency,
            "bids_count": bids,
            **fields,
            "purchase_url": self.purchase_link(link, name),
            "purchase_platform": self.name,
            "feed_record": original,
        }


# -- names, money, dates ----------------------------------------------------------------

_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\Z")
# A name already in its clean form (most of a feed's): lower case ASCII labels, two or more.
_CLEAN_NAME = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\Z")


def clean_domain(text: Any) -> str:
    """A domain name in lower case ASCII (IDNs as `xn--`), or `BadRow` saying why not."""
    if type(text) is str and len(text) <= 253 and _CLEAN_NAME.match(text):
        return text
    if not isinstance(text, str):
        raise BadRow(f"expected a domain name, got {text!r}")
    name = text.strip().lower().rstrip(".")
    if not name:
        raise BadRow("empty domain name")
    if any(ch.isspace() for ch in name):
        raise BadRow(f"{text.strip()!r} is not a domain name (it contains a space)")
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            raise BadRow(f"{text.strip()!r} is not a valid internationalised domain name") from None
    labels = name.split(".")
    if len(labels) < 2:
        raise BadRow(f"{text.strip()!r} is not a domain name (no TLD)")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise BadRow(f"{text.strip()!r} is not a domain name (letters, digits and inner hyphens only, labels of 1-63)")
    return name


_MONEY = re.compile(
    r"^(?:US\$|USD|\$)?\s*((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?)\s*(?:USD)?$", re.IGNORECASE
)
_PLAIN_AMOUNT = re.compile(r"[0-9]{1,15}(?:\.[0-9]+)?\Z")  # `12.50`: most cells of a feed


def parse_money(value: Any) -> float | None:
    """`"$1,234"` -> 1234.0 (US dollars); None or "" -> None; anything else is a `BadRow`."""
    if type(value) is str and _PLAIN_AMOUNT.match(value):
        return float(value)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise BadRow(f"price {value!r} is not an amount")
    if isinstance(value, (int, float)):
        if value < 0:
            raise BadRow(f"price {value!r} is negative")
        return float(value)
    match = _MONEY.match(str(value).strip())
    if not match:
        raise BadRow(f"price {value!r} is not a US dollar amount like $1,234")
    return float(match.group(1).replace(",", ""))


_PACIFIC = ZoneInfo("America/Los_Angeles")
_ZONE_TAGS = {"PDT": _PACIFIC, "PST": _PACIFIC, "PT": _PACIFIC, "UTC": timezone.utc, "GMT": timezone.utc}
_TAG = re.compile(r"\s*\(?\b(PDT|PST|PT|UTC|GMT)\)?\s*$", re.IGNORECASE)
_TIME_FORMATS = (
    "%m/%d/%Y %I:%M:%S %p",
    "%m/%d/%Y %I:%M %p",
    "%m/%d/%Y %H:%M:%S",
    "%m/%d/%Y %H:%M",
    "%Y/%m/%d %H:%M:%S",
    "%Y/%m/%d %H:%M",
)


def parse_timestamp(value: Any, *, zone: Any = None, us_dates: bool = False) -> str:
    """A timestamp -> `YYYY-MM-DDTHH:MM:SSZ` (UTC). An offset or a zone tag (`(PDT)`,
    `UTC`) in the value wins; a naive value is in `zone` (default UTC). `us_dates` also
    reads `MM/DD/YYYY hh:mm AM` (a US source's own format). `BadRow` when unreadable."""
    if type(value) is str:  # a feed's moments repeat (auctions end on the hour): each text is read once
        return _timestamp_text(value, zone, us_dates)
    return _timestamp(value, zone, us_dates)


@lru_cache(maxsize=1 << 16)
def _timestamp_text(value: str, zone: Any, us_dates: bool) -> str:
    return _timestamp(value, zone, us_dates)


def _timestamp(value: Any, zone: Any, us_dates: bool) -> str:
    text = str(value).strip() if value is not None else ""
    if not text:
        raise BadRow("empty timestamp")
    tag = _TAG.search(text)
    if tag and tag.start() > 0:
        zone = _ZONE_TAGS[tag.group(1).upper()]
        text = text[: tag.start()].strip()
    parsed: datetime | None = None
    iso = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        parsed = datetime.fromisoformat(iso)
    except ValueError:
        for fmt in _TIME_FORMATS if us_dates else _TIME_FORMATS[4:]:
            try:
                parsed = datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    if parsed is None:
        raise BadRow(f"{value!r} is not a timestamp (ISO 8601 like 2026-01-14T16:00:00Z)")
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone or timezone.utc)
    return _moment_text(parsed)


_MOST = 10**15  # above any count a feed carries; read exactly through a float, and within SQLite's integers


def whole_number(value: Any, field: str, low: int = 0, high: int | None = None) -> int | None:
    """A whole number in [low, high] (high at most 10^15) from a feed cell (None for an empty
    one); `BadRow` otherwise."""
    high = _MOST if high is None else min(high, _MOST)
    if type(value) is str and 0 < len(value) < 16 and value.isdigit() and value.isascii():
        whole = int(value)
        if low <= whole <= high:
            return whole
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number: float = float(str(value).replace(",", "").strip()) if not isinstance(value, (int, float)) else value
    except ValueError:
        raise BadRow(f"{field} {value!r} is not a number") from None
    out_of_range = number < low or number > high
    if isinstance(value, bool) or not math.isfinite(number) or number != int(number) or out_of_range:
        raise BadRow(f"{field} {value!r} is not a whole number {low:,}-{high:,}")
    return int(number)


def _moment_text(moment: datetime) -> str:
    """A datetime as the writer's UTC timestamp, to the second as every moment of the mirror (a
    naive one is UTC; a fraction of a second dropped: Parquet and the text order read one form)."""
    text = iso_timestamp(moment.replace(microsecond=0))
    if text is None:  # iso_timestamp answers None only for no value
        raise BadRow(f"{moment!r} is not a timestamp")
    return text


_DAY_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%Y%m%d", "%d.%m.%Y", "%d %b %Y", "%d-%b-%Y", "%b %d, %Y")


def parse_day(value: Any) -> str:
    """A date (or a timestamp, taken in UTC) -> `YYYY-MM-DD`; `BadRow` when unreadable.
    Slash dates with the year last (`03/04/2025`) are refused: day and month are ambiguous."""
    if isinstance(value, datetime):
        return _moment_text(value)[:10]
    if isinstance(value, date):
        return value.isoformat()
    text = str(value).strip() if value is not None else ""
    if not text:
        raise BadRow("empty date")
    for fmt in _DAY_FORMATS:
        try:
            return datetime.strptime(text, fmt).date().isoformat()
        except ValueError:
            continue
    if len(text) > 10 and text[:4].isdigit():
        try:
            return parse_timestamp(text)[:10]
        except BadRow:
            pass
    raise BadRow(f"{text!r} is not a date (YYYY-MM-DD)")


_NAME_DAY = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})(?!\d)")


def day_in_name(path: str | Path) -> str | None:
    """The date a feed's file name carries (`deleted_2025-08-19.txt`, `20250819.csv`)."""
    for match in _NAME_DAY.finditer(Path(path).name):
        try:
            return date(*map(int, match.groups())).isoformat()
        except ValueError:
            continue
    return None


def week_monday(observed_at: str) -> str:
    """The Monday of the week of `observed_at`: the pending-delete `week_end` anchor."""
    day = date.fromisoformat(observed_at[:10])
    return (day - timedelta(days=day.weekday())).isoformat()


# -- what adapters yield ----------------------------------------------------------------

LISTING, PENDING = "listing", "pending"


@dataclass(slots=True)
class Row:
    """One row of a feed file, with where it came from (for the report): its record, or what
    makes it (`make`, called by `made()`: an adapter whose records depend on the row alone reads
    every row but maps only those the mirror does not already hold)."""

    kind: str  # LISTING or PENDING
    file: str
    line: int | None
    record: dict[str, Any] | None  # None until made
    unit: str = "line"  # "record": `line` counts the records of a JSON array
    # The row's fingerprint, which ingest_file compares with the stored one: of what the
    # publisher sent when the record is made on demand (`make`), else of the record.
    digest: int | None = None
    make: Callable[[], dict[str, Any]] | None = None  # the record (BadRow: the row is bad)
    cut: bool = False  # the file's last row, without its line end: bad, it is a truncated file
    size: int = 0  # about what the row holds in memory, in bytes (0: small), for the chunks' budget

    def made(self) -> dict[str, Any]:
        """The record, made once (`BadRow` when the row is bad; `IngestError` when the row is
        bad and the file's cut last row)."""
        if self.record is None:
            try:
                self.record = self.make()  # type: ignore[misc]
            except BadRow as exc:
                if self.cut:
                    raise truncated(self.file, self.line, exc) from None
                raise
        return self.record


UNIT_SEPARATOR = "\x1f"  # between a row's cells when they are digested (a unit separator: never in a feed's text)


def text_digest(text: str, key: bytes = b"") -> int:
    """64 bits of BLAKE2b over `text` (keyed by `key`), as SQLite's signed integer."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8, key=key).digest(), "big", signed=True)


@lru_cache(maxsize=8)
def _code(adapter: str) -> bytes:
    """The code that turns an adapter's rows into records (its module, this one, the platforms'
    table): a row read by another version of it is a new row, however equal its text."""
    from .. import sources

    digest = hashlib.blake2b(digest_size=32)
    for path in (adapter, __file__, sources.__file__):
        try:
            digest.update(Path(path).read_bytes())
        except OSError:  # no source beside the code (a frozen build): the version stands for it
            from .. import __version__

            digest.update(__version__.encode())
    return digest.digest()


def reading_key(adapter: str, *header: str) -> bytes:
    """The key of one file's row digests (`Row.digest`): the adapter (its module's file), the
    file's header (which column holds what) and the code that maps its rows."""
    return hashlib.blake2b(
        UNIT_SEPARATOR.join((Path(adapter).stem, *header)).encode() + _code(adapter), digest_size=32
    ).digest()


def observed(observed_at: Any) -> str:
    """`observed_at` (None: now) as the writer's UTC timestamp."""
    stamp = iso_timestamp(observed_at) if observed_at is not None else utc_seconds(datetime.now(timezone.utc))
    if stamp is None:
        raise ValueError(f"observed_at: {observed_at!r} is not an ISO 8601 timestamp")
    return stamp


def made(rows: Iterable[Row], on_bad_row: OnBadRow) -> Iterator[Row]:
    """`rows` with their records made; one its adapter refuses (`BadRow`) is reported and left out."""
    for row in rows:
        try:
            row.made()
        except BadRow as exc:
            on_bad_row(Skipped(row.file, row.line, str(exc), row.unit))
            continue
        yield row


def pending_record(
    domain: str,
    source: str,
    *,
    observed_at: str,
    status: str,
    drop: str | None,
    reason: str,
    original: Any,
    first_disappeared_at: str | None = None,
    dns_status: str | None = None,
    window: tuple[str | None, str | None] | None = None,
) -> dict[str, Any]:
    """A pending-delete record (docs/reference/fields.md) from a feed row. `source` is the feed
    (`bardate`, `droplist`, `zonediff`: not the live service's `oi-diff`/`czds-daily`, which
    name its own pipelines); the id is `ingest_id(source, domain)`; `drop_date_reason` and
    the original row (`feed_record`) have no column and are kept in `raw_records`.
    `window` is (drop_window_start, drop_window_end); None means `drop` is a day the feed
    gives (a window of one day), or no window when there is no day."""
    return {
        "id": ingest_id(source, domain),
        "domain": domain,
        "source": source,
        "week_end": week_monday(observed_at),
        "first_disappeared_at": first_disappeared_at,
        "whois_status": status,
        "dns_status": dns_status,
        "estimated_drop_date": drop,
        "drop_window_start": window[0] if window else drop,
        "drop_window_end": window[1] if window else drop,
        "is_idn": any(label.startswith("xn--") for label in domain.split(".")),
        "feed_record": original,
        "drop_date_reason": reason,
    }
