"""How the mirror's file may be opened, and who holds it.

- A mirror on a read-only file system, or a read-only file or folder (a mount of someone
  else's copy, a shared folder), opens read-only by itself: `opens_read_only` decides and
  says so once on standard error; `read_only_uri` picks SQLite's `mode=ro`, or `immutable=1`
  where SQLite could not create the `-shm` file it needs beside a WAL database.
- A write that still finds the file locked after the busy timeout names the processes that
  hold it open (`lock_holders`, from /proc on Linux) and the fix (`locked_message`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

__all__ = ["read_only_place", "opens_read_only", "read_only_uri", "lock_holders", "locked_message", "BUSY_TIMEOUT_MS"]

BUSY_TIMEOUT_MS = 10_000  # a writer waits this long for another writer (readers never block it in WAL)

_SAID: set[str] = set()


def read_only_place(path: str | os.PathLike[str]) -> str | None:
    """Why the existing mirror at `path` cannot be written (a phrase), or None when it can."""
    file = Path(path)
    if not file.is_file():
        return None
    try:
        if os.statvfs(file).f_flag & os.ST_RDONLY:
            return "on a read-only file system"
    except OSError:
        pass
    if not os.access(file, os.W_OK):
        return "a read-only file"
    if not os.access(file.parent if str(file.parent) else ".", os.W_OK):
        return "in a read-only folder"
    return None


def opens_read_only(
    path: str | os.PathLike[str], readonly: bool = False, say: Callable[[str], None] | None = None
) -> bool:
    """Whether the mirror at `path` is to be opened read-only: when asked (`readonly`), or
    when it sits in a read-only place, which is said once per path on standard error (or to
    `say`): reading works; a command that writes fails, saying why."""
    if readonly:
        return True
    why = read_only_place(path)
    if why is None:
        return False
    key = os.path.abspath(path)
    if key not in _SAID:
        _SAID.add(key)
        line = f"edt: {os.fspath(path)} is {why}: opened read-only (reading works; writing to it does not)"
        (say or (lambda text: print(text, file=sys.stderr, flush=True)))(line)
    return True


def read_only_uri(path: str | os.PathLike[str]) -> str:
    """The SQLite URI of a read-only connection to `path`.

    `mode=ro` when SQLite can keep its shared-memory file beside the database (the folder is
    writable, or the `-shm` and `-wal` files are already there); otherwise `immutable=1`,
    which reads the file with no locks and no `-shm` (right for a read-only place, where
    nothing can change the file; a leftover `-wal` without its `-shm` is not read)."""
    file = Path(os.path.abspath(path))
    uri = "file:" + quote(str(file))
    folder_writable = os.access(file.parent, os.W_OK) and not _read_only_fs(file)
    shm, wal = Path(f"{file}-shm"), Path(f"{file}-wal")
    if folder_writable or (shm.exists() and wal.exists()):
        return uri + "?mode=ro"
    return uri + "?mode=ro&immutable=1"


def _read_only_fs(file: Path) -> bool:
    try:
        return bool(os.statvfs(file).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def lock_holders(path: str | os.PathLike[str]) -> list[str]:
    """The other processes that have the mirror open, as `pid 123 (edt serve)` (Linux /proc;
    an empty list elsewhere or when none can be seen)."""
    target = os.path.realpath(path)
    names = {target, f"{target}-wal", f"{target}-shm", f"{target}-journal"}
    found: list[str] = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            fds = list((entry / "fd").iterdir())
            if not any(os.readlink(fd) in names for fd in fds):
                continue
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        found.append(f"pid {entry.name} ({_kind([a.decode(errors='replace') for a in argv if a])})")
    return found


def _kind(argv: list[str]) -> str:
    """`edt serve`, `the app (edt app)`, `a notebook`, or the program's name."""
    words = [os.path.basename(a) for a in argv]
    if "streamlit" in " ".join(argv):
        return "the app, edt app"
    if any(w.startswith(("ipykernel", "jupyter")) for w in words) or "ipykernel_launcher" in " ".join(argv):
        return "a notebook"
    for i, word in enumerate(words):
        if word == "edt" or (word == "toolkit" and i and words[i - 1] == "-m"):
            rest = [a for a in argv[i + 1 :] if not a.startswith("-")]
            return f"edt {rest[0]}" if rest else "edt"
    return words[0] if words else "a process"


def locked_message(path: str | os.PathLike[str], seconds: float = BUSY_TIMEOUT_MS / 1000) -> str:
    """One line for a write that found the mirror locked for longer than the busy timeout."""
    holders = lock_holders(path)
    who = f"open in {', '.join(holders)}" if holders else "held by another process"
    return (
        f"{os.fspath(path)} stayed locked for {seconds:g} s ({who}): another writer (a sync, demo, ingest, "
        "enrich or the app's sync button) is still at work; wait for it to finish, or stop it, then run this again"
    )
