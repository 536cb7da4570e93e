"""The sync jobs: what the mirror is filled with from the remote API, and how fresh each is.

A job is a declared sweep of one endpoint (docs/reference/freshness.md): its path and fixed
parameters, how it pages, the plan capability it needs, the table it fills and the rows a
complete full pass vouches for, and how fresh the service keeps that dataset. `toolkit.sync`
runs them; `freshness` reads each job's last successful run from `sync_runs` against its
schedule (`Mirror.status`, `edt status`, the app's Sync page). The declaration lives here,
beside the tables it names, so the query layer can report freshness without importing the sync.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from .named import by_name

__all__ = ["Job", "JOBS", "freshness", "last_ok", "run_freshness"]


@dataclass(frozen=True)
class Job:
    name: str
    path: str
    params: Mapping[str, Any]  # sent with every request of the job
    paging: str  # "cursor" (after_id) or "page"
    per_page: int
    capability: str  # a plans.REQUIREMENTS key: the lowest plan that may run it
    table: str
    scope: str | None  # SQL over `table`: the rows a complete full pass vouches for
    every: timedelta  # how fresh the service keeps this dataset (docs/reference/freshness.md)
    schedule: str
    description: str


JOBS: dict[str, Job] = by_name(
    Job(
        "listings",
        "/api/domains",
        {"include_historical_traffic": 1},
        "cursor",
        100,
        "domains",
        "listings",
        "source != 'regfree'",
        timedelta(days=1),
        "daily, 07:00 local",
        "every platform listing (full pass through the after_id cursor, else new ones since the last run)",
    ),
    Job(
        "bids",
        "/api/domains",
        {"has_bids": 1, "include_historical_traffic": 1},
        "cursor",
        100,
        "domains",
        "listings",
        None,
        timedelta(hours=4),
        "every 4 hours",
        "auctions with bids (has_bids=1)",
    ),
    Job(
        "regfree",
        "/api/domains",
        {"source": "regfree", "include_historical_traffic": 1},
        "page",
        100,
        "regfree",
        "listings",
        "source = 'regfree'",
        timedelta(days=31),
        "monthly",
        "the deleted ccTLD database (page mode: the cursor excludes it)",
    ),
    Job(
        "pending",
        "/api/pending-delete",
        {"week_end": "all", "include_past": 1, "sort": "domain"},
        "page",
        200,
        "pending_delete",
        "pending_delete",
        "1",
        timedelta(days=7),
        "weekly",
        "the pending-delete inventory",
    ),
)


def last_ok(conn: sqlite3.Connection, name: str) -> str | None:
    """When the job or feed `name` last ended well (its `sync_runs` row), or None."""
    row = conn.execute(
        "SELECT finished_at FROM sync_runs WHERE job = ? AND status = 'ok' ORDER BY id DESC LIMIT 1", [name]
    ).fetchone()
    return row[0] if row else None


def run_freshness(name: str, schedule: str, every: timedelta, last: str | None, now: datetime) -> dict[str, Any]:
    """A job's or a feed's row of the freshness table: its last good run against `every`."""
    age = None if last is None else now - datetime.fromisoformat(last.replace("Z", "+00:00"))
    return {
        "job": name,
        "schedule": schedule,
        "last_ok": last,
        "age_hours": None if age is None else round(age.total_seconds() / 3600, 1),
        "fresh": age is not None and age <= every,
    }


def freshness(conn: sqlite3.Connection, now: datetime | None = None) -> list[dict[str, Any]]:
    """Each job's last successful run against its schedule (docs/reference/freshness.md)."""
    now = now or datetime.now(timezone.utc)
    return [run_freshness(job.name, job.schedule, job.every, last_ok(conn, job.name), now) for job in JOBS.values()]
