"""`edt sync`: mirror the remote API into the local SQLite file (docs/reference/freshness.md).

A job is a declared sweep of one endpoint (`JOBS`, declared in `toolkit.store.jobs`). Its pages are fetched by a small
paginator object (`CursorPages` over `after_id`, `NumberedPages` over `page`) whose state is
written to `sync_state` in the same transaction as the page's rows: a sync killed at any
moment resumes from the last committed page and ends with the rows an uninterrupted run
would have written. A complete full pass vouches for every row it saw; rows of its scope it
did not see have left the source (listings get `closed_at`, pending-delete rows are removed).

Fetching (`fetch_pages`) is apart from writing (`save_page`), as in dogsheep's tools; the
client (`toolkit.sync.remote`) paces and retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import sqlite3
import time
from contextvars import ContextVar
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from dataclasses import fields as dataclass_fields
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any


from ..plans import REQUIREMENTS, normalize_plan, plan_allows
from ..store.lock import MirrorBusy, writer_lock
from ..store.schema import connect, ensure_schema
from ..store.fields import utc_stamp
from ..store.jobs import JOBS, Job
from ..store.results import derive_results
from ..store.writer import WriteCounts, bump_generation, close_listings, save_listings, save_pending
from .remote import HostUnreachable, RemoteClient, RemoteFailed, RemoteRefused
from .. import errors

__all__ = [
    "JobReport",
    "CursorPages",
    "NumberedPages",
    "SyncBusy",
    "SyncStopped",
    "sync",
    "plan_sync",
    "fetch_pages",
]

ORIGIN = "sync"
# An incremental `listings` run asks for rows created on or after the newest date it has,
# minus this overlap (created_after takes whole days; late-indexed rows are caught too).
INCREMENTAL_OVERLAP = timedelta(days=1)
# Incremental runs cannot see listings that left their source: a full pass runs when the
# last one is older than this (or with --full).
FULL_PASS_EVERY = timedelta(days=7)


# The sync's clock: the real one, or the one `sync(clock=...)` runs under (a replay of past
# runs: every stamp is the run's moment, and no pass waits for the next second).
_CLOCK: ContextVar[Callable[[], datetime] | None] = ContextVar("edt_sync_clock", default=None)


def _now() -> datetime:
    clock = _CLOCK.get()
    return clock() if clock is not None else datetime.now(timezone.utc)


def sync_now() -> str:
    """Now on the sync's clock, as the mirror stores timestamps (UTC, whole seconds)."""
    return utc_stamp(_now())


class SyncBusy(MirrorBusy):
    """Another load (a sync, a demo load, an ingest...) holds this mirror."""


class DemoInTheWay(errors.BadInput):
    """The mirror holds the demo, which numbers its listings as the service does: the API's
    rows would write over some and go live beside the others. Cleared first, or another file."""


class SyncStopped(errors.RunFailed):
    """The run stopped (refused or failing remote); committed pages are kept."""

    def __init__(self, message: str, reports: list["JobReport"] | None = None):
        super().__init__(message)
        self.reports = reports or []
        self.unreachable = False  # a host the network could not reach (HostUnreachable)


# -- paginators ------------------------------------------------------------------------------


@dataclass
class CursorPages:
    """Keyset pages over `after_id` (ids ascending; cheap at any depth; never regfree)."""

    after_id: int = 0
    done: bool = False

    def request(self) -> dict[str, Any]:
        return {"after_id": self.after_id}

    def advance(self, body: Mapping[str, Any], per_page: int) -> None:
        data = body.get("data") or []
        cursor = body.get("cursor") or {}
        next_id = cursor.get("next_after_id")
        more = cursor.get("has_more", len(data) >= per_page)
        if next_id is None and data:
            next_id = max(int(r["id"]) for r in data)
        if not data or not more or next_id is None:
            self.done = True
        else:
            self.after_id = int(next_id)

    def requests_left(self, body: Mapping[str, Any], per_page: int, done_so_far: int) -> int | None:
        total = (body.get("meta") or {}).get("total")  # an estimate in cursor mode
        return None if total is None else max(0, math.ceil(total / per_page) - done_so_far)


@dataclass
class NumberedPages:
    """Numbered pages (`page`, `meta.last_page`): for what the cursor does not serve."""

    page: int = 1
    done: bool = False

    def request(self) -> dict[str, Any]:
        return {"page": self.page}

    def advance(self, body: Mapping[str, Any], per_page: int) -> None:
        meta = body.get("meta") or {}
        last = meta.get("last_page") or 0
        if not body.get("data") or self.page >= last:
            self.done = True
        else:
            self.page += 1

    def requests_left(self, body: Mapping[str, Any], per_page: int, done_so_far: int) -> int | None:
        last = (body.get("meta") or {}).get("last_page")
        return None if last is None else max(0, last - self.page + (0 if self.done else 1))


_PAGINATORS: dict[str, type[CursorPages] | type[NumberedPages]] = {"cursor": CursorPages, "page": NumberedPages}


def _paginator(job: Job, state: Mapping[str, Any] | None = None) -> CursorPages | NumberedPages:
    kind = _PAGINATORS[job.paging]
    names = {f.name for f in dataclass_fields(kind)}
    return kind(**{k: v for k, v in (state or {}).items() if k in names})


# -- state -----------------------------------------------------------------------------------


@dataclass
class PassState:
    """A job's row of `sync_state`: the pass in progress (if any) and what earlier passes left."""

    job: str
    run_id: int | None = None
    mode: str | None = None
    pass_started_at: str | None = None
    cursor: dict[str, Any] | None = None  # the paginator's state plus this pass's newest created_at
    high_water: str | None = None
    last_full_at: str | None = None

    @property
    def in_progress(self) -> bool:
        return self.cursor is not None

    def save(self, conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO sync_state (job, run_id, mode, pass_started_at, cursor, high_water, last_full_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(job) DO UPDATE SET run_id = excluded.run_id, "
            "mode = excluded.mode, pass_started_at = excluded.pass_started_at, cursor = excluded.cursor, "
            "high_water = excluded.high_water, last_full_at = excluded.last_full_at, updated_at = excluded.updated_at",
            [
                self.job,
                self.run_id,
                self.mode,
                self.pass_started_at,
                None if self.cursor is None else json.dumps(self.cursor),
                self.high_water,
                self.last_full_at,
                sync_now(),
            ],
        )

    @classmethod
    def load(cls, conn: sqlite3.Connection, job: str) -> "PassState":
        row = conn.execute(
            "SELECT run_id, mode, pass_started_at, cursor, high_water, last_full_at FROM sync_state WHERE job = ?",
            [job],
        ).fetchone()
        if row is None:
            return cls(job)
        run_id, mode, started, cursor, high, last_full = row
        return cls(job, run_id, mode, started, json.loads(cursor) if cursor else None, high, last_full)


# -- reports ---------------------------------------------------------------------------------


@dataclass
class JobReport:
    job: str
    status: str  # ok | skipped | failed | stopped | interrupted
    mode: str = ""
    requests: int = 0
    seen: int = 0
    new: int = 0
    updated: int = 0
    closed: int = 0
    throttled: int = 0
    seconds: float = 0.0
    resumed: bool = False
    message: str = ""

    def line(self) -> str:
        if self.status == "skipped":
            return f"{self.job}: skipped: {self.message}"
        text = (
            f"{self.job}: {self.status}{' (resumed)' if self.resumed else ''}, {self.mode} pass, "
            f"{self.requests:,} requests, {self.seen:,} rows seen, {self.new:,} new, {self.updated:,} updated, "
            f"{self.closed:,} closed, {self.throttled} throttled, {self.seconds:.1f} s"
        )
        return f"{text}: {self.message}" if self.message else text


Progress = Callable[[str, dict[str, Any]], None]


# -- fetching --------------------------------------------------------------------------------


def _mode_params(job: Job, mode: str, high_water: str | None) -> dict[str, Any]:
    if mode == "incremental" and high_water:
        start = datetime.fromisoformat(high_water.replace("Z", "+00:00")) - INCREMENTAL_OVERLAP
        return {"created_after": start.date().isoformat()}
    return {}


async def fetch_pages(
    client: RemoteClient, job: Job, pages: CursorPages | NumberedPages, params: Mapping[str, Any]
) -> AsyncIterator[dict[str, Any]]:
    """The job's pages from where `pages` stands; `pages` advances past each one yielded."""
    while not pages.done:
        body = await client.get_json(job.path, {**job.params, **params, "per_page": job.per_page, **pages.request()})
        if not isinstance(body.get("data"), list):
            raise RemoteFailed(f"{job.path}: the answer has no `data` list (keys: {', '.join(sorted(body)) or 'none'})")
        pages.advance(body, job.per_page)
        yield body


# -- writing ---------------------------------------------------------------------------------


def save_page(
    conn: sqlite3.Connection,
    job: Job,
    records: list[dict[str, Any]],
    *,
    observed_at: str,
    commit_with: Callable[[sqlite3.Connection], None],
) -> WriteCounts:
    """A page's rows and the job's checkpoint, in one transaction."""
    save = save_listings if job.table == "listings" else save_pending
    return save(
        conn, records, origin=ORIGIN, observed_at=observed_at, batch_size=max(1, len(records)), commit_with=commit_with
    )


def _close_unseen(conn: sqlite3.Connection, job: Job, pass_started_at: str, closed_at: str) -> int:
    """After a complete full pass: the rows of its scope it did not see have left the source."""
    if job.scope is None:
        return 0
    where = f"origin = ? AND last_seen_at < ? AND ({job.scope})"
    if job.table == "pending_delete":
        return conn.execute(f"DELETE FROM pending_delete WHERE {where}", [ORIGIN, pass_started_at]).rowcount
    ids = [
        r[0]
        for r in conn.execute(f"SELECT id FROM listings WHERE closed_at IS NULL AND {where}", [ORIGIN, pass_started_at])
    ]
    return close_listings(conn, ids, closed_at=closed_at, commit=False)


def _start_run(conn: sqlite3.Connection, job: str, started_at: str) -> int:
    cursor = conn.execute(
        "INSERT INTO sync_runs (job, started_at, status, requests, rows_seen, rows_new, rows_updated, rows_closed, "
        "throttled) VALUES (?, ?, 'running', 0, 0, 0, 0, 0, 0)",
        [job, started_at],
    )
    assert cursor.lastrowid is not None  # an INSERT's row
    return cursor.lastrowid


def _update_run(
    conn: sqlite3.Connection, report: JobReport, run_id: int, *, finished: bool = False, error: str | None = None
) -> None:
    conn.execute(
        "UPDATE sync_runs SET requests = ?, rows_seen = ?, rows_new = ?, rows_updated = ?, rows_closed = ?, "
        "throttled = ?, status = ?, finished_at = ?, error = ? WHERE id = ?",
        [
            report.requests,
            report.seen,
            report.new,
            report.updated,
            report.closed,
            report.throttled,
            report.status if finished else "running",
            sync_now() if finished else None,
            error,
            run_id,
        ],
    )


async def _next_second(conn: sqlite3.Connection, job: Job) -> None:
    """A new pass must start after every earlier sighting (timestamps have whole seconds)."""
    if _CLOCK.get() is not None:
        return  # a replay's clock stands still within a run
    seen = conn.execute(f"SELECT max(last_seen_at) FROM {job.table} WHERE origin = ?", [ORIGIN]).fetchone()[0]
    while seen and sync_now() <= seen:
        await asyncio.sleep(1.02 - (time.time() % 1))


async def sync_job(
    conn: sqlite3.Connection,
    client: RemoteClient,
    job: Job,
    *,
    plan: str,
    full: bool = False,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> JobReport:
    """Run (or resume) one job's pass; returns its report. Raises SyncStopped on a refusal or
    a remote that keeps failing, after recording it in `sync_runs`. `should_stop` is asked
    after each committed page: when it says yes the pass pauses there (status
    `interrupted`) and the next run resumes it."""
    report = JobReport(job.name, "running")
    if not plan_allows(plan, job.capability):
        needed = REQUIREMENTS[job.capability]
        report.status = "skipped"
        report.message = f"the {plan} plan cannot use it ({job.description} needs {needed} or above)"
        return report
    notify = progress or (lambda event, info: None)
    started = time.monotonic()
    traffic_before = client.traffic.snapshot()
    state = PassState.load(conn, job.name)
    with conn:
        if state.in_progress:
            report.resumed = True
            conn.execute(
                "UPDATE sync_runs SET status = 'interrupted', finished_at = ? WHERE id = ? AND status = 'running'",
                [sync_now(), state.run_id],
            )
        else:
            stale = state.last_full_at is None or (
                _now() - datetime.fromisoformat(state.last_full_at.replace("Z", "+00:00")) > FULL_PASS_EVERY
            )
            state.mode = "full" if (full or stale or not state.high_water or job.name != "listings") else "incremental"
            if job.name == "bids":
                state.mode = "bids"
            state.cursor, state.pass_started_at = {}, None
        state.run_id = _start_run(conn, job.name, sync_now())
        state.save(conn)
    report.mode = state.mode or "full"
    pages = _paginator(job, state.cursor)
    newest = (state.cursor or {}).get("newest")
    params = _mode_params(job, report.mode, state.high_water)
    notify("start", {"job": job.name, "mode": report.mode, "resumed": report.resumed, "per_minute": client.per_minute})

    def account() -> None:
        now = client.traffic
        report.requests = now.requests - traffic_before.requests
        report.throttled = now.throttled - traffic_before.throttled
        report.seconds = time.monotonic() - started

    try:
        if not state.pass_started_at:  # a new pass (or one stopped before its start was noted)
            await _next_second(conn, job)
            with conn:
                state.pass_started_at = sync_now()
                state.save(conn)
        async for body in fetch_pages(client, job, pages, params):
            records = body["data"]
            created = [r.get("created_at") for r in records if isinstance(r, dict) and r.get("created_at")]
            if created:
                newest = max([str(c) for c in created] + ([newest] if newest else []))
            state.cursor = {**asdict(pages), "newest": newest}
            account()

            def checkpoint(conn: sqlite3.Connection) -> None:
                state.save(conn)

            counts = save_page(conn, job, records, observed_at=sync_now(), commit_with=checkpoint)
            report.seen += counts.seen
            report.new += counts.new
            report.updated += counts.updated
            with conn:
                _update_run(conn, report, state.run_id)  # type: ignore[arg-type]
            left = pages.requests_left(body, job.per_page, report.requests)
            notify("page", {"job": job.name, "rows": report.seen, "requests": report.requests, "left": left})
            if should_stop is not None and should_stop() and not pages.done:
                report.status, report.message = "interrupted", "stopped on request; the next run resumes here"
                with conn:
                    _update_run(conn, report, state.run_id, finished=True)  # type: ignore[arg-type]
                notify("end", {"job": job.name, "report": report})
                return report
        with conn:
            if report.mode == "full" and job.scope is not None:
                report.closed = _close_unseen(conn, job, state.pass_started_at or sync_now(), sync_now())
            if report.mode == "full":
                state.last_full_at = sync_now()
            if newest and job.name == "listings":
                state.high_water = max(newest, state.high_water or newest)
            state.cursor = None
            state.save(conn)
            account()
            report.status = "ok"
            _update_run(conn, report, state.run_id, finished=True)  # type: ignore[arg-type]
            bump_generation(conn)
    except asyncio.CancelledError:  # stopped between pages (awaits never fall inside a write)
        account()
        report.status, report.message = "interrupted", "cancelled; the next run resumes here"
        with conn:
            _update_run(conn, report, state.run_id, finished=True)  # type: ignore[arg-type]
        raise
    except (RemoteRefused, RemoteFailed) as exc:
        account()
        report.status = "stopped" if isinstance(exc, RemoteRefused) else "failed"
        status = f" (HTTP {exc.status})" if isinstance(exc, RemoteRefused) else ""
        report.message = f"{exc}{status}"
        with conn:
            _update_run(conn, report, state.run_id, finished=True, error=report.message)  # type: ignore[arg-type]
        notify("end", {"job": job.name, "report": report})
        if isinstance(exc, RemoteRefused) and exc.status == 403:
            return report  # this job is refused to the key's plan; the others may still run
        stopped = SyncStopped(f"{job.name}: {report.message}", [report])
        stopped.unreachable = isinstance(exc, HostUnreachable)  # the network, not the service: one line says it
        raise stopped from None
    except Exception as exc:  # anything else: the run is recorded as failed, never left running
        report.status, report.message = "failed", f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(sqlite3.Error), conn:
            _update_run(conn, report, state.run_id, finished=True, error=report.message)  # type: ignore[arg-type]
        raise
    notify("end", {"job": job.name, "report": report})
    return report


def _chosen(jobs: Iterable[str] | None) -> list[Job]:
    names = list(jobs) if jobs else list(JOBS)
    unknown = [n for n in names if n not in JOBS]
    if unknown:
        raise ValueError(f"unknown job {', '.join(unknown)}: choose from {', '.join(JOBS)}")
    return [JOBS[n] for n in JOBS if n in names]


async def sync(
    db_path: str | Path,
    client: RemoteClient,
    *,
    plan: str,
    jobs: Iterable[str] | None = None,
    full: bool = False,
    progress: Progress | None = None,
    should_stop: Callable[[], bool] | None = None,
    clock: Callable[[], datetime] | None = None,
    before_jobs: Callable[[sqlite3.Connection], Awaitable[None]] | None = None,
) -> list[JobReport]:
    """Run the chosen jobs (default: all of `JOBS`, in order) against `client`.

    Holds the mirror's writer lock for the whole run (`SyncBusy` if another load has it). A job
    the plan cannot use is skipped with its reason; one the remote refuses (403) is reported
    `stopped` and the others still run. A 401 or a remote that keeps failing stops the run
    with `SyncStopped`; what was committed stays, and the next run resumes from it.
    `clock` (default: the real one) stamps every sighting: a replay of scheduled runs (tests,
    a time-lapse) runs each under its own moment. `before_jobs(conn)` runs once the lock is held
    and the mirror opened sound, before the first job (the CLI's check for the demo)."""
    chosen = _chosen(jobs)
    plan = normalize_plan(plan)
    token = _CLOCK.set(clock)
    try:
        with writer_lock(db_path, "edt sync"):
            return await _run_jobs(
                db_path,
                client,
                chosen,
                plan=plan,
                full=full,
                progress=progress,
                should_stop=should_stop,
                before_jobs=before_jobs,
            )
    except MirrorBusy as exc:
        raise SyncBusy(str(exc)) from None
    finally:
        _CLOCK.reset(token)


def holds_demo(conn: sqlite3.Connection) -> bool:
    """Whether a demo was loaded into the mirror and not cleared: its notes in `mirror_meta`
    (no scan of a mirror that never held one), and a row of it (a damaged table says so here)."""
    if not conn.execute("SELECT 1 FROM mirror_meta WHERE key = 'demo_scale'").fetchone():
        return False
    held = "SELECT EXISTS (SELECT 1 FROM {} WHERE origin = 'demo')"
    return any(conn.execute(held.format(table)).fetchone()[0] for table in ("listings", "pending_delete"))


async def _run_jobs(
    db_path: str | Path,
    client: RemoteClient,
    chosen: list[Job],
    *,
    plan: str,
    full: bool,
    progress: Progress | None,
    should_stop: Callable[[], bool] | None,
    before_jobs: Callable[[sqlite3.Connection], Awaitable[None]] | None = None,
) -> list[JobReport]:
    conn = connect(str(db_path))
    try:
        ensure_schema(conn)
        if before_jobs is not None:
            await before_jobs(conn)
        if holds_demo(conn):
            raise DemoInTheWay(
                f"{db_path} holds the demo: the service's listings would go beside invented ones and write over "
                "those numbered as theirs. `edt sync --clear-demo` removes the demo first; or sync into another "
                "file (--db PATH)"
            )
        reports: list[JobReport] = []
        try:
            for job in chosen:
                if should_stop is not None and should_stop():
                    break
                try:
                    reports.append(
                        await sync_job(
                            conn, client, job, plan=plan, full=full, progress=progress, should_stop=should_stop
                        )
                    )
                except SyncStopped as exc:
                    stopped = SyncStopped(str(exc), reports + exc.reports)
                    stopped.unreachable = exc.unreachable
                    raise stopped from None
        finally:
            if any(r.status == "ok" for r in reports):
                with conn:  # once, after the jobs: the auctions that ended (store/results.py)
                    derive_results(conn, now=sync_now())
        return reports
    finally:
        conn.close()


@dataclass
class PlannedJob:
    job: str
    allowed: bool
    mode: str = ""
    rows: int | None = None
    requests: int = 0
    minutes: float = 0.0
    note: str = ""

    def line(self) -> str:
        if not self.allowed:
            return f"{self.job}: skipped: {self.note}"
        size = f"about {self.rows:,} rows, {self.requests:,} requests, ~{_duration(self.minutes)}"
        return f"{self.job}: {self.mode} pass, {size}" + (f" ({self.note})" if self.note else "")


def _duration(minutes: float) -> str:
    if minutes < 1:
        return f"{minutes * 60:.0f} s"
    if minutes < 120:
        return f"{minutes:.0f} min"
    return f"{minutes / 60:.1f} h"


async def plan_sync(
    db_path: str | Path, client: RemoteClient, *, plan: str, jobs: Iterable[str] | None = None, full: bool = False
) -> list[PlannedJob]:
    """What `sync` would do: one cheap count request per job (per_page=1), no writes."""
    plan = normalize_plan(plan)
    planned = []
    states: dict[str, PassState] = {}
    if Path(db_path).exists():
        conn = connect(str(db_path), readonly=True)
        try:
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sync_state'").fetchone():
                states = {job: PassState.load(conn, job) for job in JOBS}
        finally:
            conn.close()
    for job in _chosen(jobs):
        if not plan_allows(plan, job.capability):
            planned.append(
                PlannedJob(
                    job.name, False, note=f"the {plan} plan cannot use it (needs {REQUIREMENTS[job.capability]})"
                )
            )
            continue
        state = states.get(job.name) or PassState(job.name)
        mode = "bids" if job.name == "bids" else "full"
        if (
            job.name == "listings"
            and not full
            and state.high_water
            and state.last_full_at
            and (
                datetime.now(timezone.utc) - datetime.fromisoformat(state.last_full_at.replace("Z", "+00:00"))
                <= FULL_PASS_EVERY
            )
        ):
            mode = "incremental"
        body = await client.get_json(
            job.path, {**job.params, **_mode_params(job, mode, state.high_water), "per_page": 1, "page": 1}
        )
        rows = int((body.get("meta") or {}).get("total") or 0)
        requests = max(1, math.ceil(rows / job.per_page))
        note = "resumes a pass in progress" if state.in_progress else ""
        planned.append(PlannedJob(job.name, True, mode, rows, requests, requests / client.per_minute, note))
    return planned
