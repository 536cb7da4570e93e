"""`ingest_file(mirror, feed, path)`: one public feed file into the mirror, all or nothing;
`ingest_url` downloads it first.

The file is read 5,000 rows at a time inside ONE transaction (a big file needs no more memory
than a chunk of its rows; a file found truncated or unreadable at its end rolls the whole
transaction back), written through `toolkit.store.writer` (origin `ingest:<feed>`, the feed's
original row kept in `raw_records` as `feed_record`). Each row's digest (`feed_digests`) is
compared with the stored one: a row the mirror holds unchanged is only seen again (its
`last_seen_at` moves); the others are staged in a file beside the mirror and written
set-based (`StagedWrite`). What happened is the `IngestReport`.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ..store.lock import writer_lock
from ..store.picked import picked
from ..store.results import derive_results
from ..store.schema import bulk_load, ensure_schema
from ..store.transaction import one_transaction
from ..store.writer import StagedWrite, WriteCounts, staging
from .adapters import ADAPTERS, Adapter, adapter_for
from .common import LISTING, PENDING, BadRow, IngestError, Row, Skipped, observed, text_digest, truncated
from .feed_file import DEFAULT_BOUNDS, Bounds, fetch
from .zonediff import is_replay

if TYPE_CHECKING:  # imported when a Mirror is handed in: the feeds' parsers and `lifecycle` need no query layer
    from ..query import Mirror

__all__ = ["IngestReport", "ingest_file", "ingest_url", "INGEST_CHUNK", "CHUNK_BYTES", "BULK_BYTES"]


@dataclass
class IngestReport:
    """What one `ingest_file` did."""

    feed: str
    path: str
    origin: str
    observed_at: str
    listings: WriteCounts = field(default_factory=WriteCounts)
    pending: WriteCounts = field(default_factory=WriteCounts)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def written(self) -> int:
        """Rows written (new, changed or unchanged)."""
        return self.listings.seen + self.pending.seen

    @property
    def new(self) -> int:
        return self.listings.new + self.pending.new

    @property
    def updated(self) -> int:
        return self.listings.updated + self.pending.updated

    @property
    def unchanged(self) -> int:
        return self.written - self.new - self.updated

    def summary(self) -> str:
        kinds = [
            f"{c.seen:,} {label}"
            for c, label in ((self.listings, "listings"), (self.pending, "pending-delete"))
            if c.seen
        ]
        return (
            f"{self.origin}: {self.path}: {' + '.join(kinds) or '0'} rows written "
            f"({self.new:,} new, {self.updated:,} updated, {self.unchanged:,} unchanged), {len(self.skipped):,} skipped"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **picked(self, "feed", "path", "origin", "observed_at", "written", "new", "updated", "unchanged"),
            "listings": vars(self.listings),
            "pending_delete": vars(self.pending),
            "skipped": [str(s) for s in self.skipped],
        }


_TABLES = {LISTING: "listings", PENDING: "pending_delete"}
_RAW_KINDS = {LISTING: "listing", PENDING: "pending_delete"}  # as raw_records and feed_digests name them
_STICKY = {LISTING: ("created_at",), PENDING: ("created_at", "week_end")}  # kept from the first ingest
_TAGS = {"line": "INTEGER", "src": "INTEGER", "digest": "INTEGER"}  # where a staged row came from, its digest


def _digest(record: dict[str, Any]) -> int:
    """The fingerprint of a record made at once by its adapter (one whose records depend on more
    than the row: a lifecycle, earlier sightings): 64 bits of BLAKE2b over the record, its
    original row included."""
    return text_digest(repr(record))


_DIGESTED = {  # the stored digests of open rows of this origin (a closed listing is written again: it reopens)
    LISTING: "SELECT d.digest, d.id FROM feed_digests d JOIN listings t ON t.id = d.id WHERE d.kind = 'listing' "
    "AND t.origin = ? AND t.closed_at IS NULL",
    PENDING: "SELECT d.digest, d.id FROM feed_digests d JOIN pending_delete t ON t.id = d.id "
    "WHERE d.kind = 'pending_delete' AND t.origin = ?",
}


class _Held:
    """The digests of the rows of this origin the mirror holds open, sorted, beside their ids
    (16 bytes a row, where a dict of a million keys takes 150 MB): a chunk's unchanged rows
    are found at once."""

    def __init__(self, conn: Any, kind: str, origin: str):
        import numpy as np

        self._np = np
        pairs = np.fromiter(itertools.chain.from_iterable(conn.execute(_DIGESTED[kind], [origin])), dtype=np.int64)
        pairs = pairs.reshape(-1, 2)
        order = np.argsort(pairs[:, 0], kind="stable")
        self.digests, self.ids = pairs[order, 0].copy(), pairs[order, 1].copy()

    def find(self, digests: list[int]) -> list[int]:
        """For each digest, the id of the stored row it is the digest of (0: none)."""
        if not len(self.digests):
            return [0] * len(digests)
        np = self._np
        wanted = np.array(digests, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.digests, wanted), len(self.digests) - 1)
        return np.where(self.digests[at] == wanted, self.ids[at], 0).tolist()


def _stage(
    write: StagedWrite,
    held: _Held,
    rows: list[Row],
    sources: dict[tuple[str, str], int],
    stamp: str,
    problems: list[Skipped],
) -> int:
    """Stage one chunk's rows of one kind: a row whose digest is a stored row's is only seen again;
    the others are made (a bad row skipped) and staged to be written. Returns the rows taken."""
    digests: list[int] = []
    for row in rows:
        if row.digest is None:
            row.digest = _digest(row.made())
        digests.append(row.digest)
    seen_ids, seen_tags, seen_order, records, tags, order, made = [], [], [], [], [], [], []
    for place, row, row_id in zip(write.next(len(rows)), rows, held.find(digests)):
        src = sources.setdefault((row.file, row.unit), len(sources))
        if row_id:
            seen_ids.append(row_id)
            seen_tags.append((row.line, src, row.digest))
            seen_order.append(place)
            continue
        try:
            record = row.made()
        except BadRow as exc:
            problems.append(Skipped(row.file, row.line, str(exc), row.unit))
            continue
        # a new row's first sighting; a stored one keeps its own (`_STICKY`, `changed_at`)
        record["created_at"] = record.get("created_at") or stamp
        record["updated_at"] = stamp
        records.append(record)
        tags.append((row.line, src, row.digest))
        order.append(place)
        made.append(row)
    write.seen(seen_ids, seen_tags, seen_order)
    for index, reason in write.add(records, tags, order):
        row = made[index]
        if row.cut:  # the file's last row, cut short: the file is truncated
            raise truncated(row.file, row.line, reason)
        problems.append(Skipped(row.file, row.line, reason, row.unit))
    return len(seen_ids) + len(records)


def _connection(mirror_or_conn: Mirror | sqlite3.Connection) -> tuple[sqlite3.Connection, str | None]:
    from ..query import Mirror

    if isinstance(mirror_or_conn, Mirror):
        if mirror_or_conn.readonly:
            raise ValueError(f"{mirror_or_conn.path}: the mirror is open read-only; open it read-write to ingest")
        return mirror_or_conn.connection(), observed(mirror_or_conn.now().replace(microsecond=0))
    ensure_schema(mirror_or_conn)
    return mirror_or_conn, None


INGEST_CHUNK = 5_000  # rows read, looked up and staged at a time, inside the file's one transaction
CHUNK_BYTES = 32 << 20  # ... or fewer, when their rows hold this much (a file of wide or long rows)


def _chunks(rows: Iterator[Row], size: int, budget: int = CHUNK_BYTES) -> Iterator[list[Row]]:
    """`size` rows at a time, or fewer once they hold `budget` bytes (`Row.size`)."""
    chunk: list[Row] = []
    held = 0
    for row in rows:
        chunk.append(row)
        held += row.size
        if len(chunk) >= size or held >= budget:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk


def ingest_file(
    mirror_or_conn: Mirror | sqlite3.Connection,
    feed: str,
    path: str | Path,
    *,
    observed_at: Any = None,
    on_commit: Callable[[sqlite3.Connection, IngestReport], None] | None = None,
    bounds: Bounds | None = None,
    **options: Any,
) -> IngestReport:
    """Read `path` as `feed` (a key of `ADAPTERS`) and write every good row in one
    transaction, origin `ingest:<feed>`; returns the `IngestReport`.

    `observed_at` (default now, the mirror's clock) is when the rows were seen. `options`
    go to the adapter (`ADAPTERS[feed].options`: droplist `status`, `list_date`; zonediff
    `previous` (required unless `path` is a folder or glob of daily snapshots: a replay),
    `is_available`, `status`, `zone_date`, `tld`). `on_commit(conn, report)` runs inside the
    file's transaction, after its rows: what it writes commits with them or not at all.
    `bounds` (default `DEFAULT_BOUNDS`) is what the file may be: how big it may expand to,
    how long a line, field or record may be. Raises `IngestError` (nothing written) when the
    file cannot be read as `feed` or is past its bounds."""
    adapter = adapter_for(feed)
    unknown = sorted(set(options) - set(adapter.options))
    if unknown:
        allowed = ", ".join(adapter.options) or "none"
        raise TypeError(f"{adapter.name}: unknown option {', '.join(unknown)} (options: {allowed})")
    if adapter.name == "zonediff" and options.get("previous") is None and not is_replay(path):
        raise TypeError(
            "zonediff: pass previous= (the older zone file or name list), or a folder or glob of "
            "daily snapshots as the path (a replay)"
        )
    conn, now = _connection(mirror_or_conn)
    stamp = observed(observed_at) if observed_at is not None else (now or observed(None))
    origin = f"ingest:{adapter.name}"
    report = IngestReport(adapter.name, str(path), origin, stamp)
    if adapter.name == "droplist":
        options["first_seen"] = lambda row_id: (
            conn.execute("SELECT first_seen_at FROM pending_delete WHERE id = ?", [row_id]).fetchone() or [None]
        )[0]

    problems: list[Skipped] = []
    rows = adapter.rows(path, observed_at=stamp, on_bad_row=problems.append, bounds=bounds or DEFAULT_BOUNDS, **options)
    # The mirror is not memory-mapped while a file loads: its pages, read once, would count as the
    # process's memory (a 1.1-million-row day reads most of the mirror); the page cache serves.
    mapped = conn.execute("PRAGMA mmap_size").fetchone()[0]
    conn.execute("PRAGMA mmap_size=0")
    try:
        _load(
            conn, adapter, rows, report, problems, origin, stamp, on_commit, bulk=_first_big_load(conn, adapter, path)
        )
    finally:
        conn.execute(f"PRAGMA mmap_size={int(mapped)}")
        _give_back_memory(conn)
    report.skipped = sorted(problems, key=lambda s: (s.file, s.line or 0))
    return report


def _give_back_memory(conn: sqlite3.Connection) -> None:
    """Give the memory a load used back to the system before what follows it (the columnar
    index's refresh, in the same process): SQLite's page cache and the chunks' objects are freed,
    but glibc keeps a freed heap unless asked (a day of 300,000 rows: 306 MB resident after the
    load, 126 MB after this)."""
    conn.execute("PRAGMA shrink_memory")
    with contextlib.suppress(OSError, AttributeError):  # glibc only (Linux); elsewhere nothing to do
        ctypes.CDLL(None).malloc_trim(0)


BULK_BYTES = 4 << 20  # a platform's file at least this big, into a mirror without listings: a bulk load


def _first_big_load(conn: sqlite3.Connection, adapter: Adapter, path: str | Path) -> bool:
    """A big file of listings into a mirror that holds none yet (a first day): its indexes are
    built once at the end (`bulk_load`), not row by row. Later days write into them."""
    if adapter.kinds != (LISTING,) or not Path(path).is_file() or Path(path).stat().st_size < BULK_BYTES:
        return False
    return conn.execute("SELECT 1 FROM listings LIMIT 1").fetchone() is None


def _load(
    conn: sqlite3.Connection,
    adapter: Adapter,
    rows: Iterator[Row],
    report: IngestReport,
    problems: list[Skipped],
    origin: str,
    stamp: str,
    on_commit: Callable[[sqlite3.Connection, IngestReport], None] | None,
    *,
    bulk: bool = False,
) -> None:
    """`ingest_file`'s write, in one transaction (`bulk`: with the listings' indexes built at its
    end): the file read chunk by chunk, each row either known unchanged by its digest or made and
    staged; then the repeats and hash collisions left out, and what is staged written set-based
    (`StagedWrite`), the written rows' digests kept."""
    with writer_lock(conn, f"edt ingest {adapter.name}"), staging(conn) as stage:  # one load at a time
        load = bulk_load(conn, ("listings",)) if bulk else one_transaction(conn)
        with load as transaction:  # the whole file or nothing, written as it is read
            writer = cast(sqlite3.Connection, transaction)  # it forwards every call to the connection
            writes: dict[str, StagedWrite] = {}
            held: dict[str, _Held] = {}
            sources: dict[tuple[str, str], int] = {}  # (file, unit) -> the number a staged row carries
            taken = 0
            for chunk in _chunks(rows, INGEST_CHUNK):
                by_kind: dict[str, list[Row]] = {}
                for row in chunk:
                    by_kind.setdefault(row.kind, []).append(row)
                for kind, kind_rows in by_kind.items():
                    if kind not in writes:
                        writes[kind] = StagedWrite(
                            writer, _TABLES[kind], stage, origin=origin, observed_at=stamp, tags=_TAGS
                        )
                        held[kind] = _Held(writer, kind, origin)
                    taken += _stage(writes[kind], held[kind], kind_rows, sources, stamp, problems)
            where = list(sources)
            for write in writes.values():
                for name, first, (line, src, _) in write.repeats():
                    file, unit = where[src]
                    problems.append(Skipped(file, line, f"{name} repeats {unit} {first[0]}; the first is kept", unit))
                for row_id, name, holder, (line, src, _) in write.foreign():
                    file, unit = where[src]
                    problems.append(
                        Skipped(
                            file,
                            line,
                            f"{name}: its id {row_id} is held by {holder} (a hash collision); not written",
                            unit,
                        )
                    )
            if not taken and problems and adapter.name != "zonediff":  # zonediff: no names gone is an answer
                first = min(problems, key=lambda s: (s.file, s.line or 0))
                raise IngestError(
                    first.file,
                    first.line if first.unit == "line" else None,
                    f"no row of the file is a {adapter.name} row ({first.reason})",
                    f"check that it is a {adapter.name} file ({adapter.description}), or pick another "
                    f"feed ({', '.join(ADAPTERS)})",
                )
            for kind, write in writes.items():
                counts = report.listings if kind == LISTING else report.pending
                counts += write.write(sticky=_STICKY[kind], changed_at="updated_at")
                writer.execute(
                    f"INSERT INTO main.feed_digests (kind, id, digest) SELECT ?, id, _digest FROM {write.table} "
                    "WHERE _seen IS NULL ORDER BY id ON CONFLICT(kind, id) DO UPDATE SET digest = excluded.digest",
                    [_RAW_KINDS[kind]],
                )
            derive_results(writer, now=stamp)  # the auctions that ended, and where names went next
            if on_commit is not None:
                on_commit(writer, report)


def ingest_url(
    mirror_or_conn: Mirror | sqlite3.Connection,
    feed: str,
    url: str | None = None,
    *,
    dest: str | Path | None = None,
    observed_at: Any = None,
    **options: Any,
) -> IngestReport:
    """Download `url` (default: the feed's public file) with `fetch`, then `ingest_file` it.
    The download is kept in `dest` when given, else removed once ingested."""
    adapter = adapter_for(feed)
    where = adapter.file_url(url)
    bounds = options.get("bounds") or DEFAULT_BOUNDS
    if dest is not None:
        path = fetch(where, dest, bounds=bounds)
        return ingest_file(mirror_or_conn, adapter.name, path, observed_at=observed_at, **options)
    with tempfile.TemporaryDirectory(prefix="edt-ingest-") as folder:  # the download goes once ingested
        path = fetch(where, folder, bounds=bounds)
        return ingest_file(mirror_or_conn, adapter.name, path, observed_at=observed_at, **options)
