"""The archive: closed listings past a cut, with their history and raw records, moved out of
SQLite into a Parquet dataset beside the mirror, and read back as one with it.

Layout (plain Hive-partitioned Parquet, which pyarrow, DuckDB, Polars and Spark read as is):

    <mirror>.archive/listings/month=2026-05/part-<batch>.parquet
    <mirror>.archive/listing_history/month=2026-05/part-<batch>.parquet
    <mirror>.archive/raw_records/month=2026-05/part-<batch>.parquet

`month` is the month the listing closed in; its history and raw records go with it. Moments
are Parquet timestamps in UTC and days are dates (`closing.MOMENTS`), so every engine compares
and groups them as they are; files written before held them as text, and every reader here
reads both (the toolkit's own readers hand them on as the mirror's text). Each
batch of listings is one SQLite transaction: its files are written to a staging folder and
checked, the rows are deleted, the files' rows and checksums are recorded in
`archive_parts`, the files are moved into place, and the transaction commits. So a stop at
any moment leaves each batch either in SQLite or in the archive: a file in the dataset that
`archive_parts` does not list is what a stopped run left, and the next run (or any reader
of this module) ignores it and removes it. A file is never changed once listed.

The checksum of a file is SHA-256 over its rows written as CSV in primary-key order: the
same rows give the same checksum in SQLite, in Parquet and back in SQLite (`restore`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import io
import os
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Unpack

from ..errors import BadInput, MirrorDamaged
from ..formats import moments_array
from .fields import iso_timestamp
from .closing import (
    ARCHIVED_TABLES,
    BATCH,
    MOMENTS,
    ArchiveError,
    ClosingOptions,
    ClosingReport,
    archive_types,
    as_stored,
    as_typed,
    delete_plain_batch,
    file_bytes,
    put_back,
    reclaim_pages,
    run_closing,
)
from .packed import epoch_ms, forget
from .schema import connect

__all__ = [
    "ARCHIVED_TABLES",
    "BATCH",
    "ArchiveError",
    "ArchiveReport",
    "archive_closed",
    "archive_dir",
    "archived_rows",
    "archive_table",
    "manifest",
    "months",
    "open_duckdb",
    "parse_age",
    "reclaim_space",
    "recover",
    "remove_archived_origin",
    "drop_unlisted",
    "restore_month",
    "verify",
]

_PART = re.compile(r"^part-[0-9A-Za-z_-]+\.parquet$")


@dataclass
class ArchiveReport(ClosingReport):
    """What one `archive_closed` moved, per month, and the mirror's bytes before and after."""

    listings: dict[str, int] = field(default_factory=dict)  # month -> listings moved
    archive_bytes: int = 0

    @property
    def moved(self) -> int:
        return sum(self.listings.values())


def archive_dir(mirror_path: str | os.PathLike[str]) -> Path:
    """Where a mirror's archive lives: beside its file (a symbolic link to the mirror is followed,
    so every path to it finds one archive)."""
    return Path(f"{os.path.realpath(os.fspath(mirror_path))}.archive")


def _staging(mirror_path: str | os.PathLike[str]) -> Path:
    # Beside the dataset (same file system, so a move is a rename), outside it (readers of the
    # dataset alone never see a half-written file).
    return Path(f"{os.path.realpath(os.fspath(mirror_path))}.archive-staging")


def parse_age(text: str) -> timedelta:
    """`180d`, `26w`, `6m` (30-day months) or a bare number of days, as a timedelta."""
    found = re.fullmatch(r"\s*(\d+)\s*([dwm]?)\s*", str(text))
    if not found:
        raise ValueError(f"{text!r} is not an age: write days as 180d (or 26w, 6m)")
    count, unit = int(found[1]), found[2] or "d"
    days = count * {"d": 1, "w": 7, "m": 30}[unit]
    if days > _MAX_AGE_DAYS:
        raise ValueError(f"{text!r} is older than any listing: write at most {_MAX_AGE_DAYS:,}d (100 years)")
    return timedelta(days=days)


_MAX_AGE_DAYS = 36_500  # an age past the first listing anywhere; a cut before year 1 cannot be written


# -- the manifest ---------------------------------------------------------------------


def manifest(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every archived file as recorded: path (relative to the archive), table, month, rows,
    checksum, first and last id, batch and when."""
    rows = conn.execute(
        "SELECT path, tbl, month, rows, checksum, first_id, last_id, batch, archived_at FROM archive_parts "
        "ORDER BY tbl, month, path"
    ).fetchall()
    keys = ("path", "table", "month", "rows", "checksum", "first_id", "last_id", "batch", "archived_at")
    return [dict(zip(keys, row)) for row in rows]


def months(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Per month: rows per table and one checksum over the month's files (in path order)."""
    found: dict[str, dict[str, Any]] = {}
    for part in manifest(conn):
        month = found.setdefault(
            part["month"], {"listings": 0, "listing_history": 0, "raw_records": 0, "files": 0, "_sums": []}
        )
        month[part["table"]] += part["rows"]
        month["files"] += 1
        month["_sums"].append(f"{part['path']}:{part['checksum']}")
    for month in found.values():
        month["checksum"] = hashlib.sha256("\n".join(sorted(month.pop("_sums"))).encode()).hexdigest()
    return dict(sorted(found.items()))


def archive_version(conn: sqlite3.Connection) -> str:
    """Changes whenever a file joins or leaves the archive, or listings are packed or
    unpacked (readers' caches key on it)."""
    from .packed import packed_version

    row = conn.execute("SELECT count(*), max(rowid), total(rows) FROM archive_parts").fetchone()
    return f"{row[0]}:{row[1]}:{int(row[2])}:{packed_version(conn)}"


def _files(conn: sqlite3.Connection, mirror_path: str, table: str) -> list[str]:
    base = archive_dir(mirror_path)
    return [
        str(base / p) for (p,) in conn.execute("SELECT path FROM archive_parts WHERE tbl = ? ORDER BY path", [table])
    ]


def _dataset(conn: sqlite3.Connection, mirror_path: str, table: str, files: list[str]) -> Any:
    """The archived files of `table` as one dataset in the table's current columns: a file
    written before a column was declared reads it as null (never as a missing field), and one
    written before moments were typed has its text read as timestamps and dates."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    schema = pa.schema([*archive_types(conn, table), ("month", pa.string())])
    missing = [f for f in files if not os.path.isfile(f)]
    if missing:
        raise MirrorDamaged(
            f"{missing[0]}: an archived file is missing ({len(missing)} of {len(files)} of {table}); "
            "`edt archive --verify` lists them: put them back from a backup"
        )
    return ds.dataset(
        files,
        schema=schema,
        format="parquet",
        partitioning=ds.partitioning(pa.schema([("month", pa.string())]), flavor="hive"),
        partition_base_dir=str(archive_dir(mirror_path)),
    )


# -- moving closed listings out -------------------------------------------------------


def archive_closed(
    mirror_path: str | os.PathLike[str], closed_before: datetime, **options: Unpack[ClosingOptions]
) -> ArchiveReport:
    """Move the listings closed before `closed_before`, with their history and raw records,
    into the archive, a batch per transaction, and give their space back to the file system
    (when the mirror reclaims incrementally; else later writes reuse it)."""
    path = os.fspath(mirror_path)
    try:
        report = run_closing(path, closed_before, ArchiveReport, _archive_batch, first=recover, **options)
    finally:
        shutil.rmtree(_staging(path), ignore_errors=True)
    report.archive_bytes = _tree_bytes(archive_dir(path))
    return report


def _archive_batch(path: str, conn: sqlite3.Connection, report: ArchiveReport, batch: int) -> bool:
    """One batch, all or nothing; False when nothing is left before the cut."""
    cut = report.cut
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    staging = _staging(path) / stamp
    parts: list[tuple[str, str, str, Any, tuple[str, ...]]] = []  # (relative path, table, month, rows, key)
    conn.execute("BEGIN IMMEDIATE")  # other writers wait (busy timeout); readers read on
    try:
        conn.execute("DELETE FROM temp.archive_batch")
        # Plain rows and packed ones (toolkit/store/packed.py) alike; a listing in both (packed,
        # listed again, closed again) is one, its plain row winning. A packed listing listed
        # again waits while its plain row is live or closed after the cut: then both go together.
        conn.execute(
            "INSERT OR IGNORE INTO temp.archive_batch (id, month) SELECT id, month FROM "
            "(SELECT id, closed_at, substr(closed_at, 1, 7) AS month FROM listings WHERE closed_at IS NOT NULL "
            " AND closed_at < ? UNION ALL SELECT id, strftime('%Y-%m-%dT%H:%M:%fZ', closed / 1000.0, 'unixepoch'), "
            " strftime('%Y-%m', closed / 1000, 'unixepoch') FROM packed_listings p WHERE closed < ? AND NOT EXISTS "
            " (SELECT 1 FROM listings l WHERE l.id = p.id AND (l.closed_at IS NULL OR l.closed_at >= ?))) "
            "ORDER BY closed_at, id LIMIT ?",
            [cut, epoch_ms(cut), cut, batch],
        )
        chosen = dict(conn.execute("SELECT month, count(*) FROM temp.archive_batch GROUP BY month").fetchall())
        if not chosen:
            conn.execute("ROLLBACK")
            return False
        # A listing archived before, listed again and closed again: its earlier copy leaves the
        # archive, its history and raw records joining this one's (the archive holds an id once).
        batch_ids = [i for (i,) in conn.execute("SELECT id FROM temp.archive_batch")]
        earlier = _take_out(conn, path, _among(batch_ids), batch_ids)
        for month in sorted(chosen):
            for table, (key, rows_of_batch) in ARCHIVED_TABLES.items():
                where = f"({rows_of_batch.replace('temp.archive_batch', f'temp.archive_batch WHERE month = {_quote(month)}')})"
                rows = _with_packed(conn, table, _table_rows(conn, table, where, key), month)
                if table != "listings" and earlier.rows[table] is not None:
                    rows = _joined(rows, _of_month(conn, earlier.rows[table], table, month), key)
                if not rows.num_rows:
                    continue
                relative = f"{table}/month={month}/part-{stamp}.parquet"
                _write_file(rows, staging / relative)
                parts.append((relative, table, month, rows, key))
        delete_plain_batch(conn)
        forget(conn, "id IN (SELECT id FROM temp.archive_batch)")  # packed ones
        now = iso_timestamp(datetime.now(timezone.utc))
        conn.executemany(
            "INSERT INTO archive_parts (path, tbl, month, rows, checksum, first_id, last_id, batch, archived_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (rel, table, month, rows.num_rows, checksum(rows), _first_id(rows), _last_id(rows), stamp, now)
                for rel, table, month, rows, _ in parts
            ],
        )
        for rel, *_ in parts:  # into place: from here the files are the rows, once the commit lands
            target = archive_dir(path) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / rel, target)
            _sync_dir(target.parent)
        conn.execute("COMMIT")
        drop_unlisted(path, earlier.unlisted)
    except BaseException as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        for rel, *_ in parts:
            with contextlib.suppress(NotADirectoryError):  # a file where a folder should be: nothing was moved
                (archive_dir(path) / rel).unlink(missing_ok=True)  # moved before a failed commit
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise ArchiveError(
                f"{archive_dir(path)}: the disk is full ({exc.strerror}); nothing was removed from {path}. "
                "Free some space (the archive needs about a quarter of what the listings take in SQLite) "
                "and run this again"
            ) from None
        if isinstance(exc, OSError) and exc.errno in (errno.ENOTDIR, errno.EEXIST) and exc.filename:
            from ..formats import file_in_the_way

            blocker = file_in_the_way(exc.filename, itself=True)
            if blocker is not None:
                raise ArchiveError(
                    f"{blocker} is a file where the archive needs a folder; nothing was removed from "
                    f"{path}. Move that file away and run this again"
                ) from None
        raise
    shutil.rmtree(staging, ignore_errors=True)
    for month, count in chosen.items():
        report.listings[month] = report.listings.get(month, 0) + count
    report.history += sum(p[3].num_rows for p in parts if p[1] == "listing_history")
    report.raw_records += sum(p[3].num_rows for p in parts if p[1] == "raw_records")
    return True


def _with_packed(conn: sqlite3.Connection, table: str, rows: Any, month: str) -> Any:
    """A batch month's plain rows of `table` and its packed listings' rows, in key order (a
    packed row whose key a plain row holds is the older copy, and left out)."""
    from .packed import packed_table

    packed = packed_table(
        conn, table, rows.column_names, "id IN (SELECT id FROM temp.archive_batch WHERE month = ?)", [month]
    )
    if packed is None:
        return rows
    return _joined(rows, packed, ARCHIVED_TABLES[table][0])  # packed rows hold moments as text, as the mirror does


def _joined(rows: Any, older: Any, key: tuple[str, ...]) -> Any:
    """`rows` and the `older` rows (cast to their types) whose key they do not hold, in key order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    older = pa.table(  # a file written before a column was added lacks it
        {
            f.name: older.column(f.name) if f.name in older.column_names else pa.nulls(older.num_rows, f.type)
            for f in rows.schema
        }
    ).cast(rows.schema)
    if rows.num_rows:
        held = {tuple(k) for k in zip(*(rows.column(c).to_pylist() for c in key))}
        keep = [tuple(k) not in held for k in zip(*(older.column(c).to_pylist() for c in key))]
        older = older.filter(pa.array(keep, pa.bool_()))
    both = pa.concat_tables([rows, older])
    return both.take(pc.sort_indices(both, sort_keys=[(c, "ascending") for c in key]))


def _among(ids: list[int]) -> Callable[[Any], Any]:
    """A mask over a listings file's rows: those whose id is one of `ids`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = pa.array(ids, pa.int64())
    return lambda listed: pc.is_in(listed.column("id"), value_set=wanted)


def _of_month(conn: sqlite3.Connection, rows: Any, table: str, month: str) -> Any:
    """The `rows` (history or raw records) of the batch's listings closed in `month`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ids = pa.array(
        [i for (i,) in conn.execute("SELECT id FROM temp.archive_batch WHERE month = ?", [month])], pa.int64()
    )
    owner = rows.column("listing_id" if table == "listing_history" else "id")
    return rows.filter(pc.fill_null(pc.is_in(owner, value_set=ids), False))


def reclaim_space(mirror_path: str | os.PathLike[str]) -> tuple[int, int]:
    """Once, for a mirror made before it gave space back as it went: switch it to incremental
    reclaiming and rewrite it without its free pages (SQLite's VACUUM: minutes at full scale,
    other writers wait, readers read on). (bytes before, bytes after)."""
    path = os.fspath(mirror_path)
    before = file_bytes(path)
    conn = connect(path)
    try:
        if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != 2:
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            conn.execute("VACUUM")
        else:
            reclaim_pages(conn)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return before, file_bytes(path)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


# -- rows as Arrow, checksums, files ---------------------------------------------------


def _table_rows(conn: sqlite3.Connection, table: str, where: str, key: tuple[str, ...]) -> Any:
    """The rows of `table` matching `where`, in key order, as an Arrow table typed as the
    archive's files are (moments as timestamps); a value of another type stops the archive, naming it."""
    import pyarrow as pa

    columns = archive_types(conn, table)
    names = [c for c, _ in columns]
    data = conn.execute(f"SELECT {', '.join(names)} FROM {table} WHERE {where} ORDER BY {', '.join(key)}").fetchall()
    arrays = []
    for position, (column, kind) in enumerate(columns):
        values = [row[position] for row in data]
        moment = column in MOMENTS.get(table, {})
        if moment:
            try:
                arrays.append(moments_array(values, kind, f"{table}.{column}", _FIX))
            except BadInput as exc:
                raise ArchiveError(str(exc)) from None
            continue
        try:
            arrays.append(pa.array(values, type=kind))
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
            bad = next(v for v in values if v is not None and not _fits(v, kind))
            raise ArchiveError(f"{table}.{column} holds {bad!r}, not its declared type {kind}: {_FIX}") from None
    return pa.Table.from_arrays(arrays, names=names)


_FIX = "nothing was archived; correct that value and run this again"


def _fits(value: Any, kind: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_integer(kind):
        return isinstance(value, int) and -(2**63) <= value < 2**63
    if pa.types.is_floating(kind):
        return isinstance(value, (int, float))
    return isinstance(value, str)


def checksum(rows: Any) -> str:
    """SHA-256 over the rows written as CSV (header, one line a row, in the order given)."""
    import pyarrow.csv as pacsv

    out = io.BytesIO()
    pacsv.write_csv(rows, out)
    return hashlib.sha256(out.getvalue()).hexdigest()


def _first_id(rows: Any) -> int:
    return int(rows.column("id")[0].as_py())


def _last_id(rows: Any) -> int:
    return int(rows.column("id")[-1].as_py())


def _write_file(rows: Any, target: Path) -> None:
    """Write a Parquet file and make it durable; read it back and compare before it counts."""
    import pyarrow.parquet as pq

    target.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(rows, target, compression="zstd", row_group_size=64 * 1024)
    with open(target, "rb") as f:
        os.fsync(f.fileno())
    if checksum(pq.read_table(target)) != checksum(rows):
        raise ArchiveError(f"{target}: the file read back differs from the rows written; nothing was archived")


def _sync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _tree_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*.parquet")) if folder.exists() else 0


# -- after a stop ---------------------------------------------------------------------


def recover(mirror_path: str | os.PathLike[str], conn: sqlite3.Connection | None = None) -> list[Path]:
    """Remove what a stopped archive or restore left: files in the dataset that the manifest
    does not list, and the staging folder. Returns the files removed."""
    path = os.fspath(mirror_path)
    shutil.rmtree(_staging(path), ignore_errors=True)
    base = archive_dir(path)
    if not base.exists():
        return []
    own = conn or connect(path, readonly=True)
    try:
        listed = {p["path"] for p in manifest(own)}
    finally:
        if conn is None:
            own.close()
    removed = []
    for file in sorted(base.rglob("*.parquet")):
        if file.relative_to(base).as_posix() not in listed and _PART.match(file.name):
            file.unlink()
            removed.append(file)
    return removed


# -- reading the archive --------------------------------------------------------------


def archive_table(
    mirror_path: str | os.PathLike[str],
    table: str,
    *,
    columns: list[str] | None = None,
    filter: Any = None,
    conn: sqlite3.Connection | None = None,
) -> Any:
    """An archived table as one Arrow table (the files the manifest lists, with their `month`),
    optionally only `columns` and the rows a pyarrow `filter` keeps; None when nothing is
    archived. `conn` reads the manifest inside the caller's transaction."""
    import pyarrow as pa

    from .packed import packed_table

    path = os.fspath(mirror_path)
    own = conn or connect(path, readonly=True)
    try:
        files = _files(own, path, table)
        packed = packed_table(own, table, columns)
        dataset = _dataset(own, path, table, files) if files else None
        kinds = dict(archive_types(own, table))
    finally:
        if conn is None:
            own.close()
    found = None
    if dataset is not None:
        found = as_stored(dataset.to_table(columns=columns, filter=filter))  # the mirror's own form, as packed rows
    if packed is not None:  # packed listings: still in the mirror, so without a month
        if filter is not None:  # on the files' types: a filter on a moment compares timestamps
            packed = as_stored(as_typed(packed, table, kinds).filter(filter))
        if found is not None:
            if "month" in found.column_names:
                packed = packed.append_column("month", pa.nulls(packed.num_rows, pa.string()))
            packed = packed.cast(found.schema)
            found = pa.concat_tables([found, packed])
        else:
            found = packed
    return found


def archived_rows(
    mirror_path: str | os.PathLike[str],
    table: str,
    column: str,
    values: Iterable[Any],
    columns: list[str],
    conn: sqlite3.Connection | None = None,
) -> list[tuple]:
    """Archived rows of `table` whose `column` is one of `values`, as tuples of `columns`."""
    import pyarrow.compute as pc

    from .packed import packed_rows

    wanted = list(values)
    if not wanted:
        return []
    path = os.fspath(mirror_path)
    own = conn or connect(path, readonly=True)
    try:
        files = _files(own, path, table)
        rows = packed_rows(own, table, column, wanted, columns)  # by the packed rows' own indexes
        dataset = _dataset(own, path, table, files) if files else None
    finally:
        if conn is None:
            own.close()
    if dataset is not None:
        found = as_stored(dataset.to_table(columns=columns, filter=pc.field(column).isin(wanted)))
        rows = list(zip(*(found.column(c).to_pylist() for c in columns))) + rows if found.num_rows else rows
    return rows


def verify(mirror_path: str | os.PathLike[str]) -> list[str]:
    """Each listed file read back and compared with its recorded rows and checksum, and each
    packed listing read: the problems found (empty when the archive is whole)."""
    import pyarrow.parquet as pq

    from .packed import check_packed

    path = os.fspath(mirror_path)
    conn = connect(path, readonly=True)
    try:
        parts = manifest(conn)
        problems = check_packed(conn)
    finally:
        conn.close()
    for part in parts:
        file = archive_dir(path) / part["path"]
        try:
            rows = pq.read_table(file)
        except (OSError, ValueError) as exc:
            problems.append(f"{file}: cannot be read ({exc})")
            continue
        if rows.num_rows != part["rows"] or checksum(rows) != part["checksum"]:
            problems.append(f"{file}: holds {rows.num_rows} rows with another checksum than recorded ({part['rows']})")
    return problems


# -- putting a month back -------------------------------------------------------------


def restore_month(mirror_path: str | os.PathLike[str], month: str) -> dict[str, int]:
    """Put an archived month back into SQLite, checked against its checksums, in one
    transaction; its files leave the archive. Returns the rows restored per table."""
    import pyarrow.parquet as pq

    path = os.fspath(mirror_path)
    if not re.fullmatch(r"\d{4}-\d{2}", month):
        raise ArchiveError(f"--restore {month!r}: write the month as YYYY-MM")
    conn = connect(path)
    restored: dict[str, int] = {}
    try:
        recover(path, conn)
        parts = [p for p in manifest(conn) if p["month"] == month]
        if not parts:
            raise ArchiveError(f"--restore {month}: no archived month {month} (`edt archive --list` lists them)")
        conn.execute("BEGIN IMMEDIATE")
        try:
            for table in ARCHIVED_TABLES:  # listings first: history rows follow their listing
                for part in (p for p in parts if p["table"] == table):
                    rows = pq.read_table(archive_dir(path) / part["path"])
                    if rows.num_rows != part["rows"] or checksum(rows) != part["checksum"]:
                        raise ArchiveError(
                            f"{archive_dir(path) / part['path']}: its rows differ from those recorded; "
                            "nothing was restored"
                        )
                    rows = as_stored(rows)  # moments back to the mirror's text
                    names = rows.column_names
                    back = put_back(conn, table, names, list(zip(*(rows.column(c).to_pylist() for c in names))))
                    restored[table] = restored.get(table, 0) + back
            conn.executemany("DELETE FROM archive_parts WHERE path = ?", [(p["path"],) for p in parts])
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        for part in parts:  # no longer listed: a stop here leaves files the next run removes
            (archive_dir(path) / part["path"]).unlink(missing_ok=True)
    finally:
        conn.close()
    return restored


# -- mirror and archive as one, for analysts -------------------------------------------


def open_duckdb(mirror_path: str | os.PathLike[str], *, tables: Iterable[str] = ARCHIVED_TABLES) -> Any:
    """A DuckDB connection in which `listings`, `listing_history` and `raw_records` are the
    mirror's rows and the archive's as one (views over Arrow tables read from SQLite, in
    one read transaction, and the archive's Parquet files), each row with its `month`
    (null for rows still in SQLite). DuckDB reads SQLite only through an extension it
    downloads, so the rows are handed to it as Arrow."""
    try:
        import duckdb
    except ImportError:
        raise ArchiveError("DuckDB is not installed: pip install duckdb") from None
    import pyarrow as pa

    path = os.fspath(mirror_path)
    db = duckdb.connect()
    conn = connect(path, readonly=True)
    try:
        conn.execute("BEGIN")
        from .packed import packed_table

        for table in tables:
            live = _table_rows(conn, table, "1", ARCHIVED_TABLES[table][0])
            packed = packed_table(conn, table)
            if packed is not None:  # packed listings are the mirror's rows too
                live = pa.concat_tables([live, packed.cast(live.schema)])
            db.register(f"_{table}_mirror", live)
            files = _files(conn, path, table)
            if files:
                listed = ", ".join(_quote(f) for f in files)
                # files written before moments were typed hold them as text: every file's are read as moments
                typed = ", ".join(
                    f'CAST("{c}" AS {"DATE" if kind == "date" else "TIMESTAMPTZ"}) AS "{c}"'
                    for c, kind in MOMENTS[table].items()
                    if c in live.column_names
                )
                files_sql = (
                    f"SELECT * {f'REPLACE ({typed}) ' if typed else ''}FROM read_parquet([{listed}], "
                    "hive_partitioning = true, union_by_name = true)"
                )
                db.execute(
                    f"CREATE VIEW {table} AS SELECT *, CAST(NULL AS VARCHAR) AS month FROM _{table}_mirror "
                    f"UNION ALL BY NAME {files_sql}"
                )
            else:
                db.execute(f"CREATE VIEW {table} AS SELECT *, CAST(NULL AS VARCHAR) AS month FROM _{table}_mirror")
        conn.execute("COMMIT")
    finally:
        conn.close()
    return db


# -- taking one origin's listings out ---------------------------------------------------


def remove_archived_origin(
    conn: sqlite3.Connection, mirror_path: str | os.PathLike[str], origin: str
) -> tuple[set[int], dict[str, int], list[Path]]:
    """Take the archived listings of `origin` (with their history and raw records) out of the
    archive, inside the caller's transaction: a file holding only such rows leaves the
    manifest; a file holding others too is written again without them (a new file, listed in
    its place). Returns (the listing ids removed, rows removed per table, the files no longer
    listed: unlink them once the transaction commits; `recover` removes them otherwise)."""
    import pyarrow.compute as pc

    taken = _take_out(conn, mirror_path, lambda listed: pc.equal(listed.column("origin"), origin))
    removed = {table: rows.num_rows if rows is not None else 0 for table, rows in taken.rows.items()}
    return taken.ids, removed, taken.unlisted


@dataclass
class _TakenOut:
    ids: set[int]  # the listings taken out
    rows: dict[str, Any]  # per table, the rows taken out (an Arrow table, or None)
    unlisted: list[Path]  # files no longer listed: unlink them once the transaction commits


def _take_out(
    conn: sqlite3.Connection, mirror_path: str | os.PathLike[str], picked: Callable[[Any], Any], ids: Any = None
) -> _TakenOut:
    """Take the archived listings `picked` chooses (a mask over a listings file's `id` and
    `origin` columns) out of the archive with their history and raw records, inside the
    caller's transaction (see `remove_archived_origin`). `ids`: only files whose id range may
    hold one of these are read."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = os.fspath(mirror_path)
    base = archive_dir(path)
    groups: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
    for part in manifest(conn):
        groups.setdefault((part["batch"], part["month"]), {})[part["table"]] = part
    taken = _TakenOut(set(), {table: None for table in ARCHIVED_TABLES}, [])
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%f")
    staging = _staging(path) / stamp
    low, high = (min(ids), max(ids)) if ids else (None, None)
    for number, ((_, month), parts) in enumerate(sorted(groups.items())):
        listings = parts.get("listings")
        if listings is None or (low is not None and (listings["last_id"] < low or listings["first_id"] > high)):
            continue
        listed = pq.read_table(base / listings["path"], columns=["id", "origin"])
        chosen = pc.filter(listed.column("id"), pc.fill_null(picked(listed), False))
        if not len(chosen):
            continue
        taken.ids.update(chosen.to_pylist())
        for table, part in parts.items():
            rows = pq.read_table(base / part["path"])
            owner = rows.column("listing_id" if table == "listing_history" else "id")
            gone = pc.is_in(owner, value_set=chosen)
            if table == "raw_records":
                gone = pc.and_(gone, pc.equal(rows.column("kind"), "listing"))
            gone = pc.fill_null(gone, False)
            if not pc.any(gone).as_py():
                continue
            out = rows.filter(gone)
            taken.rows[table] = out if taken.rows[table] is None else pa.concat_tables([taken.rows[table], out])
            kept = rows.filter(pc.invert(gone))
            conn.execute("DELETE FROM archive_parts WHERE path = ?", [part["path"]])
            taken.unlisted.append(base / part["path"])
            if kept.num_rows:  # the other rows, in a file of their own
                relative = f"{table}/month={month}/part-{stamp}-{number}.parquet"
                _write_file(pa.Table.from_batches(kept.to_batches(), schema=rows.schema), staging / relative)
                target = base / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / relative, target)
                conn.execute(
                    "INSERT INTO archive_parts (path, tbl, month, rows, checksum, first_id, last_id, batch, archived_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        relative,
                        table,
                        month,
                        kept.num_rows,
                        checksum(kept),
                        _first_id(kept),
                        _last_id(kept),
                        f"{stamp}-{number}",
                        part["archived_at"],
                    ],
                )
    shutil.rmtree(staging, ignore_errors=True)
    return taken


def drop_unlisted(mirror_path: str | os.PathLike[str], files: Iterable[Path]) -> None:
    """After the commit that unlisted `files`: remove them, then the folders they leave
    empty (the archive's own folder too, when nothing is archived any more)."""
    base = archive_dir(mirror_path)
    for file in files:
        file.unlink(missing_ok=True)
    if base.is_dir():
        for folder in sorted((p for p in base.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only an empty one goes
        with contextlib.suppress(OSError):
            base.rmdir()
