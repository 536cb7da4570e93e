"""`edt archive`: move listings closed long ago, with their history, into the Parquet archive
beside the mirror, and pack those closed some weeks ago; list, check and restore (a thin
shell over `toolkit/store/parquet_archive.py` and `toolkit/store/packed.py`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .shell import BadInput, RunFailed, db_option, open_mirror, refresh_index, cli

__all__ = ["archive"]


@cli.command()
@db_option
@click.option(
    "--closed-before",
    "closed_before",
    default=None,
    metavar="AGE",
    help="Archive the listings closed more than AGE ago: 180d, 26w, 6m (default: the config's "
    "[archive] closed_before, else 180d).",
)
@click.option(
    "--pack-after",
    "pack_after",
    default=None,
    metavar="AGE",
    help="Pack the listings closed more than AGE ago and not archived: each one compressed record, "
    "about a quarter of its bytes (default: the config's [archive] pack_after, else 30d; none: "
    "pack nothing).",
)
@click.option(
    "--unpack", is_flag=True, help="Put every packed listing back as plain rows (for your own SQL over them)."
)
@click.option("--list", "list_months", is_flag=True, help="List the archived months: rows per table and a checksum.")
@click.option("--verify", is_flag=True, help="Read every archived file back and compare it with its recorded rows.")
@click.option("--restore", metavar="YYYY-MM", default=None, help="Put an archived month back into the mirror.")
@click.option(
    "--vacuum",
    is_flag=True,
    help="Once, for a mirror made before this toolkit version: give the space archived rows left back to "
    "the file system, and from then on as it frees (rewrites the file: minutes at full scale).",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 10_000_000),
    default=None,
    metavar="N",
    help="Listings per transaction (default 50,000: a few seconds of writer lock at full scale).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def archive(
    db: str,
    closed_before: str | None,
    pack_after: str | None,
    unpack: bool,
    list_months: bool,
    verify: bool,
    restore: str | None,
    vacuum: bool,
    batch: int | None,
    as_json: bool,
) -> None:
    """Move the listings closed before a cut, with their history and raw records, out of the
    mirror into `<mirror>.archive/` (Parquet, a folder per month: pyarrow, DuckDB, Polars
    and Spark read it as is), pack those closed more than --pack-after ago (in the mirror,
    one compressed record each), then give the space back. The API, the app and the
    notebooks read mirror, packed rows and archive as one. A batch at a time, each all or
    nothing: a stop leaves nothing half done, and running it again finishes it."""
    from ..store import parquet_archive as archiving
    from ..store import packed as packing
    from ..config import ARCHIVE_CLOSED_BEFORE, PACK_AFTER, archive_setting, pack_setting

    for option, value in (("--closed-before", closed_before), ("--pack-after", pack_after), ("--restore", restore)):
        if value is not None and not value.strip():  # an empty shell variable: refused, never the default
            raise BadInput(f"{option} is empty: give it a value (--help says which) or leave the option out")
    if sum(map(bool, (closed_before or pack_after, unpack, list_months, verify, restore, vacuum))) > 1:
        raise BadInput("--closed-before/--pack-after, --unpack, --list, --verify, --restore and --vacuum: choose one")
    if list_months or verify:
        mirror = open_mirror(db)
        if verify:
            problems = archiving.verify(db)
            _say({"problems": problems} if as_json else "\n".join(problems) or "the archive is whole", as_json)
            if problems:
                raise RunFailed(f"{len(problems)} archived file(s) differ from what was recorded")
            return
        months = archiving.months(mirror.connection())
        packed = packing.packed_months(mirror.connection())
        if as_json:
            _say({**months, "packed": packed}, True)
            return
        if not months:
            click.echo(f"nothing archived yet beside {db}")
        else:
            click.echo(f"{'month':8} {'listings':>10} {'history':>10} {'raw':>8} {'files':>5}  checksum")
            for month, row in months.items():
                click.echo(
                    f"{month:8} {row['listings']:>10,} {row['listing_history']:>10,} {row['raw_records']:>8,} "
                    f"{row['files']:>5}  {row['checksum'][:16]}"
                )
        if packed:
            click.echo("packed in the mirror: " + ", ".join(f"{m} {n:,}" for m, n in packed.items()))
        return
    from .load import hold_load_lock

    if not Path(db).exists():
        open_mirror(db)  # refuses, naming the path, before a folder or a lock file is made for it
    hold_load_lock(db, "edt archive")
    mirror = open_mirror(db, writes="archive")
    try:
        if vacuum:
            before, after = archiving.reclaim_space(db)
            _say(
                {"file_bytes_before": before, "file_bytes_after": after}
                if as_json
                else f"{db}: {before / 1e6:,.1f} MB -> {after / 1e6:,.1f} MB; from now on it gives space back as it frees",
                as_json,
            )
        elif unpack:
            count = packing.unpack(db)
            _say({"unpacked": count} if as_json else f"{count:,} packed listings back as plain rows in {db}", as_json)
        elif restore:
            restored = archiving.restore_month(db, restore)
            _say(
                {"restored": restored}
                if as_json
                else f"{restore}: {restored.get('listings', 0):,} listings and {restored.get('listing_history', 0):,} "
                f"history rows back in {db}",
                as_json,
            )
        else:
            age, age_from = _setting(closed_before, "--closed-before", archive_setting(), "closed_before")
            pack_age, pack_from = _setting(pack_after, "--pack-after", pack_setting(), "pack_after")
            age = age or ARCHIVE_CLOSED_BEFORE
            pack_age = pack_age or PACK_AFTER
            try:
                cut = mirror.now() - archiving.parse_age(age)  # EDT_NOW, when set, is now
            except ValueError as exc:
                raise BadInput(f"{age_from}: {exc}") from None
            try:
                pack_cut = None if pack_age.strip().lower() == "none" else mirror.now() - archiving.parse_age(pack_age)
            except ValueError as exc:
                raise BadInput(f"{pack_from}: {exc} (or none)") from None
            from .load import on_interrupt

            kept = (
                "each batch is all or nothing: those done are archived, the rest is as it was; run it again to finish"
            )
            with on_interrupt(kept):  # a kill too: the batch under way rolls back, its staging folder goes
                report = archiving.archive_closed(db, cut, batch=batch or archiving.BATCH, progress=_progress(as_json))
                packing_report = None
                if pack_cut is not None:  # after the archive: what leaves for Parquet is not packed first
                    packing_report = packing.pack_closed(db, pack_cut, batch=batch or packing.BATCH)
            held = sum(packing.packed_months(mirror.connection()).values())
            _say(_summary(db, report, packing_report, held, as_json), as_json)
    except archiving.ArchiveError as exc:
        raise BadInput(str(exc)) from None
    refresh_index(mirror)


def _setting(given: str | None, option: str, configured: str | None, key: str) -> tuple[str | None, str]:
    """An age and where it came from (the option, else the config file's key), for its error line."""
    if given is not None:
        return given, option
    from ..config import config_path

    return configured, f"[archive] {key} in {config_path()}"


def _progress(quiet: bool):
    def show(report) -> None:
        if not quiet:
            click.echo(f"  {report.moved:,} listings archived ...", err=True)

    return show


def _summary(db: str, report, packing, held: int, as_json: bool):
    """What the run did: archived (or nothing to), packed (or nothing to, or packing off), the bytes."""
    after = packing.file_bytes_after if packing else report.file_bytes_after
    if as_json:
        return {
            "cut": report.cut,
            "listings": report.listings,
            "history": report.history,
            "raw_records": report.raw_records,
            "packed": packing.listings if packing else 0,
            "pack_cut": packing.cut if packing else None,
            "packed_in_mirror": held,
            "file_bytes_before": report.file_bytes_before,
            "file_bytes_after": after,
            "archive_bytes": report.archive_bytes,
            "seconds": round(report.seconds + (packing.seconds if packing else 0), 1),
        }
    lines = []
    if not report.moved:
        lines.append(f"archived nothing: no listing closed before {report.cut} is left in {db}")
    else:
        months = ", ".join(f"{m} {n:,}" for m, n in sorted(report.listings.items()))
        lines.append(
            f"archived {report.moved:,} listings closed before {report.cut} ({months}) and {report.history:,} "
            f"history rows into {Path(db).name}.archive/ in {report.seconds:.1f} s"
        )
    if packing is None:
        lines.append(f"packed nothing: packing is off (--pack-after none); {held:,} listings packed before")
    elif packing.listings:
        lines.append(
            f"packed {packing.listings:,} listings closed before {packing.cut} in {packing.seconds:.1f} s "
            f"({held:,} packed in all)"
        )
    else:
        lines.append(f"packed nothing: no plain listing closed before {packing.cut} is left ({held:,} packed already)")
    if report.moved or (packing is not None and packing.listings):
        lines.append(
            f"{db}: {report.file_bytes_before / 1e6:,.1f} MB -> {after / 1e6:,.1f} MB, archive "
            f"{report.archive_bytes / 1e6:,.1f} MB"
        )
    return "\n".join(lines)


def _say(value, as_json: bool) -> None:
    click.echo(json.dumps(value, indent=2) if as_json else value)
