"""`edt doctor`: whether the mirror's file is sound, what is damaged, and what can be saved
(a thin shell over `toolkit/store/doctor.py`)."""

from __future__ import annotations

import json
import shlex
import sqlite3
import sys
from pathlib import Path

import click

from .shell import note_opened, BadInput, RunFailed, check_writable, db_option, cli

__all__ = ["doctor"]


@cli.command()
@db_option
@click.option(
    "--repair",
    is_flag=True,
    help="Rebuild the damaged indexes and full-text indexes in place, no row lost: only when every "
    "table's rows are sound. Stop `edt serve`, the app and any sync first.",
)
@click.option(
    "--salvage",
    metavar="NEW_FILE",
    default=None,
    help="Copy every row that can still be read into a new mirror at NEW_FILE (which must not exist), "
    "and print how to swap it in.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def doctor(db: str, repair: bool, salvage: str | None, as_json: bool) -> None:
    """Check the mirror's file (SQLite's integrity_check): per table, whether its rows and its
    indexes are sound, and what to do. Exit status 0 sound (or repaired, or salvaged), 1 damaged,
    2 not a SQLite file (or a refused option). Works on a read-only file (except --repair)."""
    from ..store.doctor import NotRepairable, NotSQLite, Unreadable, damage_in, damage_words

    if not Path(db).is_file():
        raise BadInput(f"{db}: no mirror there; pass --db PATH")
    if repair and salvage:
        raise BadInput(
            "--repair and --salvage: choose one (--repair mends indexes in place, --salvage copies "
            "rows into a new file)"
        )
    if salvage is not None and Path(salvage).exists():
        raise BadInput(
            f"--salvage {salvage}: the file exists; the salvage writes only to a new file (choose another name)"
        )
    if repair:
        check_writable(db, "doctor --repair")
    note_opened(db)
    try:
        _run(db, repair, salvage, as_json)
        return
    except (NotSQLite, Unreadable, NotRepairable) as exc:
        refusal = _refusal(db, exc)
    except sqlite3.DatabaseError as exc:  # damage the diagnosis did not foresee stopped a repair
        if damage_in(exc) is None:
            raise
        refusal = RunFailed(
            f"{db}: SQLite stopped at damage the diagnosis did not see ({damage_words(exc)}); "
            f"`edt doctor --db {shlex.quote(db)} --salvage NEW_FILE` copies every row that can still be "
            "read into a new mirror"
        )
    # Raised here, outside the handler: the refusal says it all (`main` would otherwise say the
    # SQLite error it was raised while handling).
    raise refusal


def _run(db: str, repair: bool, salvage: str | None, as_json: bool) -> None:
    from ..store.doctor import NotRepairable, diagnose
    from ..store.doctor import repair as repair_file
    from ..store.doctor import salvage as salvage_file

    if salvage is not None:
        progress = (
            (lambda line: click.echo(f"\redt doctor: {line:<60}", nl=False, err=True)) if sys.stderr.isatty() else None
        )
        report = salvage_file(db, salvage, progress=progress)
        if progress is not None:
            click.echo("", err=True)
        _say(report.to_dict() if as_json else report.lines(), as_json)
        return
    diagnosis = diagnose(db)
    if repair and not diagnosis.sound:
        if not diagnosis.repairable:
            _say(diagnosis.to_dict() if as_json else diagnosis.lines(), as_json)
            raise NotRepairable(diagnosis.why_not_repairable())
        done = repair_file(db, diagnosis)
        _say({"before": diagnosis.to_dict(), "repair": done.to_dict()} if as_json else done.lines(), as_json)
        if not done.sound:
            sys.exit(1)
        return
    _say(diagnosis.to_dict() if as_json else diagnosis.lines(), as_json)
    if repair:
        click.echo("Nothing to repair.")
    if not diagnosis.sound:
        sys.exit(1)


def _refusal(db: str, exc: Exception) -> BadInput | RunFailed:
    from ..store.doctor import NotSQLite, Unreadable

    if isinstance(exc, NotSQLite):
        return BadInput(
            f"{db}: not a SQLite database ({exc}): nothing `edt doctor` can read; if it was a mirror, its "
            "first page is gone: restore a backup, or build a new mirror with `edt sync` or `edt demo` "
            "(--db NEW_FILE)"
        )
    if isinstance(exc, Unreadable):
        return RunFailed(
            f"{db}: SQLite cannot read the file's list of tables ({exc}): nothing can be salvaged through "
            "it; restore a backup, or try the sqlite3 shell's `.recover`"
        )
    return BadInput(
        f"--repair: {exc}; `edt doctor --db {shlex.quote(db)} --salvage NEW_FILE` copies every row "
        "that can still be read into a new mirror"
    )


def _say(report: dict | list[str], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(report, indent=2))
    else:
        for line in report:
            click.echo(line)
