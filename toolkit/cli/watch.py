"""Commands that keep watch: `edt watch` (saved searches) and `edt schedule` (the sync jobs on
the service's schedules, then the alerts)."""

from __future__ import annotations

import os

import click

from ..errors import ApiError
from .shell import BadInput, Failed, _api_error, _check_plan, _db_option, _open, _pairs, cli


@cli.command(name="schedule")
@_db_option
@click.option("--next", "show_next", is_flag=True, help="Print the next run of each job and feed, and exit.")
@click.option("--crontab", "as_crontab", is_flag=True, help="Print equivalent crontab lines and exit.")
@click.option("--systemd", "as_systemd", is_flag=True, help="Print a systemd user unit that runs this and exit.")
@click.option("--now", "run_now", is_flag=True, help="Run every job once at start, then keep the schedule.")
@click.option("--once", metavar="JOB", default=None,
              help="Run one job or feed (then alerts) and exit: what cron calls. `feeds` runs every enabled feed.")
def schedule_command(db: str, show_next: bool, as_crontab: bool, as_systemd: bool, run_now: bool,
                     once: str | None) -> None:  # fmt: skip
    """Run the sync jobs and the free feeds on their schedules (docs/reference/freshness.md), then alerts, until stopped.

    Without an API key only the feeds run (docs/guides/feeds.md)."""
    from datetime import datetime

    from ..config import config_file, load_settings
    from ..store.feeds import feed_table
    from ..store.jobs import JOBS
    from ..sync.schedule import crontab, feed_schedules, next_runs, schedules, serve, systemd_units

    try:
        config = config_file()
        feeds = feed_table(config)
        crons = {**schedules(config), **feed_schedules(feeds)}
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if as_crontab:
        click.echo(crontab(crons, db=db), nl=False)
        return
    if as_systemd:
        click.echo(systemd_units(db=db), nl=False)
        return
    if once and once not in JOBS and once != "feeds" and once not in feeds:
        raise BadInput(f"--once: unknown job {once}; choose from {', '.join(JOBS)}, feeds, or a feed: {', '.join(feeds)}")
    timezone = config.get("schedule", {}).get("timezone")
    if show_next:
        now = datetime.now().astimezone()
        for job, when in next_runs(crons, now, timezone).items():
            kind = "feed" if job in feeds else "API"
            click.echo(f"{job:<20}{kind:<6}{crons[job]:<16}next {when.isoformat(timespec='minutes')}")
        return
    plan = _check_plan(os.environ.get("EDT_PLAN")) or "pro"
    settings = load_settings(db=db, plan=plan)
    import functools

    from ..analysis.appraise import appraise_if_due
    from ..ingest.feeds import run_feed_job
    from .load import feeds_exit
    from ..sync.schedule import run_job

    feed_job = functools.partial(run_feed_job, after=appraise_if_due)  # the price ranges retrained when due
    api_job = functools.partial(run_job, after=appraise_if_due)
    if once and once not in JOBS:
        reports = feed_job(once, settings, say=lambda line: click.echo(line))
        if not reports:
            raise Failed(f"{once} did not run (see above)")
        feeds_exit(reports)
        return
    if not settings.api_key and (once or not any(job not in JOBS for job in crons)):
        raise BadInput("no API key: set EDT_API_KEY (or api_key in the config file) for the scheduled syncs; "
                       "the free feeds need none (`edt schedule --once feeds`)")  # fmt: skip
    if once:
        reports = api_job(once, settings, say=lambda line: click.echo(line))
        if not reports or any(r.status not in ("ok", "skipped") for r in reports):
            raise Failed(f"{once} did not finish (see above)")
        return
    serve(settings, run_now=run_now, say=lambda line: click.echo(line), crons=crons, feed_runner=feed_job,
          runner=api_job)  # fmt: skip


@cli.group()
def watch() -> None:
    """Saved searches (shared with the app's watchlist) and their new matches."""


@watch.command(name="add")
@_db_option
@click.argument("name")
@click.argument("params", nargs=-1)
@click.option("--replace", is_flag=True, help="Replace the saved search of that name (else an existing name is refused).")
def watch_add(db: str, name: str, params: tuple[str, ...], replace: bool) -> None:
    """Save a search: edt watch add "fr tf20" tld=.fr tf_min=20

    Only listings first seen after the search is saved (then after each `edt watch show`)
    count as new; `edt watch show NAME --all` lists every current match."""
    from ..sync.watchlist import SearchExists, save_search, saved_searches

    mirror = _open(db, writes="watch add")  # as `watch list`: a mistyped --db is refused, not created
    existed = replace and mirror.connection().execute(
        "SELECT 1 FROM saved_searches WHERE name = ?", [name.strip()]).fetchone() is not None  # fmt: skip
    try:
        save_search(mirror, name, _pairs(params), replace=replace)
    except ApiError as exc:
        raise _api_error(exc) from None
    except SearchExists as exc:
        raise BadInput(str(exc)) from None
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    entry = next((s for s in saved_searches(mirror) if s["name"] == name.strip()), None)
    now = f"; it matches {entry['matches']:,} listings now" if entry else ""
    click.echo(f"{'Replaced' if existed else 'Saved'} {name.strip()!r}: " + (" ".join(params) or "all listings") + now)
    click.echo(f"New matches are listings first seen from now on (after each sync); "
               f"`edt watch show {_quoted(name.strip())} --all` lists the current ones.")  # fmt: skip


def _quoted(name: str) -> str:
    import shlex

    return shlex.quote(name)


@watch.command(name="list")
@_db_option
def watch_list(db: str) -> None:
    """Each saved search with its current matches and its new ones since saved or last shown."""
    from ..sync.watchlist import saved_searches

    searches = saved_searches(_open(db))
    if not searches:
        click.echo("No saved search: add one with `edt watch add NAME KEY=VALUE ...`")
    for entry in searches:
        params = " ".join(f"{k}={v}" for k, v in entry["params"].items()) or "all listings"
        since = entry["last_opened_at"] or entry["created_at"]
        click.echo(f"{entry['name']}: {params} ({entry['matches']:,} matches now, {entry['new_matches']:,} new since "
                   f"{'last shown' if entry['last_opened_at'] else 'saved'} {since})")  # fmt: skip
    if searches:
        click.echo("New: listings first seen after that time (a sync brings them); "
                   "`edt watch show NAME` lists the new ones, `--all` every current match.")  # fmt: skip


@watch.command(name="rm")
@_db_option
@click.argument("name")
def watch_rm(db: str, name: str) -> None:
    """Forget a saved search."""
    from ..sync.watchlist import delete_search

    if not delete_search(_open(db, writes="watch rm"), name):
        raise BadInput(f"no saved search named {name!r} (see `edt watch list`)")
    click.echo(f"Removed {name!r}")


@watch.command(name="show")
@_db_option
@click.argument("name")
@click.option("--all", "show_all", is_flag=True, help="Every listing the search matches now, not only the new ones.")
def watch_show(db: str, name: str, show_all: bool) -> None:
    """The search's new matches since it was last shown (then marks them shown); --all: every current match."""
    from ..sync.watchlist import open_search, saved_searches

    mirror = _open(db)
    entry = next((s for s in saved_searches(mirror) if s["name"] == name.strip()), None)
    if entry is None:
        raise BadInput(f"no saved search named {name!r} (see `edt watch list`)")
    since = entry["last_opened_at"] or entry["created_at"]
    columns = ["id", "name", "source", "effective_price", "currency", "trust_flow", "first_seen_at"]
    rows = mirror.domains_df(entry["params"] if show_all else {**entry["params"], "seen_after": since}, columns=columns)
    if mirror.readonly:
        click.echo("edt: a read-only mirror: these matches stay new (they cannot be marked as shown)", err=True)
    else:
        open_search(mirror, name)
    if show_all:
        click.echo(f"{name}: {len(rows):,} current matches ({entry['new_matches']:,} new since {since})")
    else:
        hint = "" if len(rows) else (f"; only listings first seen after then count (it matches {entry['matches']:,} "
                                     "now: --all lists them)")  # fmt: skip
        click.echo(f"{name}: {len(rows):,} new since {since}{hint}")
    import pandas as pd

    for row in rows.itertuples(index=False):
        price = "" if pd.isna(row.effective_price) else f"{row.effective_price:g} {row.currency or ''}"
        trust = "-" if pd.isna(row.trust_flow) else row.trust_flow
        click.echo(f"  {row.id}  {row.name:<40} {row.source:<14} TF {trust}  {price}")
