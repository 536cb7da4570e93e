"""Commands that keep watch: `edt watch` (saved searches) and `edt schedule` (the sync jobs on
the service's schedules, then the alerts)."""

from __future__ import annotations

import os

import click

from .shell import (
    BadInput,
    RunFailed,
    timeout_bound,
    check_plan,
    db_option,
    open_mirror,
    key_value_pairs,
    timeout_option,
    cli,
)


@cli.command(name="schedule")
@db_option
@click.option("--next", "show_next", is_flag=True, help="Print the next run of each job and feed, and exit.")
@click.option("--crontab", "as_crontab", is_flag=True, help="Print equivalent crontab lines and exit.")
@click.option("--systemd", "as_systemd", is_flag=True, help="Print a systemd user unit that runs this and exit.")
@click.option("--now", "run_now", is_flag=True, help="Run every job once at start, then keep the schedule.")
@click.option(
    "--once",
    metavar="JOB",
    default=None,
    help="Run one job or feed (then alerts) and exit: what cron calls. `feeds` runs every enabled feed.",
)
def schedule_command(
    db: str, show_next: bool, as_crontab: bool, as_systemd: bool, run_now: bool, once: str | None
) -> None:
    """Run the sync jobs and the free feeds on their schedules (docs/reference/freshness.md), then alerts, until stopped.

    Without an API key only the feeds run (docs/guides/feeds.md)."""
    from datetime import datetime

    from ..config import config_file, load_settings
    from ..store.feed_catalog import feed_table
    from ..store.jobs import JOBS
    from ..sync.schedule import (
        NAMES_JOB,
        crontab,
        feed_schedules,
        names_schedule,
        next_runs,
        schedule_words,
        schedules,
        serve,
        systemd_units,
    )

    try:
        config = config_file()
        feeds = feed_table(config)
        crons = {**schedules(config), **names_schedule(config), **feed_schedules(feeds)}
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if as_crontab:
        click.echo(crontab(crons, db=db), nl=False)
        return
    if as_systemd:
        click.echo(systemd_units(db=db), nl=False)
        return
    if once and once not in JOBS and once not in ("feeds", NAMES_JOB) and once not in feeds:
        raise BadInput(
            f"--once: unknown job {once}; choose from {', '.join(JOBS)}, {NAMES_JOB}, feeds, or a feed: "
            f"{', '.join(feeds)}"
        )
    timezone = config.get("schedule", {}).get("timezone")
    if show_next:
        now = datetime.now().astimezone()
        keyless = not load_settings(db=db).api_key
        for job, when in next_runs(crons, now, timezone).items():
            kind = "feed" if job in feeds else ("names" if job == NAMES_JOB else "API")
            idle = "  (not without an API key)" if kind == "API" and keyless else ""
            click.echo(
                f"{job:<20}{kind:<6}{crons[job]:<16}next {when.isoformat(timespec='minutes')}  "
                f"{schedule_words(crons[job])}{idle}"
            )
        if keyless:
            click.echo(
                "No API key: the API jobs do not run (set EDT_API_KEY, or api_key in the config file); the "
                "feeds and the watched names need none."
            )
        return
    plan = check_plan(os.environ.get("EDT_PLAN"), "EDT_PLAN") or "pro"
    settings = load_settings(db=db, plan=plan)
    import functools

    from ..analysis.appraise import appraise_if_due
    from ..enrich.name_checks import run_names_job
    from ..ingest.feed_runner import run_feed_job
    from ..ingest.lifecycle import predict_drop_window
    from .load import feeds_exit
    from ..sync.schedule import run_job

    feed_job = functools.partial(run_feed_job, after=appraise_if_due)  # the price ranges retrained when due
    api_job = functools.partial(run_job, after=appraise_if_due)
    names_job = functools.partial(run_names_job, predict=predict_drop_window)
    if once == NAMES_JOB:
        if names_job(once, settings, say=lambda line: click.echo(line)) is None:
            raise RunFailed(f"{once} did not run (see above)")
        return
    if once and once not in JOBS:
        reports = feed_job(once, settings, say=lambda line: click.echo(line))
        if not reports:
            raise RunFailed(f"{once} did not run (see above)")
        feeds_exit(reports)
        return
    if not settings.api_key and (once or not any(job not in JOBS for job in crons)):
        raise BadInput(
            "no API key: set EDT_API_KEY (or api_key in the config file) for the scheduled syncs; "
            "the free feeds need none (`edt schedule --once feeds`)"
        )
    if once:
        reports = api_job(once, settings, say=lambda line: click.echo(line))
        if not reports or any(r.status not in ("ok", "skipped") for r in reports):
            raise RunFailed(f"{once} did not finish (see above)")
        return
    serve(
        settings,
        run_now=run_now,
        say=lambda line: click.echo(line),
        crons=crons,
        feed_runner=feed_job,
        runner=api_job,
        names_runner=names_job,
    )


@cli.group()
def watch() -> None:
    """Saved searches and watched names (shared with the app's watchlist), and their news."""


@watch.command(name="add")
@db_option
@click.argument("name")
@click.argument("params", nargs=-1)
@click.option(
    "--replace", is_flag=True, help="Replace the saved search of that name (else an existing name is refused)."
)
def watch_add(db: str, name: str, params: tuple[str, ...], replace: bool) -> None:
    """Save a search: edt watch add "fr tf20" tld=.fr tf_min=20

    Only listings first seen after the search is saved (then after each `edt watch show`)
    count as new; `edt watch show NAME --all` lists every current match."""
    from ..sync.saved_searches import has_search, save_search, saved_searches

    mirror = open_mirror(db, writes="watch add")  # as `watch list`: a mistyped --db is refused, not created
    existed = replace and has_search(mirror, name)
    try:
        save_search(mirror, name, key_value_pairs(params), replace=replace)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    entry = next((s for s in saved_searches(mirror) if s["name"] == name.strip()), None)
    now = f"; it matches {entry['matches']:,} listings now" if entry else ""
    click.echo(f"{'Replaced' if existed else 'Saved'} {name.strip()!r}: " + (" ".join(params) or "all listings") + now)
    click.echo(
        f"New matches are listings first seen from now on (after each sync); "
        f"`edt watch show {_quoted(name.strip())} --all` lists the current ones."
    )


def _quoted(name: str) -> str:
    import shlex

    return shlex.quote(name)


@watch.command(name="list")
@db_option
def watch_list(db: str) -> None:
    """Each saved search with its current matches and its new ones since saved or last shown."""
    from ..sync.saved_searches import saved_searches, search_words

    searches = saved_searches(open_mirror(db))
    if not searches:
        click.echo("No saved search: add one with `edt watch add NAME KEY=VALUE ...`")
    for entry in searches:
        params = " ".join(f"{k}={v}" for k, v in entry["params"].items()) or "all listings"
        since = entry["last_opened_at"] or entry["created_at"]
        click.echo(
            f"{entry['name']}: {params} ({entry['matches']:,} matches now, {entry['new_matches']:,} new since "
            f"{'last shown' if entry['last_opened_at'] else 'saved'} {since})"
        )
        click.echo(f"  {search_words(entry['params'])}")
    if searches:
        click.echo(
            "New: listings first seen after that time (a sync brings them); "
            "`edt watch show NAME` lists the new ones, `--all` every current match."
        )


@watch.command(name="rm")
@db_option
@click.argument("name")
def watch_rm(db: str, name: str) -> None:
    """Forget a saved search."""
    from ..sync.saved_searches import delete_search

    if not delete_search(open_mirror(db, writes="watch rm"), name):
        raise BadInput(f"no saved search named {name!r} (see `edt watch list`)")
    click.echo(f"Removed {name!r}")


@watch.command(name="show")
@db_option
@click.argument("name")
@click.option("--all", "show_all", is_flag=True, help="Every listing the search matches now, not only the new ones.")
def watch_show(db: str, name: str, show_all: bool) -> None:
    """The search's new matches since it was last shown (then marks them shown); --all: every current match."""
    from ..sync.saved_searches import open_search, saved_searches

    mirror = open_mirror(db)
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
        hint = (
            ""
            if len(rows)
            else (
                f"; only listings first seen after then count (it matches {entry['matches']:,} now: --all lists them)"
            )
        )
        click.echo(f"{name}: {len(rows):,} new since {since}{hint}")
    import pandas as pd

    for row in rows.itertuples(index=False):
        price = "" if pd.isna(row.effective_price) else f"{row.effective_price:g} {row.currency or ''}"
        trust = "-" if pd.isna(row.trust_flow) else row.trust_flow
        click.echo(f"  {row.id}  {row.name:<40} {row.source:<14} TF {trust}  {price}")


@watch.command(name="name")
@db_option
@click.argument("names", nargs=-1)
@click.option("--note", default=None, help="A note kept with the names.")
@click.option(
    "--file",
    "from_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Names to watch from a file, one a line (blank lines and # comments skipped).",
)
@click.option("--rm", "remove", is_flag=True, help="Stop watching the names (their stage history goes with them).")
def watch_name(db: str, names: tuple[str, ...], note: str | None, from_file: str | None, remove: bool) -> None:
    """Watch names through their registration lifecycle: edt watch name example.com other.nu

    The `names` job (`edt schedule`, daily; `edt watch names --check` now) asks each registry
    over RDAP and alerts at each change of stage and when the mirror lists the name anywhere.
    Nothing leaves this machine but the RDAP lookups."""
    from ..names import registrable_name
    from ..sync.watched_names import name_key, unwatch_names, watch_names

    wanted = [(name, "") for name in names]  # (the name, where it was read)
    if from_file:
        try:
            with open(from_file, encoding="utf-8-sig") as handle:
                lines = handle.read().splitlines()
        except OSError as exc:
            raise BadInput(f"--file {from_file}: cannot read it ({exc.strerror or exc})") from None
        except UnicodeDecodeError:
            raise BadInput(f"--file {from_file}: not UTF-8 text (one name a line)") from None
        wanted += [
            (line.split("#", 1)[0].strip(), f"--file {from_file}: line {number}: ")
            for number, line in enumerate(lines, 1)
            if line.split("#", 1)[0].strip()
        ]
    if not wanted:
        raise BadInput("give names to watch (edt watch name example.com), or --file FILE")
    texts = [text for text, _ in wanted]
    mirror = open_mirror(db, writes="watch name")
    if remove:
        gone = unwatch_names(mirror, texts)
        missing = [t for t in texts if name_key(t) not in gone]
        if gone:
            click.echo(f"No longer watched: {', '.join(gone)}")
        if missing:
            raise BadInput(f"not watched: {', '.join(missing)} (`edt watch names` lists them)")
        return
    for text, where in wanted:  # every name checked before any is added
        try:
            registrable_name(text)
        except ValueError as exc:
            raise BadInput(f"{where}{exc}; nothing was added") from None
    added = watch_names(mirror, texts, note=note)
    click.echo(
        f"Watching {len(added):,} name{'s' if len(added) != 1 else ''}: {', '.join(added[:10])}"
        + (f" and {len(added) - 10:,} more" if len(added) > 10 else "")
    )
    click.echo("Each registry is asked daily by the `names` job (`edt schedule`); `edt watch names --check` asks now.")


@watch.command(name="names")
@db_option
@click.option("--check", is_flag=True, help="Ask the registries now (what the scheduled `names` job does), then list.")
@click.option("--history", "history", metavar="NAME", default=None, help="Every stage NAME went through, oldest first.")
@timeout_option
def watch_names_command(db: str, check: bool, history: str | None, timeout: float | None) -> None:
    """The watched names: stage, since when, what comes next and when, where the mirror lists them."""
    from ..sync.watched_names import STAGE_WORDS, name_key, name_stages, watched_names, window_text

    if timeout is not None and not check:
        raise BadInput("--timeout: only with --check (the registries are asked then)")
    mirror = open_mirror(db, writes="watch names --check") if check else open_mirror(db)
    if check:
        from ..enrich.name_checks import check_names
        from ..ingest.lifecycle import predict_drop_window

        report = check_names(  # another load at work: MirrorBusy, said by the group
            mirror,
            predict=predict_drop_window,
            say=lambda line: click.echo(line, err=True),
            give_up_after=timeout_bound(timeout),
        )
        for line in report.lines():
            click.echo(line)
        if report.failed:
            raise RunFailed(
                f"no registry could be asked ({report.errors[0]}); the stages are left as they were, "
                "the next check asks again"
            )
    if history:
        stages = name_stages(mirror, name_key(history))
        if not stages:
            raise BadInput(f"no stage recorded for {history} (watched? checked yet? `edt watch names`)")
        for entry in stages:
            window = (
                f"; expected next {entry['expected_from']} - {entry['expected_to']}" if entry["expected_from"] else ""
            )
            click.echo(f"{entry['observed_at']}  {STAGE_WORDS[entry['stage']]}{window}")
        return
    rows = watched_names(mirror)
    if not rows:
        click.echo("No watched name: `edt watch name example.com` watches one.")
    for row in rows:
        stage = STAGE_WORDS.get(row["stage"] or "", "not checked yet")
        since = f" since {row['stage_since'][:10]}" if row["stage_since"] else ""
        expected = ""
        if row["next_stage"]:
            when = window_text(row["expected_from"], row["expected_to"]) or "on a day not known"
            expected = f"; next: {STAGE_WORDS[row['next_stage']]} {when}"
        where = f"; listed: {'; '.join(e['where'] for e in row['listed'])}" if row["listed"] else ""
        trouble = f"; {row['rdap']}" if row["rdap"] not in (None, "ok") else ""
        trouble += f"; last check failed: {row['last_error']}" if row["last_error"] else ""
        note = f"  ({row['note']})" if row["note"] else ""
        click.echo(f"{row['name']}: {stage}{since}{expected}{where}{trouble}{note}")
