"""The columnar index a `Mirror` answers from: the part in use, a saved part read again when
its file changed, a part refreshed after a write, and rebuilds in the background for the
long-lived readers (`edt serve`, the app)."""

from __future__ import annotations

import atexit
import contextlib
import threading
import time
import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["IndexKeeper", "ENGINES", "REBUILD_INTERVAL"]

# How a Mirror answers `/api/domains` requests:
#   auto        the columnar index when the one saved beside the mirror is current, else SQLite
#   background  as auto, and a stale index is rebuilt in a background thread (long-lived
#               processes: edt serve, the app)
#   columnar    a stale index is rebuilt before answering (benchmarks, tests)
#   sqlite      never the columnar index
ENGINES = ("auto", "background", "columnar", "sqlite")
# A background refresh starts at most this often. It reads only the rows written since
# (about half a second at full scale); a sync commits a page every few seconds.
REBUILD_INTERVAL = 2.0

# Background rebuilds still running (a process may end during one: `edt mcp` when its client
# hangs up, a server stopped): waited for at exit, so the interpreter's shutdown never cuts
# their native code (Arrow, NumPy) off mid-call, which aborts the process.
_REBUILDS: weakref.WeakSet[threading.Thread] = weakref.WeakSet()


@atexit.register
def _finish_rebuilds() -> None:
    for thread in list(_REBUILDS):
        thread.join(timeout=60)


class IndexKeeper:
    """The columnar index parts (`columnar.PARTS`) of the mirror at `path`, shared by the
    threads of one `Mirror`. `generation` reads the mirror's current generation; `engine`
    is one of ENGINES."""

    def __init__(self, path: str, engine: str, generation: Callable[[], int]):
        if engine not in ENGINES:
            raise ValueError(f"engine: {engine!r} is not one of {', '.join(ENGINES)}")
        self.path, self.engine, self._generation = path, engine, generation
        self._held: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[int, int] | None] = {}  # (mtime, size) of each part's file when last read
        # Background rebuilds, one at a time per part (a slow `all` never holds the live one up).
        self._rebuilding: dict[str, threading.Thread] = {}
        self._rebuilt_at: dict[str, float] = {}

    def refresh(self, part: str = "live") -> Any:
        """The part as the mirror is now: the one in use or saved when it is current, else
        refreshed (only the rows written since are read again) or built whole, saved (kept in
        memory only where that folder cannot be written) and used."""
        from .columnar import index_path, update_index

        generation = self._generation()
        current = self.known(part)
        if current is not None and current.generation == generation:
            return current
        path = index_path(self.path, part)
        try:  # saved an array at a time as it is made, and mapped
            index = update_index(self.path, current, part=part, save_to=path)
        except OSError:  # a read-only folder: this process keeps it in memory
            index = update_index(self.path, current, part=part)
        with self._lock:
            held = self._held.get(part)
            if held is None or held.generation <= index.generation:
                self._held[part] = index
                with contextlib.suppress(OSError):  # the file just written need not be read back
                    stat = path.stat()
                    self._seen[part] = (stat.st_mtime_ns, stat.st_size)
        return index

    def refresh_all(self) -> Any:
        """The live part, and the `all` part when one is saved beside the mirror (someone
        asked for closed rows: it stays current for them). Returns the live part."""
        from .columnar import index_path

        live = self.refresh()
        if index_path(self.path, "all").exists():
            self.refresh("all")
        return live

    def known(self, part: str) -> Any:
        """The newest part this keeper knows: the one in use, or the saved one when its file
        changed since it was last read."""
        from .columnar import index_path, load_index

        with self._lock:
            path = index_path(self.path, part)
            try:
                stat = path.stat()
                seen: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
            except OSError:
                seen = None
            if seen is not None and seen != self._seen.get(part):
                self._seen[part] = seen
                loaded = load_index(path, part)
                held = self._held.get(part)
                if loaded is not None and (held is None or loaded.generation >= held.generation):
                    self._held[part] = loaded
            return self._held.get(part)

    def current(self, generation: int, part: str = "live") -> Any:
        """The part of `generation` if there is one to use now, else None (SQLite answers)."""
        if self.engine == "sqlite":
            return None
        index = self._held.get(part)
        if index is None or index.generation != generation:
            index = self.known(part)
        if index is not None and index.generation == generation:
            return index
        if self.engine == "columnar":
            try:
                index = self.refresh(part)
            except RuntimeError:  # the mirror kept changing while it was read: SQLite answers
                return None
            return index if index.generation == generation else None
        if self.engine == "background":
            self._rebuild_in_background(part)
        return None

    def _rebuild_in_background(self, part: str) -> None:
        with self._lock:
            running = part in self._rebuilding and self._rebuilding[part].is_alive()
            if running or time.monotonic() - self._rebuilt_at.get(part, 0.0) < REBUILD_INTERVAL:
                return
            self._rebuilt_at[part] = time.monotonic()

            def rebuild() -> None:
                try:
                    self.refresh(part)
                except Exception:  # noqa: BLE001 - the SQLite planner keeps answering
                    pass
                finally:
                    self._rebuilt_at[part] = time.monotonic()

            thread = self._rebuilding[part] = threading.Thread(
                target=rebuild, name=f"edt-columnar-rebuild-{part}", daemon=True
            )
            thread.start()
            _REBUILDS.add(thread)
