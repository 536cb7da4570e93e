"""Public feed files into the mirror: `ingest_file(mirror, feed, path)`.

Each adapter reads one kind of public file and yields records in the API's shapes (listing,
pending-delete: docs/reference/fields.md); `ingest_file` is the one save step:

    from toolkit import Mirror
    from toolkit.ingest import ingest_file
    report = ingest_file(Mirror("data/mirror.db"), "droplist", "deleted_domains_2025-08-19.txt")
    print(report.summary())
    for problem in report.skipped:      # file:line: reason
        print(problem)

| feed | file | records |
|---|---|---|
| `godaddy` | GoDaddy Auctions inventory, zipped JSON `{"meta", "data"}` or CSV | listings, source `godaddy`, USD |
| `namecheap` | Namecheap Market's sales CSV (auctions) or its buy-now CSV | listings, source `namecheap`, USD |
| `bardate` | Internetstiftelsen's .se/.nu release list, JSON or TXT | pending-delete, official drop date |
| `droplist` | registry deletion / drop list: a name a line, or CSV with date columns | pending-delete, file date or lifecycle prediction |
| `zonediff` | two zone files / name lists of one TLD (`previous=` the older), or a folder / glob of daily snapshots (a replay) | pending-delete candidates with a drop window; `regfree` listings only for names `is_available` confirms |

A file is all or nothing: every good row is written in ONE transaction (read and written
20,000 rows at a time inside it, so a big file needs no more memory than a chunk of its
records; a file found truncated or unreadable at its end rolls the whole transaction back)
through `toolkit.store.writer` (origin `ingest:<feed>`, the feed's original
row kept in `raw_records` as `feed_record`). A file that cannot be read as the feed
(wrong format, truncated) raises `IngestError` naming the file, the line and the fix, and
writes nothing. A bad row in a valid file is skipped and reported; every good row is kept.
Re-ingesting an unchanged file changes nothing but `last_seen_at`.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.lock import writer_lock
from ..store.results import derive_results
from ..store.schema import LISTING_COLUMNS, PENDING_COLUMNS, bulk_load, ensure_schema
from ..store.transaction import one_transaction
from ..store.meta import bump_generation
from ..store.writer import SIGNAL_COLUMNS, WriteCounts, listing_row, pending_row, save_listings, save_pending
from .bardate import BARDATE_URL, bardate_rows, fetch_bardate, parse_bardate
from .common import (
    DEFAULT_BOUNDS,
    INGEST_ID_BASE,
    Bounds,
    LISTING,
    PENDING,
    IngestError,
    Row,
    Skipped,
    fetch,
    ingest_id,
    observed,
)
from .droplist import NASK_DELETED_URL, droplist_rows, fetch_droplist, parse_droplist
from .godaddy import GODADDY_URL, fetch_godaddy, godaddy_rows, parse_godaddy
from .namecheap import NAMECHEAP_URL, fetch_namecheap, namecheap_rows, parse_namecheap
from .zonediff import is_replay, parse_zonediff, replay_rows, snapshot_files, zone_names, zonediff_rows

if TYPE_CHECKING:  # imported when a Mirror is handed in: the feeds' parsers and `lifecycle` need no query layer
    from ..query import Mirror

__all__ = [
    "ADAPTERS",
    "Adapter",
    "Bounds",
    "DEFAULT_BOUNDS",
    "INGEST_ID_BASE",
    "INGEST_PENDING_SOURCES",
    "IngestError",
    "IngestReport",
    "Row",
    "Skipped",
    "fetch",
    "fetch_bardate",
    "fetch_droplist",
    "fetch_godaddy",
    "fetch_namecheap",
    "ingest_file",
    "ingest_id",
    "ingest_url",
    "parse_bardate",
    "parse_droplist",
    "parse_godaddy",
    "parse_namecheap",
    "parse_zonediff",
    "replay_rows",
    "snapshot_files",
    "zone_names",
]

# The pending-delete `source` values ingested rows carry, beside the live service's
# `oi-diff` and `czds-daily` (toolkit.query.params.PENDING_SOURCES): the feed, named as such.
INGEST_PENDING_SOURCES = ("bardate", "droplist", "zonediff")


@dataclass(frozen=True)
class Adapter:
    """One feed: how its file becomes records."""

    name: str
    description: str
    kinds: tuple[str, ...]  # the record kinds it yields: "listing", "pending"
    rows: Callable[..., Iterator[Row]]  # (path, *, observed_at, on_bad_row, **options) -> Row, ...
    parse: Callable[..., Iterator[dict[str, Any]]]  # the same, records only
    options: tuple[str, ...] = ()  # keyword options ingest_file passes on
    url: str | None = None  # where the public file is, when there is one place


ADAPTERS: dict[str, Adapter] = {
    a.name: a
    for a in (
        Adapter("godaddy", "GoDaddy Auctions inventory (zipped JSON or CSV)", (LISTING,), godaddy_rows, parse_godaddy,
                url=GODADDY_URL),
        Adapter("namecheap", "Namecheap Market sales CSV (auctions, or buy-now)", (LISTING,), namecheap_rows,
                parse_namecheap, url=NAMECHEAP_URL),
        Adapter("bardate", "Internetstiftelsen .se/.nu release list (JSON or TXT)", (PENDING,), bardate_rows,
                parse_bardate, url=BARDATE_URL),
        Adapter("droplist", "registry deletion/drop list (a name a line, or CSV with dates)", (PENDING,),
                droplist_rows, parse_droplist, options=("status", "list_date"), url=NASK_DELETED_URL),
        Adapter("zonediff", "two zone files or name lists of one TLD (previous= the older)", (PENDING, LISTING),
                zonediff_rows, parse_zonediff, options=("previous", "is_available", "status", "zone_date", "tld")),
    )
}  # fmt: skip


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
        kinds = [f"{c.seen:,} {label}" for c, label in ((self.listings, "listings"), (self.pending, "pending-delete"))
                 if c.seen]  # fmt: skip
        return (
            f"{self.origin}: {self.path}: {' + '.join(kinds) or '0'} rows written "
            f"({self.new:,} new, {self.updated:,} updated, {self.unchanged:,} unchanged), {len(self.skipped):,} skipped"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "feed": self.feed,
            "path": self.path,
            "origin": self.origin,
            "observed_at": self.observed_at,
            "written": self.written,
            "new": self.new,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "listings": vars(self.listings),
            "pending_delete": vars(self.pending),
            "skipped": [str(s) for s in self.skipped],
        }


_KIND = {
    LISTING: ("listings", LISTING_COLUMNS, listing_row, "name", "listing"),
    PENDING: ("pending_delete", PENDING_COLUMNS, pending_row, "domain", "pending_delete"),
}
_NOT_COMPARED = {"first_seen_at", "last_seen_at", "updated_at", *SIGNAL_COLUMNS}  # signals: the writer's own
_STICKY = {LISTING: ("created_at",), PENDING: ("created_at", "week_end")}


def _stored(conn: sqlite3.Connection, kind: str, ids: list[int]) -> tuple[dict[int, dict], dict[int, Any]]:
    """The stored rows (as dicts) and raw extras of those of `ids` already in the mirror."""
    table, columns, _, _, raw_kind = _KIND[kind]
    rows: dict[int, dict] = {}
    raws: dict[int, Any] = {}
    names = list(columns)
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for values in conn.execute(f"SELECT {', '.join(names)} FROM {table} WHERE id IN ({marks})", chunk):
            rows[values[0]] = dict(zip(names, values))
        for row_id, raw in conn.execute(f"SELECT id, raw FROM raw_records WHERE kind = ? AND id IN ({marks})",
                                        [raw_kind, *chunk]):  # fmt: skip
            raws[row_id] = json.loads(raw) if raw else None
    return rows, raws


def _reconcile(conn: sqlite3.Connection, kind: str, rows: list[Row], origin: str, stamp: str,
               skipped: list[Skipped]) -> list[dict[str, Any]]:  # fmt: skip
    """The records to write: each checked by the writer's own normalisation (a record it
    refuses is skipped), an id already held by another name skipped (a hash collision), and
    `created_at` / `updated_at` kept from the stored row unless the row changed."""
    _, columns, to_row, name_field, _ = _KIND[kind]
    stored, raws = _stored(conn, kind, [r.record["id"] for r in rows])
    out = []
    for row in rows:
        record = row.record
        try:
            new = to_row(record, origin=origin, observed_at=stamp, canonical=True)
        except (ValueError, TypeError) as exc:
            skipped.append(Skipped(row.file, row.line, str(exc), row.unit))
            continue
        old = stored.get(new["id"])
        if old is None:
            record = {**record, "created_at": record.get("created_at") or stamp, "updated_at": stamp}
        else:
            if old[name_field] != new[name_field]:
                skipped.append(Skipped(row.file, row.line, f"{new[name_field]}: its id {new['id']} is held by "
                                                           f"{old[name_field]} (a hash collision); not written", row.unit))
                continue
            # kept from the first ingest: when the row was created, the week it first appeared
            record = {**record, **{f: old[f] for f in _STICKY[kind]}, "updated_at": old["updated_at"]}
            new = to_row(record, origin=origin, observed_at=stamp, canonical=True)
            extra = json.loads(json.dumps({k: v for k, v in record.items() if k not in columns}, ensure_ascii=False))
            same = raws.get(new["id"]) == (extra or None) and all(
                old[c] == new[c] for c in columns if c not in _NOT_COMPARED
            )
            if not same:
                record["updated_at"] = stamp
        out.append(record)
    return out


def _digest(record: dict[str, Any]) -> int:
    """A row's fingerprint: 64 bits of BLAKE2b over the record as the adapter made it (its
    original row included), as SQLite's signed integer."""
    return int.from_bytes(hashlib.blake2b(repr(record).encode(), digest_size=8).digest(), "big", signed=True)


_DIGESTED = {  # the stored digests of open rows of this origin (a closed listing is written again: it reopens)
    LISTING: "SELECT d.id, d.digest FROM feed_digests d JOIN listings t ON t.id = d.id WHERE d.kind = 'listing' "
             "AND d.id IN (SELECT value FROM json_each(?)) AND t.origin = ? AND t.closed_at IS NULL",
    PENDING: "SELECT d.id, d.digest FROM feed_digests d JOIN pending_delete t ON t.id = d.id "
             "WHERE d.kind = 'pending_delete' AND d.id IN (SELECT value FROM json_each(?)) AND t.origin = ?",
}  # fmt: skip


def _seen_unchanged(conn: Any, kind: str, rows: list[Row], origin: str, seen: "_SeenIds",
                    counts: WriteCounts) -> list[Row]:  # fmt: skip
    """The rows of `rows` that differ from what the mirror holds; those equal to it (same
    digest) are only seen again (`seen.same`: their `last_seen_at` moves at the load's end)."""
    if not rows:
        return rows
    stored = dict(conn.execute(_DIGESTED[kind], [json.dumps([r.record["id"] for r in rows]), origin]).fetchall())
    if not stored:
        return rows
    fresh, same = [], []
    for row in rows:
        (same if stored.get(row.record["id"]) == row.digest else fresh).append(row)
    seen.same(kind, same)
    counts.seen += len(same)
    return fresh


def _keep_digests(conn: Any, kind: str, records: list[dict[str, Any]], rows: list[Row]) -> None:
    digests = {r.record["id"]: r.digest for r in rows}
    conn.executemany("INSERT INTO feed_digests (kind, id, digest) VALUES (?, ?, ?) "
                     "ON CONFLICT(kind, id) DO UPDATE SET digest = excluded.digest",
                     [(_KIND[kind][4], r["id"], digests[r["id"]]) for r in records])  # fmt: skip


def _connection(mirror_or_conn: Mirror | sqlite3.Connection) -> tuple[sqlite3.Connection, str | None]:
    from ..query import Mirror

    if isinstance(mirror_or_conn, Mirror):
        if mirror_or_conn.readonly:
            raise ValueError(f"{mirror_or_conn.path}: the mirror is open read-only; open it read-write to ingest")
        return mirror_or_conn.connection(), observed(mirror_or_conn.now().replace(microsecond=0))
    ensure_schema(mirror_or_conn)
    return mirror_or_conn, None


INGEST_CHUNK = 5_000  # rows reconciled and written at a time, inside the file's one transaction


class _SeenIds:
    """The rows a load has taken so far, by kind and id, with their line: a table of an in-memory
    database attached for the load (a few dozen bytes a row, where a Python dict of a million
    keys takes 150 MB; not SQLite's temp database, which a bulk load's index builds reset)."""

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn
        self.rows = 0

    def __enter__(self) -> "_SeenIds":
        self._conn.execute("ATTACH DATABASE ':memory:' AS ingest_seen")
        self._conn.execute("CREATE TABLE ingest_seen.rows (kind TEXT, id INTEGER, line INTEGER, PRIMARY KEY (kind, id)) "
                           "WITHOUT ROWID")  # fmt: skip
        self._conn.execute("CREATE TABLE ingest_seen.same (kind TEXT, id INTEGER, PRIMARY KEY (kind, id)) WITHOUT ROWID")
        return self

    def same(self, kind: str, rows: list[Row]) -> None:
        """`rows` are equal to what the mirror holds: only their last sighting is to move."""
        self._conn.executemany("INSERT INTO ingest_seen.same (kind, id) VALUES (?, ?)",
                               [(kind, row.record["id"]) for row in rows])  # fmt: skip

    def touch(self, conn: Any, stamp: str) -> None:
        """Move the last sighting of every unchanged row at once, in id order: each page of the
        table is rewritten once, where a chunk at a time would rewrite most pages each time."""
        for kind, (table, *_) in _KIND.items():
            cursor = conn.execute(f"UPDATE {table} SET last_seen_at = ? WHERE id IN "
                                  "(SELECT id FROM ingest_seen.same WHERE kind = ? ORDER BY id)", [stamp, kind])  # fmt: skip
            if cursor.rowcount:
                bump_generation(conn)

    def __exit__(self, *exc: object) -> None:
        if self._conn.in_transaction:  # the load's transaction ended; only an error leaves one open
            self._conn.rollback()
        self._conn.execute("DETACH DATABASE ingest_seen")

    def first_lines(self, chunk: list[Row]) -> Iterator[tuple[Row, int | None]]:
        """Each row of `chunk` with the line of an earlier row of the same kind and id (None: the first)."""
        ids = json.dumps([[row.kind, row.record["id"]] for row in chunk])
        earlier = {(kind, row_id): line for kind, row_id, line in self._conn.execute(
            "SELECT kind, id, line FROM ingest_seen.rows WHERE (kind, id) IN "
            "(SELECT value ->> 0, value ->> 1 FROM json_each(?))", [ids])}  # fmt: skip
        taken = []
        for row in chunk:
            key = (row.kind, row.record["id"])
            if key in earlier:
                yield row, earlier[key]
                continue
            earlier[key] = row.line
            taken.append((*key, row.line))
            yield row, None
        self._conn.executemany("INSERT INTO ingest_seen.rows (kind, id, line) VALUES (?, ?, ?)", taken)
        self.rows += len(taken)


def _chunks(rows: Iterator[Row], size: int) -> Iterator[list[Row]]:
    chunk: list[Row] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) >= size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def ingest_file(mirror_or_conn: Mirror | sqlite3.Connection, feed: str, path: str | Path, *,
                observed_at: Any = None, on_commit: Callable[[sqlite3.Connection, IngestReport], None] | None = None,
                bounds: Bounds | None = None, **options: Any) -> IngestReport:  # fmt: skip
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
    adapter = ADAPTERS.get(str(feed).strip().lower())
    if adapter is None:
        raise ValueError(f"feed: unknown feed {feed!r}; choose one of {', '.join(ADAPTERS)}")
    unknown = sorted(set(options) - set(adapter.options))
    if unknown:
        allowed = ", ".join(adapter.options) or "none"
        raise TypeError(f"{adapter.name}: unknown option {', '.join(unknown)} (options: {allowed})")
    if adapter.name == "zonediff" and options.get("previous") is None and not is_replay(path):
        raise TypeError("zonediff: pass previous= (the older zone file or name list), or a folder or glob of "
                        "daily snapshots as the path (a replay)")
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
        _load(conn, adapter, rows, report, problems, origin, stamp, on_commit, bulk=_first_big_load(conn, adapter, path))
    finally:
        conn.execute(f"PRAGMA mmap_size={int(mapped)}")
    report.skipped = sorted(problems, key=lambda s: (s.file, s.line or 0))
    return report


BULK_BYTES = 4 << 20  # a platform's file at least this big, into a mirror without listings: a bulk load


def _first_big_load(conn: sqlite3.Connection, adapter: Adapter, path: str | Path) -> bool:
    """A big file of listings into a mirror that holds none yet (a first day): its indexes are
    built once at the end (`bulk_load`), not row by row. Later days write into them."""
    if adapter.kinds != (LISTING,) or not Path(path).is_file() or Path(path).stat().st_size < BULK_BYTES:
        return False
    return conn.execute("SELECT 1 FROM listings LIMIT 1").fetchone() is None


def _load(conn: sqlite3.Connection, adapter: Adapter, rows: Iterator[Row], report: IngestReport, problems: list[Skipped],
          origin: str, stamp: str, on_commit: Callable[[sqlite3.Connection, IngestReport], None] | None, *,
          bulk: bool = False) -> None:  # fmt: skip
    """`ingest_file`'s write: every row of `rows` in one transaction, chunk by chunk (`bulk`: with
    the listings' indexes built at its end)."""
    with writer_lock(conn, f"edt ingest {adapter.name}"), _SeenIds(conn) as seen:  # one load at a time
        load = bulk_load(conn, ("listings",)) if bulk else one_transaction(conn)
        with load as writer:  # the whole file or nothing, written as it is read
            for chunk in _chunks(rows, INGEST_CHUNK):
                by_kind: dict[str, list[Row]] = {LISTING: [], PENDING: []}
                for row, first in seen.first_lines(chunk):
                    if first is not None:
                        name = row.record.get("name") or row.record.get("domain")
                        problems.append(Skipped(row.file, row.line, f"{name} repeats {row.unit} {first}; "
                                                                    "the first is kept", row.unit))  # fmt: skip
                        continue
                    row.digest = _digest(row.record)
                    by_kind[row.kind].append(row)
                for kind, counts, save in ((LISTING, report.listings, save_listings),
                                           (PENDING, report.pending, save_pending)):  # fmt: skip
                    fresh = _seen_unchanged(writer, kind, by_kind[kind], origin, seen, counts)
                    records = _reconcile(conn, kind, fresh, origin, stamp, problems)
                    if records:
                        counts += save(writer, records, origin=origin, observed_at=stamp, keep_raw=True,
                                       batch_size=len(records), canonical=True)  # fmt: skip
                        _keep_digests(writer, kind, records, fresh)
            if not seen.rows and problems and adapter.name != "zonediff":  # zonediff: no names gone is an answer
                first = problems[0]
                raise IngestError(first.file, first.line if first.unit == "line" else None,
                                  f"no row of the file is a {adapter.name} row ({first.reason})",
                                  f"check that it is a {adapter.name} file ({adapter.description}), or pick another "
                                  f"feed ({', '.join(ADAPTERS)})")  # fmt: skip
            seen.touch(writer, stamp)
            derive_results(writer, now=stamp)  # the auctions that ended, and where names went next
            if on_commit is not None:
                on_commit(writer, report)


def ingest_url(mirror_or_conn: Mirror | sqlite3.Connection, feed: str, url: str | None = None, *,
               dest: str | Path | None = None, observed_at: Any = None, **options: Any) -> IngestReport:  # fmt: skip
    """Download `url` (default: the feed's public file) with `fetch`, then `ingest_file` it.
    The download is kept in `dest` when given, else removed once ingested."""
    adapter = ADAPTERS.get(str(feed).strip().lower())
    if adapter is None:
        raise ValueError(f"feed: unknown feed {feed!r}; choose one of {', '.join(ADAPTERS)}")
    if url is None and adapter.url is None:
        raise ValueError(f"{adapter.name}: no default URL; pass url=")
    bounds = options.get("bounds") or DEFAULT_BOUNDS
    if dest is not None:
        path = fetch(url or adapter.url, dest, bounds=bounds)
        return ingest_file(mirror_or_conn, adapter.name, path, observed_at=observed_at, **options)
    with tempfile.TemporaryDirectory(prefix="edt-ingest-") as folder:  # the download goes once ingested
        path = fetch(url or adapter.url, folder, bounds=bounds)
        return ingest_file(mirror_or_conn, adapter.name, path, observed_at=observed_at, **options)
