"""Commands that bring rows in: `edt demo`, `edt sync`, `edt enrich` (`edt ingest` reads files
in: `ingest.py`)."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path
from typing import Any

import click

from ..errors import said_stopped
from ..plans import PLANS, RATE_LIMITS
from .shell import (
    note_opened,
    BadInput,
    RunFailed,
    timeout_bound,
    check_plan,
    check_writable,
    db_option,
    open_mirror,
    key_value_pairs,
    refresh_index,
    say_retry,
    timeout_option,
    choice_option,
    cli,
)


def hold_load_lock(db: str, command: str) -> None:
    """Hold the mirror's writer lock (toolkit/store/lock.py) for the rest of this command, taken
    before the mirror is opened: a second load is refused at once, naming this one, instead of
    meeting its SQLite lock. A mirror that does not exist yet is created by the load."""
    from ..store.lock import writer_lock

    check_writable(db, command.removeprefix("edt "))
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    click.get_current_context().with_resource(writer_lock(db, command))


class Interrupted(click.ClickException):
    """Ctrl-C (or SIGTERM) during a load: one line saying what was kept, exit status 130."""

    exit_code = 130

    def show(self, file: Any = None) -> None:
        click.echo(f"edt: interrupted: {self.format_message()}", err=True)


@contextlib.contextmanager
def on_interrupt(kept: str, *, mirror: Any = None, written: str = "") -> Any:
    """A load stopped by Ctrl-C or SIGTERM says `kept` (what of it stays in the mirror), or,
    when `mirror`'s generation shows that the load had committed before the stop came (its
    last instants: the index refresh), `written`."""
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    before = mirror.generation() if mirror is not None else None
    previous = signal.signal(signal.SIGTERM, stop)  # a `kill` rolls back as Ctrl-C does
    try:
        yield
    except KeyboardInterrupt:
        said_stopped()
        committed = mirror is not None and mirror.generation() != before
        raise Interrupted(written if committed else kept) from None
    finally:
        signal.signal(signal.SIGTERM, previous)


# `edt demo --days N --searches-day K`: a day of the demo's lived days, at most 400.
_DEMO_DAYS = click.IntRange(0, 400)
_DAYS_HELP = (
    "Live the N days ending today: one scheduled sync after another (bids closing, prices cut, "
    "new listings every morning), so history, closed listings and alerts have something to show."
)
_SEARCHES_DAY_HELP = (
    "With --days: the demo's saved searches are saved on day K (0: the first sync); their new matches "
    "and alerts are the listings first seen after it."
)


@cli.command()
@db_option
@choice_option(
    "--scale", ["small", "full"], "small", "small: ~5,000 listings; full: the service's scale (~563,000 listings)."
)
@click.option("--seed", type=int, default=42, show_default=True, help="Same seed, same data (dates relative to today).")
@click.option("--days", type=_DEMO_DAYS, default=0, show_default=True, metavar="N", help=_DAYS_HELP)
@click.option("--searches-day", type=_DEMO_DAYS, default=1, show_default=True, metavar="K", help=_SEARCHES_DAY_HELP)
@click.option("--clear", is_flag=True, help="Remove the demo rows and stop.")
@click.option(
    "--force",
    is_flag=True,
    help="Load demo rows even beside other data (they stay marked as demo); never where they would write over synced rows.",
)
def demo(db: str, scale: str, seed: int, days: int, searches_day: int, clear: bool, force: bool) -> None:
    """Fill the mirror from the built-in demo source (no API key needed)."""
    from ..demo import DemoRefused, clear_demo, load_demo, removal_line

    if searches_day > days and days:
        raise BadInput(f"--searches-day {searches_day}: must be a day of the window, 0 to --days {days}")
    hold_load_lock(db, "edt demo --clear" if clear else "edt demo")
    mirror = open_mirror(db, must_exist=False, writes="demo")
    conn = mirror.connection()
    if clear:
        with on_interrupt(
            f"nothing was removed; {db} is as it was",
            mirror=mirror,
            written=f"after the demo rows were removed from {db}",
        ):
            removed = clear_demo(conn)
            refresh_index(mirror)
        click.echo(f"Removed demo rows from {db}: {removal_line(removed)}")
        return
    from rich.progress import Progress

    # No refresh thread: a load in a single-threaded process can fork its generator worker.
    with Progress(transient=True, auto_refresh=False) as progress:
        task = progress.add_task(f"demo {scale}", total=None)
        shown = [0.0]

        def report(stage: str, done: int) -> None:
            now = time.monotonic()
            if stage == "day":  # one line per simulated day, kept
                progress.console.print(
                    f"demo {scale}: day {done} of {days}" + (" (the first sync)" if not done else "")
                )
            progress.update(task, description=f"demo {scale}: {stage}", completed=done, refresh=now - shown[0] > 0.2)
            shown[0] = now if now - shown[0] > 0.2 else shown[0]

        unfinished = f"after the load was written: {db} holds the new demo" + (
            "'s listings, but not yet its price ranges, saved searches and alerts: run the same `edt demo` "
            "again for the whole demo"
            if days
            else ""
        )
        try:
            with on_interrupt(
                f"nothing of this load was written; {db} is as it was", mirror=mirror, written=unfinished
            ):
                counts = load_demo(conn, scale=scale, seed=seed, force=force, progress=report, days=days)
            with on_interrupt(unfinished):
                if days:  # the auctions it saw end price every live listing (analysis/appraise.py)
                    from ..analysis.appraise import appraise_if_due

                    progress.update(task, description=f"demo {scale}: price ranges", refresh=True)
                    appraise_if_due(mirror, say=progress.console.print)
                progress.update(task, description=f"demo {scale}: columnar index", refresh=True)
                refresh_index(mirror)
                if days:
                    _demo_watch(mirror, days, searches_day)
        except DemoRefused as exc:  # said with the command's own flags, not the Python arguments
            held = getattr(exc, "held", "")
            if not held:  # not the rows --force would go beside: said as it is
                raise BadInput(str(exc)) from None
            raise BadInput(
                f"{db} holds real data ({held}); loading the demo would mix invented listings with them. "
                "Use another mirror (--db PATH), or pass --force to add the demo beside them "
                "(`edt demo --clear` removes only the demo rows later)."
            ) from None
    click.echo(f"Demo data ({scale}, seed {seed}) in {db}: " + ", ".join(f"{n:,} {k}" for k, n in counts.items()))
    click.echo(
        "Real data without a key: `edt sync --feeds --clear-demo` swaps the demo for the free public feeds "
        "(auctions, drop lists, zones; docs/guides/feeds.md).",
        err=True,
    )


def _demo_watch(mirror: Any, days: int, searches_day: int) -> None:
    """The time-lapse's saved searches, saved on day `searches_day`, and the alerts every
    scheduled run after it would have queued (none is sent: `edt watch show` lists them)."""
    from datetime import date

    from ..sync.alerts import replay_alerts
    from ..demo.timelapse import DEMO_SEARCHES, searches_and_runs
    from ..sync.saved_searches import save_searches_at

    today = date.fromisoformat(mirror.meta()["demo_today"])
    saved_at, runs = searches_and_runs(today, days, searches_day)
    save_searches_at(mirror.path, DEMO_SEARCHES, saved_at)
    report = replay_alerts(mirror.path, runs)
    click.echo(
        f"{len(DEMO_SEARCHES)} demo saved searches (saved {saved_at:%Y-%m-%d %H:%M} UTC): {report.queued} alerts "
        f"queued for {report.matches:,} new matches over {len(runs)} scheduled runs; `edt watch list` shows them"
    )


@cli.command(name="sync")
@db_option
@click.option("--base-url", default=None, help="The remote API (env EDT_BASE_URL; default https://catchdoms.com).")
@click.option(
    "--api-key", default=None, help="Your API key (env EDT_API_KEY or the config file; never stored or printed)."
)
@click.option(
    "--plan",
    default=None,
    help=f"Your subscription ({', '.join(PLANS)}); default EDT_PLAN, else the config file's plan, else pro.",
)
@click.option(
    "--jobs", default=None, metavar="LIST", help="Comma-separated jobs: listings,bids,regfree,pending (default all)."
)
@click.option(
    "--full", is_flag=True, help="A full listings pass (finds listings that left their source) even if recent."
)
@click.option(
    "--dry-run", is_flag=True, help="Print what would run (rows, requests, time per job) from one count each."
)
@click.option(
    "--rate",
    type=click.IntRange(1, 100_000),
    default=None,
    metavar="N",
    help="Requests per minute to pace at (default: the plan's limit; enterprise 300).",
)
@click.option(
    "--feeds",
    "feeds",
    is_flag=False,
    flag_value="*",
    default=None,
    metavar="[NAMES]",
    help="Instead of the API: the free public feeds (GoDaddy, Namecheap, registry lists, zones), every "
    "enabled one, or those NAMES (comma-separated; `edt schedule --next` lists them). No key needed.",
)
@click.option(
    "--clear-demo",
    is_flag=True,
    help="Switch from the demo to real data: remove the demo rows once a feed brought real rows (with --feeds) "
    "or once the service answered (with a key).",
)
@timeout_option
def sync_command(
    db: str,
    base_url: str | None,
    api_key: str | None,
    plan: str | None,
    jobs: str | None,
    full: bool,
    dry_run: bool,
    rate: int | None,
    feeds: str | None,
    clear_demo: bool,
    timeout: float | None,
) -> None:
    """Mirror the remote API into the database, within the plan's rate limit, resumable.

    With --feeds, download the free public feeds instead (docs/guides/feeds.md)."""
    import asyncio

    if feeds is not None:
        if jobs or full or dry_run or rate or plan or api_key or base_url:
            raise BadInput(
                "--feeds: the feeds need no key, plan or jobs; drop --jobs, --full, --dry-run, --rate, "
                "--plan, --api-key and --base-url"
            )
        _sync_feeds(
            db,
            None if feeds == "*" else [n.strip() for n in feeds.split(",") if n.strip()],
            timeout,
            clear_demo=clear_demo,
        )
        return
    from ..config import configured_plan, load_settings
    from ..sync.remote import RemoteClient
    from ..store.jobs import JOBS
    from ..sync.engine import SyncBusy, SyncStopped, plan_sync, sync

    chosen = [j.strip() for j in jobs.split(",") if j.strip()] if jobs else None
    unknown = [j for j in chosen or [] if j not in JOBS]
    if unknown:
        raise BadInput(f"--jobs: unknown job {', '.join(unknown)}; choose from {', '.join(JOBS)}")
    # The settings' order (toolkit/config.py): --plan > EDT_PLAN > the config file's plan > pro.
    plan_given = check_plan(plan) or check_plan(os.environ.get("EDT_PLAN"), "EDT_PLAN")
    try:
        plan_given = plan_given or configured_plan()
        settings = load_settings(db=db, base_url=base_url, plan=plan_given or "pro", api_key=api_key)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if not dry_run:
        check_writable(db, "sync")
    note_opened(db)
    if not settings.api_key:
        raise BadInput(
            "no API key: set EDT_API_KEY (or api_key in the config file, or --api-key); "
            "without one, `edt sync --feeds` fills the mirror from the free public feeds, `edt demo` with demo data"
        )
    if not plan_given:
        click.echo(
            f"Assuming the {settings.plan} plan (set --plan, EDT_PLAN or plan in the config file to use more "
            "of yours).",
            err=True,
        )
    per_minute = rate or RATE_LIMITS.get(settings.plan) or RATE_LIMITS["business"]
    client = RemoteClient(
        settings.base_url,
        settings.api_key,
        plan=settings.plan,
        per_minute=per_minute,
        give_up_after=timeout_bound(timeout),
        say=say_retry,
    )

    async def clear_the_demo(conn: Any) -> None:  # the engine refuses a mirror holding the demo (DemoInTheWay)
        if clear_demo:
            from ..demo import clear_demo_once_answered, removal_line

            with on_interrupt(f"no demo row was removed; {db} is as it was"):
                removed = await clear_demo_once_answered(conn, lambda: client.get_json("/api/domains", {"per_page": 1}))
            if any(removed.values()):
                click.echo(f"Removed the demo rows from {db}: {removal_line(removed)}")

    async def run() -> list:
        async with client:
            if dry_run:
                return await plan_sync(db, client, plan=settings.plan, jobs=chosen, full=full)
            with _SyncProgress() as shown:
                return await sync(
                    db,
                    client,
                    plan=settings.plan,
                    jobs=chosen,
                    full=full,
                    progress=shown.update,
                    before_jobs=clear_the_demo,
                )

    click.echo(f"Remote {settings.base_url}, {settings.plan} plan, {per_minute} requests/minute, into {db}")
    try:
        with on_interrupt(f"the pages already written are kept in {db}; run `edt sync` again to resume"):
            results = asyncio.run(run())
    except SyncBusy:
        raise  # said by the group (exit 1), before SyncStopped's handling below
    except SyncStopped as exc:
        refresh_index(db)
        if exc.unreachable:
            raise RunFailed(f"sync stopped: {exc}; pages already written are kept, `edt sync` resumes") from None
        for report in exc.reports:
            click.echo(report.line())
        raise RunFailed(
            f"sync stopped: {str(exc).rstrip('.')}. Pages already written are kept; run `edt sync` again to resume."
        ) from None
    if not dry_run:
        refresh_index(db)
    for result in results:
        click.echo(result.line())
    if not dry_run and any(r.status not in ("ok", "skipped") for r in results):
        raise RunFailed("some jobs did not finish (see above)")


def _sync_feeds(db: str, names: list[str] | None, timeout: float | None, *, clear_demo: bool = False) -> None:
    """`edt sync --feeds`: each feed's line as it ends; exit 2 when a file's format changed,
    1 when a feed was down (the others ran). `clear_demo`: the demo rows go once a feed brought rows."""
    from ..ingest.feed_runner import FeedClient, chosen_feeds, run_feeds
    from ..store.feed_catalog import feed_table

    try:
        chosen = chosen_feeds(names, feed_table())
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if not chosen:
        raise BadInput(
            "--feeds: every feed is disabled in the config file; name some (--feeds nask-pl,bardate-se) "
            "or set enabled = true under [feeds.NAME]"
        )
    check_writable(db, "sync --feeds")
    note_opened(db)
    if not clear_demo and Path(db).is_file():
        from ..store.removal import holds_origin

        with contextlib.suppress(Exception):  # a hint only
            if holds_origin(db, "demo"):
                click.echo(f"{db} also holds demo rows (marked as such); `--clear-demo` removes them first.", err=True)
    click.echo(f"Feeds {', '.join(f.name for f in chosen)} into {db}")
    say = lambda line: click.echo(line)  # noqa: E731
    try:
        with on_interrupt(f"the feeds already ingested are kept in {db}; the one in progress wrote nothing"):
            reports = run_feeds(
                db,
                [f.name for f in chosen],
                client=FeedClient(timeout=timeout_bound(timeout)),
                say=say,
                before_alerts=_clear_demo_after_feeds if clear_demo else None,
            )
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    feeds_exit(reports)


def feeds_exit(reports: list) -> None:
    """How a run of feeds ends (`edt sync --feeds`, `edt schedule --once`): exit 2 when a
    file's format changed, 1 when a feed was down (the others ran), else 0."""
    changed = [r for r in reports if r.status == "format"]
    if changed:
        raise BadInput(
            f"{len(changed)} feed file(s) could not be read as their feed, nothing of them was written: "
            + "; ".join(r.message for r in changed)
        )
    down = [r.feed for r in reports if r.status == "down"]
    if down:
        raise RunFailed(f"{', '.join(down)} could not be downloaded (see above); the next run tries again")


def _clear_demo_after_feeds(mirror: Any, reports: list) -> bool:
    """`edt sync --feeds --clear-demo`, after the feeds and before their alerts: the demo goes
    once a feed was read (brought rows, or was unchanged since it last did); a run that fetched
    nothing leaves it as it was."""
    if not any(r.status in ("ok", "not_modified") for r in reports):
        click.echo(f"No feed could be fetched: the demo rows stay in {mirror.path}.", err=True)
        return False
    return _clear_demo_rows(mirror)


def _clear_demo_rows(mirror: Any) -> bool:
    """Remove the demo's rows (`edt sync --clear-demo`), saying what went; whether any did."""
    from ..demo import clear_demo, removal_line

    with on_interrupt(
        f"no demo row was removed; {mirror.path} is as it was",
        mirror=mirror,
        written=f"after the demo rows were removed from {mirror.path}",
    ):
        removed = clear_demo(mirror.connection())
    if any(removed.values()):
        click.echo(f"Removed the demo rows from {mirror.path}: {removal_line(removed)}")
    return any(removed.values())


class _SyncProgress:
    """A rich progress bar per job: rows, requests and the time left at the paced rate."""

    def __enter__(self) -> "_SyncProgress":
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.fields[detail]}"),
            TimeElapsedColumn(),
            transient=False,
        )
        self.progress.__enter__()
        self.tasks: dict[str, Any] = {}
        self.per_minute = 15
        return self

    def __exit__(self, *exc: Any) -> None:
        self.progress.__exit__(*exc)

    def update(self, event: str, info: dict[str, Any]) -> None:
        job = info["job"]
        if event == "start":
            self.per_minute = info["per_minute"]
            label = f"{job} ({info['mode']}{', resumed' if info['resumed'] else ''})"
            self.tasks[job] = self.progress.add_task(label, total=None, detail="starting")
        elif event == "page":
            left = info["left"]
            total = None if left is None else info["requests"] + left
            eta = "" if left is None else f", ~{left / self.per_minute:.1f} min left at {self.per_minute}/min"
            detail = f"{info['rows']:,} rows, {info['requests']:,} requests{eta}"
            self.progress.update(self.tasks[job], completed=info["requests"], total=total, detail=detail)
        elif event == "end":
            report = info["report"]
            self.progress.update(
                self.tasks[job],
                total=max(report.requests, 1),
                completed=max(report.requests, 1),
                detail=f"{report.status}: {report.seen:,} rows, {report.requests:,} requests",
            )


@cli.command(name="enrich")
@db_option
@click.argument("params", nargs=-1)
@click.option(
    "--wayback/--no-wayback",
    default=True,
    show_default=True,
    help="Wayback Machine captures: wayback_snapshots, wayback_first_date, wayback_last_date, age.",
)
@click.option(
    "--rdap/--no-rdap",
    default=True,
    show_default=True,
    help="Registry RDAP: whois_status, whois_registrar, whois_expires_at, ... (a 404 marks available).",
)
@click.option(
    "--language",
    is_flag=True,
    help="Language of the latest archived home page, detected offline (the `language` extra: py3langid).",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=None,
    help="At most N rows this run; the next run resumes after them.",
)
@click.option("--restart", is_flag=True, help="Start again from the first row instead of resuming.")
@choice_option("--cdx-output", ["json", "text"], "json", "The CDX API's answer form.")
@timeout_option
def enrich_command(
    db: str,
    params: tuple[str, ...],
    wayback: bool,
    rdap: bool,
    language: bool,
    limit: int | None,
    restart: bool,
    cdx_output: str,
    timeout: float | None,
) -> None:
    """Enrich the listings that match KEY=VALUE filters (the /api/domains parameters, e.g.
    tld=.com score_min=20) from the Wayback Machine and RDAP, and with --language the
    archived home page's language, politely: paced per host, retried after 429/503 as
    Retry-After says, cached (a re-run refetches nothing fresh), resumable. The quality
    score is recomputed."""
    from ..enrich.language import LanguageUnavailable
    from ..enrich.listings import enrich
    from ..sync.remote import HostUnreachable

    if not (wayback or rdap or language):
        raise BadInput("nothing to do: --no-wayback and --no-rdap without --language")
    filters = key_value_pairs(params)
    if Path(db).is_file():  # else `open_mirror` says there is no mirror
        hold_load_lock(db, "edt enrich")
    mirror = open_mirror(db, writes="enrich")

    def progress(report) -> None:
        click.echo(f"\r{report.processed}/{report.selected} rows", nl=False, err=True)

    try:
        with on_interrupt(f"the batches already written are kept in {db}; run this again to resume"):
            report = enrich(
                mirror,
                wayback=wayback,
                rdap=rdap,
                language=language,
                limit=limit,
                params=filters,
                resume=not restart,
                cdx_output=cdx_output,
                on_batch=progress if sys.stderr.isatty() else None,
                give_up_after=timeout_bound(timeout),
                say=say_retry,
            )
    except HostUnreachable as exc:
        raise RunFailed(f"enrich stopped: {exc}; rows already written are kept, the next run resumes") from None
    except LanguageUnavailable as exc:  # the optional extra is not installed
        raise BadInput(f"--language: {exc}") from None
    if sys.stderr.isatty():
        click.echo("", err=True)
    if report.updated:
        refresh_index(mirror)
    for line in report.lines():
        click.echo(line)
    if report.errors and not report.updated:
        sys.exit(1)
