"""A damaged mirror file told from other failures: SQLite's words for the damage, the one line
every command says about it, and the quick check bulk writers run first.

- `damage_in(exc)` finds SQLite's "the file is damaged" (SQLITE_CORRUPT, SQLITE_NOTADB) in an
  exception or in what caused it; `damaged_line(path, words)` is the one line every command
  says about it (the HTTP and MCP answers say `DAMAGED_MESSAGE`, without the path).
- `check_sound(path)` runs `PRAGMA quick_check` on a read-only connection: SQLite's words
  for what is wrong, or None.
"""

from __future__ import annotations

import os
import shlex
import sqlite3

from .access import BUSY_TIMEOUT_MS, read_only_uri
from .. import errors

__all__ = [
    "DAMAGED_MESSAGE",
    "NotRepairable",
    "NotSQLite",
    "Unreadable",
    "check_sound",
    "damage_in",
    "damage_words",
    "damaged_line",
    "first_problem",
    "not_sqlite",
    "open_read_only",
    "problem_lines",
]

# What an HTTP or MCP client is told: the file is the operator's to look at (its path is not
# the client's business; the server's log names it).
DAMAGED_MESSAGE = "The mirror's file is damaged: its operator should run `edt doctor` to see what can be saved."

# SQLite's words for a damaged file, where the error carries no code (SQLITE_CORRUPT's
# "database disk image is malformed", SQLITE_NOTADB's "file is not a database"). Not bare
# "malformed": json_extract's "malformed JSON" is a bad value, not a bad file.
_DAMAGE_WORDS = ("disk image is malformed", "malformed database schema", "not a database", "database corrupt")


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


def not_sqlite(exc: sqlite3.DatabaseError) -> bool:
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


def open_read_only(path: str | os.PathLike[str]) -> sqlite3.Connection:
    # No mmap (unlike the mirror's connections): a damaged or truncated file is read page by page.
    conn = sqlite3.connect(read_only_uri(path), uri=True, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return conn


def check_sound(path: str | os.PathLike[str]) -> str | None:
    """SQLite's words for what `PRAGMA quick_check` finds wrong with the file at `path`, or
    None when it finds nothing. Read-only; 0.05 s on a small demo mirror, at full scale 1.1 s
    cached and 22 s from a cold disk (measured here), so only the bulk writers run it first."""
    conn = open_read_only(path)
    try:
        lines = problem_lines(conn.execute("PRAGMA quick_check").fetchall())
    except sqlite3.DatabaseError as exc:
        if damage_in(exc) is None:
            raise
        return damage_words(exc)
    finally:
        conn.close()
    return None if lines == ["ok"] else first_problem(lines)


def problem_lines(rows: list[tuple]) -> list[str]:
    """integrity_check's or quick_check's answer as one problem a line (its header dropped)."""
    lines = [line.strip() for (text,) in rows for line in str(text).splitlines()]
    return [line for line in lines if line and not line.startswith("*** in database")]


def first_problem(lines: list[str]) -> str:
    """The first problem SQLite names (an orphan page only when nothing else), and how many more."""
    first = next((line for line in lines if not line.endswith("is never used")), lines[0])
    return first + (f", and {len(lines) - 1} more" if len(lines) > 1 else "")


class NotSQLite(errors.BadInput):
    """The file is not a SQLite database (or its first page, which says so, is gone)."""


class Unreadable(errors.MirrorDamaged):
    """SQLite cannot read the file's schema, so no table can be read through it."""


class NotRepairable(errors.BadInput):
    """The damage is beyond what rebuilding indexes mends: rows are lost (salvage them)."""
