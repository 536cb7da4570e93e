"""Packed closed listings: a listing closed some weeks ago, with its history and raw records,
kept in the mirror as one compressed record, at about a quarter of the bytes its rows and
their index entries took.

A closed listing is read far less than a live one, and never by a live request. Its wide
row (some 80 columns), its history rows and their index entries cost about 1 KB a listing in
SQLite; a year of daily syncs closes some 12 million. Packed, the listing is one row of
`packed_listings`: its id, its closing time (indexed: the archive's cut) and a zstd frame of
its rows as JSON, compressed with a dictionary trained on the mirror's own records
(`packed_codecs`, with the columns each table had when it was written); `packed_names` finds
a name's packed listings.

Readers see packed rows where they see archived ones (`toolkit/store/parquet_archive.py`:
`archive_table`, `archived_rows`, `open_duckdb`), so the API, the app and the notebooks
read mirror, packed rows and archive as one. `edt archive` packs what closed more than
`--pack-after` ago (default 30 days) and moves to Parquet what closed before
`--closed-before`, packed or not; `unpack` puts packed rows back as plain rows.

Each batch is one transaction, as the archive's: the records are written, the rows are
deleted, and both land together or not at all.
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Unpack

from .closing import (
    ARCHIVED_TABLES,
    BATCH,
    ArchiveError,
    ClosingOptions,
    ClosingReport,
    declared,
    delete_plain_batch,
    put_back,
    run_closing,
)
from .transaction import one_transaction
from .fields import iso_timestamp
from .schema import connect

__all__ = [
    "PACK_AFTER",
    "PackReport",
    "pack_closed",
    "packed_months",
    "packed_rows",
    "packed_table",
    "packed_version",
    "check_packed",
    "unpack",
    "packed_origins",
    "forget_packed",
]

PACK_AFTER = "30d"  # `edt archive`'s default: a month of closings stays plain rows, for plain SQL
LEVEL = 12  # zstd: within 4% of level 19's size at a ninth of its time (24 us a record)
DICTIONARY_BYTES = 128 * 1024
MIN_SAMPLES = 1_000  # fewer records than this train no dictionary (they are packed without one)
TABLES = tuple(ARCHIVED_TABLES)  # a record: [listing row, [history rows], [raw records]]
# How a table's rows belong to a listing: the column holding its id.
OWNER = {"listings": "id", "listing_history": "listing_id", "raw_records": "id"}


@dataclass
class PackReport(ClosingReport):
    """What one `pack_closed` packed, and the mirror's bytes before and after."""

    listings: int = 0


class _Codec:
    """One `packed_codecs` row: the columns of each table when it was written, and the
    dictionary (none for a mirror with too few records to train one)."""

    def __init__(self, codec_id: int, columns: dict[str, list[str]], dictionary: bytes | None):
        import zstandard

        self.id = codec_id
        self.columns = {table: tuple(names) for table, names in columns.items()}
        data = zstandard.ZstdCompressionDict(dictionary) if dictionary else None
        self._compressor = zstandard.ZstdCompressor(level=LEVEL, dict_data=data, write_checksum=True)
        self._decompressor = zstandard.ZstdDecompressor(dict_data=data)

    def encode(self, document: bytes) -> bytes:
        return self._compressor.compress(document)

    def decode(self, record: bytes) -> list:
        return json.loads(self._decompressor.decompress(record))


def epoch_ms(timestamp: str) -> int:
    """A mirror timestamp as milliseconds since 1970 (naive means UTC)."""
    moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00").replace("z", "+00:00"))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return int(moment.timestamp() * 1000 // 1)


def _document(listing: tuple, history: list[tuple], raw: list[tuple]) -> bytes:
    return json.dumps([listing, history, raw], separators=(",", ":")).encode()


def _columns(conn: sqlite3.Connection) -> dict[str, list[str]]:
    return {table: [row[1] for row in conn.execute(f"PRAGMA table_info({table})")] for table in TABLES}


def _codecs(conn: sqlite3.Connection) -> dict[int, _Codec]:
    return {
        i: _Codec(i, json.loads(columns), dictionary)
        for i, columns, dictionary in conn.execute("SELECT id, columns, dictionary FROM packed_codecs")
    }


def _codec_for(conn: sqlite3.Connection, columns: dict[str, list[str]], samples: list[bytes]) -> _Codec:
    """The newest codec for these columns with a dictionary; else one trained on `samples`
    (enough of them), else one without a dictionary."""
    import zstandard

    wanted = json.dumps(columns)
    plain = None
    for codec_id, dictionary in conn.execute(
        "SELECT id, dictionary FROM packed_codecs WHERE columns = ? ORDER BY id DESC", [wanted]
    ):
        if dictionary:
            return _Codec(codec_id, columns, dictionary)
        plain = plain or codec_id
    trained = None
    if len(samples) >= MIN_SAMPLES:
        try:
            chosen: list[bytes | bytearray | memoryview] = list(samples[:20_000])
            trained = zstandard.train_dictionary(DICTIONARY_BYTES, chosen).as_bytes()
        except zstandard.ZstdError:  # records too alike or too few bytes to learn from
            trained = None
    if trained is None and plain is not None:
        return _Codec(plain, columns, None)
    made = iso_timestamp(datetime.now(timezone.utc))
    cursor = conn.execute(
        "INSERT INTO packed_codecs (columns, dictionary, made_at) VALUES (?, ?, ?)", [wanted, trained, made]
    )
    assert cursor.lastrowid is not None  # an INSERT's row
    return _Codec(cursor.lastrowid, columns, trained)


def packed_version(conn: sqlite3.Connection) -> str:
    """Changes whenever listings are packed or unpacked (readers' caches key on it)."""
    row = conn.execute("SELECT value FROM mirror_meta WHERE key = 'packed_version'").fetchone()
    return row[0] if row else "0"


def _bump_version(conn: sqlite3.Connection) -> None:
    conn.execute(
        "INSERT INTO mirror_meta (key, value) VALUES ('packed_version', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )


# -- packing ------------------------------------------------------------------------------


def pack_closed(
    mirror_path: str | os.PathLike[str], closed_before: datetime, **options: Unpack[ClosingOptions]
) -> PackReport:
    """Pack the listings closed before `closed_before`, with their history and raw records,
    a batch per transaction; then optimize the name search's index (the deleted rows leave
    tombstones there) and give the space back."""
    return run_closing(mirror_path, closed_before, PackReport, _pack_batch, **options)


def _pack_batch(path: str, conn: sqlite3.Connection, report: PackReport, batch: int) -> bool:
    """One batch, all or nothing; False when nothing closed before the cut is left unpacked."""
    cut = report.cut
    with one_transaction(conn):  # other writers wait (busy timeout); readers read on
        conn.execute("DELETE FROM temp.archive_batch")
        conn.execute(
            "INSERT INTO temp.archive_batch (id, month) SELECT id, substr(closed_at, 1, 7) FROM listings "
            "WHERE closed_at IS NOT NULL AND closed_at < ? ORDER BY closed_at, id LIMIT ?",
            [cut, batch],
        )
        if not conn.execute("SELECT count(*) FROM temp.archive_batch").fetchone()[0]:
            return False
        columns = _columns(conn)
        rows = {table: _rows_of_batch(conn, table, columns[table]) for table in TABLES}
        earlier = _earlier_records(conn)
        documents = []
        for listing in rows["listings"]:
            history, raw = rows["listing_history"].get(listing[0], []), rows["raw_records"].get(listing[0], [])
            if listing[0] in earlier:  # closed, packed, listed again and closed again: one record
                history, raw = _merged(earlier[listing[0]], columns, history, raw)
            documents.append((listing, _document(listing, history, raw)))
        codec = _codec_for(conn, columns, [d for _, d in documents])
        at = {c: i for i, c in enumerate(columns["listings"])}
        delete_plain_batch(conn)
        forget(conn, "id IN (SELECT id FROM temp.archive_batch)")  # the earlier records merged above
        conn.executemany(
            "INSERT INTO packed_listings (id, closed, codec, record) VALUES (?, ?, ?, ?)",
            [
                (listing[0], _closed(listing[0], listing[at["closed_at"]]), codec.id, codec.encode(document))
                for listing, document in documents
            ],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO packed_names (name, id) VALUES (?, ?)",
            [(listing[at["name"]], listing[0]) for listing, _ in documents],
        )
        _bump_version(conn)
    report.listings += len(documents)
    report.history += sum(len(v) for v in rows["listing_history"].values())
    report.raw_records += sum(len(v) for v in rows["raw_records"].values())
    return True


def _closed(listing_id: int, closed_at: Any) -> int:
    try:
        return epoch_ms(str(closed_at))
    except ValueError:
        raise ArchiveError(
            f"listings.closed_at of listing {listing_id} is {closed_at!r}, not a timestamp: packing "
            "stopped at its batch, left as it was; correct that value (YYYY-MM-DDTHH:MM:SSZ) and run "
            "this again"
        ) from None


def _rows_of_batch(conn: sqlite3.Connection, table: str, columns: list[str]) -> Any:
    """The batch's rows of a table: listings as a list, the others grouped by listing id."""
    owner = columns.index(OWNER[table])
    rows = conn.execute(
        f"SELECT {', '.join(columns)} FROM {table} WHERE {ARCHIVED_TABLES[table][1]} "
        f"ORDER BY {', '.join(ARCHIVED_TABLES[table][0])}"
    ).fetchall()
    if table == "listings":
        return rows
    grouped: dict[int, list[tuple]] = {}
    for row in rows:
        grouped.setdefault(row[owner], []).append(row)
    return grouped


def _earlier_records(conn: sqlite3.Connection) -> dict[int, tuple[_Codec, list]]:
    found = conn.execute(
        "SELECT id, codec, record FROM packed_listings WHERE id IN (SELECT id FROM temp.archive_batch)"
    ).fetchall()
    if not found:
        return {}
    codecs = _codecs(conn)
    return {i: (codecs[c], codecs[c].decode(record)) for i, c, record in found}


def _merged(
    earlier: tuple[_Codec, list], columns: dict[str, list[str]], history: list[tuple], raw: list[tuple]
) -> tuple[list[tuple], list[tuple]]:
    """The earlier record's history and raw records joined with the batch's (the batch's
    row wins on the same key)."""
    codec, (_, old_history, old_raw) = earlier
    merged = []
    for table, old, new in (("listing_history", old_history, history), ("raw_records", old_raw, raw)):
        keyed = {
            _key(table, columns[table], r): r for r in (_reshaped(r, codec.columns[table], columns[table]) for r in old)
        }
        keyed.update({_key(table, columns[table], r): r for r in new})
        merged.append([keyed[k] for k in sorted(keyed)])
    return merged[0], merged[1]


def _key(table: str, columns: list[str], row: Iterable[Any]) -> tuple:
    row = list(row)
    return tuple(row[columns.index(k)] for k in ARCHIVED_TABLES[table][0])


def _reshaped(row: list, had: Sequence[str], wanted: Sequence[str]) -> tuple:
    """A row written with the columns `had`, in the columns `wanted` (new ones null)."""
    return tuple(row[i] if i is not None else None for i in _positions(tuple(had), tuple(wanted)))  # cached by columns


@functools.lru_cache(maxsize=64)
def _positions(had: tuple[str, ...], wanted: tuple[str, ...]) -> tuple[int | None, ...]:
    at = {c: i for i, c in enumerate(had)}
    return tuple(at.get(c) for c in wanted)


def forget(conn: sqlite3.Connection, where: str) -> None:
    """Delete the packed listings `where` picks, and their names (inside the caller's transaction)."""
    names = [
        (doc[0][codec.columns["listings"].index("name")], doc[0][codec.columns["listings"].index("id")])
        for codec, doc in _records(conn, where)
    ]
    conn.executemany("DELETE FROM packed_names WHERE name = ? AND id = ?", names)
    conn.execute(f"DELETE FROM packed_listings WHERE {where}")


# -- reading ------------------------------------------------------------------------------


def _records(conn: sqlite3.Connection, where: str = "1", args: Iterable[Any] = ()) -> Iterator[tuple[_Codec, list]]:
    codecs = _codecs(conn)
    for codec_id, record in conn.execute(
        f"SELECT codec, record FROM packed_listings WHERE {where} ORDER BY id", list(args)
    ):
        yield codecs[codec_id], codecs[codec_id].decode(record)


def _rows_in(document: list, table: str) -> list[list]:
    """A record's rows of one table."""
    listing, history, raw = document
    return [listing] if table == "listings" else history if table == "listing_history" else raw


def packed_rows(
    conn: sqlite3.Connection, table: str, column: str, values: Iterable[Any], columns: list[str]
) -> list[tuple]:
    """Packed rows of `table` whose `column` is one of `values`, as tuples of `columns`."""
    wanted = list(dict.fromkeys(values))
    if not wanted:
        return []
    if column == OWNER[table] or (table == "listings" and column == "name"):
        pick = "id IN ({})" if column != "name" else "id IN (SELECT id FROM packed_names WHERE name IN ({}))"
        chunks = [wanted[i : i + 500] for i in range(0, len(wanted), 500)]
        found: Iterator[tuple[_Codec, list]] = (
            r for chunk in chunks for r in _records(conn, pick.format(", ".join("?" * len(chunk))), chunk)
        )
    else:
        found = _records(conn)
    wanted_set, out = set(wanted), []
    for codec, document in found:
        had = codec.columns[table]
        for row in _rows_in(document, table):
            shaped = _reshaped(row, had, columns if column in columns else [*columns, column])
            if shaped[-1 if column not in columns else columns.index(column)] in wanted_set:
                out.append(shaped[: len(columns)])
    return out


def packed_table(
    conn: sqlite3.Connection,
    table: str,
    columns: list[str] | None = None,
    where: str = "1",
    args: Iterable[Any] = (),
    chunk: int = 100_000,
) -> Any:
    """Packed rows of `table` (those of the packed listings `where` picks) as an Arrow table
    typed by the table's declared columns, in key order; None when nothing is packed. Read
    `chunk` records at a time: memory holds Arrow columns, not millions of Python rows."""
    import pyarrow as pa

    types = dict(declared(conn, table))
    names = list(types) if columns is None else [c for c in columns if c in types]
    schema = pa.schema([(c, getattr(pa, types[c])()) for c in names])
    batches: list[Any] = []
    rows: list[tuple] = []

    def flush() -> None:
        if rows:
            batches.append(
                pa.RecordBatch.from_arrays(
                    [pa.array(list(values), type=field.type) for values, field in zip(zip(*rows), schema)],
                    schema=schema,
                )
            )
            rows.clear()

    for codec, document in _records(conn, where, args):
        rows.extend(_reshaped(row, codec.columns[table], names) for row in _rows_in(document, table))
        if len(rows) >= chunk:
            flush()
    flush()
    if not batches:
        return None
    found = pa.Table.from_batches(batches, schema=schema)
    keys = [k for k in ARCHIVED_TABLES[table][0] if k in names]
    return found.sort_by([(k, "ascending") for k in keys]) if keys else found


def packed_months(conn: sqlite3.Connection) -> dict[str, int]:
    """Packed listings per month they closed in."""
    return dict(
        conn.execute(
            "SELECT strftime('%Y-%m', closed / 1000, 'unixepoch'), count(*) FROM packed_listings GROUP BY 1 ORDER BY 1"
        )
    )


def check_packed(conn: sqlite3.Connection) -> list[str]:
    """Every packed record decompressed (its zstd checksum checked) and read: the problems found."""
    import zstandard

    codecs, problems = _codecs(conn), []
    for listing_id, codec_id, record in conn.execute("SELECT id, codec, record FROM packed_listings ORDER BY id"):
        try:
            listing = codecs[codec_id].decode(record)[0]
            if listing[codecs[codec_id].columns["listings"].index("id")] != listing_id:
                problems.append(f"packed listing {listing_id}: its record holds listing {listing[0]}")
        except (KeyError, ValueError, zstandard.ZstdError) as exc:
            problems.append(f"packed listing {listing_id}: cannot be read ({exc})")
    return problems


def unpack(mirror_path: str | os.PathLike[str], *, batch: int = BATCH) -> int:
    """Put every packed listing back as plain rows (listings, history, raw records), a batch
    per transaction. Returns the listings unpacked."""
    path = os.fspath(mirror_path)
    conn = connect(path)
    done = 0
    try:
        columns = _columns(conn)
        while True:
            with one_transaction(conn):
                ids = [i for (i,) in conn.execute("SELECT id FROM packed_listings ORDER BY id LIMIT ?", [batch])]
                if not ids:
                    break
                marks = ", ".join("?" * len(ids))
                for codec, document in list(_records(conn, f"id IN ({marks})", ids)):
                    for table in TABLES:
                        shaped = [_reshaped(r, codec.columns[table], columns[table]) for r in _rows_in(document, table)]
                        put_back(conn, table, columns[table], shaped)  # a listing listed again keeps its plain row
                forget(conn, f"id IN ({', '.join(map(str, ids))})")
                _bump_version(conn)
            done += len(ids)
    finally:
        conn.close()
    return done


def packed_origins(conn: sqlite3.Connection) -> dict[str, list[int]]:
    """The packed listings' ids, per origin (the writer's `origin`: demo, sync, ingest, ...)."""
    found: dict[str, list[int]] = {}
    listings = packed_table(conn, "listings", ["id", "origin"])
    if listings is not None:
        for listing_id, origin in zip(listings.column("id").to_pylist(), listings.column("origin").to_pylist()):
            found.setdefault(origin or "unknown", []).append(listing_id)
    return found


def forget_packed(conn: sqlite3.Connection, ids_table: str) -> None:
    """Delete the packed listings whose ids `ids_table` (a table of `id`s) holds, and the
    codecs no packed listing uses any more (inside the caller's transaction)."""
    forget(conn, f"id IN (SELECT id FROM {ids_table})")
    conn.execute("DELETE FROM packed_codecs WHERE id NOT IN (SELECT DISTINCT codec FROM packed_listings)")
    _bump_version(conn)
