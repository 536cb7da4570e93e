"""Commands that read files in: `edt ingest` (a public feed's file or URL, a sales CSV) and
`edt backtest`, which measures the drop dates the feeds predict against the registry's own."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from .shell import (
    BadInput,
    RunFailed,
    db_option,
    open_mirror,
    refresh_index,
    say_retry,
    cli,
)


from ..store.feed_catalog import limit_problem
from .load import on_interrupt, hold_load_lock


def _limit_option(flag: str, unit: str, what: str, default: int) -> Callable[[Any], Any]:
    """A bound on what a feed file may hold, in `unit` (above 0; the default is the feed reader's)."""
    key = flag.lstrip("-").replace("-", "_")

    def checked(ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
        if value is not None and (problem := limit_problem(key, value)):
            raise click.BadParameter(problem)
        return value

    return click.option(
        flag,
        type=float,
        callback=checked,
        default=None,
        metavar=unit,
        help=f"The most {what} (default {default}); past it nothing is written.",
    )


def _ingest_sales(db: str, file: str | None, url: str | None, as_json: bool, bounds: Any) -> None:
    """`edt ingest sales FILE`: reported sales into their own table, all or nothing."""
    from ..ingest.sales import ingest_sales

    if url is not None or file is None:
        raise BadInput("sales: give the file of reported sales (edt ingest sales FILE)")
    if Path(file).is_dir():
        raise BadInput(f"{file}: a folder; give the sales file in it (edt ingest sales FOLDER/sales.csv)")
    if not Path(file).is_file():
        raise BadInput(f"{file}: no such file")
    hold_load_lock(db, "edt ingest sales")
    mirror = open_mirror(db, must_exist=False, writes="ingest")
    with on_interrupt(
        f"nothing of this file was written; {db} is as it was",
        mirror=mirror,
        written=f"after the sales were written to {db}",
    ):
        # a bad file: IngestError, said by the group
        report = ingest_sales(mirror, file, now=mirror.now(), bounds=bounds)
    if as_json:
        click.echo(json.dumps(vars(report)))
    else:
        for line in report.lines():
            click.echo(line)


@cli.command(name="ingest")
@db_option
@click.argument(
    "feed",
    type=click.Choice(["godaddy", "namecheap", "bardate", "droplist", "zonediff", "sales"], case_sensitive=False),
)
@click.argument("path", required=False, metavar="[FILE]")
@click.option("--file", "file", type=click.Path(dir_okay=False), default=None, help="The feed file to load (or FILE).")
@click.option("--url", "url", default=None, help="Download the feed from this URL first (instead of --file).")
@click.option(
    "--previous",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="zonediff: the older zone file or name list (--file is the newer).",
)
@click.option(
    "--zones",
    default=None,
    metavar="FOLDER|GLOB",
    help="zonediff: replay daily snapshots (a folder or a quoted glob, .gz read as is, days may be "
    "missing; each file's day from its name): every name that leaves the zone gets a drop window.",
)
@click.option("--tld", default=None, metavar="TLD", help="zonediff: the zone's TLD (default: from the files).")
@click.option(
    "--status",
    default=None,
    metavar="STATUS",
    help="droplist/zonediff: the names' WHOIS status (pendingDelete, serverHold, ...), which picks the "
    "lifecycle prediction (defaults: droplist pendingDelete, zonediff serverHold).",
)
@click.option(
    "--date",
    "day",
    default=None,
    metavar="YYYY-MM-DD",
    help="droplist: the day the list covers; zonediff: the newer zone's day (default: from the file name).",
)
@click.option(
    "--check-rdap",
    is_flag=True,
    help="zonediff: ask each gone name's registry over RDAP; a 404 (not registered) makes it a regfree "
    "listing, the others stay pending-delete candidates.",
)
@click.option("--observed-at", default=None, metavar="TIMESTAMP", help="When the rows were seen (default now, UTC).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option(
    "--show",
    type=click.IntRange(0),
    default=20,
    show_default=True,
    metavar="N",
    help="Print the first N skipped rows (file:line: reason) on stderr.",
)
@_limit_option("--max-size-mb", "MB", "the file may expand to, unzipped", 2048)
@_limit_option("--max-field-kb", "KB", "one line, field or record may be", 1024)
def ingest_command(
    db: str,
    feed: str,
    path: str | None,
    file: str | None,
    url: str | None,
    previous: str | None,
    zones: str | None,
    tld: str | None,
    status: str | None,
    day: str | None,
    check_rdap: bool,
    observed_at: str | None,
    as_json: bool,
    show: int,
    max_size_mb: float | None,
    max_field_kb: float | None,
) -> None:
    """Load a public feed file into the mirror: all of its good rows, or nothing.

    \b
    FEED       godaddy   GoDaddy Auctions inventory (.json.zip / .csv.zip)
               namecheap Namecheap Market sales CSV (auctions, or buy-now)
               bardate   Internetstiftelsen .se/.nu release list (JSON / TXT)
               droplist  registry deletion list (a name a line, or CSV with dates)
               zonediff  names gone between two zone files (--previous OLD --file NEW),
                         or a replay of daily snapshots (--zones 'zone/nu_domains_*.txt.gz')
               sales     sales reported elsewhere (NameBio's export, a DNJournal-style table,
                         any CSV with a domain, a price and a date): comparables and the price model
    """
    from ..ingest import Bounds, IngestError, ingest_file, ingest_url

    feed = feed.lower()
    if path is not None:
        if file is not None:
            raise BadInput(f"give the file once: {path} or --file {file}")
        file = path
    bounds = Bounds.of(max_size_mb, max_field_kb, setting="--{option}")
    if feed == "sales":
        _ingest_sales(db, file, url, as_json, bounds)
        return
    options: dict[str, Any] = {"bounds": bounds}
    if zones is not None:
        if feed != "zonediff":
            raise BadInput("--zones: only zonediff replays snapshots")
        if file is not None or url is not None or previous is not None or day is not None:
            raise BadInput("--zones: the snapshots are the input; drop --file, --url, --previous and --date")
        file = zones
    if tld is not None:
        if feed != "zonediff":
            raise BadInput(f"--tld: {feed} rows carry their own names")
        options["tld"] = tld
    if (file is None) == (url is None):
        raise BadInput("give the feed as --file PATH or --url URL (one of them), or zonediff --zones")
    source = file or url
    if previous is not None:
        if feed != "zonediff":
            raise BadInput("--previous: only zonediff diffs two files")
        options["previous"] = previous
    elif feed == "zonediff" and zones is None:
        raise BadInput(
            "zonediff: pass --previous OLD (the older zone file) and the newer one as --file, or "
            "--zones FOLDER|GLOB (a replay of daily snapshots)"
        )
    if status is not None:
        if feed not in ("droplist", "zonediff"):
            raise BadInput(f"--status: {feed} rows carry their own status")
        options["status"] = status
    if day is not None:
        if feed not in ("droplist", "zonediff"):
            raise BadInput(f"--date: {feed} rows carry their own dates")
        options["list_date" if feed == "droplist" else "zone_date"] = day
    if check_rdap and feed != "zonediff":
        raise BadInput(f"--check-rdap: only zonediff names need the check ({feed} rows say what they are)")
    if file is not None and zones is None and not Path(file).is_file():
        raise BadInput(f"--file {file}: no such file")
    hold_load_lock(db, f"edt ingest {feed}")
    mirror = open_mirror(db, must_exist=False, writes="ingest")
    checker = None
    try:
        with contextlib.ExitStack() as stack:
            if check_rdap:
                from ..enrich.available import rdap_availability

                checker = options["is_available"] = stack.enter_context(rdap_availability(mirror, say=say_retry))
            stack.enter_context(
                on_interrupt(
                    f"nothing of this feed was written; {db} is as it was",
                    mirror=mirror,
                    written=f"after the feed was written to {db}",
                )
            )
            if url:
                report = ingest_url(mirror, feed, source, observed_at=observed_at, **options)
            else:
                assert source is not None  # --file or --url, checked above
                report = ingest_file(mirror, feed, source, observed_at=observed_at, **options)
    except IngestError:
        raise  # bad input, said by the group
    except (ValueError, TypeError) as exc:  # a bad --status, --date or --observed-at
        raise BadInput(str(exc)) from None
    except OSError as exc:  # a download that failed
        raise RunFailed(f"{source}: {exc}") from None
    refresh_index(mirror)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(report.summary())
    if checker is not None:
        click.echo(checker.summary(), err=as_json)
        for problem in checker.problems[:show]:
            click.echo(f"rdap: {problem}", err=True)
    for skipped in report.skipped[:show]:
        click.echo(f"skipped {skipped}", err=True)
    if len(report.skipped) > show:
        click.echo(f"... and {len(report.skipped) - show:,} more skipped rows (--show N, or --json for all)", err=True)


@cli.command(name="backtest")
@click.option(
    "--zones",
    required=True,
    metavar="FOLDER|GLOB",
    help="Daily zone snapshots to replay (a folder or a quoted glob; .gz read as is; days may be missing).",
)
@click.option(
    "--official",
    "official",
    multiple=True,
    required=True,
    metavar="FEED=GLOB",
    help="The registry's own days: bardate=GLOB (release lists: JSON, TXT or CSV) or droplist=GLOB. Repeatable.",
)
@click.option("--tld", default=None, metavar="TLD", help="Report this TLD only (e.g. .nu).")
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a list of objects: tld, official, pairs, one_day_pairs, exact_share, within_1_share, "
    "window_share, mean_abs_error, outliers.",
)
@click.option(
    "--db",
    "db",
    default=None,
    metavar="NEW_FILE",
    help="Also keep the backtest's mirror (the replayed windows and the official days) in this new file, "
    "written only when every file was read. Never your mirror: the replay runs in a scratch one.",
)
def backtest_command(zones: str, official: tuple[str, ...], tld: str | None, as_json: bool, db: str | None) -> None:
    """Measure predicted drop windows against the registry's official days.

    Replays the snapshots into a scratch mirror (nothing is written to yours), ingests the
    official lists, pairs them by name and prints per TLD: official names, pairs, pairs whose
    snapshots are one day apart, the share of those predicted exactly and within one day, the
    share of all pairs whose official day is inside the window, the mean absolute error, and
    the outliers with their reason. A bad file or row exits 2 naming it (same as
    `python -m toolkit.analysis.backtest --zones ...`)."""
    from ..analysis.backtest import run_zone_backtest, window_report_lines
    from ..ingest import IngestError

    try:
        scores = run_zone_backtest(zones, list(official), tld, keep=db)
    except (IngestError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    except OSError as exc:
        raise BadInput(f"{exc.filename or zones}: {exc.strerror or exc}") from None
    if as_json:
        click.echo(json.dumps([scores[t].to_dict() for t in sorted(scores)], indent=2))
    else:
        click.echo("\n".join(window_report_lines(scores)))
