"""What a mirror file holds, read as SQLite lists it, and a table's rows read through its own
pages (never an index), a damaged range skipped: what `edt doctor`'s diagnosis and salvage read.
"""

from __future__ import annotations

import bisect
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass

from .damage import NotSQLite, Unreadable, damage_in, damage_words, not_sqlite

__all__ = [
    "BATCH",
    "FileObject",
    "FileSchema",
    "PageReader",
    "damaged_pages",
    "quoted",
    "read_schema",
    "table_columns",
]

MIN_ROWID, MAX_ROWID = -(2**63), 2**63 - 1
BATCH = 1000  # rows per read (and per insert when salvaging)
_FTS_SHADOWS = ("data", "idx", "docsize", "config", "content")


# -- what the file holds ---------------------------------------------------------------------------


@dataclass
class FileObject:
    name: str
    type: str
    table: str
    sql: str | None

    @property
    def partial(self) -> bool:
        return bool(self.sql and re.search(r"\)\s+WHERE\s", self.sql, re.IGNORECASE))

    @property
    def without_rowid(self) -> bool:
        return bool(self.sql and re.search(r"WITHOUT\s+ROWID\s*$", self.sql, re.IGNORECASE))

    @property
    def virtual(self) -> bool:
        return bool(self.sql and self.sql.lstrip().upper().startswith("CREATE VIRTUAL TABLE"))


@dataclass
class FileSchema:
    tables: list[FileObject]  # tables holding rows (not shadow tables, not statistics)
    indexes: dict[str, list[FileObject]]  # table -> its indexes
    fts: dict[str, list[tuple[FileObject, list[FileObject]]]]  # content table -> [(virtual table, its shadow tables)]
    stats: list[FileObject]  # sqlite_stat1, sqlite_stat4: ANALYZE rebuilds them
    objects: dict[str, FileObject]


def read_schema(conn: sqlite3.Connection) -> FileSchema:
    try:
        rows = conn.execute("SELECT name, type, tbl_name, sql FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            raise
        if not_sqlite(exc):
            raise NotSQLite(damage_words(exc)) from None
        raise Unreadable(damage_words(exc)) from None
    objects = {name: FileObject(name, kind, table, sql) for name, kind, table, sql in rows}
    virtual = [o for o in objects.values() if o.type == "table" and o.virtual]
    shadows = {f"{v.name}_{suffix}": v for v in virtual for suffix in _FTS_SHADOWS}
    fts: dict[str, list[tuple[FileObject, list[FileObject]]]] = {}
    for table in virtual:
        found = re.search(r"content\s*=\s*[\"'\[]?(\w+)", table.sql or "", re.IGNORECASE)
        owner = found.group(1) if found else table.name
        fts.setdefault(owner, []).append((table, [o for name, o in objects.items() if shadows.get(name) is table]))
    stats = [o for o in objects.values() if o.type == "table" and o.name.startswith("sqlite_stat")]
    tables = [
        o
        for o in objects.values()
        if o.type == "table" and not o.virtual and o.name not in shadows and not o.name.startswith("sqlite_")
    ]
    indexes: dict[str, list[FileObject]] = {}
    for o in objects.values():
        if o.type == "index":
            indexes.setdefault(o.table, []).append(o)
    return FileSchema(tables, indexes, fts, stats, objects)


def damaged_pages(conn: sqlite3.Connection) -> dict[str, int]:
    """Pages of each b-tree that SQLite cannot parse (the dbstat table; {} where it is missing)."""
    try:
        return dict(conn.execute("SELECT name, count(*) FROM dbstat WHERE pagetype = 'corrupted' GROUP BY name"))
    except sqlite3.DatabaseError:
        return {}


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def table_columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({quoted(table)})")]


# -- reading rows through the table's own pages -----------------------------------------------------


class PageReader:
    """Reads a table's rows through its b-tree (NOT INDEXED) by rowid ranges. A range SQLite
    cannot read is halved, down to single rows, and those are skipped: `unreadable` keeps
    the rowids (from `rowids`, a sound index's list) or, without one, the rowid values that
    could not be read."""

    def __init__(self, conn: sqlite3.Connection, table: str, columns: list[str], rowids: list[int] | None):
        self.conn = conn
        self.rowids = rowids
        self.sql = (
            f"SELECT {', '.join(map(quoted, columns))} FROM {quoted(table)} NOT INDEXED "
            "WHERE rowid BETWEEN ? AND ? ORDER BY rowid"
        )
        self.table = table
        self.unreadable: list[tuple[int, int]] = []
        self.error: str | None = None  # SQLite's words for the first range it could not read
        self.read = 0

    def batches(self) -> Iterator[list[tuple]]:
        todo = list(reversed(self._chunks()))
        while todo:
            lo, hi = todo.pop()
            try:
                rows = self.conn.execute(self.sql, (lo, hi)).fetchall()
            except sqlite3.DatabaseError as exc:
                if damage_in(exc) is None:
                    raise
                self.error = self.error or damage_words(exc)
                todo += reversed(self._halves(lo, hi))
                continue
            self.read += len(rows)
            if rows:
                yield rows

    def _chunks(self) -> list[tuple[int, int]]:
        if self.rowids is not None:  # ranges of BATCH listed rows, together covering every rowid
            starts = self.rowids[::BATCH]
            ends = [start - 1 for start in starts[1:]] + [MAX_ROWID]
            return list(zip([MIN_ROWID, *starts[1:]], ends))
        bounds = []
        for order in ("min", "max"):
            try:
                bounds.append(self.conn.execute(f"SELECT {order}(rowid) FROM {quoted(self.table)}").fetchone()[0])
            except sqlite3.DatabaseError as exc:
                if damage_in(exc) is None:
                    raise
                # No index lists the rows and an end of the table cannot be read: nothing to
                # range over (none of the mirror's tables lacks an index but two small ones).
                self.error = damage_words(exc)
                self.unreadable.append((MIN_ROWID, MAX_ROWID))
                return []
        lo, hi = bounds
        if lo is None:
            return []
        width = max(BATCH, (hi - lo + 1) // 1000)
        return [(start, min(start + width - 1, hi)) for start in range(lo, hi + 1, width)]

    def _halves(self, lo: int, hi: int) -> list[tuple[int, int]]:
        if self.rowids is None:
            if lo == hi:
                self._lost(lo, lo)
                return []
            mid = lo + (hi - lo) // 2
            return [(lo, mid), (mid + 1, hi)]
        first, last = bisect.bisect_left(self.rowids, lo), bisect.bisect_right(self.rowids, hi)
        listed = self.rowids[first:last]
        if len(listed) >= 2:
            cut = listed[len(listed) // 2]
            return [(lo, cut - 1), (cut, hi)]
        if len(listed) == 1:
            row = listed[0]
            if (lo, hi) == (row, row):
                self._lost(row, row)
                return []
            return [r for r in ((lo, row - 1), (row, row), (row + 1, hi)) if r[0] <= r[1]]
        return []  # no row the index knows of is there: nothing is lost

    def _lost(self, lo: int, hi: int) -> None:
        if self.unreadable and self._adjacent(self.unreadable[-1][1], lo):
            self.unreadable[-1] = (self.unreadable[-1][0], hi)
        else:
            self.unreadable.append((lo, hi))

    def _adjacent(self, previous: int, row: int) -> bool:
        """Whether `row` follows `previous` (in the index's list, or as a value)."""
        if self.rowids is None:
            return row == previous + 1
        at = bisect.bisect_left(self.rowids, previous)
        return at + 1 < len(self.rowids) and self.rowids[at + 1] == row
