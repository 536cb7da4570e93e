"""One load at a time: the writer lock of a mirror.

A load (`edt demo`, `edt sync`, `edt ingest`, `edt enrich`, `edt spam reflag`, the app's
sync button, a scheduled job) holds `<mirror>.lock` for its whole run. A second one is
refused at once with `MirrorBusy`, whose message names the holder (its process, command
and start) and the fix, instead of queueing behind the busy timeout or interleaving its
batches with the first one's. Short writes (saved searches, the shortlist, alerts) do not
take it: SQLite's own lock orders them.

The lock is a `filelock.FileLock` (an OS lock: released when its process ends, however it
ends). Who holds it is noted beside it in `<mirror>.lock.holder` (JSON: pid, command,
started), read by the refused one; where that note is missing or stale, the processes that
have the lock file open are named (Linux /proc).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from .. import errors

__all__ = ["MirrorBusy", "writer_lock", "lock_path", "current_holder", "refuse_while_held", "mirror_file"]

# (mirror path, thread) -> depth: a load that calls another loader (an ingest inside a
# scheduled job) does not lock itself out.
_HELD: dict[tuple[str, int], int] = {}
_GUARD = threading.Lock()


class MirrorBusy(errors.MirrorBusy):
    """Another load is writing to this mirror."""


def lock_path(mirror: str | os.PathLike[str]) -> Path:
    return Path(f"{os.fspath(mirror)}.lock")


def mirror_file(target: Any) -> str:
    """The file of a mirror given as a path or as a connection to it."""
    if isinstance(target, (str, os.PathLike)):
        return os.path.realpath(os.fspath(target))
    for _, name, file in target.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return os.path.realpath(file) if file else ""
    return ""


def current_holder(mirror: str | os.PathLike[str]) -> str | None:
    """Who holds the mirror's writer lock now, as `pid 123 (edt demo, since 15:42 UTC)`, or None."""
    from filelock import FileLock, Timeout

    probe = FileLock(str(lock_path(mirror)), timeout=0)
    try:
        probe.acquire()
    except Timeout:
        return _holder(mirror) or "another process"
    except OSError:
        return None  # a folder we cannot write to: nobody can load into it either
    probe.release()
    return None


def refuse_while_held(mirror: str | os.PathLike[str]) -> None:
    """`MirrorBusy` now when a load holds the mirror: a long job that writes only at its end
    (`edt appraise`) says so at its start, not after its work."""
    who = current_holder(mirror)
    if who:
        raise _busy(os.fspath(mirror), who)


def _holder(mirror: str | os.PathLike[str], wait: float = 0.5) -> str | None:
    """The holder's note, read again for up to `wait` seconds when it is not there yet (the
    holder writes it just after it took the lock); else the processes with the lock file open."""
    note = Path(f"{lock_path(mirror)}.holder")
    deadline = time.monotonic() + wait
    while True:
        try:
            held = json.loads(note.read_text())
            pid = int(held["pid"])
            os.kill(pid, 0)  # still running?
            return f"pid {pid} ({held['command']}, since {held['started']})"
        except (OSError, ValueError, KeyError, TypeError):
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
    from .access import lock_holders

    holders = lock_holders(lock_path(mirror))
    return ", ".join(holders) if holders else None


def _busy(shown: str, who: str) -> MirrorBusy:
    return MirrorBusy(
        f"{shown}: another load is writing to this mirror ({who}); wait for it to finish or stop it, "
        "then run this again"
    )


@contextmanager
def writer_lock(target: str | os.PathLike[str] | sqlite3.Connection | Any, command: str) -> Iterator[None]:
    """Hold the writer lock of the mirror `target` (a path or a connection to it) for the
    block; `MirrorBusy` at once when another load holds it. `command` names this one for
    the message another load would get (e.g. `edt demo`). An in-memory database takes no lock."""
    from filelock import FileLock, Timeout

    path = mirror_file(target)
    shown = os.fspath(target) if isinstance(target, (str, os.PathLike)) else path
    key = (path, threading.get_ident())
    if not path:
        yield
        return
    with _GUARD:
        depth = _HELD.get(key, 0)
        if depth:
            _HELD[key] = depth + 1
    if depth:
        try:
            yield
        finally:
            with _GUARD:
                _HELD[key] -= 1
        return
    lock = FileLock(str(lock_path(path)), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise _busy(shown, _holder(path) or "another process") from None
    note = Path(f"{lock_path(path)}.holder")
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        note.write_text(json.dumps({"pid": os.getpid(), "command": command, "started": started}))
    except OSError:
        pass  # the note only improves the message
    with _GUARD:
        _HELD[key] = 1
    try:
        yield
    finally:
        with _GUARD:
            _HELD.pop(key, None)
        try:
            note.unlink()
        except OSError:
            pass
        lock.release()
