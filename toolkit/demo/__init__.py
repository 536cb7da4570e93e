"""The built-in demo source: a realistic, deterministic mirror without network or key.

    from toolkit.demo import load_demo
    counts = load_demo(conn, scale="small", seed=42)     # or scale="full": the seed's volumes

`generate_listings` / `generate_pending` yield records shaped exactly as the reference
`Domain` and `PendingDeleteDomain` schemas (every field present, None where not enriched),
for the 22 platform sources and `regfree`; `load_demo` writes them through
`toolkit.store.writer` with `origin="demo"`. Same seed and same `today`, same records.

What is in it (see `catalog.py`): per platform volume, listing kinds (auction types,
closeouts, backorders), TLD mix, native currency, purchase links and believable prices;
the deleted-ccTLD database over 83 TLDs; the pending-delete inventory over 125 TLDs with
drop dates from `toolkit.ingest.lifecycle`; correlated SEO metrics (`generate.py`); names made of
words of the TLD's language (`words.py`, `names.py`). Time is relative to `today`: the
demo's "now" is 07:00 UTC that day (after the morning fetch of every platform); without a
`today`, the demo's day is the last one whose 07:00 UTC has passed.

A demo load never mixes with real data silently: `load_demo` refuses a mirror holding
synced or ingested rows unless `force=True`; `clear_demo` removes only demo rows.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import queue as queue_module
import signal
import sqlite3
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta, timezone
from typing import Any

from ..store.closing import optimize_search_index, reclaim_pages
from ..store.lock import mirror_file, writer_lock
from ..store.removal import Removal, other_origins, remove_origin
from ..store.results import derive_results, forget_values, value_model_path
from ..store.schema import LISTING_COLUMNS, bulk_load, ensure_schema, without_indexes
from ..store.transaction import one_transaction
from ..store.writer import (
    bump_generation,
    listing_row,
    listing_values,
    pending_row,
    pending_values,
    save_listings,
    save_pending,
    utc_now,
)
from ..signals.inflation import flag_metric_jumps
from .generate import (
    ANCHOR_HOUR,
    SCALES,
    Scale,
    anchor_of,
    history_states,
    listing_chunks,
    pending_chunks,
    plan_listings,
    platform_counts,
)
from .signals import metric_history_states

__all__ = [
    "DemoRefused",
    "SCALES",
    "Scale",
    "generate_listings",
    "generate_pending",
    "load_demo",
    "clear_demo",
    "removal_line",
    "demo_day",
    "platform_counts",
]

DEMO = "demo"
META_KEYS = ("demo_scale", "demo_seed", "demo_generated_at", "demo_today", "demo_days")
MAX_DAYS = 400  # a time-lapse of more than a year and a month is not a demo
# Loads of at least this many records generate in a worker process while this one writes.
WORKER_MIN_RECORDS = 50_000
# Above this many demo rows, clear_demo drops and rebuilds the indexes instead of
# maintaining them row by row.
_BULK_CLEAR_MIN_ROWS = 20_000


class DemoRefused(ValueError):
    """The mirror holds real (synced or ingested) rows: a demo load would mix with them."""


def demo_day(now: datetime | None = None) -> date:
    """The day a demo loaded at `now` (the clock) is of: the last day whose 07:00 UTC fetch has
    happened (before 07:00 UTC, yesterday), so no demo row is stamped later than the clock."""
    return ((now or datetime.now(timezone.utc)) - timedelta(hours=ANCHOR_HOUR)).date()


def _today(today: date | datetime | None, now: datetime | None = None) -> date:
    """The demo's day: `today`, else `demo_day(now)`."""
    if today is None:
        return demo_day(now)
    if isinstance(today, datetime):
        return (today.astimezone(timezone.utc) if today.tzinfo else today).date()
    return today


def _scale(scale: str) -> Scale:
    key = str(scale).strip().lower()
    if key not in SCALES:
        raise ValueError(f"unknown demo scale {scale!r}; choose one of {', '.join(SCALES)}")
    return SCALES[key]


def generate_listings(scale: str, seed: int, today: date) -> Iterator[dict[str, Any]]:
    """Every platform and regfree listing record of the demo, in id order (final states)."""
    sc = _scale(scale)
    plan = plan_listings(sc, seed, _today(today))
    for chunk in listing_chunks(plan, seed):
        yield from chunk


def generate_pending(scale: str, seed: int, today: date) -> Iterator[dict[str, Any]]:
    """Every pending-delete record of the demo, in id order."""
    for chunk in pending_chunks(_scale(scale), seed, _today(today)):
        yield from chunk


# -- producing the records: in this process, or in a worker while this one writes ---------

Item = tuple[str, Any, list[tuple]]  # (kind, observed_at or None, rows as the writer takes them)
_SOURCE = list(LISTING_COLUMNS).index("source")


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
    # The loader decides how a load stops (Ctrl-C and kill roll it back, then end this process):
    # a forked worker must not run the loader's handlers, nor stop on the terminal's Ctrl-C.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    gc.disable()  # the generator makes no reference cycles; collections would only cost time
    parent = os.getppid()

    def put(item: Item) -> None:
        while True:  # a loader killed outright (kill -9) cannot stop this process: it stops itself
            try:
                return out.put(item, timeout=1)
            except queue_module.Full:
                if os.getppid() != parent:
                    os._exit(1)

    try:
        for item in _produce(scale, seed, today):
            put(item)
        put(("done", None, []))
    except BaseException:  # report, then let the process end
        put(("error", traceback.format_exc(), []))


def _start_method() -> str:
    """fork is instant, but unsafe in a process that runs other threads (a server, an app)."""
    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return "fork"
    return "spawn"


@contextmanager
def _records(scale: Scale, seed: int, today: date) -> Iterator[Iterator[Item]]:
    total = scale.listings + scale.regfree + scale.pending
    if total < WORKER_MIN_RECORDS:
        yield _produce(scale, seed, today)
        return
    ctx = multiprocessing.get_context(_start_method())
    channel = ctx.Queue(maxsize=24)
    worker = ctx.Process(target=_worker, args=(channel, scale, seed, today), name="edt-demo-generator", daemon=True)
    worker.start()
    finished = False

    def items() -> Iterator[Item]:
        nonlocal finished
        while True:
            try:
                kind, first, records = channel.get(timeout=2)
            except queue_module.Empty:
                if not worker.is_alive():
                    raise RuntimeError(f"the demo generator process stopped (exit code {worker.exitcode})") from None
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


# -- the mirror side -------------------------------------------------------------------------


def _foreign_rows(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows not written by the demo, per place and origin (plain, packed or archived)."""
    return other_origins(conn, mirror_file(conn), DEMO)


def _demo_counts(conn: sqlite3.Connection) -> dict[str, int]:
    regfree, platform = conn.execute(
        "SELECT coalesce(sum(source = 'regfree'), 0), coalesce(sum(source IS NOT 'regfree'), 0) FROM listings "
        "WHERE origin = ?",
        [DEMO],
    ).fetchone()
    pending = conn.execute("SELECT count(*) FROM pending_delete WHERE origin = ?", [DEMO]).fetchone()[0]
    return {"listings": platform, "regfree": regfree, "pending_delete": pending}


def _delete_demo_rows(conn: sqlite3.Connection, *, everything: bool) -> Removal:
    """Delete everything the demo made (inside the caller's transaction): its rows wherever
    they live, with the auction results derived from them (`store.removal`); what the
    time-lapse made happen (`demo_truth`); its saved searches and their alerts; its notes in
    `mirror_meta`; and, when the demo's results were learnt from, every price range (the
    model file goes in `Removal.finish`, after the commit). `everything`: no other rows exist."""
    removal = remove_origin(conn, mirror_file(conn), DEMO, everything=everything)
    conn.execute(f"DELETE FROM mirror_meta WHERE key IN ({', '.join('?' * len(META_KEYS))})", META_KEYS)
    conn.execute("DELETE FROM raw_records WHERE kind = 'demo_truth'")
    # the time-lapse's saved searches and their alerts (toolkit.demo.timelapse.DEMO_SEARCHES)
    conn.execute("DELETE FROM alert_outbox WHERE search LIKE 'demo: %'")
    conn.execute("DELETE FROM saved_searches WHERE name LIKE 'demo: %'")
    if removal.counts["results"] or removal.counts["packed"] or removal.counts["archived"]:
        removal.counts["price ranges"] = forget_values(conn)
        removal.unlisted.append(value_model_path(removal.mirror_path))
    return removal


# What a clear removed, in words (`removal_line`), in this order.
_REMOVED_WORDS = {
    "listings": "listings",
    "regfree": "regfree rows",
    "pending_delete": "pending-delete rows",
    "history": "history rows",
    "raw_records": "raw records",
    "packed": "packed listings",
    "archived": "archived listings",
    "results": "auction results",
    "price ranges": "price ranges",
}


def removal_line(counts: dict[str, int]) -> str:
    """ "5,001 listings, 1,507 regfree rows, ..." (what `clear_demo` removed; nothing for a zero)."""
    said = [f"{counts[key]:,} {words}" for key, words in _REMOVED_WORDS.items() if counts.get(key)]
    return ", ".join(said) or "nothing (the mirror held no demo rows)"


def clear_demo(conn: sqlite3.Connection) -> dict[str, int]:
    """Delete everything the demo made, wherever it lives: listings (plain, packed or
    archived), regfree and pending-delete rows, their history and raw records, the auction
    results derived from them, the demo's saved searches and alerts, its notes in
    `mirror_meta`, and the price ranges learnt from its results (with the model kept beside
    the mirror); rows of any other origin stay. All or nothing: an interrupted clear leaves
    every row in place.

    Returns the counts removed: listings (platform), regfree, pending_delete, history,
    raw_records, packed, archived, results, and price ranges when any were forgotten.
    """
    ensure_schema(conn)
    with writer_lock(conn, "edt demo --clear"):
        everything = not _foreign_rows(conn)
        demo = _demo_counts(conn)
        if sum(demo.values()) >= _BULK_CLEAR_MIN_ROWS:
            with bulk_load(conn) as writer:
                removal = _delete_demo_rows(writer, everything=everything)
                bump_generation(writer)
        else:
            with one_transaction(conn) as writer:
                removal = _delete_demo_rows(writer, everything=everything)
                bump_generation(writer)
        removal.finish()
        if any(removal.counts.values()):  # the name search's tombstones merged, the freed pages given back
            optimize_search_index(conn)
            reclaim_pages(conn)
    return removal.counts


def load_demo(
    conn: sqlite3.Connection,
    *,
    scale: str = "small",
    seed: int = 42,
    today: date | None = None,
    force: bool = False,
    progress: Callable[[str, int], None] | None = None,
    days: int = 0,
) -> dict[str, int]:
    """Fill the mirror with the demo source; returns the rows written
    `{"listings": platform listings, "regfree": n, "pending_delete": n, "history": n}`.

    `days` > 0: the demo lives the `days` days ending today, one scheduled sync after
    another (`toolkit.demo.timelapse`): the mirror then holds what a mirror synced on
    schedule since then holds, closed listings, history and alerts included.

    Refuses (`DemoRefused`) when the mirror holds rows of another origin (synced or
    ingested data) unless `force=True`, in which case the demo is loaded beside them.
    Previous demo rows are replaced, in one transaction: a load stopped anywhere (Ctrl-C,
    a kill, an error) leaves the mirror as it was. A second load of the same mirror is
    refused at once (`toolkit.store.lock.MirrorBusy`, naming the one at work).
    `today` (default: today, UTC) anchors every date;
    `progress(stage, rows_done)` is called as the load advances (stages: history,
    listings, pending_delete, indexes, done).
    """
    sc = _scale(scale)
    day = _today(today)
    if not isinstance(days, int) or isinstance(days, bool) or not 0 <= days <= MAX_DAYS:
        raise ValueError(f"days must be a whole number from 0 to {MAX_DAYS} (got {days!r})")
    ensure_schema(conn)
    with writer_lock(conn, "edt demo"):
        foreign = _foreign_rows(conn)
        if foreign and not force:
            what = ", ".join(f"{n:,} {where}" for where, n in foreign.items())
            refused = DemoRefused(
                f"this mirror holds real data ({what}); loading the demo would mix invented listings with them. "
                "Use another database, or pass force=True to add the demo beside them "
                "(clear_demo removes only demo rows later)."
            )
            refused.held = what
            raise refused
        report = progress or (lambda stage, done: None)
        counts = {"listings": 0, "regfree": 0, "pending_delete": 0, "history": 0}
        started = time.perf_counter()
        collecting = gc.isenabled()
        gc.disable()  # neither the generator nor the writer makes reference cycles
        try:
            if days:
                timings = _load_days(
                    conn,
                    sc,
                    seed,
                    day,
                    days,
                    scale_name=str(scale).strip().lower(),
                    everything=not foreign,
                    counts=counts,
                    report=report,
                )
            else:
                timings = _load(
                    conn,
                    sc,
                    seed,
                    day,
                    scale_name=str(scale).strip().lower(),
                    everything=not foreign,
                    counts=counts,
                    report=report,
                )
        finally:
            if collecting:
                gc.enable()
        step = time.perf_counter()
        last_sync = conn.execute("SELECT max(last_seen_at) FROM listings WHERE origin = 'demo'").fetchone()[0]
        if last_sync:
            with conn:  # the auctions the demo's syncs saw end (store/results.py)
                derive_results(conn, now=last_sync)
        timings["results"] = time.perf_counter() - step
    timings["total"] = time.perf_counter() - started
    load_demo.last_timings = timings  # type: ignore[attr-defined]
    report("done", counts["listings"] + counts["regfree"] + counts["pending_delete"])
    return counts


def _load(
    conn: sqlite3.Connection,
    scale: Scale,
    seed: int,
    day: date,
    *,
    scale_name: str = "",
    everything: bool,
    counts: dict[str, int],
    report: Callable[[str, int], None],
) -> dict[str, float]:
    """Replace the demo rows in one transaction, with the indexes dropped for the load; fills
    `counts`, returns phase timings."""
    observed_at = anchor_of(day).strftime("%Y-%m-%dT%H:%M:%SZ")
    timings: dict[str, float] = {}
    started = time.perf_counter()
    with _records(scale, seed, day) as items, one_transaction(conn, bulk=True) as writer:
        with without_indexes(conn):
            removal = _delete_demo_rows(writer, everything=everything)
            history_before = conn.execute("SELECT count(*) FROM listing_history").fetchone()[0]
            seen_history = 0
            phase = started
            for kind, observed, records in items:
                if kind == "history":
                    save_listings(
                        writer,
                        records,
                        origin=DEMO,
                        observed_at=observed,
                        keep_raw=False,
                        normalized=True,
                        flag_jumps=False,
                    )
                    seen_history += len(records)
                    report("history", seen_history)
                elif kind == "listings":
                    if "history" not in timings:
                        timings["history"], phase = time.perf_counter() - phase, time.perf_counter()
                    save_listings(
                        writer,
                        records,
                        origin=DEMO,
                        observed_at=observed_at,
                        keep_raw=False,
                        normalized=True,
                        flag_jumps=False,
                    )
                    regfree = sum(1 for r in records if r[_SOURCE] == "regfree")
                    counts["regfree"] += regfree
                    counts["listings"] += len(records) - regfree
                    report("listings", counts["listings"] + counts["regfree"])
                else:
                    if "listings" not in timings:
                        timings["listings"], phase = time.perf_counter() - phase, time.perf_counter()
                    save_pending(writer, records, origin=DEMO, observed_at=observed_at, keep_raw=False, normalized=True)
                    counts["pending_delete"] += len(records)
                    report("pending_delete", counts["pending_delete"])
            timings["pending_delete"], phase = time.perf_counter() - phase, time.perf_counter()
            flag_metric_jumps(writer)  # once over the whole history (its index was kept)
            timings["signals"], phase = time.perf_counter() - phase, time.perf_counter()
            report("indexes", 0)
        timings["indexes"] = time.perf_counter() - phase
        counts["history"] = conn.execute("SELECT count(*) FROM listing_history").fetchone()[0] - history_before
        writer.executemany(
            "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [
                ("demo_scale", scale_name),
                ("demo_seed", str(seed)),
                ("demo_generated_at", utc_now()),
                ("demo_today", day.isoformat()),
            ],
        )
        bump_generation(writer)
    removal.finish()  # once committed: the archive files and the model the demo's rows left
    return timings


def _load_days(
    conn: sqlite3.Connection,
    scale: Scale,
    seed: int,
    day: date,
    days: int,
    *,
    scale_name: str,
    everything: bool,
    counts: dict[str, int],
    report: Callable[[str, int], None],
) -> dict[str, float]:
    """The time-lapse load: the window planned, then played run after run, in one transaction
    with the indexes dropped; fills `counts`, returns phase timings."""
    from .timelapse import plan_world, run_days

    timings: dict[str, float] = {}
    started = time.perf_counter()
    world = plan_world(scale, seed, day - timedelta(days=days), day)
    timings["plan"] = time.perf_counter() - started
    with one_transaction(conn, bulk=True) as writer:
        with without_indexes(conn):
            removal = _delete_demo_rows(writer, everything=everything)
            history_before = conn.execute("SELECT count(*) FROM listing_history").fetchone()[0]
            phase = time.perf_counter()
            run_days(writer, world, seed, origin=DEMO, report=report)
            timings["days"], phase = time.perf_counter() - phase, time.perf_counter()
            flag_metric_jumps(writer)
            timings["signals"], phase = time.perf_counter() - phase, time.perf_counter()
            report("indexes", 0)
        timings["indexes"] = time.perf_counter() - phase
        regfree, platform, pending = conn.execute(
            "SELECT (SELECT count(*) FROM listings WHERE origin = ?1 AND source = 'regfree'), "
            "(SELECT count(*) FROM listings WHERE origin = ?1 AND source != 'regfree'), "
            "(SELECT count(*) FROM pending_delete WHERE origin = ?1)",
            [DEMO],
        ).fetchone()
        counts.update(listings=platform, regfree=regfree, pending_delete=pending)
        counts["history"] = conn.execute("SELECT count(*) FROM listing_history").fetchone()[0] - history_before
        writer.executemany(
            "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [
                ("demo_scale", scale_name),
                ("demo_seed", str(seed)),
                ("demo_generated_at", utc_now()),
                ("demo_today", day.isoformat()),
                ("demo_days", str(days)),
            ],
        )
        bump_generation(writer)
    removal.finish()  # once committed: the archive files and the model the demo's rows left
    return timings
