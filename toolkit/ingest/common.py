"""What every ingest adapter shares: reading a feed file, its errors, ids, names, dates.

Adapters turn one public feed file into records shaped as the API's listing or pending-delete
records (docs/reference/fields.md). Two kinds of trouble are kept apart:

- `IngestError`: the file as a whole cannot be read as this feed (wrong format, truncated
  archive or JSON, not UTF-8). The message names the file, the line and the fix; nothing
  of the file is written.
- `Skipped`: one row is bad (a name that is not a domain, a date that is not a date) in an
  otherwise valid file. The row is left out and reported as `file:line: reason`.
"""

from __future__ import annotations

import csv
import gzip
import hashlib
import io
import json
import math
import re
import shutil
import tempfile
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from ..store.fields import iso_timestamp

__all__ = [
    "IngestError",
    "Skipped",
    "FeedText",
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
    "read_feed",
    "json_items",
    "fetch",
    "strict",
    "Row",
    "LISTING",
    "PENDING",
    "observed",
    "header_key",
    "csv_table",
    "csv_records",
    "pending_record",
]


class IngestError(Exception):
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

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}" if self.line is not None else f"{self.file}: {self.reason}"


class BadRow(ValueError):
    """Raised by the row parsers; becomes a `Skipped`."""


def strict(problem: Skipped) -> None:
    """The default `on_bad_row` of the parse_* generators used on their own: a bad row
    stops the parse (pass `on_bad_row=list.append` to skip and collect them instead)."""
    raise IngestError(problem.file, problem.line, problem.reason,
                      "fix the row, or pass on_bad_row= to skip bad rows")  # fmt: skip


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


# -- names, money, dates ----------------------------------------------------------------

_LABEL = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\Z")


def clean_domain(text: Any) -> str:
    """A domain name in lower case ASCII (IDNs as `xn--`), or `BadRow` saying why not."""
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


_MONEY = re.compile(r"^(?:US\$|USD|\$)?\s*((?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?)\s*(?:USD)?$", re.IGNORECASE)


def parse_money(value: Any) -> float | None:
    """`"$1,234"` -> 1234.0 (US dollars); None or "" -> None; anything else is a `BadRow`."""
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
_TIME_FORMATS = ("%m/%d/%Y %I:%M:%S %p", "%m/%d/%Y %I:%M %p", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M",
                 "%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M")  # fmt: skip


def parse_timestamp(value: Any, *, zone: Any = None, us_dates: bool = False) -> str:
    """A timestamp -> `YYYY-MM-DDTHH:MM:SSZ` (UTC). An offset or a zone tag (`(PDT)`,
    `UTC`) in the value wins; a naive value is in `zone` (default UTC). `us_dates` also
    reads `MM/DD/YYYY hh:mm AM` (a US source's own format). `BadRow` when unreadable."""
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
    return iso_timestamp(parsed)


def whole_number(value: Any, field: str, low: int = 0, high: int | None = None) -> int | None:
    """A whole number in [low, high] from a feed cell (None for an empty one); `BadRow` otherwise."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(str(value).replace(",", "").strip()) if not isinstance(value, (int, float)) else value
    except ValueError:
        raise BadRow(f"{field} {value!r} is not a number") from None
    out_of_range = number < low or (high is not None and number > high)
    if isinstance(value, bool) or not math.isfinite(number) or number != int(number) or out_of_range:
        bounds = f"{low}-{high}" if high is not None else f">= {low}"
        raise BadRow(f"{field} {value!r} is not a whole number {bounds}")
    return int(number)


_DAY_FORMATS = ("%Y-%m-%d", "%Y/%m/%d", "%Y%m%d", "%d.%m.%Y", "%d %b %Y", "%d-%b-%Y", "%b %d, %Y")


def parse_day(value: Any) -> str:
    """A date (or a timestamp, taken in UTC) -> `YYYY-MM-DD`; `BadRow` when unreadable.
    Slash dates with the year last (`03/04/2025`) are refused: day and month are ambiguous."""
    if isinstance(value, datetime):
        return iso_timestamp(value)[:10]
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


# -- reading files ----------------------------------------------------------------------


@dataclass
class FeedText:
    """A feed file's text (unzipped, decoded) and the name errors cite it by."""

    name: str
    text: str

    def lines(self) -> Iterator[tuple[int, str, bool]]:
        """(line number, line without its end, whether the line was terminated)."""
        number = 0
        for number, raw in enumerate(io.StringIO(self.text, newline=None), start=1):
            yield number, raw.rstrip("\r\n"), raw.endswith(("\n", "\r"))


_DATA_SUFFIXES = (".json", ".csv", ".txt", ".tsv", ".zone", ".lst", ".list")


def _unzip(path: Path, data: bytes) -> tuple[str, bytes]:
    fix = "download the archive again (it is truncated or damaged)"
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile as exc:
        raise IngestError(str(path), None, f"not a readable zip archive ({exc})", fix) from None
    members = [i for i in archive.infolist() if not i.is_dir()]
    data_members = [i for i in members if i.filename.lower().endswith(_DATA_SUFFIXES)] or members
    if len(data_members) != 1:
        names = ", ".join(i.filename for i in data_members) or "none"
        raise IngestError(str(path), None, f"the archive holds {len(data_members)} data files ({names})",
                          "pass an archive of one .json/.csv/.txt file, or unzip it and pass the file")  # fmt: skip
    member = data_members[0]
    try:
        return f"{path}!{member.filename}", archive.read(member)
    except (zipfile.BadZipFile, EOFError, zlib.error, OSError) as exc:
        problem = f"the archive member cannot be read ({exc})"
        raise IngestError(f"{path}!{member.filename}", None, problem, fix) from None


def _gzip_break_line(data: bytes) -> int | None:
    """The line a damaged gzip stream breaks in: one past the last line that decompresses."""
    inflater = zlib.decompressobj(zlib.MAX_WBITS | 16)
    recovered = b""
    try:
        for start in range(0, len(data), 1 << 16):
            recovered += inflater.decompress(data[start : start + (1 << 16)])
    except zlib.error:
        pass
    return recovered.count(b"\n") + 1 if data[:2] == b"\x1f\x8b" else None


def read_feed(path: str | Path) -> FeedText:
    """A feed file's text: zip (one data member) and gzip are opened, UTF-8 (with or
    without BOM) decoded; an empty, truncated or undecodable file is an `IngestError`."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise IngestError(str(path), None, f"cannot read the file ({exc.strerror or exc})",
                          "check the path and its permissions") from None  # fmt: skip
    name = str(path)
    if data[:2] == b"PK" or path.suffix.lower() == ".zip":
        name, data = _unzip(path, data)
    elif data[:2] == b"\x1f\x8b" or path.suffix.lower() == ".gz":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as exc:
            raise IngestError(name, _gzip_break_line(data), f"not a complete gzip file ({exc})",
                              "download the file again") from None  # fmt: skip
    if not data.strip():
        raise IngestError(name, 1, "the file is empty", "download it again (an empty feed file is a failed download)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise IngestError(name, line, f"not UTF-8 text (byte {data[exc.start]:#04x})",
                          "convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)") from None  # fmt: skip
    return FeedText(name, text)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


_decoder = json.JSONDecoder()
_WS = re.compile(r"[ \t\n\r]*")


def _json_fail(feed: FeedText, exc: json.JSONDecodeError) -> IngestError:
    # A complete JSON document ends with its closing bracket: one that does not was cut off.
    if not feed.text.rstrip().endswith(("}", "]")):
        return IngestError(feed.name, exc.lineno, f"the JSON stops before its end ({exc.msg})",
                           "the file is truncated: download it again")  # fmt: skip
    return IngestError(feed.name, exc.lineno, f"malformed JSON ({exc.msg}, column {exc.colno})",
                       "check that the file is this feed's JSON export, unedited")  # fmt: skip


def json_items(feed: FeedText, key: str = "data") -> tuple[dict[str, Any], list[tuple[int, Any]]]:
    """Read `{"<key>": [...], ...}` (or a bare `[...]`) keeping each item's line number:
    (the other top-level members, [(line, item), ...]). Malformed or truncated JSON is an
    `IngestError` naming the line where it breaks."""
    text, pos = feed.text, _WS.match(feed.text, 0).end()
    others: dict[str, Any] = {}
    items: list[tuple[int, Any]] = []
    try:
        if text.startswith("[", pos):
            items, pos = _array_items(text, pos)
            pos = _WS.match(text, pos).end()
        elif text.startswith("{", pos):
            found = False
            pos = _WS.match(text, pos + 1).end()
            while not text.startswith("}", pos):
                name, pos = _decoder.raw_decode(text, pos)
                pos = _WS.match(text, pos).end()
                if not text.startswith(":", pos):
                    raise json.JSONDecodeError("Expecting ':' delimiter", text, pos)
                pos = _WS.match(text, pos + 1).end()
                if name == key and text.startswith("[", pos):
                    items, pos = _array_items(text, pos)
                    found = True
                else:
                    others[name], pos = _decoder.raw_decode(text, pos)
                pos = _WS.match(text, pos).end()
                if text.startswith(",", pos):
                    pos = _WS.match(text, pos + 1).end()
                elif not text.startswith("}", pos):
                    raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)
            pos = _WS.match(text, pos + 1).end()
            if not found:
                members = ", ".join(others) or "none"
                raise IngestError(feed.name, 1, f'no "{key}" array at the top level (members: {members})',
                                  f'check that this is the feed\'s JSON export ({{"{key}": [...]}})')  # fmt: skip
        else:
            raise IngestError(feed.name, _line_of(text, pos), "not JSON (it does not start with { or [)",
                              "pass the feed's JSON file, or its CSV/TXT export")  # fmt: skip
        if pos < len(text):
            raise json.JSONDecodeError("Extra data", text, pos)
    except json.JSONDecodeError as exc:
        raise _json_fail(feed, exc) from None
    return others, items


def _array_items(text: str, pos: int) -> tuple[list[tuple[int, Any]], int]:
    """The items of the array at text[pos] == '[' with their line numbers, and the
    position after its closing bracket."""
    items: list[tuple[int, Any]] = []
    pos = _WS.match(text, pos + 1).end()
    if text.startswith("]", pos):
        return items, pos + 1
    line, last = 1, 0
    while True:
        line += text.count("\n", last, pos)
        last = pos
        value, pos = _decoder.raw_decode(text, pos)
        items.append((line, value))
        pos = _WS.match(text, pos).end()
        if text.startswith(",", pos):
            pos = _WS.match(text, pos + 1).end()
        elif text.startswith("]", pos):
            return items, pos + 1
        else:
            raise json.JSONDecodeError("Expecting ',' delimiter", text, pos)


# -- fetching ---------------------------------------------------------------------------


def fetch(url: str, dest: str | Path | None = None, *, timeout: float = 120.0,
          opener: Callable[..., Any] = urllib.request.urlopen) -> Path:  # fmt: skip
    """Download `url` to `dest` (a folder, or a file path; default a temporary folder)
    and return the file's path. The file appears only once complete (written beside it,
    then renamed), so a failed download never leaves a half file to ingest."""
    name = Path(urllib.request.url2pathname(url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1])).name or "feed"
    dest = Path(dest) if dest is not None else Path(tempfile.mkdtemp(prefix="edt-ingest-"))
    target = dest / name if dest.is_dir() else dest
    partial = target.with_name(target.name + ".partial")
    request = urllib.request.Request(url, headers={"User-Agent": "expired-domains-toolkit (edt ingest)"})
    with opener(request, timeout=timeout) as response, open(partial, "wb") as out:
        shutil.copyfileobj(response, out)
    partial.replace(target)
    return target


# -- what adapters yield ----------------------------------------------------------------

LISTING, PENDING = "listing", "pending"


@dataclass(frozen=True)
class Row:
    """One record an adapter made, with where it came from (for the report)."""

    kind: str  # LISTING or PENDING
    file: str
    line: int | None
    record: dict[str, Any]


def utc_now_iso() -> str:
    return iso_timestamp(datetime.now(timezone.utc).replace(microsecond=0))


def observed(observed_at: Any) -> str:
    """`observed_at` (None: now) as the writer's UTC timestamp."""
    stamp = iso_timestamp(observed_at) if observed_at is not None else utc_now_iso()
    if stamp is None:
        raise ValueError(f"observed_at: {observed_at!r} is not an ISO 8601 timestamp")
    return stamp


def header_key(name: str) -> str:
    """A header cell compared loosely: `Domain Name`, `domainName`, `domain_name` -> `domainname`."""
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _text_lines(text: str) -> Iterator[str]:
    """`text`'s lines with their ends, one at a time (an io.StringIO would hold a second,
    four-bytes-a-character copy of a file of hundreds of megabytes)."""
    start, size = 0, len(text)
    while start < size:
        end = text.find("\n", start)
        if end < 0:
            yield text[start:]
            return
        yield text[start : end + 1]
        start = end + 1


def csv_table(feed: FeedText, *, delimiters: str = ",;\t|") -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """A delimited file's header and its data rows as (line, cells), read as they are used.
    The delimiter is the one of `delimiters` the header line uses most. A last row cut short
    (no line end and fewer cells than the header) means the file is truncated: an
    `IngestError` when the rows reach it (a load in one transaction then writes nothing)."""
    first = feed.text.lstrip("\r\n").split("\n", 1)[0]
    delimiter = max(delimiters, key=first.count)
    reader = csv.reader(_text_lines(feed.text), delimiter=delimiter, skipinitialspace=True)

    def unreadable(exc: csv.Error) -> IngestError:
        return IngestError(feed.name, reader.line_num, f"unreadable CSV ({exc})", "check the file's quoting")

    header: list[str] | None = None
    try:
        for cells in reader:
            if cells and any(c.strip() for c in cells):
                header = [c.strip() for c in cells]
                break
    except csv.Error as exc:
        raise unreadable(exc) from None
    if header is None:
        raise IngestError(feed.name, 1, "no header line", "pass the feed's CSV export with its header")
    width = len(header)
    complete = feed.text.endswith(("\n", "\r"))

    def rows() -> Iterator[tuple[int, list[str]]]:
        held: tuple[int, list[str]] | None = None  # one row behind: the last is checked before it is given
        try:
            for cells in reader:
                if not cells or all(not c.strip() for c in cells):
                    continue
                if held is not None:
                    yield held
                held = (reader.line_num, cells)
        except csv.Error as exc:
            raise unreadable(exc) from None
        if held is not None:
            if not complete and len(held[1]) < width:
                raise IngestError(feed.name, held[0], f"the last row stops after {len(held[1])} of {width} columns",
                                  "the file is truncated: download it again")  # fmt: skip
            yield held

    return header, rows()


def csv_records(feed: FeedText, header: list[str], rows: Iterator[tuple[int, list[str]]], fields: list[str | None],
                kind: str, make: Callable[[dict[str, str], dict[str, str]], dict[str, Any]],
                on_bad_row: Callable[[Skipped], None]) -> Iterator[Row]:  # fmt: skip
    """The records of a CSV whose header cells name `fields` (None: a column without one):
    `make(mapped, original)` per row, `mapped` by field and `original` by header. A row of
    another width, or one `make` refuses (`BadRow`), is skipped."""
    for line, cells in rows:
        try:
            if len(cells) != len(header):
                raise BadRow(f"{len(cells)} fields, the header has {len(header)}")
            mapped = {f: v for f, v in zip(fields, cells) if f is not None}
            yield Row(kind, feed.name, line, make(mapped, dict(zip(header, cells))))
        except BadRow as exc:
            on_bad_row(Skipped(feed.name, line, str(exc)))


def pending_record(domain: str, source: str, *, observed_at: str, status: str, drop: str | None, reason: str,
                   original: Any, first_disappeared_at: str | None = None, dns_status: str | None = None,
                   window: tuple[str | None, str | None] | None = None) -> dict[str, Any]:  # fmt: skip
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
