"""What the archive (`archive.py`) and packing (`packed.py`) share: the tables a closed
listing takes with it, a batch of listings chosen in `temp.archive_batch`, their plain rows
deleted, and the freed pages given back."""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol, TypedDict, TypeVar

from .fields import LISTING_EXTRA_FIELDS, LISTING_FIELDS, iso_timestamp
from .schema import connect
from .. import errors

__all__ = [
    "ARCHIVED_TABLES",
    "BATCH",
    "BATCH_TABLE",
    "ClosingOptions",
    "ClosingReport",
    "MOMENTS",
    "ArchiveError",
    "archive_types",
    "as_stored",
    "as_typed",
    "declared",
    "delete_plain_batch",
    "file_bytes",
    "optimize_search_index",
    "put_back",
    "reclaim_pages",
    "run_batches",
    "run_closing",
]

BATCH = 50_000  # listings per transaction: a few seconds of writer lock at full scale

# Each table a closed listing takes with it: its primary key (the order of its rows in a
# file, a record and a checksum) and how its rows are chosen from a batch of listing ids.
ARCHIVED_TABLES: dict[str, tuple[tuple[str, ...], str]] = {
    "listings": (("id",), "id IN (SELECT id FROM temp.archive_batch)"),
    # A sighting is its listing and moment: row ids of rows that left SQLite are taken again by
    # later rows, so an archived or packed history row's id names nothing once it is back.
    "listing_history": (("listing_id", "observed_at"), "listing_id IN (SELECT id FROM temp.archive_batch)"),
    "raw_records": (("kind", "id"), "kind = 'listing' AND id IN (SELECT id FROM temp.archive_batch)"),
}
BATCH_TABLE = "CREATE TEMP TABLE IF NOT EXISTS archive_batch (id INTEGER PRIMARY KEY, month TEXT)"
_ARROW_TYPES = {"INTEGER": "int64", "REAL": "float64", "TEXT": "string"}


# The columns of each archived table that hold a moment (UTC) or a day: text in SQLite, Parquet
# timestamps and dates in the archive's files (files written before hold them as text; readers
# read both).
MOMENTS: dict[str, dict[str, str]] = {
    "listings": {
        **{c: kind for c, kind in {**LISTING_FIELDS, **LISTING_EXTRA_FIELDS}.items() if kind in ("date", "datetime")},
        "live_until": "datetime",  # internal (a closed listing's closed_at), a moment all the same
    },
    "listing_history": {"observed_at": "datetime", "auction_end_date": "datetime"},
    "raw_records": {},
}
_STORED_MOMENT = "%Y-%m-%dT%H:%M:%SZ"  # the writer's form (store/fields.py iso_timestamp)


class ArchiveError(errors.RunFailed):
    """An archive, packing or restore that could not be done; the mirror and the archive are as they were."""


def declared(conn: sqlite3.Connection, table: str) -> list[tuple[str, str]]:
    """(column, Arrow type name) of a table, from its declared SQL types."""
    return [
        (row[1], _ARROW_TYPES.get(str(row[2]).upper(), "string")) for row in conn.execute(f"PRAGMA table_info({table})")
    ]


def archive_types(conn: sqlite3.Connection, table: str) -> list[tuple[str, Any]]:
    """(column, Arrow type) of a table in the archive's files: the declared types, with moments
    as timestamps in UTC (milliseconds, as Parquet stores them) and days as dates."""
    import pyarrow as pa

    moments = MOMENTS.get(table, {})
    kinds = {"datetime": pa.timestamp("ms", tz="UTC"), "date": pa.date32()}  # Parquet keeps ms, not s
    return [
        (name, kinds[moments[name]] if name in moments else getattr(pa, kind)()) for name, kind in declared(conn, table)
    ]


def as_stored(rows: Any) -> Any:
    """An Arrow table with its timestamp and date columns as the mirror stores them (text), for
    the readers that hand archived rows on as the mirror's own."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for index, field in enumerate(rows.schema):
        if pa.types.is_timestamp(field.type):
            text = pc.strftime(rows.column(index).cast(pa.timestamp("s", tz="UTC")), format=_STORED_MOMENT)
        elif pa.types.is_date(field.type):
            text = rows.column(index).cast(pa.string())
        else:
            continue
        rows = rows.set_column(index, pa.field(field.name, pa.string()), text)
    return rows


def as_typed(rows: Any, table: str, kinds: dict[str, Any]) -> Any:
    """`as_stored` undone: `rows` of `table` in the mirror's own form (moments as text) with
    its moments typed as the archive's files type them (`kinds`: column -> Arrow type)."""
    import pyarrow as pa

    from ..formats import moments_array

    for index, name in enumerate(rows.column_names):
        if name in MOMENTS.get(table, {}) and name in kinds:
            try:
                typed = moments_array(rows.column(index).to_pylist(), kinds[name], f"{table}.{name}")
            except errors.BadInput as exc:
                raise ArchiveError(str(exc)) from None
            rows = rows.set_column(index, pa.field(name, typed.type), typed)
    return rows


def put_back(conn: sqlite3.Connection, table: str, names: list[str], rows: list[tuple]) -> int:
    """Rows of `table` (tuples in `names` order) put back into SQLite (unpacked, restored), inside
    the caller's transaction; returns how many went in. A listing or raw record the mirror holds
    keeps the mirror's row (listed again since: it is newer); a history row goes in unless its
    listing has a sighting at that moment already, under its own id unless a later row took it."""
    if table != "listing_history":
        marks = ", ".join("?" * len(names))
        return conn.executemany(f"INSERT OR IGNORE INTO {table} ({', '.join(names)}) VALUES ({marks})", rows).rowcount
    import json

    at = names.index("listing_id"), names.index("observed_at")
    held = set(
        conn.execute(
            "SELECT listing_id, observed_at FROM listing_history WHERE listing_id IN (SELECT value FROM json_each(?))",
            [json.dumps(sorted({row[at[0]] for row in rows}))],
        ).fetchall()
    )
    fresh: dict[tuple, tuple] = {}
    for row in rows:
        fresh.setdefault((row[at[0]], row[at[1]]), tuple(row))
    new = [row for key, row in fresh.items() if key not in held]
    number = names.index("id")
    taken = {
        i
        for (i,) in conn.execute(
            "SELECT id FROM listing_history WHERE id IN (SELECT value FROM json_each(?))",
            [json.dumps([row[number] for row in new])],
        )
    }
    # Its own id when no row took it since (nor an earlier row put back here); else a new one.
    own: list[tuple] = []
    renumbered: list[tuple] = []
    for row in new:
        (renumbered if row[number] in taken else own).append(row)
        taken.add(row[number])
    conn.executemany(f"INSERT INTO listing_history ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", own)
    others = [i for i, name in enumerate(names) if i != number]
    conn.executemany(
        f"INSERT INTO listing_history ({', '.join(names[i] for i in others)}) VALUES ({', '.join('?' * len(others))})",
        [tuple(row[i] for i in others) for row in renumbered],
    )
    return len(new)


def delete_plain_batch(conn: sqlite3.Connection) -> None:
    """Delete the batch's plain rows, and their lines in the change log: the live index never
    held these (they were closed), and `changes_from` moves on, so an index older than this
    write is built whole rather than refreshed from a log that no longer names them."""
    for table, (_, rows_of_batch) in reversed(list(ARCHIVED_TABLES.items())):
        conn.execute(f"DELETE FROM {table} WHERE {rows_of_batch}")
    conn.execute("DELETE FROM listing_changes WHERE id IN (SELECT id FROM temp.archive_batch)")
    conn.execute(
        "INSERT INTO mirror_meta (key, value) SELECT 'changes_from', value FROM mirror_meta WHERE key = 'generation' "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    )


def reclaim_pages(conn: sqlite3.Connection, pages_per_step: int = 2048) -> None:
    """Give freed pages back to the file system a few MB at a time (each step a short write)."""
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
        return
    while conn.execute("PRAGMA freelist_count").fetchone()[0]:
        conn.execute(f"PRAGMA incremental_vacuum({pages_per_step})").fetchall()


def file_bytes(path: str) -> int:
    """The mirror's bytes on disk: the file and its write-ahead log."""
    return sum(os.path.getsize(p) for p in (path, f"{path}-wal") if os.path.exists(p))


def optimize_search_index(conn: sqlite3.Connection) -> None:
    """Merge the name search's segments into one: deleting many rows leaves tombstones there
    that every later search reads past (0.7 s at full scale, one short write)."""
    with conn:
        conn.execute("INSERT INTO listings_fts (listings_fts) VALUES ('optimize')")


class Batched(Protocol):
    batches: int  # the batches run so far


Report = TypeVar("Report", bound=Batched)


def run_batches(
    conn: sqlite3.Connection,
    one_batch: Callable[[], bool],
    report: Report,
    progress: Callable[[Report], None] | None,
    reclaim: bool,
) -> int:
    """Run `one_batch` (one transaction; False when nothing is left) until it is done, counting
    each in `report.batches`, telling `progress` and giving pages back after each; then, when
    any ran, optimize the name search's index (its rows left) and give back what that freed.
    Returns the batches run."""
    conn.execute(BATCH_TABLE)
    batches = 0
    while one_batch():
        batches += 1
        report.batches += 1
        if progress is not None:
            progress(report)
        if reclaim:
            reclaim_pages(conn)
    if batches:
        optimize_search_index(conn)
        if reclaim:
            reclaim_pages(conn)
    if reclaim:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return batches


@dataclass
class ClosingReport:
    """What one run moving closed listings out (`pack_closed`, `archive_closed`) did, and the
    mirror's bytes before and after."""

    cut: str  # listings closed before this moment
    history: int = 0  # their listing_history rows
    raw_records: int = 0  # their raw records
    batches: int = 0  # transactions run
    file_bytes_before: int = 0  # the file and its write-ahead log
    file_bytes_after: int = 0
    seconds: float = 0.0


class ClosingOptions(TypedDict, total=False):
    """The options of `pack_closed` and `archive_closed`."""

    batch: int  # listings per transaction (default BATCH)
    progress: Callable[[Any], None] | None  # told the report after each batch
    reclaim: bool  # give freed pages back after each batch (default True)


Closing = TypeVar("Closing", bound=ClosingReport)


def run_closing(
    mirror_path: str | os.PathLike[str],
    closed_before: datetime,
    report_of: Callable[[str], Closing],
    one_batch: Callable[[str, sqlite3.Connection, Closing, int], bool],
    *,
    batch: int = BATCH,
    progress: Callable[[Any], None] | None = None,
    reclaim: bool = True,
    first: Callable[[str, sqlite3.Connection], object] | None = None,
) -> Closing:
    """Open the mirror, run `first(path, conn)` (if given), then `one_batch(path, conn, report,
    batch)` until it is done (`run_batches`); the report (`report_of(cut)`) gets the file's
    bytes before and after and the seconds taken."""
    path = os.fspath(mirror_path)
    # The mirror's moments are whole seconds compared as text: a cut inside a second is the
    # next second (a listing closed at 07:00:00 closed before 07:00:00.5).
    cut = closed_before.astimezone(timezone.utc)
    report = report_of(iso_timestamp(cut.replace(microsecond=0) + timedelta(seconds=1 if cut.microsecond else 0)))
    report.file_bytes_before = file_bytes(path)
    started = time.monotonic()
    conn = connect(path)
    try:
        if first is not None:
            first(path, conn)
        run_batches(conn, lambda: one_batch(path, conn, report, batch), report, progress, reclaim)
    finally:
        conn.close()
    report.file_bytes_after = file_bytes(path)
    report.seconds = time.monotonic() - started
    return report
