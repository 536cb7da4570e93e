"""The demo in the mirror: `load_demo` writes it, `clear_demo` takes it out again.

    from toolkit.demo import load_demo, clear_demo
    counts = load_demo(conn, scale="small", seed=42)     # or scale="full", or days=30
    clear_demo(conn)                                     # only the demo's rows go

A load replaces the previous demo rows in one transaction with the indexes dropped (a load
stopped anywhere leaves the mirror as it was); it refuses a mirror holding synced or
ingested rows unless `force=True`. The rows come from `worker.demo_rows` (in a worker
process for big loads); a time-lapse load (`days`) plays `timelapse.run_days` instead.
"""

from __future__ import annotations

import gc
import json
from functools import partial
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterator
from datetime import date, timedelta
from typing import Any, cast

from ..ingest.common import INGEST_ID_BASE
from ..store.closing import optimize_search_index, reclaim_pages
from ..store.lock import mirror_file, writer_lock
from ..store.packed import packed_origins
from ..store.removal import Removal, other_origins, remove_origin
from ..store.results import derive_results, forget_values, value_model_path
from ..store.schema import bulk_load, ensure_schema, without_indexes
from ..store.transaction import one_transaction
from ..store.writer import bump_generation, save_pending, utc_now
from ..signals.inflation import flag_metric_jumps
from .clock import anchor_of, demo_day, demo_today
from .generate import listing_chunks
from .pending import PENDING_ID_BASE, pending_chunks
from .plan import LISTING_ID_BASE, Scale, plan_listings, scale_of
from .worker import DEMO, SOURCE_COLUMN, demo_rows, write_listing_rows
from .. import errors

__all__ = [
    "DemoRefused",
    "generate_listings",
    "generate_pending",
    "load_demo",
    "clear_demo",
    "removal_line",
    "demo_day",
]

META_KEYS = ("demo_scale", "demo_seed", "demo_generated_at", "demo_today", "demo_days")
MAX_DAYS = 400  # a time-lapse of more than a year and a month is not a demo
# Above this many demo rows, clear_demo drops and rebuilds the indexes instead of
# maintaining them row by row.
_BULK_CLEAR_MIN_ROWS = 20_000


class DemoRefused(errors.BadInput):
    """The mirror holds real (synced or ingested) rows: a demo load would mix with them.
    `held` says which rows, in words ("5 listings (ingest:godaddy)")."""

    def __init__(self, message: str, held: str = ""):
        super().__init__(message)
        self.held = held


def generate_listings(scale: str, seed: int, today: date) -> Iterator[dict[str, Any]]:
    """Every platform and regfree listing record of the demo, in id order (final states)."""
    sc = scale_of(scale)
    plan = plan_listings(sc, seed, demo_today(today))
    for chunk in listing_chunks(plan, seed):
        yield from chunk


def generate_pending(scale: str, seed: int, today: date) -> Iterator[dict[str, Any]]:
    """Every pending-delete record of the demo, in id order."""
    for chunk in pending_chunks(scale_of(scale), seed, demo_today(today)):
        yield from chunk


def _foreign_rows(conn: sqlite3.Connection) -> dict[str, int]:
    """Rows not written by the demo, per place and origin (plain, packed or archived)."""
    return other_origins(conn, mirror_file(conn), DEMO)


def _numbered_as_the_demo(conn: sqlite3.Connection) -> int:
    """Rows of another origin in the ids the demo draws from (the service's own: from
    `LISTING_ID_BASE`, from `PENDING_ID_BASE`), which a demo load would write over; an ingested
    row's id is above `INGEST_ID_BASE`, where the demo never writes."""
    plain = sum(
        conn.execute(
            f"SELECT count(*) FROM {table} WHERE origin IS NOT ? AND id > ? AND id < ?", [DEMO, base, INGEST_ID_BASE]
        ).fetchone()[0]
        for table, base in (("listings", LISTING_ID_BASE), ("pending_delete", PENDING_ID_BASE))
    )
    packed = (i for origin, ids in packed_origins(conn).items() if origin != DEMO for i in ids)
    return plain + sum(LISTING_ID_BASE < i < INGEST_ID_BASE for i in packed)


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
    # A shortlisted demo listing goes with it: kept by id, the note would move to whatever
    # real listing the service numbers so (the demo's ids are the service's).
    packed = json.dumps(packed_origins(conn).get(DEMO, []))
    shortlisted = conn.execute(
        "DELETE FROM shortlist WHERE listing_id IN (SELECT id FROM listings WHERE origin = ?) "
        "OR listing_id IN (SELECT value FROM json_each(?))",
        [DEMO, packed],
    ).rowcount
    removal = remove_origin(conn, mirror_file(conn), DEMO, everything=everything)
    removal.counts["shortlisted"] = shortlisted
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
    "shortlisted": "shortlisted demo listings",
}


def removal_line(counts: dict[str, int]) -> str:
    """ "5,001 listings, 1,507 regfree rows, ..." (what `clear_demo` removed; nothing for a zero)."""
    said = [f"{counts[key]:,} {words}" for key, words in _REMOVED_WORDS.items() if counts.get(key)]
    return ", ".join(said) or "nothing (the mirror held no demo rows)"


async def clear_demo_once_answered(conn: sqlite3.Connection, answered: Callable[[], Awaitable[Any]]) -> dict[str, int]:
    """A mirror switched from the demo to the service's listings (`edt sync --clear-demo`, the
    app's "Remove the demo first"): the demo's rows go once `answered()` (one request to the
    service) returns; a wrong key or a service that is down raises there and keeps the demo.
    The counts removed (`clear_demo`); {} when the mirror holds no demo."""
    from ..sync.engine import holds_demo

    if not holds_demo(conn):
        return {}
    await answered()
    return clear_demo(conn)


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
        load = bulk_load(conn) if sum(demo.values()) >= _BULK_CLEAR_MIN_ROWS else one_transaction(conn)
        with load as transaction:
            writer = cast(sqlite3.Connection, transaction)  # it forwards every call to the connection
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
    sc = scale_of(scale)
    day = demo_today(today)
    if not isinstance(days, int) or isinstance(days, bool) or not 0 <= days <= MAX_DAYS:
        raise ValueError(f"days must be a whole number from 0 to {MAX_DAYS} (got {days!r})")
    ensure_schema(conn)
    with writer_lock(conn, "edt demo"):
        foreign = _foreign_rows(conn)
        shared = _numbered_as_the_demo(conn) if foreign else 0
        if shared:  # --force or not: the demo would write over them
            raise DemoRefused(
                f"this mirror holds {shared:,} synced rows numbered as the demo numbers its own (the service's ids): "
                "the demo would write over them. Load it into another file (--db demo.db)"
            )
        if foreign and not force:
            what = ", ".join(f"{n:,} {where}" for where, n in foreign.items())
            refused = DemoRefused(
                f"this mirror holds real data ({what}); loading the demo would mix invented listings with them. "
                "Use another database, or pass force=True to add the demo beside them "
                "(clear_demo removes only demo rows later).",
                held=what,
            )
            raise refused
        report = progress or (lambda stage, done: None)
        counts = {"listings": 0, "regfree": 0, "pending_delete": 0, "history": 0}
        started = time.perf_counter()
        collecting = gc.isenabled()
        gc.disable()  # neither the generator nor the writer makes reference cycles
        try:
            load = partial(_load_days, days=days) if days else _load
            timings = load(
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
    with demo_rows(scale, seed, day) as items, one_transaction(conn, bulk=True) as transaction:
        writer = cast(sqlite3.Connection, transaction)  # it forwards every call to the connection
        with without_indexes(conn):
            removal = _delete_demo_rows(writer, everything=everything)
            history_before = conn.execute("SELECT count(*) FROM listing_history").fetchone()[0]
            seen_history = 0
            phase = started
            for kind, observed, records in items:
                if kind == "history":
                    write_listing_rows(writer, records, DEMO, observed)
                    seen_history += len(records)
                    report("history", seen_history)
                elif kind == "listings":
                    if "history" not in timings:
                        timings["history"], phase = time.perf_counter() - phase, time.perf_counter()
                    write_listing_rows(writer, records, DEMO, observed_at)
                    regfree = sum(1 for r in records if r[SOURCE_COLUMN] == "regfree")
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
        _note_demo(writer, scale_name, seed, day)
    removal.finish()  # once committed: the archive files and the model the demo's rows left
    return timings


def _note_demo(writer: sqlite3.Connection, scale_name: str, seed: int, day: date, days: int | None = None) -> None:
    """What the demo in the mirror is (`META_KEYS`: a time-lapse also its days), then a new generation."""
    notes = [("demo_scale", scale_name), ("demo_seed", str(seed)), ("demo_generated_at", utc_now())]
    notes += [("demo_today", day.isoformat())] + ([("demo_days", str(days))] if days is not None else [])
    writer.executemany(
        "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        notes,
    )
    bump_generation(writer)


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
    from .playback import run_days
    from .timelapse import plan_world

    timings: dict[str, float] = {}
    started = time.perf_counter()
    world = plan_world(scale, seed, day - timedelta(days=days), day)
    timings["plan"] = time.perf_counter() - started
    with one_transaction(conn, bulk=True) as transaction:
        writer = cast(sqlite3.Connection, transaction)  # it forwards every call to the connection
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
        _note_demo(writer, scale_name, seed, day, days)
    removal.finish()  # once committed: the archive files and the model the demo's rows left
    return timings
