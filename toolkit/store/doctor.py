"""`edt doctor`: a damaged mirror diagnosed, repaired in place when only what is derived from
its rows is damaged, and else salvaged into a new mirror.

- `damage.py` tells damage from other failures (`damage_in`, `damaged_line`, `check_sound`).
- `diagnosis.py` judges a table's rows and its indexes apart (`diagnose`).
- here: damage to indexes, the full-text indexes or the planner's statistics only is
  `repair`ed in place, no row lost; rows on damaged table pages are gone, and `salvage` copies
  every row that can still be read into a new mirror.

The names of all three are offered here, as `edt doctor` and the servers have always imported them.
"""

from __future__ import annotations

import os
import shlex
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .damage import (
    DAMAGED_MESSAGE,
    NotRepairable,
    NotSQLite,
    Unreadable,
    check_sound,
    damage_in,
    damage_words,
    damaged_line,
    first_problem,
    open_read_only,
    problem_lines,
)
from .diagnosis import Diagnosis, Part, TableHealth, diagnose, inspect_tables, rowid_ranges
from .page_reader import FileObject, FileSchema, quoted, read_schema, table_columns
from .picked import picked

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
            **picked(self, "path", "rebuilt", "vacuumed", "sound"),
            "integrity_check": self.problems,
            "seconds": round(self.seconds, 2),
        }

    def lines(self) -> list[str]:
        what = ", ".join(self.rebuilt) or "nothing to rebuild"
        done = f"Rebuilt {what}{' and rewrote the file (VACUUM)' if self.vacuumed else ''} in {self.seconds:.1f} s"
        if self.sound:
            return [f"{done}: {self.path} is sound now (integrity_check: ok); no row was lost."]
        return [
            f"{done}, but SQLite still finds problems: {first_problem(self.problems)}.",
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
        raise NotRepairable(diagnosis.why_not_repairable())
    conn = connect(os.fspath(path))
    conn.isolation_level = None  # the transaction is this function's
    try:
        schema = read_schema(conn)
        damaged = diagnosis.damaged_parts
        forget = [p for p in damaged if p.pages_damaged]
        rebuilt = [p.name for p in damaged]
        conn.execute("BEGIN IMMEDIATE")
        try:
            if forget:
                _forget(conn, schema, forget)
            for part in damaged:
                if part.kind == "index" and not part.pages_damaged:
                    conn.execute(f"REINDEX {quoted(part.name)}")
                elif part.kind == "full-text index":
                    conn.execute(f"INSERT INTO {quoted(part.name)}({quoted(part.name)}) VALUES('rebuild')")
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
        problems = problem_lines(conn.execute("PRAGMA integrity_check").fetchall()) or ["ok"]
    finally:
        conn.close()
    return RepairReport(os.fspath(path), rebuilt, vacuumed, problems, time.monotonic() - started)


def _forget(conn: sqlite3.Connection, schema: FileSchema, parts: list[Part]) -> None:
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
            **picked(self, "source", "target"),
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
            out.append(f"  {t.name:<18} {t.saved:>10,} saved, {lost}{rowid_ranges(t.unreadable)}")
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
    conn = open_read_only(source)
    try:
        schema = read_schema(conn)
        _remove(scratch)
        out = connect(str(scratch))
        try:
            ensure_schema(out)
            known = {
                name: set(table_columns(out, name))
                for (name,) in out.execute(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
                )
            }
            saved: dict[str, int] = {}
            generation = [0]
            writer: Any = out  # what bulk_load yields to write through (its transaction's), else the connection

            def sink(table: FileObject, columns: list[str], rows: list[tuple]) -> None:
                if table.name not in known:  # a table the mirror's schema does not declare: as it was
                    writer.execute(table.sql or "")
                    known[table.name] = set(columns)
                kept = [i for i, c in enumerate(columns) if c in known[table.name]]
                given = len(rows)
                if table.name == "mirror_meta":  # every key is kept, some with the new file's value
                    rows = _meta_rows(columns, rows, generation)
                names = ", ".join(quoted(columns[i]) for i in kept)
                # A key met twice (a unique index was damaged) keeps its first row; the old
                # mirror_meta's values win over the new file's defaults.
                conflict = "REPLACE" if table.name == "mirror_meta" else "IGNORE"
                with writer:
                    cursor = writer.executemany(
                        f"INSERT OR {conflict} INTO {quoted(table.name)} ({names}) VALUES ({', '.join('?' * len(kept))})",
                        [tuple(row[i] for i in kept) for row in rows],
                    )
                done = given if table.name == "mirror_meta" else max(cursor.rowcount, 0)
                saved[table.name] = saved.get(table.name, 0) + done
                if progress is not None:
                    progress(f"{table.name}: {saved[table.name]:,} rows")

            with bulk_load(out) as loading:  # indexes and full-text indexes built once, after the rows
                writer = loading if loading is not None else out
                tables = inspect_tables(conn, schema, [], sink=sink)
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
