"""A feed file read as a stream, never more than its `Bounds` allow: zip (one data member) and
gzip read as they unzip, UTF-8 decoded line by line (`read_feed`, `FeedFile`); its JSON array
item by item (`json_items`), its CSV row by row (`feed_csv`); and `fetch`, the download that
appears only once whole. A file that cannot be read as a whole is an
`IngestError` naming the file, the line and the fix.
"""

from __future__ import annotations

import gzip
import io
import itertools
import json
import tempfile
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .common import IngestError, OnBadRow, Row, observed, strict

__all__ = [
    "Bounds",
    "DEFAULT_BOUNDS",
    "FeedFile",
    "read_feed",
    "json_items",
    "look_ahead",
    "fetch",
    "file_rows",
]

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
        """Bounds from a config's or a command's figures (None: the default; each checked by
        `limit_problem` where it was given)."""
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
            f"the file expands past {_size(self.size, 'MB')}, the most a feed file may be",
            f"if the publisher's file really is that big, raise {self._where('max_size_mb')}",
        )

    def too_long(self, name: str, line: int | None, what: str = "a line") -> "IngestError":
        return IngestError(
            name,
            line,
            f"{what} longer than {_size(self.field, 'KB')}, the most one line, field or record of a feed file may be",
            f"if the publisher's file really has one, raise {self._where('max_field_kb')}",
        )


def _size(count: int, unit: str) -> str:
    """A bound in the unit its setting is in (`unit`: MB or KB), smaller ones below it:
    `2,048 MB`, `1,024 KB`, `1.5 KB`, `104 bytes`."""
    units = (("MB", MB), ("KB", 1024)) if unit == "MB" else (("KB", 1024),)
    for name, size in units:
        if count >= size:
            exact = count % size == 0 or count >= 10 * size
            return f"{count / size:,.0f} {name}" if exact else f"{count / size:,.1f} {name}"
    return f"{count:,} bytes"


DEFAULT_BOUNDS = Bounds()
_DATA_SUFFIXES = (".json", ".csv", ".txt", ".tsv", ".zone", ".lst", ".list")
_ZIP, _GZIP, _BOM = b"PK\x03\x04", b"\x1f\x8b", b"\xef\xbb\xbf"
_CHUNK = 1 << 16


class _JsonDepth:
    """How deep a JSON text's arrays and objects nest, followed a read at a time with NumPy
    (strings and their escapes skipped), so that a record nested thousands deep is refused
    before a parser builds it (ijson names every event by its whole path: memory grows with
    the square of the depth)."""

    def __init__(self, limit: int):
        self.limit, self.depth, self.in_string, self.backslashes = limit, 0, False, 0

    def exceeded(self, data: bytes) -> bool:
        """Whether the text read so far, `data` the latest of it, nests past the limit."""
        import numpy as np

        if not data:
            return False
        raw = np.frombuffer(data, dtype=np.uint8)
        quotes = np.flatnonzero(raw == 34)
        if self.backslashes or b"\\" in data:
            quotes = quotes[self._unescaped(raw, quotes)]
        folded = raw | 0x20  # [ and { as {, ] and } as }
        brackets = np.flatnonzero((folded == 0x7B) | (folded == 0x7D))
        # A bracket is outside every string when an even number of quotes (after the state
        # this read began in) precede it.
        outside = (np.searchsorted(quotes, brackets) + self.in_string) % 2 == 0
        steps = np.where(folded[brackets[outside]] == 0x7B, 1, -1)
        self.in_string = bool((len(quotes) + self.in_string) % 2)
        if not len(steps):
            return False
        depths = np.cumsum(steps) + self.depth
        self.depth = int(depths[-1])
        return int(depths.max()) > self.limit

    def _unescaped(self, raw: Any, quotes: Any) -> Any:
        """Which of the `quotes` (positions in `raw`) end or begin a string: those after an
        even run of backslashes (a run may begin in the previous read); keeps this read's
        trailing run."""
        import numpy as np

        slash = raw == 92
        where = np.arange(len(raw))
        last_other = np.maximum.accumulate(np.where(slash, -1, where))  # the last byte not a backslash, up to i
        trailing = len(raw) - 1 - int(last_other[-1])
        carried = self.backslashes
        self.backslashes = trailing + (carried if trailing == len(raw) else 0)
        if not len(quotes):
            return np.zeros(0, dtype=bool)
        before = np.where(quotes > 0, last_other[np.maximum(quotes - 1, 0)], -1)
        run = quotes - 1 - before + np.where(before < 0, carried, 0)
        return run % 2 == 0


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
        too_deep: Callable[[int, int], Exception],
    ):
        self._inner, self._limit, self._too_big = inner, limit, too_big
        self._span, self._too_long, self._broken = span, too_long, broken
        self._too_deep = too_deep
        self.count = self.newlines = self._mark = 0
        self.lines_before = 0  # newlines before the last read: a parser's error lies after them
        self.skip_bom = False
        self.depth: _JsonDepth | None = None  # set for JSON: too deep is too long a record

    def since_mark(self) -> int:
        """Bytes read since the last `mark()` (at least the record that followed it)."""
        return self.count - self._mark

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            n = self._inner.readinto(buffer)
        except (EOFError, zlib.error, zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError) as exc:
            raise self._broken(self.newlines + 1, exc) from None
        if n and self.count == 0 and self.skip_bom and bytes(buffer[:3]) == _BOM:
            buffer[: n - 3] = bytes(buffer[3:n])
            n -= 3
            self.skip_bom = False
        if n:
            data = memoryview(buffer)[:n].tobytes()
            self.lines_before = self.newlines
            self.count += n
            self.newlines += data.count(b"\n")
            if self.count > self._limit:
                raise self._too_big(self.newlines + 1 if self._span is not None else None)
            if self._span is not None and self.count - self._mark > self._span + _CHUNK:
                raise self._too_long(self.newlines + 1)
            if self.depth is not None and self.depth.exceeded(data):
                raise self._too_deep(self.lines_before + 1, self.depth.limit)
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
            try:
                inner: Any = zipfile.ZipFile(self.path).open(self.member)
            except (zipfile.BadZipFile, OSError, NotImplementedError, RuntimeError, EOFError) as exc:
                raise self._broken(1, exc) from None
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
            lambda line, limit: IngestError(
                self.name,
                line,
                f"the JSON nests arrays or objects more than {limit} deep",
                "this is not a feed's export (their records nest 2 or 3 deep): check the address",
            ),
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
    many = "pass the feed's own archive (one data file)"
    declared = _declared_entries(path)  # before zipfile reads every entry into memory
    if declared is not None and declared > bounds.members * 4:  # entries count folders too
        raise IngestError(
            str(path), None, f"the archive declares {declared:,} entries, more than a feed archive may hold", many
        )
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
            many,
        )
    for info in members:
        if info.flag_bits & 0x1 or info.compress_type not in _ZIP_METHODS:
            how = "is encrypted" if info.flag_bits & 0x1 else f"uses compression method {info.compress_type}"
            raise IngestError(
                f"{path}!{info.filename}",
                None,
                f"the archive member {how}, which a feed archive does not",
                "download the publisher's own archive again, or unzip it yourself and pass the file",
            )
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


_ZIP_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA)
_EOCD, _EOCD64_LOCATOR = b"PK\x05\x06", b"PK\x06\x07"


def _declared_entries(path: Path) -> int | None:
    """The number of entries a zip's end record declares (None when it has none to read: the
    zip reader then says what is wrong), read from the file's tail alone."""
    import struct

    with open(path, "rb") as fh:
        size = fh.seek(0, io.SEEK_END)
        tail_start = max(0, size - (1 << 16) - 22)
        fh.seek(tail_start)
        tail = fh.read()
        at = tail.rfind(_EOCD)
        if at < 0 or at + 22 > len(tail):
            return None
        (entries,) = struct.unpack_from("<H", tail, at + 10)
        if entries != 0xFFFF or at < 20 or tail[at - 20 : at - 16] != _EOCD64_LOCATOR:
            return entries
        (offset,) = struct.unpack_from("<Q", tail, at - 12)  # the zip64 end record's place
        fh.seek(offset)
        record = fh.read(56)
        return struct.unpack_from("<Q", record, 32)[0] if len(record) == 56 else None


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
    if feed.head.lstrip()[:14].lower().startswith(("<!doctype html", "<html")):
        raise IngestError(
            name,
            1,
            "a web page, not the feed's file (the publisher's site may be down for maintenance, or the file moved)",
            "open the address in a browser; the next run tries again",
        )
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
        stream.skip_bom, stream.depth = True, _JsonDepth(MAX_DEPTH)
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
                    others[name] = _checked(feed, stream, builder.value, f"the top-level member {name!r}")
                    stream.mark()
                elif path == "" and event not in ("start_map", "end_map"):
                    raise IngestError(
                        feed.name,
                        1,
                        "not JSON (it does not start with { or [)",
                        "pass the feed's JSON file, or its CSV/TXT export",
                    )
        except (ijson.JSONError, UnicodeDecodeError) as exc:
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


LOOK_AHEAD = 1000  # records read for one of the feed's kind before a JSON file is refused
LOOK_AHEAD_BYTES = 16 << 20  # ... or fewer, when they are this long


def look_ahead(items: Iterator[tuple[int, Any]], fits: Callable[[Any], bool]) -> tuple[list[tuple[int, Any]], bool]:
    """The first records of `items` up to one that `fits` (the feed's kind of record: normally the
    first), and whether one did; at most LOOK_AHEAD records or LOOK_AHEAD_BYTES of them are held."""
    ahead: list[tuple[int, Any]] = []
    held = 0
    for number, item in items:
        ahead.append((number, item))
        if fits(item):
            return ahead, True
        held += len(repr(item))
        if len(ahead) >= LOOK_AHEAD or held >= LOOK_AHEAD_BYTES:
            break
    return ahead, False


def _closes(path: str, name: str, event: str) -> bool:
    """Whether `event` at `path` ends the value of top-level member `name`."""
    return path == name and event in ("end_map", "end_array", "string", "number", "boolean", "null")


def _stream_items(feed: FeedFile, prefix: str) -> Iterator[tuple[int, Any]]:
    import ijson

    with feed.raw(span=feed.bounds.field) as stream:
        stream.skip_bom, stream.depth = True, _JsonDepth(MAX_DEPTH)
        number = 0
        try:
            for number, item in enumerate(ijson.items(stream, prefix, use_float=True), start=1):
                item = _checked(feed, stream, item, f"record {number:,}")
                stream.mark()
                yield number, item
        except (ijson.JSONError, UnicodeDecodeError) as exc:
            raise _json_fail(feed, stream, exc) from None


MAX_DEPTH = 64  # how deep a feed's JSON may nest (real feeds: 4 or 5, with the array around the records)


def _checked(feed: FeedFile, stream: _Counted, item: Any, what: str) -> Any:
    """`item` (`what` names it) when it is no longer than a record may be. The reader reads ahead a block at a
    time, so at most a block of a record is read before the record ahead of it is yielded: a
    record past the limit read more than the limit less a block since then, and only such a
    reading is measured."""
    limit = feed.bounds.field
    if stream.since_mark() > limit - _CHUNK and len(json.dumps(item, ensure_ascii=False).encode()) > limit:
        raise feed.bounds.too_long(feed.name, stream.lines_before + 1, f"{what} is")
    return item


def _json_fail(feed: FeedFile, stream: _Counted, exc: Exception) -> IngestError:
    """One line for the parser's error: where it lies (the reader reads ahead, so the lines
    of its last read), what it says (its first line: yajl adds a picture of the place)."""
    first, last = stream.lines_before + 1, stream.newlines + 1
    where = f"line {first:,}" if first == last else f"lines {first:,}-{last:,}"
    if isinstance(exc, UnicodeDecodeError) or "utf8" in str(exc).lower().replace("-", ""):
        return IngestError(
            feed.name,
            None,
            f"not UTF-8 text in {where} (a byte or an escaped character that is not a letter)",
            "convert the file to UTF-8 (e.g. iconv -f latin1 -t utf-8), or download it again",
        )
    said = exc.args[0] if exc.args else exc
    said = said.decode("utf-8", "replace") if isinstance(said, bytes) else str(said)
    said = (said.strip().splitlines() or [""])[0].strip().rstrip(":.")
    if any(word in said.lower() for word in _JSON_CUT):
        return IngestError(
            feed.name, last, f"the JSON stops before its end ({said})", "the file is truncated: download it again"
        )
    return IngestError(
        feed.name,
        None,
        f"malformed JSON in {where} ({said})",
        "check that the file is this feed's JSON export, unedited",
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


def file_rows(
    read: Callable[[FeedFile, str, OnBadRow], Iterator[Row]],
) -> Callable[..., Iterator[Row]]:
    """An adapter's `X_rows(path, *, observed_at=None, on_bad_row=strict, bounds=DEFAULT_BOUNDS)`
    from its reader of the file once read, `read(feed, the observation stamp, on_bad_row)`
    (whose docstring it takes)."""

    def rows(
        path: str | Path,
        *,
        observed_at: Any = None,
        on_bad_row: OnBadRow = strict,
        bounds: Bounds = DEFAULT_BOUNDS,
    ) -> Iterator[Row]:
        stamp = observed(observed_at)
        yield from read(read_feed(path, bounds), stamp, on_bad_row)

    rows.__doc__ = read.__doc__
    return rows
