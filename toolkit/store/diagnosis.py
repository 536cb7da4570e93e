"""`edt doctor`'s diagnosis: `PRAGMA integrity_check` and, when it is not ok, every table read
through its own pages (never an index) and every index through its own, so that a table's
rows and its indexes are judged apart (`diagnose`).
"""

from __future__ import annotations

import os
import re
import shlex
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .damage import Unreadable, damage_in, damage_words, first_problem, open_read_only, problem_lines
from .page_reader import FileObject, FileSchema, PageReader, damaged_pages, quoted, read_schema, table_columns
from .picked import picked

__all__ = ["Diagnosis", "Part", "TableHealth", "diagnose", "inspect_tables", "recreatable", "rowid_ranges"]

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
            **picked(self, "name", "rows", "expected", "lost", "rows_sound", "problem"),
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
        return not any(p.pages_damaged and p.kind == "index" and not recreatable(p) for p in self.damaged_parts)

    def why_not_repairable(self) -> str | None:
        """Why `repair` cannot mend the file (None when it can)."""
        return None if self.repairable else _not_repairable(self)

    def to_dict(self) -> dict[str, Any]:
        return {
            **picked(self, "path", "sound", "repairable"),
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
        out = [f"{self.path} is damaged (SQLite's integrity_check: {first_problem(self.problems)})."]
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
                rows = f"ROWS DAMAGED: {t.rows:,} can still be read, {lost}{rowid_ranges(t.unreadable)} ({t.problem})"
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


def rowid_ranges(unreadable: list[tuple[int, int]]) -> str:
    """` (rowids 12-20, 31)`: where the unreadable rows were, the first few ranges."""
    if not unreadable:
        return ""
    shown = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in unreadable[:3])
    return f" (rowids {shown}{f' and {len(unreadable) - 3} more ranges' if len(unreadable) > 3 else ''})"


def recreatable(part: Part) -> bool:
    return not part.name.startswith("sqlite_autoindex_")


def diagnose(path: str | os.PathLike[str]) -> Diagnosis:
    """Run `PRAGMA integrity_check` on the file at `path` (read-only); when it is not ok, read
    every table through its own pages and every index through its own, to tell per table
    whether its rows and its indexes are sound and how many rows can still be read.
    Raises `NotSQLite` for a file SQLite does not recognise."""
    started = time.monotonic()
    conn = open_read_only(path)
    try:
        try:
            schema = read_schema(conn)
        except Unreadable as exc:
            return Diagnosis(os.fspath(path), [str(exc)], schema_problem=str(exc), seconds=time.monotonic() - started)
        try:
            problems = problem_lines(conn.execute("PRAGMA integrity_check").fetchall()) or ["ok"]
        except sqlite3.DatabaseError as exc:  # SQLite stops at a page it cannot read
            if damage_in(exc) is None:
                raise
            problems = [damage_words(exc)]
        if problems == ["ok"]:
            counts = {
                t.name: conn.execute(f"SELECT count(*) FROM {quoted(t.name)}").fetchone()[0] for t in schema.tables
            }
            tables = [TableHealth(name, rows, expected=rows) for name, rows in counts.items()]
        else:
            tables = inspect_tables(conn, schema, problems)
        return Diagnosis(os.fspath(path), problems, tables, seconds=time.monotonic() - started)
    finally:
        conn.close()


def inspect_tables(
    conn: sqlite3.Connection,
    schema: FileSchema,
    problems: list[str],
    sink: Callable[[FileObject, list[str], list[tuple]], None] | None = None,
) -> list[TableHealth]:
    """Each table's health: its parts checked through their own pages, then its rows read
    through the table's pages (given to `sink` when salvaging)."""
    bad_pages = damaged_pages(conn)
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
        columns = table_columns(conn, table.name)
        if table.without_rowid:
            _read_whole(conn, table, columns, health, sink)
        else:
            best = max(counted, key=lambda p: p.entries or 0, default=None)
            rowids = None
            if best is not None:
                rowids = sorted(
                    r for (r,) in conn.execute(f"SELECT rowid FROM {quoted(table.name)} INDEXED BY {quoted(best.name)}")
                )
            reader = PageReader(conn, table.name, columns, rowids)
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
    table: FileObject,
    columns: list[str],
    health: TableHealth,
    sink: Callable[[FileObject, list[str], list[tuple]], None] | None,
) -> None:
    """A table without rowids (none of the mirror's own): read whole, or not at all."""
    try:
        rows = conn.execute(f"SELECT {', '.join(map(quoted, columns))} FROM {quoted(table.name)}").fetchall()
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            raise
        health.problem = damage_words(exc)
        return
    health.rows = health.expected = len(rows)
    if sink is not None and rows:
        sink(table, columns, rows)


def _index_part(conn: sqlite3.Connection, index: FileObject, bad_pages: dict[str, int], named: str) -> Part:
    part = Part(index.name, "index", index.table)
    if index.name in bad_pages:
        part.problem, part.pages_damaged = f"{bad_pages[index.name]} damaged pages", True
    else:
        mention = re.compile(rf"\b{re.escape(index.name)}\b")
        part.problem = next((line for line in named.splitlines() if mention.search(line)), None)
    if index.partial:  # read through its pages it would also read the table's (its WHERE)
        return part
    try:
        total = conn.execute(f"SELECT total(1) FROM {quoted(index.table)} INDEXED BY {quoted(index.name)}").fetchone()[
            0
        ]
        part.entries = int(total)
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            return part  # an index this SQLite cannot scan on its own: judged by its pages
        part.problem, part.pages_damaged = part.problem or damage_words(exc), True
    return part


def _fts_part(
    conn: sqlite3.Connection, owner: str, table: FileObject, shadows: list[FileObject], bad_pages: dict[str, int]
) -> Part:
    part = Part(table.name, "full-text index", owner)
    for shadow in shadows:
        if shadow.name in bad_pages:
            part.problem, part.pages_damaged = f"{shadow.name}: {bad_pages[shadow.name]} damaged pages", True
            return part
        try:
            for _ in conn.execute(f"SELECT * FROM {quoted(shadow.name)}"):
                pass
        except sqlite3.DatabaseError as exc:
            if damage_in(exc) is None:
                raise
            part.problem, part.pages_damaged = f"{shadow.name}: {damage_words(exc)}", True
            return part
    return part


def _stat_part(conn: sqlite3.Connection, table: FileObject, bad_pages: dict[str, int]) -> Part:
    part = Part(table.name, "statistics", table.table)
    try:
        conn.execute(f"SELECT * FROM {quoted(table.name)}").fetchall()
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            raise
        part.problem, part.pages_damaged = damage_words(exc), True
    if table.name in bad_pages:
        part.problem, part.pages_damaged = part.problem or f"{bad_pages[table.name]} damaged pages", True
    return part


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
    keys = [p.name for p in diagnosis.damaged_parts if p.pages_damaged and not recreatable(p)]
    return f"the pages of a table's own key are damaged ({', '.join(keys)}); it cannot be rebuilt in place"
