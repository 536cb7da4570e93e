"""Commands that read the mirror: `edt query` (one page, as a table, JSON or CSV), `edt export`
(every matching row, to a file or standard output) and `edt status`."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from .shell import BadInput, check_plan, db_option, open_mirror, key_value_pairs, plan_option, cli

if TYPE_CHECKING:
    from ..query import Mirror


def _filters_help() -> str:
    """The filters, from the one definition in params.py (what `edt query --help` lists)."""
    from ..query.params import DOMAIN_PARAMS, PENDING_PARAMS

    def block(table) -> str:
        return "\n".join(
            f"  {p.name:<24} {p.caption}{' (a comma list; repeats merge)' if takes_several(p) else ''}"
            for p in table.values()
        )

    from ..query.params import takes_several

    return (
        "\b\nFilters (KEY=VALUE, the /api/domains parameters; a list filter given twice merges, any other "
        "is refused):\n" + block(DOMAIN_PARAMS) + "\n\n\b\nWith --pending (the /api/pending-delete "
        "parameters):\n" + block(PENDING_PARAMS)
    )


class _FiltersListed(click.Command):
    """`edt query`: its help lists the filters, read from the parameter tables only when the help
    is shown (`edt --help` and every other command start without them)."""

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self.epilog = _filters_help()
        super().format_epilog(ctx, formatter)


@cli.command(cls=_FiltersListed)
@db_option
@plan_option
@click.argument("params", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv"]), default="table", show_default=True)
@click.option("--pending", is_flag=True, help="Query the pending-delete inventory (/api/pending-delete) instead.")
def query(db: str, plan: str | None, params: tuple[str, ...], fmt: str, pending: bool) -> None:
    """One page of listings with /api/domains semantics: edt query tld=.fr tf_min=20 sort=-trust_flow"""
    plan = check_plan(plan)
    mirror = open_mirror(db)
    filters = key_value_pairs(params)
    if pending:
        envelope = mirror.search_pending_delete(filters, plan=plan)
    else:
        envelope = mirror.search_domains(filters, plan=plan)
    hidden = _past_drops_hidden(mirror, filters, envelope, plan) if pending else 0
    why = [] if envelope["meta"]["total"] else mirror.explain_empty(filters, pending=pending)
    if fmt == "json":
        click.echo(json.dumps(envelope, ensure_ascii=False, indent=2))
    elif fmt == "csv":
        from ..formats import write_csv
        from ..query.records import PENDING_OUTPUT

        write_csv(envelope["data"], list(PENDING_OUTPUT if pending else _listing_columns(filters)), sys.stdout)
    else:
        _print_table(envelope, pending, valued=_asks_for_value(filters))
    if hidden:
        click.echo(
            f"edt: {hidden:,} more rows match with include_past=1: their drop dates have passed (an ingested "
            "drop list's rows, for one); add include_past=1 to see them",
            err=True,
        )
    _say_why_empty(why)


def _say_why_empty(reasons: list[str]) -> None:
    """Why nothing matched (`Mirror.explain_empty`), one line each on standard error."""
    for reason in reasons:
        click.echo(f"edt: nothing matches: {reason}", err=True)


def _result_rows(
    mirror: Mirror, filters: dict[str, Any], plan: str | None
) -> tuple[Iterator[dict[str, Any]], dict[str, str]]:
    """The results of the listings `filters` match (`Mirror.results_df`), as records, and their columns."""
    from ..store.schema import RESULT_COLUMNS, RESULT_MOMENTS

    frame = mirror.results_df(filters, plan)
    kinds = {int: "int", float: "num", str: "str"}
    columns = {
        name: "bool" if name == "sold" else "datetime" if name in RESULT_MOMENTS else kinds[kind]
        for name, kind in RESULT_COLUMNS.items()
    }
    records = json.loads(frame.to_json(orient="records"))  # NaN and NA as null
    return iter(records), columns


def _listing_columns(filters: dict[str, Any]) -> dict[str, str]:
    """A CSV or Parquet file's columns for these (already checked) filters: `historical_traffic`
    only when include_historical_traffic=1 asked for it (the records carry it only then)."""
    from ..query.params import DOMAIN_PARAMS, parse_params
    from ..query.records import listing_columns

    asked = {k: v for k, v in filters.items() if k == "include_historical_traffic"}
    return listing_columns(bool(parse_params(DOMAIN_PARAMS, asked, strict=True).get("include_historical_traffic")))


def _past_drops_hidden(mirror: Mirror, filters: dict[str, Any], envelope: dict[str, Any], plan: str | None) -> int:
    """Pending-delete rows the default view hides because their drop date passed (0 when none,
    or when the query already asked for past drops or a week of its own)."""
    if any(filters.get(k) for k in ("include_past", "week_end")):
        return 0
    wider = mirror.search_pending_delete({**filters, "include_past": "1", "per_page": "1", "page": "1"}, plan=plan)
    return int(wider["meta"]["total"]) - int(envelope["meta"]["total"])


_VALUE_PARAMS = ("value_min", "value_max", "deal_min")
_VALUE_SORTS = ("value_mid", "deal")


def _asks_for_value(filters: dict[str, Any]) -> bool:
    """The request filters or sorts on the price range: its table shows the range and the deal."""
    return any(filters.get(p) for p in _VALUE_PARAMS) or str(filters.get("sort", "")).lstrip("-") in _VALUE_SORTS


def _value_cells(row: dict[str, Any]) -> list[str]:
    """The 80% range in EUR and how far under it the price is (`x2.4`)."""
    from ..store.schema import deal_ratio

    low, high, ratio = row.get("value_low"), row.get("value_high"), deal_ratio(row)
    return ["" if low is None or high is None else f"{low:,.0f}-{high:,.0f}", "" if ratio is None else f"x{ratio:,.1f}"]


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


def _print_table(envelope: dict[str, Any], pending: bool, valued: bool = False) -> None:
    """The page as a table that fits the terminal: no cell is cut; when the columns do not fit,
    the least needed are left out (in `_LISTING_PRIORITY` order) and a line says which."""
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table

    if pending:
        headers = ["id", "domain", "status", "drops", "pipeline", "week"]
        rows = [
            [
                str(r["id"]),
                r["domain"],
                r["whois_status"],
                r["estimated_drop_date"] or "",
                r["source"],
                r["week_end"] or "",
            ]
            for r in envelope["data"]
        ]
        priority = _PENDING_PRIORITY
    else:
        headers = ["id", "name", "source", "price", "bids", "ends UTC", "score", "TF/CF", "age"]
        rows = [_listing_cells(r) for r in envelope["data"]]
        priority = _LISTING_PRIORITY
        if valued:  # asked for by a value filter or sort: the range and the deal beside the price
            headers[4:4] = ["value EUR", "deal"]
            rows = [[*cells[:4], *_value_cells(r), *cells[4:]] for cells, r in zip(rows, envelope["data"])]
            priority = [*priority[:3], "deal", "value EUR", *priority[3:]]
    console = Console()
    shown = list(headers)

    def build() -> Table:
        table = Table(show_lines=False, pad_edge=False)
        for header in shown:
            table.add_column(header, no_wrap=True)
        for row in rows:
            table.add_row(*(cell for header, cell in zip(headers, row) if header in shown))
        return table

    widest = {h: max([cell_len(h)] + [cell_len(row[i]) for row in rows]) for i, h in enumerate(headers)}

    def width() -> int:
        # What the table needs uncut, counted as rich draws it (measuring the table itself
        # costs more than the query): the cells, one space each side inside the edges
        # (pad_edge=False), and a rule at each edge and between columns.
        return sum(widest[h] for h in shown) + 2 * len(shown) - 2 + len(shown) + 1

    droppable = [h for h in reversed(priority) if h not in ("id", "name", "domain")]
    while width() > console.width and droppable:
        shown.remove(droppable.pop(0))
    table = build()
    if width() > console.width:  # even id and name do not fit: let names wrap
        table = build()
        for column in table.columns:
            column.no_wrap = False
            column.overflow = "fold"
    console.print(table)
    meta = envelope["meta"]
    console.print(_page_line(meta), highlight=False)
    hidden = [h for h in headers if h not in shown]
    if hidden:
        console.print(
            f"Hidden to fit {console.width} columns: {', '.join(hidden)} (a wider terminal, or --format "
            "csv/json for every field)",
            highlight=False,
        )


def _page_line(meta: dict[str, Any]) -> str:
    """`page 2 of 96 · rows 51-100 of 4,786`, or what to ask for when the page is past the last."""
    page, last, total = meta.get("current_page"), meta.get("last_page"), meta["total"]
    if not meta.get("from"):
        if total and page and last and page > last:
            return f"page {page} is past the last page ({last}) of {total:,} rows: ask for page=1 to page={last}"
        return f"no rows match{f' (page {page})' if page and page > 1 else ''}"
    return f"page {page} of {last} · rows {meta['from']}-{meta['to']} of {total:,}"


_EXPORT_FORMATS = ["csv", "jsonl", "parquet"]


def _export_format(out: str) -> str:
    """The format `--out`'s extension names, when --format is not given (one line, exit 2, when
    it names none: standard output has no extension)."""
    from ..formats import format_of

    choices = f"{', '.join(_EXPORT_FORMATS[:-1])} or {_EXPORT_FORMATS[-1]}"
    if out == "-":
        raise BadInput(f"--out - (standard output) has no extension to tell the format by: pass --format {choices}")
    fmt = format_of(out)
    if fmt is None:
        suffix = Path(out).suffix or "none"
        raise BadInput(
            f"--out {out}: cannot tell the format from its extension ({suffix}): pass --format "
            f"{choices}, or name the file .csv, .jsonl (.ndjson) or .parquet"
        )
    return fmt


@cli.command()
@db_option
@plan_option
@click.argument("params", nargs=-1)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(_EXPORT_FORMATS),
    default=None,
    help="csv, jsonl or parquet; default: from --out's extension (.csv, .jsonl or .ndjson, .parquet). "
    "Needed with --out -.",
)
@click.option(
    "--out",
    required=True,
    help="The file to write, replaced whole and atomically; - writes to standard output. Only regular "
    "files: a device, FIFO or folder is refused; a symbolic link is followed (its target replaced).",
)
@click.option(
    "--results",
    is_flag=True,
    help="The auction results of the matching listings instead (closed ones included): final price, bids, "
    "sold, where the name went next (docs/guides/results.md).",
)
def export(db: str, plan: str | None, params: tuple[str, ...], fmt: str | None, out: str, results: bool) -> None:
    """Every matching listing (the /api/domains filters, no paging) to CSV, JSON Lines or Parquet."""
    from ..formats import output_target, replace_atomically, write_csv, write_jsonl, write_parquet

    fmt = fmt or _export_format(out)
    plan = check_plan(plan)
    mirror = open_mirror(db)
    target, note = output_target(out, mirror=mirror.path)  # OutputRefused: bad input, said by the group
    if target is None and fmt == "parquet" and sys.stdout.isatty():
        raise BadInput(
            "--out -: Parquet is binary; redirect standard output to a file or pipe (edt export ... > f.parquet)"
        )
    filters = key_value_pairs(params)
    if results:
        rows, columns = _result_rows(mirror, filters, plan)
    else:
        rows = mirror.export_rows(filters, plan=plan)
        columns = _listing_columns(filters)
    if note:
        click.echo(f"edt: {note}", err=True)

    def write(path: Path | None) -> int:
        if fmt == "parquet":
            return write_parquet(rows, columns, str(path) if path else sys.stdout.buffer)
        if path is None:
            stream = sys.stdout
            return write_csv(rows, list(columns), stream) if fmt == "csv" else write_jsonl(rows, stream)
        with path.open("w", newline="", encoding="utf-8") as fh:
            return write_csv(rows, list(columns), fh) if fmt == "csv" else write_jsonl(rows, fh)

    noun = "auction results" if results else "listings"
    if target is None:
        count = write(None)
        sys.stdout.flush()
        click.echo(f"Wrote {count:,} {noun} to standard output", err=True)
    else:
        from .load import on_interrupt

        with on_interrupt(f"{out} was not written (left as it was)"):  # a kill too: no half file left
            count = replace_atomically(target, write)
        click.echo(f"Wrote {count:,} {noun} to {out}")
    if not count:
        _say_why_empty(mirror.explain_empty(filters))


def _freshness(row: dict, done: str) -> str:
    """A job's or a feed's state: `never <done>`, or fresh/STALE with its age."""
    if row["last_ok"] is None:
        return f"never {done}"
    return f"{'fresh' if row['fresh'] else 'STALE'}: last {done} {row['age_hours']} h ago ({row['last_ok']})"


_RUN_WORDS = {
    "failed": "failed",
    "stopped": "refused by the service",
    "interrupted": "stopped midway",
    "running": "running",
}  # a last run that did not end well, in words; "ok" and "skipped" say nothing


def _state(row: dict, run: dict | None, done: str) -> str:
    """What a job or feed last did and how fresh its data is: `failed at ...; never fetched`."""
    said = _freshness(row, done)
    if run and run["status"] in _RUN_WORDS:
        at = (run["finished_at"] or run["started_at"] or "")[:16].replace("T", " ")
        why = f" ({run['error']})" if run.get("error") and run["status"] != "running" else ""
        said = f"{_RUN_WORDS[run['status']]} at {at} UTC{why}; {said}"
    return said


def _block(lines: Sequence[tuple[str, ...]]) -> list[str]:
    """Rows of cells as aligned text, each column as wide as its widest cell, two spaces apart."""
    widths = [max(len(row[i]) for row in lines) for i in range(len(lines[0]))] if lines else []
    return ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in lines]


def _status_lines(info: dict) -> list[str]:
    """`edt status` in words: what the mirror holds, then each job's and feed's state."""
    from ..analysis.range_notes import coverage_note
    from ..store.labels import demo_words
    from ..sync.schedule import schedule_words
    from ..sync.watched_names import STAGE_WORDS

    data, put, results, ranges, watched = (
        info["datasets"],
        info["put_away"],
        info["results"],
        info["ranges"],
        info["watched_names"],
    )
    demo = demo_words(info["meta"])
    out = [
        f"Mirror: {info['path']}"
        + (
            f" (demo data, {demo}: `edt sync --feeds --clear-demo` swaps it for real "
            "data, `edt demo --clear` removes it)"
            if demo
            else ""
        )
    ]
    away = ", ".join(f"{n:,} {k}" for k, n in put.items() if n)
    held = [
        (
            "listings",
            f"{data['listings']['rows']:,} rows, {data['listings']['live']:,} live" + (f"; {away}" if away else ""),
        ),
        ("regfree", f"{data['regfree']['rows']:,} rows (deleted ccTLD domains)"),
        ("pending delete", f"{data['pending_delete']['rows']:,} rows"),
        ("history", f"{data['listing_history']['rows']:,} rows"),
    ]
    held.append(
        (
            "auction results",
            f"{results['auctions']:,} ended auctions, {results['sold']:,} sold"
            + (f" (the last ended {results['last_ended_at'][:10]})" if results["last_ended_at"] else ""),
        )
    )
    reported = info["reported_sales"]
    if reported["sales"]:
        span = reported["first_sold_on"] + (
            f" to {reported['last_sold_on']}" if reported["last_sold_on"] != reported["first_sold_on"] else ""
        )
        held.append(("reported sales", f"{reported['sales']:,} sold {span} (`edt ingest sales`)"))
    model = ranges["model"]
    if model:
        note = coverage_note(model)
        held.append(
            (
                "price ranges",
                f"{ranges['valued']:,} of {ranges['live']:,} live listings, learnt from "
                f"{model['trained_on']:,} sold auctions on {model['valued_at'][:10]}" + (f" ({note})" if note else ""),
            )
        )
    else:
        held.append(("price ranges", "none yet (`edt appraise` learns them from sold auctions and reported sales)"))
    if watched["names"]:
        stages = ", ".join(
            f"{n:,} {STAGE_WORDS.get(stage, 'not checked yet')}" for stage, n in sorted(watched["stages"].items())
        )
        checked = f"; last checked {watched['checked_at'][:16].replace('T', ' ')} UTC" if watched["checked_at"] else ""
        held.append(("watched names", f"{watched['names']:,}: {stages}{checked}"))
    else:
        held.append(("watched names", "none (`edt watch name example.com` watches one)"))
    if info["origins"]:
        held.append(("origin", "  ".join(f"{k} {v:,}" for k, v in sorted(info["origins"].items()))))
    out += _block(held)
    runs = info["last_sync"]
    out.append("API jobs (`edt sync` with an API key; the service refreshes each dataset on this schedule):")
    out += _block(
        [(job["job"], job["schedule"], _state(job, runs.get(job["job"]), "synced")) for job in info["freshness"]]
    )
    if info["feeds"]:
        out.append("Feeds (free public files, `edt sync --feeds`; their publishers' schedules):")
        out += _block(
            [
                (
                    feed["job"],
                    schedule_words(feed["schedule"]),
                    _state(feed, runs.get(feed["job"]), "fetched") + ("" if feed["enabled"] else " (disabled)"),
                )
                for feed in info["feeds"]
            ]
        )
    if info["problems"]:
        out.append("Incomplete:")
        out += [f"  {problem}" for problem in info["problems"]]
    else:
        out.append("Complete: no load at work or stopped midway, every index in place.")
    return out


@cli.command()
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def status(db: str, as_json: bool) -> None:
    """What the mirror holds (rows, results, price ranges, watched names), and each sync job's and feed's last run and freshness (docs/reference/freshness.md)."""
    info = open_mirror(db).status()
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo("\n".join(_status_lines(info)))


@cli.command()
@db_option
@click.argument("name")
@click.option("--limit", type=click.IntRange(1, 200), default=10, show_default=True, help="How many comparables.")
@click.option("--json", "as_json", is_flag=True, help="Print them as JSON records.")
def comps(db: str, name: str, limit: int, as_json: bool) -> None:
    """The sales most like NAME (auctions the mirror saw end, reported sales), what they sold for and why each was chosen."""
    from ..analysis.comps import comparables

    mirror = open_mirror(db)
    try:
        found = comparables(mirror, name, limit=limit)
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    if as_json:
        click.echo(found.to_json(orient="records", indent=2))
        return
    if found.empty:
        click.echo(
            f"No sale is in {db} yet: results come from the auctions the mirror sees end, and from the sales "
            "reported elsewhere (edt ingest sales FILE)."
        )
        return
    click.echo(f"Comparable results for {name.strip().lower()} (sales, most alike first):")
    for row in found.itertuples():
        eur = (
            ""
            if row.final_price_eur != row.final_price_eur or row.final_price_eur is None
            else f" ({row.final_price_eur:,.2f} EUR)"
        )
        how = f"{row.bids} bids" if row.origin == "auction" else f"reported ({row.origin})"
        click.echo(
            f"  {row.name:<28} {row.source or '-':<12} {row.ended_at[:10]}  {row.final_price:,.2f} {row.currency}{eur}, "
            f"{how}  score {row.score:.1f}  {row.why}"
        )


def _left_out_text(left_out: dict[str, str]) -> str:
    """ "left out trust_flow, citation_flow (missing on every sale learnt from)"."""
    by_reason: dict[str, list[str]] = {}
    for feature, reason in left_out.items():
        by_reason.setdefault(reason, []).append(feature)
    return "; ".join(f"left out {', '.join(names)} ({reason})" for reason, names in by_reason.items())


@cli.command()
@db_option
@click.option(
    "--backtest", is_flag=True, help="Measure instead: train before a day, score the sales after it, beside its peers."
)
@click.option(
    "--until",
    default=None,
    metavar="YYYY-MM-DD",
    help="With --backtest: the day (default a week before the last sale, or the day of the latest fifth of them when a week leaves too few to learn from).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
def appraise(db: str, backtest: bool, until: str | None, as_json: bool) -> None:
    """A price range in EUR for every live listing and a live estimate for every auction with bids, learnt from the
    sales the mirror knows (or, with --backtest, their errors beside the peers')."""
    from datetime import date

    from ..analysis import appraise as appraisal

    if until is not None and not backtest:
        raise BadInput("--until: only with --backtest (the day before which it trains)")
    if until is not None:
        try:
            date.fromisoformat(until)
        except ValueError:
            raise BadInput(f"--until: {until!r} is not a date (YYYY-MM-DD)") from None
    mirror = open_mirror(db) if backtest else open_mirror(db, writes="appraise")
    if not backtest:  # it writes at its end: refused now, not after minutes of training
        from ..store.lock import refuse_while_held

        refuse_while_held(mirror.path)
    if backtest:
        report = appraisal.backtest(mirror, until=until)
        if as_json:
            click.echo(json.dumps(report.to_dict(), indent=2))
            return
        click.echo(report.summary())
        if report.left_out:
            click.echo(f"The model {_left_out_text(report.left_out)}")
        if report.scored:
            click.echo("By final price:")
            for band in report.by_band:
                click.echo(
                    f"  {band['band']:<16}{band['auctions']:>7,} sales  in range {band['coverage']:.0%}  "
                    f"median error {band['median_abs_eur']:,.0f} EUR ({band['median_abs_pct']:.0%})"
                )
            click.echo("By TLD:")
            for tld in report.by_tld:
                click.echo(
                    f"  .{tld['tld']:<15}{tld['auctions']:>7,} sales  in range {tld['coverage']:.0%}  "
                    f"median error {tld['median_abs_eur']:,.0f} EUR"
                )
            click.echo("By origin:")
            for origin in report.by_origin:
                click.echo(
                    f"  {origin['origin']:<44}{origin['sales']:>7,} sales  in range {origin['coverage']:.0%}  "
                    f"median error {origin['median_abs_eur']:,.0f} EUR ({origin['median_abs_pct']:.0%})"
                )
            click.echo("Beside it, on the same sales:")
            click.echo(
                f"  {'this model':<44}{report.scored:>7,} sales  in range {report.coverage:.0%}  "
                f"median error {report.median_abs_eur:,.0f} EUR ({report.median_abs_pct:.0%})"
            )
            for peer in report.peers:
                click.echo(
                    f"  {peer['peer']:<44}{peer['sales']:>7,} sales  in range {peer['coverage']:.0%}  "
                    f"median error {peer['median_abs_eur']:,.0f} EUR ({peer['median_abs_pct']:.0%})"
                )
            for other in report.others:
                click.echo(
                    f"  {other['appraisal']:<44}{other['auctions']:>7,} sales  (no range)  median error "
                    f"{other['median_abs_eur']:,.0f} EUR ({other['median_abs_pct']:.0%}); this model on the same: "
                    f"{other['ours_median_abs_eur']:,.0f} EUR"
                )
            live = report.live
            if live:
                click.echo(
                    f"Live estimate 24 hours before the end, on {live['auctions']:,} auctions with 5 bids or more then: "
                    f"right {live['coverage']:.0%} of the time, median error {live['median_abs_eur']:,.0f} EUR "
                    f"({live['median_abs_pct']:.0%}); the range on the same: {live['range_median_abs_eur']:,.0f} "
                    f"EUR ({live['range_median_abs_pct']:.0%})"
                )
        return
    from .load import on_interrupt

    with on_interrupt(
        f"no range was written; {mirror.path} is as it was",
        mirror=mirror,
        written=f"after the ranges were written to {mirror.path}",
    ):
        summary = appraisal.appraise(mirror)
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    if summary["trained_on"]:
        click.echo(
            f"Price ranges for {summary['valued']:,} of {summary['listings']:,} live listings, learnt from "
            f"{summary['trained_on']:,} sales, in {summary['seconds']} s"
        )
    else:  # nothing learnt: the reasons below say why
        click.echo(f"No price ranges for the {summary['listings']:,} live listings yet ({summary['seconds']} s)")
    if summary["live"]:
        click.echo(f"Live estimates for {summary['live']:,} auctions with bids")
    note = appraisal.coverage_note(summary)
    if note:
        click.echo(note)
    if summary["left_out"]:
        click.echo(f"The model {_left_out_text(summary['left_out'])}")
    reasons = appraisal.unvalued_reasons(mirror)
    for reason, count in reasons:
        click.echo(f"  no range for {count:,}: {reason}")
