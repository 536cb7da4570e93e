"""What `edt status`, the app's Sync page and an assistant read about the mirror as a whole:
row counts, the origin of the rows, the last run of each job, freshness against the
service's and the feeds' schedules, what is put away, results, price ranges, watched names,
what is incomplete with its fix (`status`), and the live listings counted per source, TLD,
language and topic (`live_counts`)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..sources import REGFREE
from ..store.feed_catalog import feed_freshness
from ..store.fields import iso_timestamp
from ..store.jobs import freshness

if TYPE_CHECKING:
    from .mirror import Mirror

__all__ = ["status", "live_counts"]


def status(mirror: Mirror) -> dict[str, Any]:
    """Row counts per dataset, demo or synced, the last sync of each job and each
    dataset's freshness against the service's schedule (docs/reference/freshness.md), and
    each public feed's against its publisher's (`feeds`, docs/guides/feeds.md)."""
    conn = mirror.connection()
    now = iso_timestamp(mirror.now())
    count = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
    datasets = {
        "listings": {
            "rows": count("SELECT count(*) FROM listings WHERE source != ?", REGFREE),
            "live": count(
                f"SELECT count(*) FROM listings WHERE {mirror.search.open_term(mirror.now())}source != ? AND live_until > ?",
                REGFREE,
                now,
            ),
        },
        "regfree": {"rows": count("SELECT count(*) FROM listings WHERE source = ?", REGFREE)},
        "pending_delete": {"rows": count("SELECT count(*) FROM pending_delete")},
        "listing_history": {"rows": count("SELECT count(*) FROM listing_history")},
    }
    origins = dict(conn.execute("SELECT origin, count(*) FROM listings GROUP BY origin").fetchall())
    for origin, n in conn.execute("SELECT origin, count(*) FROM pending_delete GROUP BY origin"):
        origins[origin] = origins.get(origin, 0) + n
    runs = {}
    for job, started, finished, status, rows_seen, error in conn.execute(
        "SELECT job, started_at, finished_at, status, rows_seen, error FROM sync_runs "
        "WHERE id IN (SELECT max(id) FROM sync_runs GROUP BY job)"
    ):
        runs[job] = {
            "started_at": started,
            "finished_at": finished,
            "status": status,
            "rows_seen": rows_seen,
            "error": error,
        }
    meta = dict(conn.execute("SELECT key, value FROM mirror_meta").fetchall())
    return {
        "path": mirror.path,
        "datasets": datasets,
        "origins": origins,
        "last_sync": runs,
        "meta": meta,
        "freshness": freshness(conn, mirror.now()),
        "feeds": feed_freshness(conn, mirror.now()),
        "put_away": _put_away(conn),
        "results": _results_status(conn),
        "reported_sales": _reported_status(conn),
        "ranges": _ranges_status(mirror, conn, now or "", meta),
        "watched_names": _watched_status(conn),
        "problems": _problems(mirror, conn, runs, meta),
    }


def _put_away(conn: sqlite3.Connection) -> dict[str, int]:
    """Closed listings kept out of the plain table: packed in the mirror, archived beside it."""
    archived = conn.execute("SELECT coalesce(sum(rows), 0) FROM archive_parts WHERE tbl = 'listings'").fetchone()[0]
    return {"packed": conn.execute("SELECT count(*) FROM packed_listings").fetchone()[0], "archived": archived}


def _results_status(conn: sqlite3.Connection) -> dict[str, Any]:
    ended, sold, last = conn.execute(
        "SELECT count(*), coalesce(sum(sold), 0), max(ended_at) FROM auction_results"
    ).fetchone()
    return {"auctions": ended, "sold": sold, "last_ended_at": last}


def _reported_status(conn: sqlite3.Connection) -> dict[str, Any]:
    """Sales reported elsewhere (`edt ingest sales`): how many, the first and last day."""
    sales, first, last = conn.execute("SELECT count(*), min(sold_on), max(sold_on) FROM reported_sales").fetchone()
    return {"sales": sales, "first_sold_on": first, "last_sold_on": last}


def _ranges_status(mirror: Mirror, conn: sqlite3.Connection, now: str, meta: Mapping[str, str]) -> dict[str, Any]:
    """The live listings with a price range, and the last training's summary (`edt appraise`)."""
    valued, live = conn.execute(
        f"SELECT coalesce(sum(value_mid IS NOT NULL), 0), count(*) FROM listings WHERE {mirror.search.open_term(mirror.now())}"
        "source != ? AND live_until > ?",
        [REGFREE, now],
    ).fetchone()
    return {
        "valued": valued,
        "live": live,
        "model": json.loads(meta["value_model"]) if "value_model" in meta else None,
    }


def _watched_status(conn: sqlite3.Connection) -> dict[str, Any]:
    stages = dict(conn.execute("SELECT coalesce(stage, ''), count(*) FROM watched_names GROUP BY 1").fetchall())
    checked = conn.execute("SELECT max(checked_at) FROM watched_names").fetchone()[0]
    return {"names": sum(stages.values()), "stages": stages, "checked_at": checked}


def _problems(mirror: Mirror, conn: sqlite3.Connection, runs: Mapping[str, Any], meta: Mapping[str, str]) -> list[str]:
    """What is incomplete in the mirror, each with its fix: a load at work now, a sync or an
    enrichment that stopped midway, demo rows without a finished demo load, missing indexes."""
    from ..store.lock import current_holder
    from ..store.schema import missing_parts

    problems = []
    holder = current_holder(mirror.path)
    if holder:
        problems.append(f"a load is writing to this mirror now ({holder}); these counts are from before it")
    for job, run in runs.items():
        if run["status"] in ("running", "interrupted") and not holder:
            problems.append(
                f"sync job {job} stopped midway (started {run['started_at']}); the pages it wrote are "
                "kept: `edt sync` resumes it"
            )
    if "enrich_progress" in meta and not holder:
        from ..store.meta import enrich_resume_command

        command = enrich_resume_command(meta["enrich_progress"])
        problems.append(
            f"an enrichment stopped midway; `{command}` resumes it"
            if command
            else "an enrichment stopped midway; `edt enrich` with the same filters resumes it"
        )
    # Tried and refused: a webhook is set, and every alert not yet posted waits for it.
    last_error = conn.execute(
        "SELECT last_error FROM alert_outbox WHERE posted_at IS NULL AND attempts > 0 ORDER BY id DESC LIMIT 1"
    ).fetchone()
    if last_error:
        waiting = conn.execute("SELECT count(*) FROM alert_outbox WHERE posted_at IS NULL").fetchone()[0]
        problems.append(
            f"{waiting:,} alert{'s' if waiting != 1 else ''} not delivered yet (the receiver's last answer: "
            f"{last_error[0]}); each run tries again: check the receiver, or the webhook in [alerts]"
        )
    if (
        "demo_scale" not in meta
        and conn.execute("SELECT EXISTS (SELECT 1 FROM listings WHERE origin = 'demo')").fetchone()[0]
    ):
        problems.append(
            "demo rows without a finished demo load (an older toolkit's load was stopped midway): "
            "`edt demo` loads it whole, `edt demo --clear` removes them"
        )
    missing = missing_parts(conn)
    if missing:
        fix = (
            "open it once read-write (any edt command) to rebuild them"
            if mirror.readonly
            else "`edt doctor --repair` rebuilds them"
        )
        problems.append(f"missing: {', '.join(missing)}; {fix}")
    return problems


def live_counts(mirror: Mirror) -> dict[str, Any]:
    """Live listings counted per source, TLD (platforms and regfree apart), language and
    topic: what a filter picker or an assistant's `list_filters` shows beside each value."""
    conn = mirror.connection()
    now = iso_timestamp(mirror.now())
    live = f"FROM listings WHERE {mirror.search.open_term(mirror.now())}live_until > ?"

    def pairs(sql: str, *args: Any) -> list[tuple[Any, int]]:
        return conn.execute(sql, [now, *args]).fetchall()

    by_tld = f"SELECT tld, count(*) {live} AND source {{}} ? GROUP BY tld ORDER BY 2 DESC, 1"
    return {
        "sources": dict(pairs(f"SELECT source, count(*) {live} GROUP BY source")),
        "tlds": pairs(by_tld.format("!="), REGFREE),
        "regfree_tlds": pairs(by_tld.format("="), REGFREE),
        "languages": pairs(
            f"SELECT language, count(*) {live} AND source != ? AND language IS NOT NULL "
            "GROUP BY language ORDER BY 2 DESC, 1",
            REGFREE,
        ),
        "topics": pairs(
            f"SELECT ttf_topic, count(*) {live} AND source != ? AND ttf_topic IS NOT NULL GROUP BY ttf_topic",
            REGFREE,
        ),
    }
