"""Damaged mirror files: telling damage from other failures, the quick check bulk writers run
first, and `edt doctor`'s diagnosis, repair and salvage.

- `damage_in(exc)` finds SQLite's "the file is damaged" (SQLITE_CORRUPT, SQLITE_NOTADB) in an
  exception or in what caused it; `damaged_line(path, words)` is the one line every command
  says about it (the HTTP and MCP answers say `DAMAGED_MESSAGE`, without the path).
- `check_sound(path)` runs `PRAGMA quick_check` on a read-only connection: SQLite's words
  for what is wrong, or None.
- `diagnose(path)` runs `PRAGMA integrity_check` and, when it is not ok, reads every table
  through its own pages (never an index) and every index through its own, so that a table's
  rows and its indexes are judged apart. Damage to indexes, the full-text indexes or the
  planner's statistics only is `repair`ed in place, no row lost; rows on damaged table pages
  are gone, and `salvage` copies every row that can still be read into a new mirror.
"""

from __future__ import annotations

import bisect
import os
import re
import shlex
import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .access import BUSY_TIMEOUT_MS, read_only_uri

__all__ = [
    "DAMAGED_MESSAGE",
    "Diagnosis",
    "NotRepairable",
    "NotSQLite",
    "Part",
    "RepairReport",
    "SalvageReport",
    "TableHealth",
    "TableSalvage",
    "Unreadable",
    "check_sound",
    "damage_in",
    "damage_words",
    "damaged_line",
    "diagnose",
    "repair",
    "salvage",
]

# What an HTTP or MCP client is told: the file is the operator's to look at (its path is not
# the client's business; the server's log names it).
DAMAGED_MESSAGE = "The mirror's file is damaged: its operator should run `edt doctor` to see what can be saved."

# SQLite's words for a damaged file, where the error carries no code (SQLITE_CORRUPT's
# "database disk image is malformed", SQLITE_NOTADB's "file is not a database"). Not bare
# "malformed": json_extract's "malformed JSON" is a bad value, not a bad file.
_DAMAGE_WORDS = ("disk image is malformed", "malformed database schema", "not a database", "database corrupt")
_MIN, _MAX = -(2**63), 2**63 - 1
_BATCH = 1000  # rows per read (and per insert when salvaging)
_FTS_SHADOWS = ("data", "idx", "docsize", "config", "content")


def damage_in(exc: BaseException | None) -> sqlite3.DatabaseError | None:
    """The SQLite error saying the file is damaged, in `exc` or in what caused it (its cause,
    its context, an exception group's members); None when there is none."""
    todo, seen = [exc], set()
    while todo:
        current = todo.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        if isinstance(current, sqlite3.DatabaseError) and _says_damaged(current):
            return current
        todo += [current.__cause__, current.__context__, *getattr(current, "exceptions", ())]
    return None


def _says_damaged(exc: sqlite3.DatabaseError) -> bool:
    name = getattr(exc, "sqlite_errorname", None)  # Python 3.11+: SQLITE_CORRUPT, SQLITE_CORRUPT_INDEX, ...
    if name:
        return name.startswith("SQLITE_CORRUPT") or name == "SQLITE_NOTADB"
    text = str(exc).lower()
    return any(words in text for words in _DAMAGE_WORDS)


def _not_sqlite(exc: sqlite3.DatabaseError) -> bool:
    return getattr(exc, "sqlite_errorname", None) == "SQLITE_NOTADB" or "not a database" in str(exc).lower()


def damage_words(exc: BaseException) -> str:
    """SQLite's words for the damage, on one line."""
    return " ".join(str(exc).split()) or type(exc).__name__


def damaged_line(path: str | os.PathLike[str], words: str) -> str:
    """The one line a command says about a damaged mirror: the file, SQLite's words, the way out.
    SQLite's "file is not a database" is as likely a stray file (--db mistyped) as a mirror
    whose first page is gone: the line says both."""
    shown = os.fspath(path)
    way_out = f"run `edt doctor --db {shlex.quote(shown)}` to see what can be saved"
    if "not a database" in words:
        return (
            f"{shown}: cannot open as a mirror: not a SQLite file, or the mirror's file is damaged ({words}); {way_out}"
        )
    return f"{shown}: the mirror's file is damaged ({words}); {way_out}"


def _read_only(path: str | os.PathLike[str]) -> sqlite3.Connection:
    # No mmap (unlike the mirror's connections): a damaged or truncated file is read page by page.
    conn = sqlite3.connect(read_only_uri(path), uri=True, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


def check_sound(path: str | os.PathLike[str]) -> str | None:
    """SQLite's words for what `PRAGMA quick_check` finds wrong with the file at `path`, or
    None when it finds nothing. Read-only; 0.05 s on a small demo mirror, at full scale 1.1 s
    cached and 22 s from a cold disk (measured here), so only the bulk writers run it first."""
    conn = _read_only(path)
    try:
        lines = _lines(conn.execute("PRAGMA quick_check").fetchall())
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            raise
        return damage_words(exc)
    finally:
        conn.close()
    return None if lines == ["ok"] else _summary(lines)


def _lines(rows: list[tuple]) -> list[str]:
    """integrity_check's or quick_check's answer as one problem a line (its header dropped)."""
    lines = [line.strip() for (text,) in rows for line in str(text).splitlines()]
    return [line for line in lines if line and not line.startswith("*** in database")]


def _summary(lines: list[str]) -> str:
    """The first problem SQLite names (an orphan page only when nothing else), and how many more."""
    first = next((line for line in lines if not line.endswith("is never used")), lines[0])
    return first + (f", and {len(lines) - 1} more" if len(lines) > 1 else "")


class NotSQLite(Exception):
    """The file is not a SQLite database (or its first page, which says so, is gone)."""


class Unreadable(Exception):
    """SQLite cannot read the file's schema, so no table can be read through it."""


class NotRepairable(Exception):
    """The damage is beyond what rebuilding indexes mends: rows are lost (salvage them)."""


# -- what the file holds ---------------------------------------------------------------------------


@dataclass
class _Object:
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
class _Schema:
    tables: list[_Object]  # tables holding rows (not shadow tables, not statistics)
    indexes: dict[str, list[_Object]]  # table -> its indexes
    fts: dict[str, list[tuple[_Object, list[_Object]]]]  # content table -> [(virtual table, its shadow tables)]
    stats: list[_Object]  # sqlite_stat1, sqlite_stat4: ANALYZE rebuilds them
    objects: dict[str, _Object]


def _schema(conn: sqlite3.Connection) -> _Schema:
    try:
        rows = conn.execute("SELECT name, type, tbl_name, sql FROM sqlite_master").fetchall()
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            raise
        if _not_sqlite(exc):
            raise NotSQLite(damage_words(exc)) from None
        raise Unreadable(damage_words(exc)) from None
    objects = {name: _Object(name, kind, table, sql) for name, kind, table, sql in rows}
    virtual = [o for o in objects.values() if o.type == "table" and o.virtual]
    shadows = {f"{v.name}_{suffix}": v for v in virtual for suffix in _FTS_SHADOWS}
    fts: dict[str, list[tuple[_Object, list[_Object]]]] = {}
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
    indexes: dict[str, list[_Object]] = {}
    for o in objects.values():
        if o.type == "index":
            indexes.setdefault(o.table, []).append(o)
    return _Schema(tables, indexes, fts, stats, objects)


def _damaged_pages(conn: sqlite3.Connection) -> dict[str, int]:
    """Pages of each b-tree that SQLite cannot parse (the dbstat table; {} where it is missing)."""
    try:
        return dict(conn.execute("SELECT name, count(*) FROM dbstat WHERE pagetype = 'corrupted' GROUP BY name"))
    except sqlite3.DatabaseError:
        return {}


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({_quoted(table)})")]


# -- reading rows through the table's own pages -----------------------------------------------------


class _Reader:
    """Reads a table's rows through its b-tree (NOT INDEXED) by rowid ranges. A range SQLite
    cannot read is halved, down to single rows, and those are skipped: `unreadable` keeps
    the rowids (from `rowids`, a sound index's list) or, without one, the rowid values that
    could not be read."""

    def __init__(self, conn: sqlite3.Connection, table: str, columns: list[str], rowids: list[int] | None):
        self.conn = conn
        self.rowids = rowids
        self.sql = (
            f"SELECT {', '.join(map(_quoted, columns))} FROM {_quoted(table)} NOT INDEXED "
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
        if self.rowids is not None:  # ranges of _BATCH listed rows, together covering every rowid
            starts = self.rowids[::_BATCH]
            ends = [start - 1 for start in starts[1:]] + [_MAX]
            return list(zip([_MIN, *starts[1:]], ends))
        bounds = []
        for order in ("min", "max"):
            try:
                bounds.append(self.conn.execute(f"SELECT {order}(rowid) FROM {_quoted(self.table)}").fetchone()[0])
            except sqlite3.DatabaseError as exc:
                if damage_in(exc) is None:
                    raise
                # No index lists the rows and an end of the table cannot be read: nothing to
                # range over (none of the mirror's tables lacks an index but two small ones).
                self.error = damage_words(exc)
                self.unreadable.append((_MIN, _MAX))
                return []
        lo, hi = bounds
        if lo is None:
            return []
        width = max(_BATCH, (hi - lo + 1) // 1000)
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


# -- the diagnosis ----------------------------------------------------------------------------------


@dataclass
class Part:
    """Something derived from a table's rows that SQLite rebuilds from them: an index, a
    full-text index, the planner's statistics. `problem`: SQLite's words, None when sound."""

    name: str
    kind: str  # "index" | "full-text index" | "statistics"
    table: str
    problem: str | None = None
    pages_damaged: bool = False  # its own pages cannot be parsed (rebuilt from scratch, not REINDEXed)
    entries: int | None = None  # rows it lists (a full index read through its own pages)


@dataclass
class TableHealth:
    """One table: how many of its rows can be read through its own pages, how many its
    sound indexes say it holds, and its indexes' health."""

    name: str
    rows: int
    expected: int | None = None  # rows a sound index lists (None: no sound index can tell)
    problem: str | None = None  # SQLite's words for the first rows it could not read
    unreadable: list[tuple[int, int]] = field(default_factory=list)  # rowid ranges skipped
    parts: list[Part] = field(default_factory=list)

    @property
    def rows_sound(self) -> bool:
        return self.problem is None

    @property
    def lost(self) -> int | None:
        """Rows that cannot be read: what a sound index lists beyond what was read."""
        if self.rows_sound:
            return 0
        return None if self.expected is None else max(self.expected - self.rows, 0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "rows": self.rows,
            "expected": self.expected,
            "lost": self.lost,
            "rows_sound": self.rows_sound,
            "problem": self.problem,
            "unreadable_rowids": [list(r) for r in self.unreadable],
            "parts": [{"name": p.name, "kind": p.kind, "problem": p.problem} for p in self.parts],
        }


@dataclass
class Diagnosis:
    """What `PRAGMA integrity_check` says of the file, and per table what is sound."""

    path: str
    problems: list[str]  # integrity_check's lines: ["ok"] when sound
    tables: list[TableHealth] = field(default_factory=list)
    schema_problem: str | None = None  # SQLite cannot read the schema: nothing can be read
    seconds: float = 0.0

    @property
    def sound(self) -> bool:
        return self.problems == ["ok"]

    @property
    def damaged_parts(self) -> list[Part]:
        return [p for t in self.tables for p in t.parts if p.problem]

    @property
    def repairable(self) -> bool:
        """Damaged, and only in what can be rebuilt from sound rows (an autoindex, a table's
        own key, cannot be re-created when its pages are gone)."""
        if self.sound or self.schema_problem or not all(t.rows_sound for t in self.tables):
            return False
        return not any(p.pages_damaged and p.kind == "index" and not _recreatable(p) for p in self.damaged_parts)

    def why_not_repairable(self) -> str | None:
        """Why `repair` cannot mend the file (None when it can)."""
        return None if self.repairable else _not_repairable(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sound": self.sound,
            "repairable": self.repairable,
            "integrity_check": self.problems,
            "schema_problem": self.schema_problem,
            "seconds": round(self.seconds, 2),
            "tables": [t.to_dict() for t in self.tables],
        }

    def lines(self) -> list[str]:
        """The report, in words: per table, its rows and its indexes; then what to do."""
        quoted = shlex.quote(self.path)
        if self.schema_problem:
            return [
                (
                    f"{self.path} is damaged where SQLite keeps its list of tables ({self.schema_problem}): no "
                    "table can be read through SQLite, so neither --repair nor --salvage can help."
                ),
                (
                    "Restore a backup, or build a new mirror (`edt sync` or `edt demo` with --db NEW_FILE); the "
                    f"sqlite3 shell's `.recover` (sqlite3 {quoted} .recover) may still get rows out of it."
                ),
            ]
        if self.sound:
            out = [f"{self.path} is sound (SQLite's integrity_check: ok, {self.seconds:.1f} s). Rows per table:"]
            return out + [f"  {t.name:<18} {t.rows:>10,}" for t in self.tables]
        out = [f"{self.path} is damaged (SQLite's integrity_check: {_summary(self.problems)})."]
        for t in self.tables:
            damaged = [p for p in t.parts if p.problem]
            if t.rows_sound:
                rows = f"rows sound ({t.rows:,})"
            else:
                lost = (
                    "how many were lost is unknown (no sound index lists them)"
                    if t.lost is None
                    else f"{t.lost:,} lost"
                )
                rows = f"ROWS DAMAGED: {t.rows:,} can still be read, {lost}{_ranges(t.unreadable)} ({t.problem})"
            parts = "; damaged: " + ", ".join(f"{p.kind} {p.name}" for p in damaged) if damaged else ""
            if damaged or not t.rows_sound or t.rows:
                out.append(f"  {t.name:<18} {rows}{parts}")
        broken_rows = [t for t in self.tables if not t.rows_sound]
        damaged = self.damaged_parts
        if broken_rows:
            readable = sum(t.rows for t in broken_rows)
            out.append(
                f"Table pages are damaged: the rows on them are gone. `edt doctor --db {quoted} --salvage "
                f"NEW_FILE` copies every row that can still be read ({readable:,} of the damaged tables', and "
                "all of the others) into a new mirror."
            )
        elif damaged:
            names = ", ".join(p.name for p in damaged)
            out.append(
                f"Only indexes are damaged ({names}): `edt doctor --db {quoted} --repair` rebuilds them, no "
                "row lost (stop `edt serve`, the app and any sync first)."
            )
        else:
            out.append(
                f"No table or index is damaged, only the file's bookkeeping (unused or misfiled pages): "
                f"`edt doctor --db {quoted} --repair` rewrites the file (VACUUM), no row lost."
            )
        return out


def _ranges(unreadable: list[tuple[int, int]]) -> str:
    """` (rowids 12-20, 31)`: where the unreadable rows were, the first few ranges."""
    if not unreadable:
        return ""
    shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in unreadable[:3])
    return f" (rowids {shown}{f' and {len(unreadable) - 3} more ranges' if len(unreadable) > 3 else ''})"


def _recreatable(part: Part) -> bool:
    return not part.name.startswith("sqlite_autoindex_")


def diagnose(path: str | os.PathLike[str]) -> Diagnosis:
    """Run `PRAGMA integrity_check` on the file at `path` (read-only); when it is not ok, read
    every table through its own pages and every index through its own, to tell per table
    whether its rows and its indexes are sound and how many rows can still be read.
    Raises `NotSQLite` for a file SQLite does not recognise."""
    started = time.monotonic()
    conn = _read_only(path)
    try:
        try:
            schema = _schema(conn)
        except Unreadable as exc:
            return Diagnosis(os.fspath(path), [str(exc)], schema_problem=str(exc), seconds=time.monotonic() - started)
        try:
            problems = _lines(conn.execute("PRAGMA integrity_check").fetchall()) or ["ok"]
        except sqlite3.DatabaseError as exc:  # SQLite stops at a page it cannot read
            if damage_in(exc) is None:
                raise
            problems = [damage_words(exc)]
        if problems == ["ok"]:
            counts = {
                t.name: conn.execute(f"SELECT count(*) FROM {_quoted(t.name)}").fetchone()[0] for t in schema.tables
            }
            tables = [TableHealth(name, rows, expected=rows) for name, rows in counts.items()]
        else:
            tables = _inspect(conn, schema, problems)
        return Diagnosis(os.fspath(path), problems, tables, seconds=time.monotonic() - started)
    finally:
        conn.close()


def _inspect(
    conn: sqlite3.Connection,
    schema: _Schema,
    problems: list[str],
    sink: Callable[[_Object, list[str], list[tuple]], None] | None = None,
) -> list[TableHealth]:
    """Each table's health: its parts checked through their own pages, then its rows read
    through the table's pages (given to `sink` when salvaging)."""
    bad_pages = _damaged_pages(conn)
    named = "\n".join(problems)
    home = next((t for t in schema.tables if t.name == "listings"), schema.tables[0] if schema.tables else None)
    out = []
    for table in schema.tables:
        parts = [_index_part(conn, index, bad_pages, named) for index in schema.indexes.get(table.name, [])]
        parts += [_fts_part(conn, table.name, vt, shadows, bad_pages) for vt, shadows in schema.fts.get(table.name, [])]
        if table is home:  # the planner's statistics cover every table: listed with the main one
            parts += [_stat_part(conn, stat, bad_pages) for stat in schema.stats]
        counted = [p for p in parts if p.problem is None and p.entries is not None]
        health = TableHealth(table.name, 0, parts=parts)
        columns = _columns(conn, table.name)
        if table.without_rowid:
            _read_whole(conn, table, columns, health, sink)
        else:
            best = max(counted, key=lambda p: p.entries or 0, default=None)
            rowids = None
            if best is not None:
                rowids = sorted(
                    r
                    for (r,) in conn.execute(f"SELECT rowid FROM {_quoted(table.name)} INDEXED BY {_quoted(best.name)}")
                )
            reader = _Reader(conn, table.name, columns, rowids)
            for rows in reader.batches():
                if sink is not None:
                    sink(table, columns, rows)
            health.rows, health.unreadable = reader.read, reader.unreadable
            if reader.error is None and table.name in bad_pages:
                reader.error = f"{bad_pages[table.name]} damaged pages"
            health.problem = reader.error
            health.expected = best.entries if best is not None else (health.rows if health.rows_sound else None)
        if health.rows_sound:  # a full index listing another number of rows is wrong
            for part in counted:
                if part.entries != health.rows:
                    part.problem = f"it lists {part.entries:,} rows, the table holds {health.rows:,}"
        out.append(health)
    return out


def _read_whole(
    conn: sqlite3.Connection,
    table: _Object,
    columns: list[str],
    health: TableHealth,
    sink: Callable[[_Object, list[str], list[tuple]], None] | None,
) -> None:
    """A table without rowids (none of the mirror's own): read whole, or not at all."""
    try:
        rows = conn.execute(f"SELECT {', '.join(map(_quoted, columns))} FROM {_quoted(table.name)}").fetchall()
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            raise
        health.problem = damage_words(exc)
        return
    health.rows = health.expected = len(rows)
    if sink is not None and rows:
        sink(table, columns, rows)


def _index_part(conn: sqlite3.Connection, index: _Object, bad_pages: dict[str, int], named: str) -> Part:
    part = Part(index.name, "index", index.table)
    if index.name in bad_pages:
        part.problem, part.pages_damaged = f"{bad_pages[index.name]} damaged pages", True
    else:
        mention = re.compile(rf"\b{re.escape(index.name)}\b")
        part.problem = next((line for line in named.splitlines() if mention.search(line)), None)
    if index.partial:  # read through its pages it would also read the table's (its WHERE)
        return part
    try:
        total = conn.execute(
            f"SELECT total(1) FROM {_quoted(index.table)} INDEXED BY {_quoted(index.name)}"
        ).fetchone()[0]
        part.entries = int(total)
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            return part  # an index this SQLite cannot scan on its own: judged by its pages
        part.problem, part.pages_damaged = part.problem or damage_words(exc), True
    return part


def _fts_part(
    conn: sqlite3.Connection, owner: str, table: _Object, shadows: list[_Object], bad_pages: dict[str, int]
) -> Part:
    part = Part(table.name, "full-text index", owner)
    for shadow in shadows:
        if shadow.name in bad_pages:
            part.problem, part.pages_damaged = f"{shadow.name}: {bad_pages[shadow.name]} damaged pages", True
            return part
        try:
            for _ in conn.execute(f"SELECT * FROM {_quoted(shadow.name)}"):
                pass
        except sqlite3.DatabaseError as exc:
            if damage_in(exc) is None:
                raise
            part.problem, part.pages_damaged = f"{shadow.name}: {damage_words(exc)}", True
            return part
    return part


def _stat_part(conn: sqlite3.Connection, table: _Object, bad_pages: dict[str, int]) -> Part:
    part = Part(table.name, "statistics", table.table)
    try:
        conn.execute(f"SELECT * FROM {_quoted(table.name)}").fetchall()
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            raise
        part.problem, part.pages_damaged = damage_words(exc), True
    if table.name in bad_pages:
        part.problem, part.pages_damaged = part.problem or f"{bad_pages[table.name]} damaged pages", True
    return part


# -- repair: rebuild what is derived from sound rows -------------------------------------------------


@dataclass
class RepairReport:
    """What `repair` rebuilt, and what integrity_check says afterwards."""

    path: str
    rebuilt: list[str]
    vacuumed: bool
    problems: list[str]  # integrity_check after the repair: ["ok"] when sound
    seconds: float

    @property
    def sound(self) -> bool:
        return self.problems == ["ok"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "rebuilt": self.rebuilt,
            "vacuumed": self.vacuumed,
            "sound": self.sound,
            "integrity_check": self.problems,
            "seconds": round(self.seconds, 2),
        }

    def lines(self) -> list[str]:
        what = ", ".join(self.rebuilt) or "nothing to rebuild"
        done = f"Rebuilt {what}{' and rewrote the file (VACUUM)' if self.vacuumed else ''} in {self.seconds:.1f} s"
        if self.sound:
            return [f"{done}: {self.path} is sound now (integrity_check: ok); no row was lost."]
        return [
            f"{done}, but SQLite still finds problems: {_summary(self.problems)}.",
            f"Run `edt doctor --db {shlex.quote(self.path)}` to see them.",
        ]


def repair(path: str | os.PathLike[str], diagnosis: Diagnosis | None = None) -> RepairReport:
    """Rebuild the damaged indexes, full-text indexes and statistics of the mirror at `path`
    in one transaction (REINDEX what has sound pages; what has not is forgotten and created
    again, then VACUUM writes the file without its unusable pages), then run integrity_check.
    Only when every table's rows are sound: raises `NotRepairable` otherwise."""
    from .schema import connect

    started = time.monotonic()
    diagnosis = diagnosis or diagnose(path)
    if diagnosis.sound:
        return RepairReport(os.fspath(path), [], False, ["ok"], time.monotonic() - started)
    if not diagnosis.repairable:
        raise NotRepairable(_not_repairable(diagnosis))
    conn = connect(os.fspath(path))
    conn.isolation_level = None  # the transaction is this function's
    try:
        schema = _schema(conn)
        damaged = diagnosis.damaged_parts
        forget = [p for p in damaged if p.pages_damaged]
        rebuilt = [p.name for p in damaged]
        conn.execute("BEGIN IMMEDIATE")
        try:
            if forget:
                _forget(conn, schema, forget)
            for part in damaged:
                if part.kind == "index" and not part.pages_damaged:
                    conn.execute(f"REINDEX {_quoted(part.name)}")
                elif part.kind == "full-text index":
                    conn.execute(f"INSERT INTO {_quoted(part.name)}({_quoted(part.name)}) VALUES('rebuild')")
            if any(p.kind == "statistics" for p in damaged):
                conn.execute("PRAGMA analysis_limit=1000")
                conn.execute("ANALYZE")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        vacuumed = bool(forget) or not damaged  # forgotten pages, or only the file's bookkeeping is wrong
        if vacuumed:
            conn.execute("VACUUM")
        problems = _lines(conn.execute("PRAGMA integrity_check").fetchall()) or ["ok"]
    finally:
        conn.close()
    return RepairReport(os.fspath(path), rebuilt, vacuumed, problems, time.monotonic() - started)


def _forget(conn: sqlite3.Connection, schema: _Schema, parts: list[Part]) -> None:
    """Drop what cannot be read from the schema without touching its pages (DROP would walk
    them and stop at the damage), then create it again from its own SQL; the old pages are
    left unused, for VACUUM."""
    names: list[str] = []
    again: list[str] = []
    for part in parts:
        if part.kind == "statistics":
            names.append(part.name)  # ANALYZE creates it again
            continue
        obj = schema.objects[part.name]
        names.append(obj.name)
        if part.kind == "full-text index":
            names += [s.name for vt, shadows in schema.fts.get(part.table, []) if vt.name == part.name for s in shadows]
        again.append(obj.sql or "")
    try:
        conn.execute("PRAGMA writable_schema=ON")
        conn.execute(f"DELETE FROM sqlite_master WHERE name IN ({','.join('?' * len(names))})", names)
        conn.execute("PRAGMA writable_schema=RESET")  # off, and the schema read again
        for sql in again:
            conn.execute(sql)
    except sqlite3.OperationalError as exc:  # an SQLite that refuses (defensive mode) or cannot reload
        raise NotRepairable(f"this SQLite cannot rebuild the damaged parts in place ({exc})") from None


def _not_repairable(diagnosis: Diagnosis) -> str:
    if diagnosis.sound:
        return "the file is sound"
    if diagnosis.schema_problem:
        return f"SQLite cannot read the file's list of tables ({diagnosis.schema_problem})"
    broken = [t for t in diagnosis.tables if not t.rows_sound]
    if broken:
        said = ", ".join(
            f"{t.name}: {'an unknown number of' if t.lost is None else f'{t.lost:,}'} rows unreadable" for t in broken
        )
        return f"table pages are damaged ({said}); rebuilding indexes cannot bring rows back"
    keys = [p.name for p in diagnosis.damaged_parts if p.pages_damaged and not _recreatable(p)]
    return f"the pages of a table's own key are damaged ({', '.join(keys)}); it cannot be rebuilt in place"


# -- salvage: every row that can still be read, into a new mirror ----------------------------------


@dataclass
class TableSalvage:
    """One table's salvage: rows copied, rows lost (None: unknown), rowid ranges skipped."""

    name: str
    saved: int
    lost: int | None
    unreadable: list[tuple[int, int]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "saved": self.saved,
            "lost": self.lost,
            "unreadable_rowids": [list(r) for r in self.unreadable],
        }


@dataclass
class SalvageReport:
    """What `salvage` copied from `source` into `target`."""

    source: str
    target: str
    tables: list[TableSalvage]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "seconds": round(self.seconds, 2),
            "tables": [t.to_dict() for t in self.tables],
            "swap": self.swap_command(),
        }

    def swap_command(self) -> str:
        source = shlex.quote(self.source)
        leftovers = " ".join(shlex.quote(self.source + end) for end in ("-wal", "-shm", ".colidx"))
        return f"mv {shlex.quote(self.target)} {source} && rm -f {leftovers}"

    def lines(self) -> list[str]:
        out = [f"Salvaged {self.source} into {self.target} in {self.seconds:.1f} s:"]
        for t in self.tables:
            if t.lost == 0 and not t.unreadable:
                lost = "none lost"
            elif t.lost is None:
                lost = "an unknown number lost (no sound index listed them)"
            else:
                lost = f"{t.lost:,} lost"
            out.append(f"  {t.name:<18} {t.saved:>10,} saved, {lost}{_ranges(t.unreadable)}")
        out.append("To use it: stop `edt serve`, the app and any sync or schedule on the mirror, then")
        out.append(f"  {self.swap_command()}")
        out.append(
            "(the old file's -wal and -shm must not meet the new file; the columnar index is rebuilt by the "
            "next command)"
        )
        return out


def salvage(
    path: str | os.PathLike[str], target: str | os.PathLike[str], progress: Callable[[str], None] | None = None
) -> SalvageReport:
    """Copy every row of the mirror at `path` that can still be read, table by table through
    the table's own pages, into a new mirror at `target` (created with the mirror's schema;
    written beside it and renamed when whole). Raises FileExistsError when `target` exists,
    `NotSQLite` or `Unreadable` when nothing can be read."""
    from .schema import bulk_load, connect, ensure_schema

    started = time.monotonic()
    source, final = os.fspath(path), Path(target)
    if final.exists():
        raise FileExistsError(f"{final}: the file exists; salvage writes only to a new file")
    scratch = final.with_name(final.name + ".salvaging")
    conn = _read_only(source)
    try:
        schema = _schema(conn)
        _remove(scratch)
        out = connect(str(scratch))
        try:
            ensure_schema(out)
            known = {
                name: set(_columns(out, name))
                for (name,) in out.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
                )
            }
            saved: dict[str, int] = {}
            generation = [0]
            writer: Any = out  # what bulk_load yields to write through (its transaction's), else the connection

            def sink(table: _Object, columns: list[str], rows: list[tuple]) -> None:
                if table.name not in known:  # a table the mirror's schema does not declare: as it was
                    writer.execute(table.sql or "")
                    known[table.name] = set(columns)
                kept = [i for i, c in enumerate(columns) if c in known[table.name]]
                given = len(rows)
                if table.name == "mirror_meta":  # every key is kept, some with the new file's value
                    rows = _meta_rows(columns, rows, generation)
                names = ", ".join(_quoted(columns[i]) for i in kept)
                # A key met twice (a unique index was damaged) keeps its first row; the old
                # mirror_meta's values win over the new file's defaults.
                conflict = "REPLACE" if table.name == "mirror_meta" else "IGNORE"
                with writer:
                    cursor = writer.executemany(
                        f"INSERT OR {conflict} INTO {_quoted(table.name)} ({names}) VALUES ({', '.join('?' * len(kept))})",
                        [tuple(row[i] for i in kept) for row in rows],
                    )
                done = given if table.name == "mirror_meta" else max(cursor.rowcount, 0)
                saved[table.name] = saved.get(table.name, 0) + done
                if progress is not None:
                    progress(f"{table.name}: {saved[table.name]:,} rows")

            with bulk_load(out) as loading:  # indexes and full-text indexes built once, after the rows
                writer = loading if loading is not None else out
                tables = _inspect(conn, schema, [], sink=sink)
                with writer:  # readers cache by generation: the new file's must be past the old one's
                    writer.execute(
                        "UPDATE mirror_meta SET value = ? WHERE key = 'generation' AND CAST(value AS INTEGER) < ?",
                        [str(generation[0]), generation[0]],
                    )
            out.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            out.close()
        os.replace(scratch, final)
    except BaseException:
        _remove(scratch)
        raise
    finally:
        conn.close()
    report = [TableSalvage(t.name, saved.get(t.name, 0), t.lost, t.unreadable) for t in tables]
    return SalvageReport(source, str(final), report, time.monotonic() - started)


def _meta_rows(columns: list[str], rows: list[tuple], generation: list[int]) -> list[tuple]:
    """The old mirror_meta but the keys that describe the new file itself (its schema's
    fingerprint and cookie, where its change log starts, its generation: noted, to be raised
    past the old one)."""
    key, value = columns.index("key"), columns.index("value")
    kept = []
    for row in rows:
        if row[key] == "generation":
            generation[0] = max(generation[0], int(row[value] or 0))
        elif row[key] not in ("schema_fingerprint", "schema_cookie", "changes_from"):
            kept.append(row)
    return kept


def _remove(path: Path) -> None:
    for end in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{end}").unlink(missing_ok=True)
