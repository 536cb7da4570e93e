"""The mirror's columns read for the columnar index, as Arrow tables.

SQLite writes each row as one line of text (one `printf` a row) and Arrow's CSV reader parses
them, a slice of rows at a time; a build reads its groups of columns inside one read
transaction (`scans`), on a connection that neither maps the mirror nor keeps a big cache
(`reading`).
"""

from __future__ import annotations

import io
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

from ..store.schema import LISTING_COLUMNS, REAL_EXPRESSIONS, connect
from .columnar_index import CODE_COLUMNS, DAY_COLUMNS, PARTS, TIME_COLUMNS

__all__ = ["column_kind", "read_generation", "read_rows", "reading", "row_source", "scan", "scans", "text_field"]


def row_source(part: str) -> str:
    """The rows a part reads: the live part from the covering index (open listings only)."""
    if part == "live":
        return f"listings INDEXED BY idx_listings_filters WHERE {PARTS['live']}"
    return "listings"


def column_kind(column: str) -> str:
    """How a column is read: int, real, time, day, code or name."""
    if column in TIME_COLUMNS:
        return "time"
    if column in DAY_COLUMNS:
        return "day"
    if column in CODE_COLUMNS:
        return "code"
    if column == "name":
        return "name"
    return "real" if LISTING_COLUMNS.get(column) == "num" or column in REAL_EXPRESSIONS else "int"


def text_field(column: str) -> str:
    """One column of a row as text for `printf('%s...')`: NULL is empty; reals are written
    with 17 significant digits, which read back exactly."""
    if column_kind(column) == "real":
        return f"iif({column} IS NULL, NULL, printf('%!.17g', {column}))"
    return column


_SEPARATOR = "\x1f"  # between fields (texts hold commas); rows end with a line break


def scan(path: str, columns: list[str], part: str) -> tuple[int, Any]:
    """One scan of the mirror inside one read transaction: its generation and the columns
    of every row of the part as an Arrow table (the `all` part: the archive's rows too)."""
    (found,) = scans(path, [columns], part)  # read to its end: the connection is closed
    return found


def scans(path: str, groups: list[list[str]], part: str) -> Iterator[tuple[int, Any]]:
    """`scan` of each group of columns in turn, all inside one read transaction (one
    generation): a group's table can be let go before the next is read."""
    conn = reading(path)
    try:
        conn.execute("BEGIN")
        generation = read_generation(conn)
        for columns in groups:
            rows = read_rows(conn, columns, row_source(part))
            if part == "all":
                rows = _with_archive(conn, path, rows, columns)
            yield generation, rows
            del rows
    finally:
        conn.close()


def reading(path: str) -> sqlite3.Connection:
    """A read-only connection for a scan: each page is read once, so neither mapped (every page
    read would count as this process's memory: the whole covering index, or the table after a
    feed's day) nor kept in a big cache; the system's page cache serves them."""
    conn = connect(path, readonly=True)
    conn.execute("PRAGMA mmap_size=0")
    conn.execute("PRAGMA cache_size=-4096")
    return conn


def _with_archive(conn: sqlite3.Connection, path: str, rows: Any, columns: list[str]) -> Any:
    """The scanned rows and the archived listings' (the files the manifest lists in this
    read transaction), in the scan's types."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..store.parquet_archive import archive_table

    plain = [c for c in columns if c in LISTING_COLUMNS]
    # A filter's expression (a ratio, a sum) is computed by SQLite, as the scan computes it.
    expressions = [c for c in columns if c not in LISTING_COLUMNS]
    inputs = sorted({w for c in expressions for w in re.findall(r"[a-z_]+", c) if w in LISTING_COLUMNS})
    archived = archive_table(path, "listings", columns=sorted(set(plain) | set(inputs)), conn=conn)
    if archived is None or not archived.num_rows:
        return rows
    if expressions:
        scratch = sqlite3.connect(":memory:")
        try:
            scratch.execute(f"CREATE TABLE t ({', '.join(inputs)})")
            scratch.executemany(
                f"INSERT INTO t VALUES ({', '.join('?' * len(inputs))})",
                zip(*(archived.column(c).to_pylist() for c in inputs)),
            )
            computed = read_rows(scratch, expressions, "t")
        finally:
            scratch.close()
        for column in expressions:
            archived = archived.append_column(column, computed.column(column))
    merged = {}
    for column in columns:
        kind, mine, theirs = column_kind(column), rows.column(column), archived.column(column)
        # (chunks, not the chunked arrays: pyarrow reads a ChunkedArray handed to chunked_array value by value)
        if kind == "code":
            both = pa.chunked_array(mine.cast(pa.string()).chunks + theirs.cast(pa.string()).chunks, pa.string())
            merged[column] = pc.dictionary_encode(both.combine_chunks()).cast(pa.dictionary(pa.int32(), pa.string()))
        else:
            merged[column] = pa.chunked_array(mine.chunks + theirs.cast(mine.type).chunks, mine.type).combine_chunks()
    return pa.table(merged)


_SCAN_SLICE = 65536  # rows parsed at a time: the text of a million rows would be held three times over


def read_rows(conn: sqlite3.Connection, columns: list[str], source: str, args: tuple = ()) -> Any:
    """`columns` of the rows of `source` as an Arrow table (in chunks). SQLite writes each row
    as one line of text (one `printf` a row), Arrow's CSV reader parses them, `_SCAN_SLICE`
    lines at a time."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    line = "printf('" + _SEPARATOR.join(["%s"] * len(columns)) + "', " + ", ".join(map(text_field, columns)) + ")"
    types = {
        "int": pa.int64(),
        "real": pa.float64(),
        "day": pa.string(),
        "time": pa.string(),
        "code": pa.dictionary(pa.int32(), pa.string()),
        "name": pa.string(),
    }
    column_types = {c: types[column_kind(c)] for c in columns}
    options = {
        "read_options": pacsv.ReadOptions(column_names=columns, block_size=1 << 24),
        "parse_options": pacsv.ParseOptions(delimiter=_SEPARATOR, quote_char=False, ignore_empty_lines=False),
        "convert_options": pacsv.ConvertOptions(column_types=column_types, null_values=[""], strings_can_be_null=True),
    }
    cursor = conn.execute(f"SELECT {line} FROM {source}", args)
    tables = []
    while lines := cursor.fetchmany(_SCAN_SLICE):
        table = pacsv.read_csv(io.BytesIO("\n".join([text for (text,) in lines]).encode() + b"\n"), **options)
        if table.num_rows != len(lines):
            raise ValueError(f"{table.num_rows} lines for {len(lines)} rows (a line break inside a value?)")
        tables.append(table)
    if not tables:
        return pa.table({c: pa.array([], type=t) for c, t in column_types.items()})
    return pa.concat_tables(tables).unify_dictionaries()


def read_generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0
