"""Worker processes a command forks while it runs (the demo's generator, the columnar index's
builders): a stop (Ctrl-C, `kill`) is the command's to handle, never a copy's.

    with stops_held():          # in the command, around the fork
        worker.start()
    ...
    def work():                 # first thing in the worker
        own_stops()

A fork copies the command's signal handlers with its stack: a stop arriving before the worker
set its own would run the command's handler in the copy (a load "interrupted" twice, a worker
left waiting on a pipe). So the stops are held (blocked) while the worker starts, and the
worker takes its own before it lets them through: ended by SIGTERM at once, and by the
terminal's Ctrl-C as it says (ignored where the command stops the worker itself).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["stops_held", "own_stops"]

STOPS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def stops_held() -> Iterator[None]:
    """SIGINT and SIGTERM held (not lost) in this thread until the block ends; a thread or
    process started inside it starts with them held (POSIX; elsewhere nothing is held)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, STOPS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def own_stops(*, interrupt: signal.Handlers = signal.SIG_IGN) -> None:
    """In a worker: SIGTERM ends it at once, SIGINT does what `interrupt` says (SIG_IGN:
    nothing; SIG_DFL: ends it at once, quietly), then both are let through."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, interrupt)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)
