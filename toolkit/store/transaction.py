"""A write that is all or nothing, however many steps it takes.

The writer commits each batch in its own transaction (`with conn:`), which a sync wants: a
page and its checkpoint commit together, and a killed sync resumes. A load of a whole file
or of the demo wants the opposite: every row or none. `one_transaction(conn)` holds one
transaction and yields the connection as the writer sees it (`OneTransaction`), whose own
`with` blocks and commits do nothing, so the writer's code serves both.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["OneTransaction", "one_transaction"]


class OneTransaction:
    """A connection inside a transaction someone else ends: `with` and `commit()` do nothing."""

    def __init__(self, conn: sqlite3.Connection):
        self._conn = conn

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)

    def __enter__(self) -> "OneTransaction":
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def commit(self) -> None:
        return None


@contextmanager
def one_transaction(conn: sqlite3.Connection, *, bulk: bool = False) -> Iterator[OneTransaction]:
    """Everything written through the yielded connection commits at the end of the block, or
    nothing does (an error, Ctrl-C; a killed process leaves a journal SQLite rolls back).

    `bulk`: a load that rewrites much of the file. It runs in rollback-journal mode when no
    other process has the mirror open (each page is written once, not again at a WAL
    checkpoint; otherwise it stays in WAL and readers go on reading the mirror as it was),
    without fsync (a crash of the machine, not of the process, could cost the load), and
    holds the write lock from its first statement."""
    if bulk:
        try:
            conn.execute("PRAGMA journal_mode=DELETE")  # leaving WAL needs the file to itself
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
        conn.execute("PRAGMA synchronous=OFF")
    try:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield OneTransaction(conn)
        except BaseException:
            conn.rollback()
            raise
        conn.commit()
    except BaseException:
        if bulk:
            if conn.in_transaction:  # a stop came between the error and its rollback: nothing is kept
                conn.rollback()
            _back_to_wal(conn, stopping=True)
        raise
    if bulk:
        _back_to_wal(conn, stopping=False)


def _back_to_wal(conn: sqlite3.Connection, *, stopping: bool) -> None:
    """The mirror's own modes again after a bulk load. A load stopped midway may leave a
    statement of the interrupted loop unfinished (its cursor lives on in the traceback), and
    SQLite then refuses to enter WAL; that stop is what the caller must see, and the next
    opener of the mirror switches it back (`schema.connect`)."""
    conn.execute("PRAGMA synchronous=NORMAL")
    try:
        conn.execute("PRAGMA journal_mode=WAL")
    except sqlite3.OperationalError as exc:
        if not stopping or "within a transaction" not in str(exc):
            raise
