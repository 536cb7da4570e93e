"""A write-ahead log's checkpoint run beside other work instead of inside a commit.

SQLite copies the log into the mirror's file when a commit leaves it past 1,000 pages: the
commit of a feed's day waits for that copy (about a second at 300,000 listings). A load of
several steps turns the automatic checkpoint off on its connection and runs it in a thread of
its own after a commit, while it goes on (the columnar index's refresh reads the mirror as
committed meanwhile); it waits for the copy before a step that wants the file to itself (a
first big load leaves WAL for a rollback journal):

    with deferred_checkpoints(conn, path) as checkpoint:
        ...commit...
        checkpoint.start()      # copies the log in the background; one at a time
    # left: the last checkpoint waited for, the automatic one back on

A checkpoint never blocks a reader or the writer (SQLite's PASSIVE mode); the log only stays
longer before it is copied, and a crash meanwhile loses nothing (the log is the data)."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from .access import BUSY_TIMEOUT_MS

__all__ = ["BackgroundCheckpoint", "deferred_checkpoints"]


class BackgroundCheckpoint:
    """At most one checkpoint of the mirror at `path` running in its own thread."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Copy the log into the file in the background (nothing if a copy is still running)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._thread = threading.Thread(target=self._run, name="edt-wal-checkpoint", daemon=True)
        self._thread.start()

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            pass  # the next commit's automatic checkpoint, or the last close, copies it instead
        finally:
            conn.close()


@contextmanager
def deferred_checkpoints(conn: sqlite3.Connection, path: str) -> Iterator[BackgroundCheckpoint]:
    """The automatic checkpoint off on `conn` while the block runs; the block starts the
    background ones (`BackgroundCheckpoint.start`); the last is waited for at its end."""
    pages = conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    conn.execute("PRAGMA wal_autocheckpoint=0")
    checkpoint = BackgroundCheckpoint(path)
    try:
        yield checkpoint
    finally:
        checkpoint.wait()
        conn.execute(f"PRAGMA wal_autocheckpoint={int(pages)}")
