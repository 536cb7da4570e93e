"""`edt schedule`: the sync jobs on the service's schedules (docs/reference/freshness.md), then alerts.

apscheduler 3.11 runs one cron trigger per job. One run of a job at a time (the sync's lock
and `max_instances=1`); runs missed while the machine slept are coalesced into one if they
are within the grace time; jobs the plan cannot use are skipped once, with a line. SIGTERM
or Ctrl-C stops after the page being written (each page commits with its checkpoint, so
the next start resumes there). Times come from the config file's `[schedule]` table, e.g.
`bids = "0 */4 * * *"`, and `timezone` (default: the machine's).

The free public feeds (`toolkit.store.feed_catalog`) are jobs of the same scheduler, each on its
publisher's schedule (`[feeds.NAME] schedule`); they need no key. Their runner lives with
the ingest (toolkit/ingest/feed_runner.py) and is handed in as `feed_runner`.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import shlex
import sys
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict, Unpack

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.blocking import BlockingScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.util import undefined

from .. import errors
from ..config import Settings, config_file
from ..plans import RATE_LIMITS, REQUIREMENTS, plan_allows

__all__ = [
    "DEFAULT_SCHEDULES",
    "NAMES_JOB",
    "NAMES_SCHEDULE",
    "GRACE_SECONDS",
    "schedules",
    "names_schedule",
    "feed_schedules",
    "triggers",
    "cron_trigger",
    "next_runs",
    "crontab",
    "schedule_words",
    "systemd_units",
    "run_job",
    "Runners",
    "build_scheduler",
    "serve",
]

log = logging.getLogger("toolkit.sync.schedule")

# The service's schedules (docs/reference/freshness.md): bids every 4 hours, new listings daily
# at 07:00 local, regfree monthly, pending-delete weekly.
DEFAULT_SCHEDULES = {
    "bids": "0 */4 * * *",
    "listings": "0 7 * * *",
    "regfree": "30 7 1 * *",
    "pending": "0 8 * * 1",  # Mondays (cron's numbering: 0 = Sunday)
}
# The watched names (`edt watch name`): each registry asked once a day, before the listings run.
NAMES_JOB = "names"
NAMES_SCHEDULE = "30 6 * * *"
GRACE_SECONDS = 6 * 3600  # a run missed by less than this still happens (once) when the machine wakes


def schedules(config: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The cron expression of each job: the config file's `[schedule]` over the defaults."""
    table = (config if config is not None else config_file()).get("schedule", {})
    chosen = {job: str(table.get(job, cron)) for job, cron in DEFAULT_SCHEDULES.items()}
    for job, cron in chosen.items():
        try:
            cron_trigger(cron)
        except ValueError as exc:
            raise ValueError(f"[schedule] {job} = {cron!r}: not a crontab expression ({exc})") from None
    return chosen


def names_schedule(config: Mapping[str, Any] | None = None) -> dict[str, str]:
    """The watched names' job and its cron expression (`[schedule] names`, default daily 06:30)."""
    cron = str((config if config is not None else config_file()).get("schedule", {}).get(NAMES_JOB, NAMES_SCHEDULE))
    try:
        cron_trigger(cron)
    except ValueError as exc:
        raise ValueError(f"[schedule] {NAMES_JOB} = {cron!r}: not a crontab expression ({exc})") from None
    return {NAMES_JOB: cron}


def feed_schedules(feeds: Mapping[str, Any]) -> dict[str, str]:
    """The cron expression of each enabled feed with an address (`toolkit.store.feed_catalog.feed_table`)."""
    chosen = {}
    for name, feed in feeds.items():
        if not feed.enabled or not feed.url:
            continue
        try:
            cron_trigger(feed.schedule)
        except ValueError as exc:
            raise ValueError(f"[feeds.{name}] schedule = {feed.schedule!r}: not a crontab expression ({exc})") from None
        chosen[name] = feed.schedule
    return chosen


_WEEKDAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat", "sun")
_DAY_NAMES = ("Sundays", "Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays", "Saturdays", "Sundays")


def _ordinal(day: int) -> str:
    return f"{day}{'th' if 10 <= day % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(day % 10, 'th')}"


def schedule_words(cron: str) -> str:
    """A crontab line in words: "daily at 06:30", "every 4 hours on the hour", "every 3 hours
    at 20 past", "Mondays at 08:00", "monthly on the 1st at 07:30"; a line these words do not
    cover is given as it is ("cron 5 4 * 1-6 *")."""
    fields = cron.split()
    if len(fields) != 5:
        return f"cron {cron}"
    minute, hour, day, month, weekday = fields
    if hour == day == month == weekday == "*":
        if minute == "*":
            return "every minute"
        every = re.fullmatch(r"\*/(\d+)", minute)
        if every:
            return f"every {every[1]} minutes"
    if not minute.isdigit() or month != "*":
        return f"cron {cron}"
    past = "on the hour" if int(minute) == 0 else f"at {int(minute)} past"
    if hour == "*" and day == weekday == "*":
        return f"hourly {past}"
    step = re.fullmatch(r"\*/(\d+)", hour)
    if step and day == weekday == "*":
        return f"every {step[1]} hours {past}"
    if not hour.isdigit():
        return f"cron {cron}"
    at = f"at {int(hour):02d}:{int(minute):02d}"
    if day == "*" and weekday == "*":
        return f"daily {at}"
    if day == "*" and weekday.isdigit() and int(weekday) < 8:
        return f"{_DAY_NAMES[int(weekday)]} {at}"
    if day.isdigit() and weekday == "*":
        return f"monthly on the {_ordinal(int(day))} {at}"
    return f"cron {cron}"


def cron_trigger(cron: str, timezone: Any = None) -> CronTrigger:
    """A crontab line as cron reads it: APScheduler numbers weekdays from Monday = 0, cron
    from Sunday = 0, so weekday numbers are turned into names first."""
    fields = cron.split()
    if len(fields) == 5:
        fields[4] = re.sub(r"(?<![/\d])([0-7])(?!\d)", lambda m: _WEEKDAYS[int(m.group(1))], fields[4])
    return CronTrigger.from_crontab(" ".join(fields), timezone=timezone)


def triggers(crons: Mapping[str, str], timezone: Any = None) -> dict[str, CronTrigger]:
    return {job: cron_trigger(cron, timezone) for job, cron in crons.items()}


def next_runs(crons: Mapping[str, str], now: datetime, timezone: Any = None) -> dict[str, datetime]:
    """When each job runs next, strictly after `now` (an aware datetime)."""
    after = now + timedelta(seconds=1)
    return {job: trigger.get_next_fire_time(None, after) for job, trigger in triggers(crons, timezone).items()}


def edt_command() -> str:
    """The running interpreter's `edt` by its absolute path (cron and systemd do not see a
    virtual environment's PATH), else `python -m toolkit` with the interpreter's path."""
    beside = Path(sys.executable).parent / "edt"
    if beside.is_file() and os.access(beside, os.X_OK):
        return shlex.quote(str(beside))
    return f"{shlex.quote(sys.executable)} -m toolkit"


def crontab(crons: Mapping[str, str], *, db: str, edt: str | None = None, workdir: str | None = None) -> str:
    """Equivalent crontab lines, for those who prefer cron to a resident scheduler: each runs
    from `workdir` (default the current folder) with absolute paths only, as pasted."""
    command = edt or edt_command()
    folder = shlex.quote(os.path.abspath(workdir or os.getcwd()))
    mirror = os.path.abspath(db)
    lines = [
        "# Expired Domains Toolkit: the sync jobs on the service's schedules, docs/reference/freshness.md "
        "(EDT_API_KEY and EDT_PLAN in the environment, e.g. lines KEY=value above these)"
    ]
    for job, cron in crons.items():
        lines.append(
            f"{cron} cd {folder} && {command} schedule --db {shlex.quote(mirror)} --once {job} "
            f">> {shlex.quote(mirror + '.sync.log')} 2>&1"
        )
    return "\n".join(lines) + "\n"


def systemd_units(*, db: str, edt: str | None = None, workdir: str | None = None) -> str:
    """A user service that runs `edt schedule` (it keeps the schedules itself), with absolute
    paths and a working folder (default the current one)."""
    command = edt or edt_command()
    folder = os.path.abspath(workdir or os.getcwd())
    return f"""# ~/.config/systemd/user/edt-schedule.service  (then: systemctl --user enable --now edt-schedule)
[Unit]
Description=Expired Domains Toolkit: scheduled syncs and alerts
After=network-online.target

[Service]
WorkingDirectory={folder}
ExecStart={command} schedule --db {shlex.quote(os.path.abspath(db))}
EnvironmentFile=%h/.config/edt/env
Restart=on-failure
KillSignal=SIGTERM
TimeoutStopSec=120

[Install]
WantedBy=default.target
"""


def run_job(
    job: str,
    settings: Settings,
    *,
    stop: threading.Event | None = None,
    client_factory: Callable[[], Any] | None = None,
    alert_options: Mapping[str, Any] | None = None,
    say: Callable[[str], None] = print,
    after: Callable[[Any, Callable[[str], None]], object] | None = None,
) -> list:
    """One scheduled run: the sync job, then the saved-search alerts, then `after(mirror, say)`
    (the CLI hands in the price ranges' retraining). Returns the reports."""
    from .alerts import run_alerts
    from ..query import Mirror
    from .remote import RemoteClient
    from .engine import DemoInTheWay, SyncBusy, SyncStopped, sync

    def make_client() -> Any:
        per_minute = RATE_LIMITS.get(settings.plan) or RATE_LIMITS["business"]
        return RemoteClient(
            settings.base_url, settings.api_key or "", plan=settings.plan, per_minute=per_minute, say=say
        )  # retries said as they happen; gives up after EDT_TIMEOUT (60 s)

    async def go() -> list:
        # A stop request cancels the sync at its next await (an HTTP call or a pacing wait);
        # page writes are not awaited, so a page is never half-written.
        task = asyncio.current_task()

        async def watch() -> None:
            while stop is not None and not stop.is_set():
                await asyncio.sleep(0.2)
            if task is not None:
                task.cancel()

        watcher = asyncio.create_task(watch()) if stop is not None else None
        try:
            async with (client_factory or make_client)() as client:
                return await sync(
                    settings.db, client, plan=settings.plan, jobs=[job], should_stop=(stop.is_set if stop else None)
                )
        except asyncio.CancelledError:
            say(f"{job}: interrupted; the next run resumes where it stopped")
            return []
        finally:
            if watcher is not None:
                watcher.cancel()

    try:
        reports = asyncio.run(go())
    except (SyncBusy, SyncStopped, DemoInTheWay) as exc:
        say(f"{job}: {exc}")
        return []
    for report in reports:
        say(report.line())
    if stop is not None and stop.is_set():
        return reports
    mirror = Mirror(settings.db, create=True)
    try:
        try:
            mirror.refresh_indexes()  # the next reader need not rebuild it
        except Exception as exc:  # noqa: BLE001 - queries are then answered by SQLite
            say(f"{job}: the columnar index was not rebuilt ({exc})")
        say(run_alerts(mirror, job=job, **dict(alert_options or {})).line())
        if job == "listings":
            _archive_after(mirror, say)
        if after is not None:
            after(mirror, say)
    finally:
        mirror.close()
    return reports


def _archive_after(mirror: Any, say: Callable[[str], None]) -> None:
    """After the daily listings run: the config's `[archive] closed_before`, when set, moves
    what closed before it to the archive, and its `pack_after`, when set, packs what closed
    before that (`edt archive`)."""
    from ..store import packed
    from ..store import parquet_archive as archive
    from ..config import archive_setting, pack_setting

    age, pack_age = archive_setting(), pack_setting()
    changed = False
    if age is not None:
        try:
            report = archive.archive_closed(mirror.path, mirror.now() - archive.parse_age(age))
        except (ValueError, archive.ArchiveError) as exc:
            say(f"archive: {exc}")
            return
        changed = bool(report.moved)
        say(f"archive: {report.moved:,} listings closed before {report.cut} moved to the archive")
    if pack_age is not None and pack_age.strip().lower() != "none":
        try:
            packing = packed.pack_closed(mirror.path, mirror.now() - archive.parse_age(pack_age))
        except (ValueError, archive.ArchiveError) as exc:
            say(f"archive: [archive] pack_after: {exc}")
            return
        changed = changed or bool(packing.listings)
        say(f"archive: {packing.listings:,} listings closed before {packing.cut} packed")
    if changed:
        mirror.refresh_indexes()


class Runners(TypedDict, total=False):
    """What runs each kind of scheduled job (`build_scheduler`, `serve`)."""

    runner: Callable[..., Any]  # an API job (default `run_job`)
    feed_runner: Callable[..., Any] | None  # a free feed (default none: a feed in `crons` is an error)
    names_runner: Callable[..., Any] | None  # the watched names' job (default `runner`)


def build_scheduler(
    settings: Settings,
    crons: Mapping[str, str],
    *,
    stop: threading.Event,
    timezone: Any = None,
    say: Callable[[str], None] = print,
    run_now: bool = False,
    **runners: Unpack[Runners],
) -> BlockingScheduler:
    """A scheduler with one job per allowed dataset and per feed (the names of `crons` that
    are not API jobs, run by `feed_runner`); API jobs without a key or beyond the plan are
    skipped with one line, and so are the listing feeds (GoDaddy, Namecheap) when there is a
    key: the API's listings already hold those platforms, and a feed would list them twice.
    The watched names' job (`names`, no key needed) is run by `names_runner`.
    One worker thread: jobs run one after another (they share the mirror and the budget)."""
    from ..store.feed_catalog import LISTING_ADAPTERS, feed_table
    from ..store.jobs import JOBS

    runner, feed_runner = runners.get("runner", run_job), runners.get("feed_runner")
    names_runner = runners.get("names_runner")
    feeds = feed_table() if any(job not in JOBS for job in crons) else {}
    options: dict[str, Any] = {"executors": {"default": ThreadPoolExecutor(1)}}
    if timezone:
        options["timezone"] = timezone
    scheduler = BlockingScheduler(**options)
    for job, trigger in triggers(crons, timezone).items():
        target = runner
        if job == NAMES_JOB and names_runner is not None:
            target = names_runner
        elif job not in JOBS:
            if feed_runner is None:
                raise ValueError(f"{job}: neither an API job ({', '.join(JOBS)}) nor given a feed runner")
            target = feed_runner
            if settings.api_key and job in feeds and feeds[job].adapter in LISTING_ADAPTERS:
                say(
                    f"{job}: skipped: with an API key the listings job brings {feeds[job].adapter}'s listings "
                    f"(`edt sync --feeds {job}` runs it anyway)"
                )
                continue
        elif not settings.api_key:
            say(f"{job}: skipped: no API key (set EDT_API_KEY for the API jobs; the free feeds need none)")
            continue
        elif not plan_allows(settings.plan, JOBS[job].capability):
            capability = JOBS[job].capability
            say(f"{job}: skipped: the {settings.plan} plan cannot use it (needs {REQUIREMENTS[capability]} or above)")
            continue
        scheduler.add_job(
            target,
            trigger,
            args=[job, settings],
            kwargs={"stop": stop, "say": say},
            id=job,
            name=job,
            max_instances=1,
            coalesce=True,
            misfire_grace_time=GRACE_SECONDS,
            next_run_time=datetime.now(trigger.timezone) if run_now else undefined,
        )
    return scheduler


def serve(
    settings: Settings,
    *,
    run_now: bool = False,
    say: Callable[[str], None] = print,
    crons: Mapping[str, str] | None = None,
    **runners: Unpack[Runners],
) -> None:
    """Run until SIGTERM or Ctrl-C; a job being written stops after its current page.
    `crons`: the jobs and feeds to run (default: the API jobs of the config file)."""
    import signal

    config = config_file()
    crons = crons if crons is not None else schedules(config)
    timezone = config.get("schedule", {}).get("timezone")
    stop = threading.Event()
    scheduler = build_scheduler(settings, crons, stop=stop, timezone=timezone, say=say, run_now=run_now, **runners)

    def on_signal(signum: int, frame: Any) -> None:
        say(f"stopping ({signal.Signals(signum).name}): the job in progress ends after its current page")
        stop.set()
        threading.Thread(target=scheduler.shutdown, kwargs={"wait": True}, daemon=True).start()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    from apscheduler.events import EVENT_JOB_MAX_INSTANCES

    def still_running(event: Any) -> None:
        say(f"{event.job_id}: this run skipped: the one before it is still at work")

    scheduler.add_listener(still_running, EVENT_JOB_MAX_INSTANCES)
    logging.getLogger("apscheduler.scheduler").setLevel(logging.ERROR)  # said above, in words
    upcoming = next_runs({job.id: crons[job.id] for job in scheduler.get_jobs()}, datetime.now().astimezone(), timezone)
    for job in scheduler.get_jobs():
        when = upcoming[job.id].astimezone().strftime("%a %d %b %H:%M")
        say(f"{job.id}: {schedule_words(crons[job.id])}, next {when}")
    with _one_scheduler(settings.db):
        scheduler.start()
    say("stopped")


@contextmanager
def _one_scheduler(db: str) -> Iterator[None]:
    """One `edt schedule` a mirror: a second would find every job refused by the first's loads."""
    from filelock import FileLock, Timeout

    lock = FileLock(f"{os.path.abspath(db)}.schedule.lock", timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise errors.MirrorBusy(
            f"{db}: another `edt schedule` runs for this mirror; one is enough (stop it first to start this one)"
        ) from None
    try:
        yield
    finally:
        lock.release()
