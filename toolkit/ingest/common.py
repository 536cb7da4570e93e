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
import itertools
import math
import re
import tempfile
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache, partial
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from ..store.fields import iso_timestamp

__all__ = [
    "IngestError",
    "Skipped",
    "FeedFile",
    "Bounds",
    "DEFAULT_BOUNDS",
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
    "made",
    "reading_key",
    "text_digest",
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
    unit: str = "line"  # "record": `line` counts the records of a JSON array

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.file}: {self.reason}"
        return (
            f"{self.file}:{self.line}: {self.reason}"
            if self.unit == "line"
            else f"{self.file}: {self.unit} {self.line:,}: {self.reason}"
        )


class BadRow(ValueError):
    """Raised by the row parsers; becomes a `Skipped`."""


def strict(problem: Skipped) -> None:
    """The default `on_bad_row` of the parse_* generators used on their own: a bad row
    stops the parse (pass `on_bad_row=list.append` to skip and collect them instead)."""
    raise IngestError(problem.file, problem.line, problem.reason, "fix the row, or pass on_bad_row= to skip bad rows")


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
    return iso_timestamp(parsed)


def whole_number(value: Any, field: str, low: int = 0, high: int | None = None) -> int | None:
    """A whole number in [low, high] from a feed cell (None for an empty one); `BadRow` otherwise."""
    if type(value) is str and 0 < len(value) < 16 and value.isdigit() and value.isascii():
        number = int(value)
        if low <= number and (high is None or number <= high):
            return number
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

MB = 1 << 20


@dataclass(frozen=True)
class Bounds:
    """What a feed file may be before it is refused whole (`IngestError`, nothing written):
    how big it may expand to (unzipped), how long one line, CSV field or JSON record may be,
    how many entries a zip may hold. The defaults are several times the biggest real files
    (GoDaddy's all-listings JSON: 450 MB unzipped, records under 2 KB). `setting` says where
    a user raises them, `{key}` (max_size_mb, max_field_kb) or `{option}` (max-size-mb) in it."""

    size: int = 2048 * MB
    field: int = 1 * MB
    members: int = 16
    setting: str = "ingest_file(bounds=Bounds.of({key}=...))"

    @classmethod
    def of(
        cls, max_size_mb: float | None = None, max_field_kb: float | None = None, *, setting: str | None = None
    ) -> "Bounds":
        """Bounds from a config's or a command's figures (None: the default)."""
        default = cls()
        return cls(
            size=int(max_size_mb * MB) if max_size_mb is not None else default.size,
            field=int(max_field_kb * 1024) if max_field_kb is not None else default.field,
            setting=setting or default.setting,
        )

    def _where(self, key: str) -> str:
        return self.setting.format(key=key, option=key.replace("_", "-"))

    def too_big(self, name: str, line: int | None) -> "IngestError":
        return IngestError(
            name,
            line,
            f"the file expands past {self.size / MB:,.0f} MB, the most a feed file may be",
            f"if the publisher's file really is that big, raise {self._where('max_size_mb')}",
        )

    def too_long(self, name: str, line: int | None, what: str = "a line") -> "IngestError":
        return IngestError(
            name,
            line,
            f"{what} longer than {self.field / 1024:,.0f} KB, the most one line, field or record of a feed file may be",
            f"if the publisher's file really has one, raise {self._where('max_field_kb')}",
        )


DEFAULT_BOUNDS = Bounds()
_DATA_SUFFIXES = (".json", ".csv", ".txt", ".tsv", ".zone", ".lst", ".list")
_ZIP, _GZIP = b"PK\x03\x04", b"\x1f\x8b"
_CHUNK = 1 << 16


class _Counted(io.RawIOBase):
    """A decompressed stream that refuses to give more than `limit` bytes, and (when
    `span` is set) more than `span` bytes since the reader's last `mark()` (one record); a
    damaged or truncated archive under it is `broken(line)`."""

    def __init__(
        self,
        inner: Any,
        limit: int,
        too_big: Callable[[int | None], Exception],
        span: int | None,
        too_long: Callable[[int], Exception],
        broken: Callable[[int, Exception], Exception],
    ):
        self._inner, self._limit, self._too_big = inner, limit, too_big
        self._span, self._too_long, self._broken = span, too_long, broken
        self.count = self.newlines = self._mark = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            n = self._inner.readinto(buffer)
        except (EOFError, zlib.error, zipfile.BadZipFile, OSError) as exc:
            raise self._broken(self.newlines + 1, exc) from None
        if n:
            self.count += n
            self.newlines += memoryview(buffer)[:n].tobytes().count(b"\n")
            if self.count > self._limit:
                raise self._too_big(self.newlines + 1 if self._span is not None else None)
            if self._span is not None and self.count - self._mark > self._span + _CHUNK:
                raise self._too_long(self.newlines + 1)
        return n

    def mark(self) -> None:
        self._mark = self.count

    def close(self) -> None:
        self._inner.close()
        super().close()


@dataclass
class FeedFile:
    """A feed file opened as a stream: zip (one data member) and gzip read as they unzip,
    UTF-8 decoded line by line, never more than `bounds` allow. `name` is what errors cite
    (`path!member` inside a zip); `head` the first 64 KB of its text, to tell its kind."""

    name: str
    path: Path
    member: str | None
    gzipped: bool
    bounds: Bounds
    head: str = ""
    suffix: str = ""  # the data's own extension (.json, .csv, ...), the member's inside a zip

    def raw(self, *, span: int | None = None) -> _Counted:
        """The decompressed bytes, bounded (`span`: the most bytes one record may take)."""
        if self.member is not None:
            inner: Any = zipfile.ZipFile(self.path).open(self.member)
        elif self.gzipped:
            inner = gzip.open(self.path, "rb")
        else:
            inner = open(self.path, "rb")
        bounds = self.bounds
        return _Counted(
            inner,
            bounds.size,
            lambda line: bounds.too_big(self.name, line),
            span,
            lambda line: bounds.too_long(self.name, line, "a record or value"),
            self._broken,
        )

    def _broken(self, line: int, exc: Exception) -> "IngestError":
        if self.gzipped:
            return IngestError(str(self.path), line, f"not a complete gzip file ({exc})", "download the file again")
        if self.member is not None:
            return IngestError(
                self.name,
                None,
                f"the archive member cannot be read ({exc})",
                "download the archive again (it is truncated or damaged)",
            )
        return IngestError(self.name, None, f"cannot read the file ({exc})", "check the path and its permissions")

    def lines(self, *, ends: bool = False) -> Iterator[tuple[int, str, bool]]:
        """(line number, line (without its end unless `ends`), whether the line was terminated),
        one at a time: a line longer than the bounds, or one that is not UTF-8, is an `IngestError`."""
        for number, lines, complete in self.blocks():
            last = len(lines) - 1
            for offset, line in enumerate(lines):
                terminated = complete or offset < last
                if ends:
                    yield number + offset, line + "\n" if terminated else line, terminated
                else:
                    yield number + offset, line[:-1] if line.endswith("\r") else line, terminated

    def blocks(self, size: int = 1 << 20) -> Iterator[tuple[int, list[str], bool]]:
        """The text as blocks of whole lines, about `size` bytes each: (the first line's number,
        its lines without their line feeds (a CR before one is kept), whether the block's last
        line was terminated: false only for a file's last line without its end)."""
        limit = self.bounds.field
        number, carry = 1, b""
        with self.raw() as stream:
            while True:
                chunk = stream.read(size)
                data = carry + chunk if carry else chunk
                if not chunk:
                    if data:
                        yield number, [self._decode(data, number)], False
                    return
                cut = data.rfind(b"\n")
                if cut < 0:
                    if len(data) > limit:
                        raise self.bounds.too_long(self.name, number, f"line {number:,} is")
                    carry = data
                    continue
                body, carry = data[:cut], data[cut + 1 :]
                lines = self._decode(body, number).split("\n")
                if len(body) > limit and max(map(len, lines)) * 4 > limit:  # a character is 4 bytes at most
                    for offset, line in enumerate(lines):
                        if len(line.encode()) > limit:
                            raise self.bounds.too_long(self.name, number + offset, f"line {number + offset:,} is")
                if len(carry) > limit:
                    at = number + len(lines)
                    raise self.bounds.too_long(self.name, at, f"line {at:,} is")
                yield number, lines, True
                number += len(lines)

    def _decode(self, data: bytes, number: int) -> str:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = number + data.count(b"\n", 0, exc.start)
            raise IngestError(
                self.name,
                line,
                f"not UTF-8 text (byte {data[exc.start]:#04x})",
                "convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8)",
            ) from None
        return text[1:] if number == 1 and text.startswith("\ufeff") else text

    def first_line(self) -> str:
        """The first line that is not blank (from `head`)."""
        return self.head.lstrip("\r\n").split("\n", 1)[0].rstrip("\r")

    def starts_json(self) -> bool:
        return self.head.lstrip()[:1] in ("{", "[")


def _zip_member(path: Path, bounds: Bounds) -> tuple[str, int]:
    """The one data member of a zip archive and its declared size, after the checks a third
    party's archive must pass (readable, few members, no path outside the archive)."""
    fix = "download the archive again (it is truncated or damaged)"
    try:
        with zipfile.ZipFile(path) as archive:
            members = [i for i in archive.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise IngestError(str(path), None, f"not a readable zip archive ({exc})", fix) from None
    if len(members) > bounds.members:
        raise IngestError(
            str(path),
            None,
            f"the archive holds {len(members):,} files, more than the {bounds.members} a feed archive may",
            "pass the feed's own archive (one data file)",
        )
    for info in members:
        parts = info.filename.replace("\\", "/").split("/")
        if ".." in parts or info.filename.startswith(("/", "\\")) or ":" in parts[0]:
            raise IngestError(
                str(path),
                None,
                f"the archive names a file outside itself ({info.filename!r})",
                "this is not a feed's archive: do not unzip it",
            )
    data_members = [i for i in members if i.filename.lower().endswith(_DATA_SUFFIXES)] or members
    if len(data_members) != 1:
        names = ", ".join(i.filename for i in data_members) or "none"
        raise IngestError(
            str(path),
            None,
            f"the archive holds {len(data_members)} data files ({names})",
            "pass an archive of one .json/.csv/.txt file, or unzip it and pass the file",
        )
    member = data_members[0]
    if member.file_size > bounds.size:
        raise bounds.too_big(f"{path}!{member.filename}", None)
    return member.filename, member.file_size


def _container(path: Path) -> str:
    """What the file's bytes are: zip, gzip or plain (by its first bytes, not its name)."""
    with open(path, "rb") as fh:
        magic = fh.read(4)
    return "zip" if magic == _ZIP else "gzip" if magic[:2] == _GZIP else "plain"


def read_feed(path: str | Path, bounds: Bounds = DEFAULT_BOUNDS) -> FeedFile:
    """A feed file, checked and opened for streaming (`FeedFile`): zip (one data member) and
    gzip are unzipped as read, UTF-8 (with or without BOM) decoded. A file that is not what
    its name says, empty, truncated, too big for `bounds` or not text is an `IngestError`."""
    path = Path(path)
    try:
        size = path.stat().st_size
        container = _container(path)
    except OSError as exc:
        raise IngestError(
            str(path), None, f"cannot read the file ({exc.strerror or exc})", "check the path and its permissions"
        ) from None
    named = path.suffix.lower()
    said = {".zip": "zip", ".gz": "gzip"}.get(named, "plain")
    if said != container and not (said == "plain" and container == "zip" and named in ("", ".txt")):
        what = {"zip": "a zip archive", "gzip": "gzip data", "plain": "plain text"}
        raise IngestError(
            str(path),
            None,
            f"the file is named {named or 'without an extension'} but holds {what[container]}",
            "check the address: the publisher served another kind of file",
        )
    member = None
    name = str(path)
    if container == "zip":
        member, _ = _zip_member(path, bounds)
        name = f"{path}!{member}"
    elif container == "plain" and size > bounds.size:
        raise bounds.too_big(name, None)
    feed = FeedFile(name, path, member, container == "gzip", bounds)
    feed.suffix = Path(member or (path.name[: -len(named)] if said != "plain" else path.name)).suffix.lower()
    if feed.gzipped:  # gzip declares no size: unzip it once, keeping nothing, before a row is read
        buffer = bytearray(1 << 20)
        with feed.raw() as stream:
            while stream.readinto(buffer):
                pass
    with feed.raw() as stream:
        start = stream.read(_CHUNK)
    if b"\x00" in start:
        raise IngestError(
            name,
            None,
            "not a text file (it holds NUL bytes)",
            "check the address: the publisher served another kind of file",
        )
    if not start.strip(b" \t\r\n\xef\xbb\xbf"):
        raise IngestError(name, 1, "the file is empty", "download it again (an empty feed file is a failed download)")
    feed.head = start.decode("utf-8", errors="ignore").removeprefix("\ufeff")
    if feed.suffix == ".json" and not feed.starts_json():
        raise IngestError(
            name,
            1,
            "the file is named .json but is not JSON (it does not start with { or [)",
            "check the address: the publisher served another kind of file",
        )
    return feed


_JSON_CUT = ("premature eof", "incomplete")


def json_items(feed: FeedFile, key: str = "data") -> tuple[dict[str, Any], Iterator[tuple[int, Any]]]:
    """Read `{"<key>": [...], ...}` (or a bare `[...]`) as a stream: (the top-level members
    before the array, an iterator of (record number, item)). Malformed or truncated JSON is
    an `IngestError` naming the line where it breaks (when the items reach it); a record
    longer than the bounds is refused before it is held."""
    import ijson

    others: dict[str, Any] = {}
    prefix = None
    with feed.raw(span=feed.bounds.field) as stream:
        try:
            events = ijson.parse(stream, use_float=True)
            for path, event, value in events:
                if path == "" and event == "start_array":
                    prefix = "item"
                    break
                if path == "" and event == "map_key":
                    name = value
                    first = next(events)
                    if name == key and first[1] == "start_array":
                        prefix = f"{key}.item"
                        break
                    builder = ijson.ObjectBuilder()
                    for sub, event, value in itertools.chain([first], events):
                        builder.event(event, value)
                        if _closes(sub, name, event):
                            break
                    others[name] = builder.value
                    stream.mark()
                elif path == "" and event not in ("start_map", "end_map"):
                    raise IngestError(
                        feed.name,
                        1,
                        "not JSON (it does not start with { or [)",
                        "pass the feed's JSON file, or its CSV/TXT export",
                    )
        except ijson.JSONError as exc:
            raise _json_fail(feed, stream, exc) from None
    if prefix is None:
        members = ", ".join(others) or "none"
        raise IngestError(
            feed.name,
            1,
            f'no "{key}" array at the top level (members: {members})',
            f'check that this is the feed\'s JSON export ({{"{key}": [...]}})',
        )
    return others, _stream_items(feed, prefix)


def _closes(path: str, name: str, event: str) -> bool:
    """Whether `event` at `path` ends the value of top-level member `name`."""
    return path == name and event in ("end_map", "end_array", "string", "number", "boolean", "null")


def _stream_items(feed: FeedFile, prefix: str) -> Iterator[tuple[int, Any]]:
    import ijson

    with feed.raw(span=feed.bounds.field) as stream:
        number = 0
        try:
            for number, item in enumerate(ijson.items(stream, prefix, use_float=True), start=1):
                stream.mark()
                yield number, item
        except ijson.JSONError as exc:
            raise _json_fail(feed, stream, exc) from None


def _json_fail(feed: FeedFile, stream: _Counted, exc: Exception) -> IngestError:
    line = stream.newlines + 1
    if any(word in str(exc).lower() for word in _JSON_CUT):
        return IngestError(
            feed.name, line, f"the JSON stops before its end ({exc})", "the file is truncated: download it again"
        )
    return IngestError(
        feed.name, line, f"malformed JSON ({exc})", "check that the file is this feed's JSON export, unedited"
    )


# -- fetching ---------------------------------------------------------------------------


def fetch(
    url: str,
    dest: str | Path | None = None,
    *,
    timeout: float = 120.0,
    opener: Callable[..., Any] = urllib.request.urlopen,
    bounds: Bounds = DEFAULT_BOUNDS,
) -> Path:
    """Download `url` to `dest` (a folder, or a file path; default a temporary folder)
    and return the file's path. The file appears only once complete (written beside it,
    then renamed), so a failed download never leaves a half file to ingest; one past
    `bounds.size` is refused as it arrives (`IngestError`)."""
    name = Path(urllib.request.url2pathname(url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1])).name or "feed"
    dest = Path(dest) if dest is not None else Path(tempfile.mkdtemp(prefix="edt-ingest-"))
    target = dest / name if dest.is_dir() else dest
    partial = target.with_name(target.name + ".partial")
    request = urllib.request.Request(url, headers={"User-Agent": "expired-domains-toolkit (edt ingest)"})
    try:
        with opener(request, timeout=timeout) as response, open(partial, "wb") as out:
            written = 0
            while chunk := response.read(_CHUNK):
                written += len(chunk)
                if written > bounds.size:
                    raise bounds.too_big(url, None)
                out.write(chunk)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    partial.replace(target)
    return target


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

    def made(self) -> dict[str, Any]:
        """The record, made once (`BadRow` when the row is bad)."""
        if self.record is None:
            self.record = self.make()  # type: ignore[misc]
        return self.record


_UNIT = "\x1f"  # between a row's cells when they are digested (a unit separator: never in a feed's text)


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
    return hashlib.blake2b(_UNIT.join((Path(adapter).stem, *header)).encode() + _code(adapter), digest_size=32).digest()


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


def csv_table(feed: FeedFile, *, delimiters: str = ",;\t|") -> tuple[list[str], Iterator[tuple[int, list[str]]]]:
    """A delimited file's header and its data rows as (line, cells), read as they are used.
    The delimiter is the one of `delimiters` the header line uses most. A last row cut short
    (no line end and fewer cells than the header) means the file is truncated: an
    `IngestError` when the rows reach it (a load in one transaction then writes nothing).
    A field longer than the feed's bounds is refused (the csv module's field limit is set to them)."""
    first = feed.first_line()
    delimiter = max(delimiters, key=first.count)
    state = {"terminated": True}

    def text() -> Iterator[str]:
        for _, lines, complete in feed.blocks():
            yield from map(_with_end, itertools.islice(lines, len(lines) - 1))  # each with its line end, at C speed
            state["terminated"] = complete
            yield lines[-1] + "\n" if complete else lines[-1]

    csv.field_size_limit(feed.bounds.field)
    reader = csv.reader(text(), delimiter=delimiter, skipinitialspace=True)

    def unreadable(exc: csv.Error) -> IngestError:
        if "field larger than field limit" in str(exc):
            return feed.bounds.too_long(feed.name, reader.line_num, "a field")
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

    def rows() -> Iterator[tuple[int, list[str]]]:
        held: tuple[int, list[str]] | None = None  # one row behind: the last is checked before it is given
        try:
            for cells in reader:
                if not cells or not (cells[0].strip() or any(map(str.strip, cells))):  # a blank row
                    continue
                if held is not None:
                    yield held
                held = (reader.line_num, cells)
        except csv.Error as exc:
            raise unreadable(exc) from None
        if held is not None:
            if not state["terminated"] and len(held[1]) < width:
                raise IngestError(
                    feed.name,
                    held[0],
                    f"the last row stops after {len(held[1])} of {width} columns",
                    "the file is truncated: download it again",
                )
            yield held

    return header, rows()


def _with_end(line: str) -> str:
    return line + "\n"


def csv_records(
    feed: FeedFile,
    header: list[str],
    rows: Iterator[tuple[int, list[str]]],
    fields: list[str | None],
    kind: str,
    make: Callable[[dict[str, str], dict[str, str]], dict[str, Any]],
    on_bad_row: Callable[[Skipped], None],
    *,
    key: bytes,
) -> Iterator[Row]:
    """The rows of a CSV whose header cells name `fields` (None: a column without one), each
    with the digest of its cells (`key`: `reading_key`) and its record made when asked
    (`Row.made`): `make(mapped, original)`, `mapped` by field and `original` by header. A row
    of another width is skipped here; one `make` refuses (`BadRow`) where it is made."""
    width, name = len(header), feed.name
    picked = [(i, f) for i, f in enumerate(fields) if f is not None]

    def record(cells: list[str]) -> dict[str, Any]:
        return make({f: cells[i] for i, f in picked}, dict(zip(header, cells)))

    for line, cells in rows:
        if len(cells) != width:
            on_bad_row(Skipped(name, line, f"{len(cells)} fields, the header has {width}"))
            continue
        yield Row(kind, name, line, None, digest=text_digest(_UNIT.join(cells), key), make=partial(record, cells))


def made(rows: Iterable[Row], on_bad_row: Callable[[Skipped], None]) -> Iterator[Row]:
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
