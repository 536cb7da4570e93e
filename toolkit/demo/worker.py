"""The demo's rows made ready for the writer: in this process, or, for a load of
`WORKER_MIN_RECORDS` records or more, in a worker process while this one writes.

    with demo_rows(scale, seed, today) as items:      # (kind, observed_at, rows), in write order
        for kind, observed_at, rows in items: ...

A worker is forked where that is safe (no other thread runs), else spawned; it stops itself
when the loader is gone (kill -9) and reports a failure as one item the loader raises.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue as queue_module
import signal
import threading
import time
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

from ..store.children import own_stops, stops_held
from ..store.schema import LISTING_COLUMNS
from ..store.writer import listing_row, listing_values, pending_row, pending_values, save_listings
from .clock import anchor_of
from .generate import listing_chunks
from .pending import pending_chunks
from .plan import Scale, history_states, plan_listings
from .signal_fields import metric_history_states

__all__ = ["DEMO", "Item", "SOURCE_COLUMN", "WORKER_MIN_RECORDS", "demo_rows", "write_listing_rows"]

DEMO = "demo"  # the origin of every row the demo writes
# Loads of at least this many records generate in a worker process while this one writes.
WORKER_MIN_RECORDS = 50_000

Item = tuple[str, Any, list[tuple]]  # (kind, observed_at or None, rows as the writer takes them)
SOURCE_COLUMN = list(LISTING_COLUMNS).index("source")


def write_listing_rows(writer: Any, rows: list[tuple], origin: str, stamp: str, batch: int = 1000) -> None:
    """Listing rows (as the writer takes them) written as a sync at `stamp` writes them, in
    batches of `batch`: no raw records kept, the metric jumps flagged once after the whole load."""
    save_listings(
        writer,
        rows,
        origin=origin,
        observed_at=stamp,
        keep_raw=False,
        normalized=True,
        flag_jumps=False,
        batch_size=batch,
    )


def _produce(scale: Scale, seed: int, today: date) -> Iterator[Item]:
    """Rows ready for the writer: normalised here (in the worker, when there is one), so
    the writing process only writes."""
    final = anchor_of(today).strftime("%Y-%m-%dT%H:%M:%SZ")
    plan = plan_listings(scale, seed, today)
    for observed_at, records in history_states(plan, seed):
        yield (
            "history",
            observed_at,
            [listing_values(listing_row(r, origin=DEMO, observed_at=observed_at, canonical=True)) for r in records],
        )
    bid_history = set(plan.ids[plan.history].tolist())
    anchor = int(anchor_of(today).timestamp())
    for number, chunk in enumerate(listing_chunks(plan, seed)):
        for observed_at, records in metric_history_states(chunk, bid_history, anchor, seed, number):
            yield (
                "history",
                observed_at,
                [listing_values(listing_row(r, origin=DEMO, observed_at=observed_at, canonical=True)) for r in records],
            )
        yield (
            "listings",
            None,
            [listing_values(listing_row(r, origin=DEMO, observed_at=final, canonical=True)) for r in chunk],
        )
    del plan
    for chunk in pending_chunks(scale, seed, today):
        yield (
            "pending",
            None,
            [pending_values(pending_row(r, origin=DEMO, observed_at=final, canonical=True)) for r in chunk],
        )


def _worker(out: Any, scale: Scale, seed: int, today: date) -> None:
    # The loader decides how a load stops (Ctrl-C and kill roll it back, then end this process).
    own_stops()
    gc.disable()  # the generator makes no reference cycles; collections would only cost time
    parent = os.getppid()

    def put(item: Item) -> None:
        while True:  # a loader killed outright (kill -9) cannot stop this process: it stops itself
            try:
                return out.put(item, timeout=1)
            except queue_module.Full:
                if os.getppid() != parent:
                    os._exit(1)

    def taken() -> None:
        # Before ending, wait until the loader has taken every item: the queue's pipe is flushed as
        # the process ends, and with the loader gone (kill -9) and the pipe full that would never end.
        while _waiting(out):
            if os.getppid() != parent:
                os._exit(1)
            time.sleep(0.05)

    try:
        for item in _produce(scale, seed, today):
            put(item)
        put(("done", None, []))
    except BaseException:  # report, then let the process end
        put(("error", traceback.format_exc(), []))
    taken()


def _waiting(out: Any) -> bool:
    """Whether items put on `out` are not yet taken (where the count cannot be read: not yet read)."""
    try:
        return out.qsize() > 0
    except NotImplementedError:  # macOS: no semaphore count
        return not out.empty()


def _ending(code: int | None) -> str:
    """How a process ended, in words: `killed by SIGTERM` or `exit status 1`."""
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit status {code}"


def _start_method() -> str:
    """fork is instant, but unsafe in a process that runs other threads (a server, an app)."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


@contextmanager
def demo_rows(scale: Scale, seed: int, today: date) -> Iterator[Iterator[Item]]:
    total = scale.listings + scale.regfree + scale.pending
    if total < WORKER_MIN_RECORDS:
        yield _produce(scale, seed, today)
        return
    ctx = multiprocessing.get_context("fork") if _start_method() == "fork" else multiprocessing.get_context("spawn")
    channel = ctx.Queue(maxsize=24)
    worker = ctx.Process(target=_worker, args=(channel, scale, seed, today), name="edt-demo-generator", daemon=True)
    with stops_held():  # until the worker took its own (toolkit/store/children.py)
        worker.start()
    finished = False

    def items() -> Iterator[Item]:
        nonlocal finished
        while True:
            try:
                kind, first, records = channel.get(timeout=2)
            except queue_module.Empty:
                if not worker.is_alive():
                    raise RuntimeError(f"the demo generator process stopped ({_ending(worker.exitcode)})") from None
                continue
            if kind == "done":
                finished = True
                return
            if kind == "error":
                finished = True
                raise RuntimeError(f"the demo generator failed:\n{first}")
            yield kind, first, records

    try:
        yield items()
    finally:
        worker.join(timeout=5 if finished else 0)  # after "done" or "error" it is exiting
        if worker.is_alive():  # the load stopped early: the worker may be blocked on a full queue
            worker.terminate()
            worker.join(timeout=10)
        channel.close()
        channel.join_thread()
