"""`edt`: the command line, a thin shell over the Python API.

Exit status: 0 on success, 2 on bad arguments or bad input (one line on stderr), 1 otherwise.
"""

from __future__ import annotations

import contextlib
import csv
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import click

from .errors import ApiError
from .formats import csv_cell
from .plans import PLANS, RATE_LIMITS, normalize_plan
from .query import LISTING_OUTPUT, PENDING_OUTPUT, Mirror

__all__ = ["main", "cli"]


class BadInput(click.ClickException):
    """Bad arguments or input: one line on stderr, exit status 2."""

    exit_code = 2

    def show(self, file: Any = None) -> None:
        click.echo(f"edt: {self.format_message()}", err=True)


def _db_option(func):
    return click.option(
        "--db",
        "db",
        envvar="EDT_DB",
        default="data/mirror.db",
        show_default=True,
        help="The mirror's SQLite file (env EDT_DB).",
    )(func)


def _plan_option(func):
    return click.option(
        "--plan",
        default=None,
        help=f"Answer as this plan ({', '.join(PLANS)}); default EDT_PLAN, else enterprise (your own mirror).",
    )(func)


def _check_plan(plan: str | None) -> str | None:
    if plan is None:
        return None
    try:
        return normalize_plan(plan)
    except ValueError as exc:
        raise BadInput(f"--plan: {exc}") from None


def _pairs(items: Iterable[str]) -> dict[str, Any]:
    """KEY=VALUE arguments; a repeated KEY becomes a list, which the query layer merges into a
    list filter's comma list (tld=.fr tld=.de is tld=.fr,.de) or refuses (exit 2) for a
    one-value parameter, as the HTTP API and the MCP tools do."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise BadInput(f"expected KEY=VALUE (e.g. tld=.fr), got {item!r}")
        key = key.strip()
        if key in params:
            previous = params[key]
            params[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            params[key] = value
    return params


def _api_error(exc: ApiError) -> BadInput:
    field = exc.field
    message = exc.body.get("message", str(exc))
    return BadInput(f"{field}: {message}" if field and field not in message else message)


_OPENED: list[str] = []  # the mirror this run opened, for a lock's one-line message in main()


def _open(db: str, *, must_exist: bool = True, writes: str | None = None) -> Mirror:
    """The mirror at `db`. `writes`: the command, when it writes to the mirror, which is then
    refused with one line (exit 2) if the file is in a read-only place (a reading command
    opens it read-only instead, saying so)."""
    if must_exist and not Path(db).is_file():
        raise BadInput(f"{db}: no mirror there; run `edt demo` (demo data) or `edt sync` first, or pass --db")
    if writes:
        _check_writable(db, writes)
    _OPENED.append(db)
    try:
        return Mirror(db)
    except Exception as exc:  # a file that is not a mirror
        raise BadInput(f"{db}: cannot open as a mirror ({exc})") from None




def _refresh_index(db: str | Mirror) -> None:
    """After a write: rebuild the mirror's columnar index, so the next reader need not (a
    failure only costs speed: queries are then answered by SQLite)."""
    mirror = db if isinstance(db, Mirror) else Mirror(db)
    try:
        mirror.refresh_index()
    except Exception as exc:  # noqa: BLE001
        click.echo(f"edt: the columnar index was not rebuilt ({exc}); queries use SQLite until it is", err=True)

def _check_writable(db: str, command: str) -> None:
    from .store.access import read_only_place

    why = read_only_place(db)
    if why:
        raise BadInput(f"{db} is {why}: `edt {command}` writes to the mirror; copy it to a writable place and pass "
                       "--db PATH (reading commands work on it as it is)")  # fmt: skip


def _write_csv(rows: Iterable[dict[str, Any]], columns: list[str], out) -> int:
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    count = 0
    for row in rows:
        writer.writerow({k: csv_cell(row.get(k)) for k in columns})
        count += 1
    return count


def _write_jsonl(rows: Iterable[dict[str, Any]], out) -> int:
    count = 0
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
        count += 1
    return count


def _parquet_schema(columns: dict[str, str]):
    import pyarrow as pa

    types = {
        "int": pa.int64(),
        "num": pa.float64(),
        "str": pa.string(),
        "bool": pa.bool_(),
        "date": pa.string(),
        "datetime": pa.string(),
        "array": pa.string(),
        "object": pa.string(),
    }
    return pa.schema([(name, types[kind]) for name, kind in columns.items()])


def _write_parquet(rows: Iterator[dict[str, Any]], columns: dict[str, str], path: Any) -> int:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = _parquet_schema(columns)
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        batch: list[dict[str, Any]] = []
        for row in rows:
            batch.append({k: csv_cell(row.get(k)) for k in columns})
            if len(batch) == 10000:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                count += len(batch)
                batch = []
        if batch or count == 0:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            count += len(batch)
    return count


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="expired-domains-toolkit")
def cli() -> None:
    """Expired Domains Toolkit: a local mirror of expired, deleted and pending-delete domains."""


@cli.command()
@_db_option
@click.option("--scale", type=click.Choice(["small", "full"]), default="small", show_default=True,
              help="small: ~5,000 listings; full: the service's scale (~563,000 listings).")  # fmt: skip
@click.option("--seed", type=int, default=42, show_default=True, help="Same seed, same data (dates relative to today).")
@click.option("--clear", is_flag=True, help="Remove the demo rows and stop.")
@click.option("--force", is_flag=True, help="Load demo rows even beside synced data (they stay marked as demo).")
def demo(db: str, scale: str, seed: int, clear: bool, force: bool) -> None:
    """Fill the mirror from the built-in demo source (no API key needed)."""
    from .demo import DemoRefused, clear_demo, load_demo

    mirror = _open(db, must_exist=False, writes="demo")
    conn = mirror.connection()
    if clear:
        removed = clear_demo(conn)
        _refresh_index(mirror)
        click.echo(f"Removed demo rows from {db}: " + ", ".join(f"{n:,} {k}" for k, n in removed.items()))
        return
    from rich.progress import Progress

    # No refresh thread: a load in a single-threaded process can fork its generator worker.
    with Progress(transient=True, auto_refresh=False) as progress:
        task = progress.add_task(f"demo {scale}", total=None)
        shown = [0.0]

        def report(stage: str, done: int) -> None:
            now = time.monotonic()
            progress.update(task, description=f"demo {scale}: {stage}", completed=done, refresh=now - shown[0] > 0.2)
            shown[0] = now if now - shown[0] > 0.2 else shown[0]

        try:
            counts = load_demo(conn, scale=scale, seed=seed, force=force, progress=report)
        except DemoRefused as exc:  # said with the command's own flags, not the Python arguments
            held = getattr(exc, "held", None)
            if held is None:
                raise BadInput(str(exc)) from None
            raise BadInput(f"{db} holds real data ({held}); loading the demo would mix invented listings with them. "
                           "Use another mirror (--db PATH), or pass --force to add the demo beside them "
                           "(`edt demo --clear` removes only the demo rows later).") from None
        progress.update(task, description=f"demo {scale}: columnar index", refresh=True)
        _refresh_index(mirror)
    click.echo(f"Demo data ({scale}, seed {seed}) in {db}: " + ", ".join(f"{n:,} {k}" for k, n in counts.items()))


def _timeout_option(func):
    return click.option(
        "--timeout", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
        help="Give up on a host that stays unreachable (refused, no DNS, timeouts) this long, with one line "
             "(env EDT_TIMEOUT; default 60). Retries are printed as they happen.",
    )(func)  # fmt: skip


def _bound(timeout: float | None) -> float:
    from .remote import network_bound

    try:
        return network_bound(timeout)
    except ValueError as exc:
        raise BadInput(str(exc)) from None


def _say_retry(line: str) -> None:
    click.echo(f"edt: {line}", err=True)


class Failed(click.ClickException):
    """A run that could not finish (exit status 1), in one line."""

    exit_code = 1

    def show(self, file: Any = None) -> None:
        click.echo(f"edt: {self.format_message()}", err=True)


@cli.command(name="sync")
@_db_option
@click.option("--base-url", default=None, help="The remote API (env EDT_BASE_URL; default https://catchdoms.com).")
@click.option("--api-key", default=None, help="Your API key (env EDT_API_KEY or the config file; never stored or printed).")
@click.option("--plan", default=None, help=f"Your subscription ({', '.join(PLANS)}); default EDT_PLAN, else pro.")
@click.option("--jobs", default=None, metavar="LIST", help="Comma-separated jobs: listings,bids,regfree,pending (default all).")
@click.option("--full", is_flag=True, help="A full listings pass (finds listings that left their source) even if recent.")
@click.option("--dry-run", is_flag=True, help="Print what would run (rows, requests, time per job) from one count each.")
@click.option("--rate", type=click.IntRange(1, 100_000), default=None, metavar="N",
              help="Requests per minute to pace at (default: the plan's limit; enterprise 300).")  # fmt: skip
@_timeout_option
def sync_command(db: str, base_url: str | None, api_key: str | None, plan: str | None, jobs: str | None, full: bool,
                 dry_run: bool, rate: int | None, timeout: float | None) -> None:  # fmt: skip
    """Mirror the remote API into the database, within the plan's rate limit, resumable."""
    import asyncio

    from .config import load_settings
    from .remote import RemoteClient
    from .sync import JOBS, SyncBusy, SyncStopped, plan_sync, sync

    chosen = [j.strip() for j in jobs.split(",") if j.strip()] if jobs else None
    unknown = [j for j in chosen or [] if j not in JOBS]
    if unknown:
        raise BadInput(f"--jobs: unknown job {', '.join(unknown)}; choose from {', '.join(JOBS)}")
    plan_given = _check_plan(plan) or _check_plan(os.environ.get("EDT_PLAN"))
    try:
        settings = load_settings(db=db, base_url=base_url, plan=plan_given or "pro", api_key=api_key)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if not dry_run:
        _check_writable(db, "sync")
    _OPENED.append(db)
    if not settings.api_key:
        raise BadInput("no API key: set EDT_API_KEY (or api_key in the config file, or --api-key); "
                       "without one, `edt demo` fills the mirror with demo data")  # fmt: skip
    if not plan_given:
        click.echo(f"Assuming the {settings.plan} plan (set EDT_PLAN or --plan to use more of yours).", err=True)
    per_minute = rate or RATE_LIMITS.get(settings.plan) or RATE_LIMITS["business"]
    client = RemoteClient(settings.base_url, settings.api_key, plan=settings.plan, per_minute=per_minute,
                          give_up_after=_bound(timeout), say=_say_retry)  # fmt: skip

    async def run() -> list:
        async with client:
            if dry_run:
                return await plan_sync(db, client, plan=settings.plan, jobs=chosen, full=full)
            with _SyncProgress() as shown:
                return await sync(db, client, plan=settings.plan, jobs=chosen, full=full, progress=shown.update)

    click.echo(f"Remote {settings.base_url}, {settings.plan} plan, {per_minute} requests/minute, into {db}")
    try:
        results = asyncio.run(run())
    except SyncBusy as exc:
        raise Failed(str(exc)) from None
    except SyncStopped as exc:
        _refresh_index(db)
        if exc.unreachable:
            raise Failed(f"sync stopped: {exc}; pages already written are kept, `edt sync` resumes") from None
        for report in exc.reports:
            click.echo(report.line())
        raise Failed(f"sync stopped: {exc}. Pages already written are kept; run `edt sync` again to resume.") from None
    if not dry_run:
        _refresh_index(db)
    for result in results:
        click.echo(result.line())
    if not dry_run and any(r.status not in ("ok", "skipped") for r in results):
        raise Failed("some jobs did not finish (see above)")


class _SyncProgress:
    """A rich progress bar per job: rows, requests and the time left at the paced rate."""

    def __enter__(self) -> "_SyncProgress":
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[detail]}"), TimeElapsedColumn(),
            transient=False,
        )  # fmt: skip
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
            self.progress.update(self.tasks[job], total=max(report.requests, 1), completed=max(report.requests, 1),
                                 detail=f"{report.status}: {report.seen:,} rows, {report.requests:,} requests")  # fmt: skip


def _filters_help() -> str:
    """The filters, from the one definition in params.py (what `edt query --help` lists)."""
    from .params import DOMAIN_PARAMS, PENDING_PARAMS

    def block(table) -> str:
        return "\n".join(f"  {p.name:<24} {p.caption}{' (a comma list; repeats merge)' if takes_several(p) else ''}"
                          for p in table.values())  # fmt: skip

    from .params import takes_several

    return ("\b\nFilters (KEY=VALUE, the /api/domains parameters; a list filter given twice merges, any other "
            "is refused):\n" + block(DOMAIN_PARAMS) + "\n\n\b\nWith --pending (the /api/pending-delete "
            "parameters):\n" + block(PENDING_PARAMS))  # fmt: skip


@cli.command(epilog=_filters_help())
@_db_option
@_plan_option
@click.argument("params", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--pending", is_flag=True, help="Query the pending-delete inventory (/api/pending-delete) instead.")
def query(db: str, plan: str | None, params: tuple[str, ...], fmt: str, pending: bool) -> None:
    """One page of listings with /api/domains semantics: edt query tld=.fr tf_min=20 sort=-trust_flow"""
    plan = _check_plan(plan)
    mirror = _open(db)
    try:
        filters = _pairs(params)
        if pending:
            envelope = mirror.search_pending_delete(filters, plan=plan)
        else:
            envelope = mirror.search_domains(filters, plan=plan)
        hidden = _past_drops_hidden(mirror, filters, envelope, plan) if pending else 0
    except ApiError as exc:
        raise _api_error(exc) from None
    if fmt == "json":
        click.echo(json.dumps(envelope, ensure_ascii=False, indent=2))
    elif fmt == "csv":
        _write_csv(envelope["data"], list(PENDING_OUTPUT if pending else LISTING_OUTPUT), sys.stdout)
    else:
        _print_table(envelope, pending)
    if hidden:
        click.echo(f"edt: {hidden:,} more rows match with include_past=1: their drop dates have passed (an ingested "
                   "drop list's rows, for one); add include_past=1 to see them", err=True)  # fmt: skip


def _past_drops_hidden(mirror: Mirror, filters: dict[str, Any], envelope: dict[str, Any], plan: str | None) -> int:
    """Pending-delete rows the default view hides because their drop date passed (0 when none,
    or when the query already asked for past drops or a week of its own)."""
    if envelope["meta"]["total"] or any(filters.get(k) for k in ("include_past", "week_end", "page")):
        return 0
    wider = mirror.search_pending_delete({**filters, "include_past": "1", "per_page": "1"}, plan=plan)
    return int(wider["meta"]["total"])


def _listing_cells(row: dict[str, Any]) -> list[str]:
    price = row.get("effective_price")
    price_text = "" if price is None else f"{price:,.0f} {row.get('currency') or ''}".strip()
    flows = "" if row.get("trust_flow") is None else f"{row['trust_flow']}/{row['citation_flow']}"
    return [
        str(row["id"]),
        row["name"],
        row["source"],
        price_text,
        "" if row.get("bids_count") is None else str(row["bids_count"]),
        (row.get("auction_end_date") or "")[5:16].replace("T", " "),
        "" if row.get("score") is None else str(row["score"]),
        flows,
        "" if row.get("age") is None else str(row["age"]),
    ]


# Columns the CLI table drops first when the terminal is too narrow (last in the list first);
# id and name are what people copy and are never dropped.
_LISTING_PRIORITY = ["id", "name", "price", "score", "TF/CF", "age", "ends UTC", "source", "bids"]
_PENDING_PRIORITY = ["id", "domain", "drops", "status", "pipeline", "week"]


def _print_table(envelope: dict[str, Any], pending: bool) -> None:
    """The page as a table that fits the terminal: no cell is cut; when the columns do not fit,
    the least needed are left out (in `_LISTING_PRIORITY` order) and a line says which."""
    from rich.console import Console
    from rich.table import Table

    if pending:
        headers = ["id", "domain", "status", "drops", "pipeline", "week"]
        rows = [[str(r["id"]), r["domain"], r["whois_status"], r["estimated_drop_date"] or "", r["source"],
                 r["week_end"] or ""] for r in envelope["data"]]  # fmt: skip
        priority = _PENDING_PRIORITY
    else:
        headers = ["id", "name", "source", "price", "bids", "ends UTC", "score", "TF/CF", "age"]
        rows = [_listing_cells(r) for r in envelope["data"]]
        priority = _LISTING_PRIORITY
    console = Console()
    shown = list(headers)

    def build() -> Table:
        table = Table(show_lines=False, pad_edge=False)
        for header in shown:
            table.add_column(header, no_wrap=True)
        for row in rows:
            table.add_row(*(cell for header, cell in zip(headers, row) if header in shown))
        return table

    def width(table: Table) -> int:  # the width it needs, uncut
        return console.measure(table, options=console.options.update_width(100_000)).maximum

    table = build()
    droppable = [h for h in reversed(priority) if h not in ("id", "name", "domain")]
    while width(table) > console.width and droppable:
        shown.remove(droppable.pop(0))
        table = build()
    if width(table) > console.width:  # even id and name do not fit: let names wrap
        table = build()
        for column in table.columns:
            column.no_wrap = False
            column.overflow = "fold"
    console.print(table)
    meta = envelope["meta"]
    console.print(_page_line(meta), highlight=False)
    hidden = [h for h in headers if h not in shown]
    if hidden:
        console.print(f"Hidden to fit {console.width} columns: {', '.join(hidden)} (a wider terminal, or --format "
                      "csv/json for every field)", highlight=False)  # fmt: skip


def _page_line(meta: dict[str, Any]) -> str:
    """`page 2 of 96 · rows 51-100 of 4,786`, or what to ask for when the page is past the last."""
    page, last, total = meta.get("current_page"), meta.get("last_page"), meta["total"]
    if not meta.get("from"):
        if total and page and last and page > last:
            return f"page {page} is past the last page ({last}) of {total:,} rows: ask for page=1 to page={last}"
        return f"no rows match{f' (page {page})' if page and page > 1 else ''}"
    return f"page {page} of {last} · rows {meta['from']}-{meta['to']} of {total:,}"


@cli.command()
@_db_option
@_plan_option
@click.argument("params", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["csv", "jsonl", "parquet"]), required=True)
@click.option("--out", required=True,
              help="The file to write, replaced whole and atomically; - writes to standard output. Only regular "
                   "files: a device, FIFO or folder is refused; a symbolic link is followed (its target replaced).")
def export(db: str, plan: str | None, params: tuple[str, ...], fmt: str, out: str) -> None:
    """Every matching listing (the /api/domains filters, no paging) to CSV, JSON Lines or Parquet."""
    from .formats import OutputRefused, output_target, replace_atomically

    plan = _check_plan(plan)
    mirror = _open(db)
    try:
        target, note = output_target(out)
    except OutputRefused as exc:
        raise BadInput(str(exc)) from None
    if target is None and fmt == "parquet" and sys.stdout.isatty():
        raise BadInput("--out -: Parquet is binary; redirect standard output to a file or pipe (edt export ... > f.parquet)")
    try:
        rows = mirror.export_rows(_pairs(params), plan=plan)
    except ApiError as exc:
        raise _api_error(exc) from None
    if note:
        click.echo(f"edt: {note}", err=True)

    def write(path: Path | None) -> int:
        if fmt == "parquet":
            return _write_parquet(rows, _export_columns(), str(path) if path else sys.stdout.buffer)
        if path is None:
            stream = sys.stdout
            return _write_csv(rows, list(_export_columns()), stream) if fmt == "csv" else _write_jsonl(rows, stream)
        with path.open("w", newline="", encoding="utf-8") as fh:
            return _write_csv(rows, list(_export_columns()), fh) if fmt == "csv" else _write_jsonl(rows, fh)

    if target is None:
        count = write(None)
        sys.stdout.flush()
        click.echo(f"Wrote {count:,} listings to standard output", err=True)
        return
    try:
        count = replace_atomically(target, write)
    except OutputRefused as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"Wrote {count:,} listings to {out}")


def _export_columns() -> dict[str, str]:
    return {k: v for k, v in LISTING_OUTPUT.items() if k != "historical_traffic"}


@cli.command()
@_db_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(db: str, as_json: bool) -> None:
    """Row counts per dataset, the last sync of each job and its freshness (contract section 8)."""
    info = _open(db).status()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"Mirror: {info['path']}")
    for name, counts in info["datasets"].items():
        click.echo(f"  {name:<16}" + "  ".join(f"{k} {v:,}" for k, v in counts.items()))
    if info["origins"]:
        click.echo("  origin          " + "  ".join(f"{k} {v:,}" for k, v in sorted(info["origins"].items())))
    if info["last_sync"]:
        for job, run in info["last_sync"].items():
            click.echo(f"  sync {job:<11}{run['status']} at {run['finished_at'] or run['started_at']} ({run['rows_seen']} rows)")
    else:
        click.echo("  sync            never (run `edt sync` with an API key)")
    click.echo("Freshness (the service refreshes each dataset on this schedule):")
    for job in info["freshness"]:
        if job["last_ok"] is None:
            state = "never synced"
        else:
            state = f"{'fresh' if job['fresh'] else 'STALE'}: last synced {job['age_hours']} h ago ({job['last_ok']})"
        click.echo(f"  {job['job']:<10}{job['schedule']:<20}{state}")


@cli.command(name="schedule")
@_db_option
@click.option("--next", "show_next", is_flag=True, help="Print the next run of each job and exit.")
@click.option("--crontab", "as_crontab", is_flag=True, help="Print equivalent crontab lines and exit.")
@click.option("--systemd", "as_systemd", is_flag=True, help="Print a systemd user unit that runs this and exit.")
@click.option("--now", "run_now", is_flag=True, help="Run every job once at start, then keep the schedule.")
@click.option("--once", metavar="JOB", default=None, help="Run one job (sync, then alerts) and exit: what cron calls.")
def schedule_command(db: str, show_next: bool, as_crontab: bool, as_systemd: bool, run_now: bool,
                     once: str | None) -> None:  # fmt: skip
    """Run the sync jobs on the service's schedules (contract section 8), then alerts, until stopped."""
    from datetime import datetime

    from .config import config_file, load_settings
    from .schedule import crontab, next_runs, schedules, serve, systemd_units

    try:
        config = config_file()
        crons = schedules(config)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if as_crontab:
        click.echo(crontab(crons, db=db), nl=False)
        return
    if as_systemd:
        click.echo(systemd_units(db=db), nl=False)
        return
    if once:
        from .sync import JOBS

        if once not in JOBS:
            raise BadInput(f"--once: unknown job {once}; choose from {', '.join(JOBS)}")
    timezone = config.get("schedule", {}).get("timezone")
    if show_next:
        now = datetime.now().astimezone()
        for job, when in next_runs(crons, now, timezone).items():
            click.echo(f"{job:<10}{crons[job]:<16}next {when.isoformat(timespec='minutes')}")
        return
    plan = _check_plan(os.environ.get("EDT_PLAN")) or "pro"
    settings = load_settings(db=db, plan=plan)
    if not settings.api_key:
        raise BadInput("no API key: set EDT_API_KEY (or api_key in the config file) for the scheduled syncs")
    if once:
        from .schedule import run_job

        reports = run_job(once, settings, say=lambda line: click.echo(line))
        if not reports or any(r.status not in ("ok", "skipped") for r in reports):
            raise Failed(f"{once} did not finish (see above)")
        return
    serve(settings, run_now=run_now, say=lambda line: click.echo(line))


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
    from .watchlist import SearchExists, save_search, saved_searches

    mirror = _open(db, must_exist=False, writes="watch add")
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
    from .watchlist import saved_searches

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
    from .watchlist import delete_search

    if not delete_search(_open(db, writes="watch rm"), name):
        raise BadInput(f"no saved search named {name!r} (see `edt watch list`)")
    click.echo(f"Removed {name!r}")


@watch.command(name="show")
@_db_option
@click.argument("name")
@click.option("--all", "show_all", is_flag=True, help="Every listing the search matches now, not only the new ones.")
def watch_show(db: str, name: str, show_all: bool) -> None:
    """The search's new matches since it was last shown (then marks them shown); --all: every current match."""
    from .watchlist import open_search, saved_searches

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


@cli.command(name="enrich")
@_db_option
@click.argument("params", nargs=-1)
@click.option("--wayback/--no-wayback", default=True, show_default=True,
              help="Wayback Machine captures: wayback_snapshots, wayback_first_date, wayback_last_date, age.")
@click.option("--rdap/--no-rdap", default=True, show_default=True,
              help="Registry RDAP: whois_status, whois_registrar, whois_expires_at, ... (a 404 marks available).")
@click.option("--language", is_flag=True,
              help="Language of the latest archived home page, detected offline (the `language` extra: py3langid).")
@click.option("--limit", type=click.IntRange(min=0), default=None,
              help="At most N rows this run; the next run resumes after them.")
@click.option("--restart", is_flag=True, help="Start again from the first row instead of resuming.")
@click.option("--cdx-output", type=click.Choice(["json", "text"]), default="json", show_default=True,
              help="The CDX API's answer form.")
@_timeout_option
def enrich_command(db: str, params: tuple[str, ...], wayback: bool, rdap: bool, language: bool, limit: int | None,
                   restart: bool, cdx_output: str, timeout: float | None) -> None:  # fmt: skip
    """Enrich the listings that match KEY=VALUE filters (the /api/domains parameters, e.g.
    tld=.com score_min=20) from the Wayback Machine and RDAP, and with --language the
    archived home page's language, politely: paced per host, retried after 429/503 as
    Retry-After says, cached (a re-run refetches nothing fresh), resumable. The quality
    score is recomputed."""
    from .enrich.language import LanguageUnavailable
    from .enrich.run import enrich
    from .remote import HostUnreachable

    if not (wayback or rdap or language):
        raise BadInput("nothing to do: --no-wayback and --no-rdap without --language")
    filters = _pairs(params)
    mirror = _open(db, writes="enrich")

    def progress(report) -> None:
        click.echo(f"\r{report.processed}/{report.selected} rows", nl=False, err=True)

    try:
        report = enrich(mirror, wayback=wayback, rdap=rdap, language=language, limit=limit, params=filters,
                        resume=not restart, cdx_output=cdx_output, on_batch=progress if sys.stderr.isatty() else None,
                        give_up_after=_bound(timeout), say=_say_retry)  # fmt: skip
    except HostUnreachable as exc:
        raise Failed(f"enrich stopped: {exc}; rows already written are kept, the next run resumes") from None
    except LanguageUnavailable as exc:  # the optional extra is not installed
        raise BadInput(f"--language: {exc}") from None
    except ApiError as exc:  # a malformed filter: exit status 2 naming the field
        raise _api_error(exc) from None
    if sys.stderr.isatty():
        click.echo("", err=True)
    if report.updated:
        _refresh_index(mirror)
    for line in report.lines():
        click.echo(line)
    if report.errors and not report.updated:
        sys.exit(1)


@cli.command(name="ingest")
@_db_option
@click.argument("feed", type=click.Choice(["godaddy", "bardate", "droplist", "zonediff"], case_sensitive=False))
@click.option("--file", "file", type=click.Path(dir_okay=False), default=None, help="The feed file to load.")
@click.option("--url", "url", default=None, help="Download the feed from this URL first (instead of --file).")
@click.option("--previous", type=click.Path(exists=True, dir_okay=False), default=None,
              help="zonediff: the older zone file or name list (--file is the newer).")
@click.option("--zones", default=None, metavar="FOLDER|GLOB",
              help="zonediff: replay daily snapshots (a folder or a quoted glob, .gz read as is, days may be "
                   "missing; each file's day from its name): every name that leaves the zone gets a drop window.")
@click.option("--tld", default=None, metavar="TLD", help="zonediff: the zone's TLD (default: from the files).")
@click.option("--status", default=None, metavar="STATUS",
              help="droplist/zonediff: the names' WHOIS status (pendingDelete, serverHold, ...), which picks the "
                   "lifecycle prediction (defaults: droplist pendingDelete, zonediff serverHold).")
@click.option("--date", "day", default=None, metavar="YYYY-MM-DD",
              help="droplist: the day the list covers; zonediff: the newer zone's day (default: from the file name).")
@click.option("--check-rdap", is_flag=True,
              help="zonediff: ask each gone name's registry over RDAP; a 404 (not registered) makes it a regfree "
                   "listing, the others stay pending-delete candidates.")
@click.option("--observed-at", default=None, metavar="TIMESTAMP", help="When the rows were seen (default now, UTC).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.option("--show", type=click.IntRange(0), default=20, show_default=True, metavar="N",
              help="Print the first N skipped rows (file:line: reason) on stderr.")
def ingest_command(db: str, feed: str, file: str | None, url: str | None, previous: str | None, zones: str | None,
                   tld: str | None, status: str | None, day: str | None, check_rdap: bool, observed_at: str | None,
                   as_json: bool, show: int) -> None:  # fmt: skip
    """Load a public feed file into the mirror: all of its good rows, or nothing.

    \b
    FEED       godaddy   GoDaddy Auctions inventory (.json.zip / .csv.zip)
               bardate   Internetstiftelsen .se/.nu release list (JSON / TXT)
               droplist  registry deletion list (a name a line, or CSV with dates)
               zonediff  names gone between two zone files (--previous OLD --file NEW),
                         or a replay of daily snapshots (--zones 'zone/nu_domains_*.txt.gz')
    """
    from .ingest import IngestError, ingest_file, ingest_url

    feed = feed.lower()
    options: dict[str, Any] = {}
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
        raise BadInput("zonediff: pass --previous OLD (the older zone file) and the newer one as --file, or "
                       "--zones FOLDER|GLOB (a replay of daily snapshots)")
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
    mirror = _open(db, must_exist=False, writes="ingest")
    checker = None
    try:
        with contextlib.ExitStack() as stack:
            if check_rdap:
                from .enrich.available import rdap_availability

                checker = options["is_available"] = stack.enter_context(rdap_availability(mirror, say=_say_retry))
            if url:
                report = ingest_url(mirror, feed, source, observed_at=observed_at, **options)
            else:
                report = ingest_file(mirror, feed, source, observed_at=observed_at, **options)
    except IngestError as exc:
        raise BadInput(str(exc)) from None
    except (ValueError, TypeError) as exc:  # a bad --status, --date or --observed-at
        raise BadInput(str(exc)) from None
    except OSError as exc:  # a download that failed
        raise Failed(f"{source}: {exc}") from None
    _refresh_index(mirror)
    if as_json:
        click.echo(json.dumps(report.to_dict(), indent=2))
    else:
        click.echo(report.summary())
    if checker is not None:
        click.echo(checker.summary(), err=as_json)
        for problem in checker.problems[:show]:
            click.echo(f"rdap: {problem}", err=True)
    for problem in report.skipped[:show]:
        click.echo(f"skipped {problem}", err=True)
    if len(report.skipped) > show:
        click.echo(f"... and {len(report.skipped) - show:,} more skipped rows (--show N, or --json for all)", err=True)


@cli.command(name="backtest")
@click.option("--zones", required=True, metavar="FOLDER|GLOB",
              help="Daily zone snapshots to replay (a folder or a quoted glob; .gz read as is; days may be missing).")
@click.option("--official", "official", multiple=True, required=True, metavar="FEED=GLOB",
              help="The registry's own days: bardate=GLOB (release lists: JSON, TXT or CSV) or droplist=GLOB. "
                   "Repeatable.")
@click.option("--tld", default=None, metavar="TLD", help="Report this TLD only (e.g. .nu).")
@click.option("--json", "as_json", is_flag=True,
              help="Print a list of objects: tld, official, pairs, one_day_pairs, exact_share, within_1_share, "
                   "window_share, mean_abs_error, outliers.")
@click.option("--db", "db", default=None, metavar="NEW_FILE",
              help="Also keep the backtest's mirror (the replayed windows and the official days) in this new file, "
                   "written only when every file was read. Never your mirror: the replay runs in a scratch one.")
def backtest_command(zones: str, official: tuple[str, ...], tld: str | None, as_json: bool, db: str | None) -> None:
    """Measure predicted drop windows against the registry's official days.

    Replays the snapshots into a scratch mirror (nothing is written to yours), ingests the
    official lists, pairs them by name and prints per TLD: official names, pairs, pairs whose
    snapshots are one day apart, the share of those predicted exactly and within one day, the
    share of all pairs whose official day is inside the window, the mean absolute error, and
    the outliers with their reason. A bad file or row exits 2 naming it (same as
    `python -m toolkit.backtest --zones ...`)."""
    from .backtest import run_zone_backtest, window_report_lines
    from .ingest import IngestError

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


def _check_port(host: str, port: int, option: str = "--port") -> None:
    """One line and exit status 2 when the address cannot be bound (in use, or not this machine's)."""
    import errno
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise BadInput(f"--host {host}: not an address of this machine ({exc.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn and Streamlit bind
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise BadInput(f"{option} {port}: already in use on {host} (another `edt serve` or `edt app`?); "
                               f"stop it or choose another port with {option}") from None  # fmt: skip
            raise BadInput(f"--host {host} {option} {port}: cannot listen there ({exc.strerror})") from None


@cli.command(name="app")
@_db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; the default lets only this machine connect (0.0.0.0: the network).")  # fmt: skip
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True)
def app_command(db: str, host: str, port: int) -> None:
    """Open the investors' app (Streamlit) on the mirror: explore, charts, drop calendar, watchlist, sync."""
    import subprocess

    from .server import is_loopback

    _check_port(host, port)
    script = Path(__file__).resolve().parent / "ui" / "run.py"
    env = {**os.environ, "EDT_DB": db}
    shown = f"[{host}]" if ":" in host else host
    click.echo(f"edt app: {db} at http://{shown}:{port}/", err=True)
    if is_loopback(host):
        click.echo(f"Bound to {host}: only this machine can connect (use --host 0.0.0.0 to share on the network).",
                   err=True)  # fmt: skip
    else:
        click.echo(f"WARNING: bound to {host}: other machines can connect, with no key or password, to the app "
                   "and its sync button; plain HTTP. Use it on a trusted network only.", err=True)  # fmt: skip
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.address", host,
               "--server.port", str(port), "--browser.gatherUsageStats", "false"]  # fmt: skip
    raise SystemExit(subprocess.call(command, env=env))


@cli.command()
@_db_option
@click.option("--repeat", type=int, default=5, show_default=True, help="Timed runs per engine and query, after a warm-up.")
@click.option("--markdown", is_flag=True, help="Print the tables as Markdown (for the README).")
@click.option("--only", help="Run only the queries whose name contains this text.")
@click.option("--explain", type=int, default=0, metavar="N", help="Show the query plans of the N slowest queries.")
@click.option("--strict", is_flag=True, help="Exit 1 when a speed target is missed.")
@click.option("--random", "random_", type=click.IntRange(min=1), metavar="N",
              help="N random /api/domains requests drawn from the parameter table instead of the fixed suite.")
@click.option("--seed", type=int, default=0, show_default=True, help="The random requests' seed.")
@click.option("--engine", type=click.Choice(["columnar", "sqlite"]), default="columnar", show_default=True,
              help="The query layer's engine.")  # fmt: skip
def bench(db: str, repeat: int, markdown: bool, only: str | None, explain: int, strict: bool,
          random_: int | None, seed: int, engine: str) -> None:  # fmt: skip
    """Benchmark the query layer against DuckDB and pandas on the same rows (a full demo mirror)."""
    from .bench import main as bench_main

    argv = ["--db", db, "--repeat", str(repeat), "--explain", str(explain), "--engine", engine]
    argv += ["--markdown"] * markdown + ["--strict"] * strict + (["--only", only] if only else [])
    argv += ["--random", str(random_), "--seed", str(seed)] if random_ else []
    raise SystemExit(bench_main(argv))


@cli.command()
@_db_option
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; the default lets only this machine connect (0.0.0.0: the network).")  # fmt: skip
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--key", "keys", multiple=True, metavar="KEY=PLAN",
              help="An API key and its plan (repeatable), e.g. --key team-key=pro. Visible in `ps`: prefer --keys-file.")  # fmt: skip
@click.option("--keys-file", type=click.Path(dir_okay=False), default=None,
              help="KEY=PLAN lines or JSON {KEY: PLAN}; a key may be written sha256:<hex digest> so the file never holds it.")  # fmt: skip
@click.option("--rate", "rates", multiple=True, metavar="PLAN=N",
              help="Override a plan's requests per minute (repeatable), e.g. --rate pro=600 for tests.")  # fmt: skip
def serve(db: str, host: str, port: int, keys: tuple[str, ...], keys_file: str | None, rates: tuple[str, ...]) -> None:
    """Serve the mirror as the REST API (/api/domains, ...) and /openapi.json on localhost."""
    from .ratelimit import KeyStore, parse_rates
    from .server import serve as run_server

    if not Path(db).is_file():
        raise BadInput(f"{db}: no mirror there; run `edt demo` (demo data) or `edt sync` first, or pass --db")
    try:
        store = KeyStore.from_pairs(keys)
        if keys_file:
            if not Path(keys_file).is_file():
                raise ValueError(f"--keys-file: {keys_file} does not exist")
            store.load_file(keys_file)
        limits = parse_rates(rates)
    except (ValueError, OSError) as exc:
        raise BadInput(str(exc)) from None
    try:
        Mirror(db, readonly=True).close()
    except Exception as exc:  # not a mirror, or an older schema
        raise BadInput(f"{db}: cannot serve ({exc})") from None
    _check_port(host, port)
    run_server(db, host=host, port=port, keys=store, rates=limits, echo=lambda line: click.echo(line, err=True))


@cli.command(name="mcp")
@_db_option
@_plan_option
def mcp_command(db: str, plan: str | None) -> None:
    """Serve the mirror to AI assistants as an MCP server on standard input and output."""
    import importlib.util
    import logging

    plan = _check_plan(plan)
    if not Path(db).is_file():
        raise BadInput(f"{db}: no mirror there; run `edt demo` (demo data) or `edt sync` first, or pass --db")
    if importlib.util.find_spec("mcp") is None:
        raise Failed("the MCP server needs the mcp package: pip install 'expired-domains-toolkit[mcp]'")
    try:
        from .mcp_server import run_stdio
    except ImportError as exc:  # an mcp this toolkit cannot use (1.x)
        raise Failed(f"the MCP server needs mcp>=2.3 ({exc}): pip install 'expired-domains-toolkit[mcp]'") from None
    try:
        mirror = Mirror(db, readonly=True, engine=os.environ.get("EDT_ENGINE") or "background")
    except Exception as exc:  # not a mirror, or an older schema
        raise BadInput(f"{db}: cannot serve ({exc})") from None
    # Standard output carries the protocol only: every log line goes to standard error.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="edt mcp: %(levelname)s %(name)s: %(message)s")
    run_stdio(mirror, plan)


def main() -> None:
    try:
        cli.main(prog_name="edt", standalone_mode=True)
    except SystemExit:
        raise
    except Exception as exc:  # noqa: BLE001 - the one place that turns a failure into exit 1
        if os.environ.get("EDT_DEBUG"):
            raise
        click.echo(f"edt: {_failure_line(exc)}", err=True)
        raise SystemExit(1) from None


def _failure_line(exc: Exception) -> str:
    """One line for an unexpected failure; a lock that outlasted the busy timeout names who
    holds the mirror and the fix."""
    import sqlite3

    from .store.access import locked_message, read_only_place

    text = str(exc)
    if isinstance(exc, sqlite3.OperationalError) and _OPENED:
        db = _OPENED[-1]
        if "locked" in text or "busy" in text:
            return locked_message(db)
        if "readonly database" in text:
            why = read_only_place(db) or "read-only"
            return f"{db} is {why}: this command writes to the mirror; copy it to a writable place (--db PATH)"
    return text
