"""Re-flag the mirror's spam words when the dictionary changes (`edt spam reflag`).

`reflag(conn)` re-computes `spam_terms` and `spam_count` of every listing when the
dictionary's fingerprint differs from the one kept in `mirror_meta` (`spam_dictionary`),
writing only the rows whose terms changed. It reads only the names that can change: those
the trigram index (`listings_fts`) finds a term in, and those flagged now. The matching is
`toolkit.signals.spam`'s; this is the write, in one transaction that bumps the generation.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from ..signals.spam import SpamDictionary, current_dictionary, record_fingerprint, stored_fingerprint
from .meta import bump_generation

__all__ = ["ReflagReport", "reflag", "current_spam_flags"]


@dataclass
class ReflagReport:
    dictionary: SpamDictionary
    checked: int = 0  # listings in the mirror
    examined: int = 0  # rows matched against the dictionary (the others hold no term)
    changed: int = 0  # rows whose spam terms changed
    flagged: int = 0  # rows with at least one term now
    skipped: bool = False  # the mirror was already flagged with this dictionary
    seconds: float = 0.0

    def line(self) -> str:
        if self.skipped:
            return f"spam flags already match {self.dictionary.source} ({self.dictionary.fingerprint}); nothing to do"
        return (
            f"re-flagged {self.checked:,} listings with {self.dictionary.source} ({len(self.dictionary.terms)} terms, "
            f"{len(self.dictionary.allowed)} allowed; {self.examined:,} names could hold a term): "
            f"{self.changed:,} changed, {self.flagged:,} flagged, {self.seconds:.1f} s"
        )


def _candidates(conn: sqlite3.Connection, dictionary: SpamDictionary) -> set[int] | None:
    """The listings that may hold a term, or flag one now: names the trigram index finds a
    term in, and rows flagged today. None (read every row) when a term is shorter than the
    index's three letters or the index is not there."""
    terms = sorted(dictionary.terms)
    if any(len(t) < 3 for t in terms):
        return None
    try:
        found = (
            {
                r[0]
                for r in conn.execute(
                    "SELECT rowid FROM listings_fts WHERE listings_fts MATCH ?",
                    [" OR ".join('"' + t + '"' for t in terms)],
                )
            }
            if terms
            else set()
        )
    except sqlite3.OperationalError:
        return None
    found.update(r[0] for r in conn.execute("SELECT id FROM listings WHERE spam_count IS NOT 0"))
    return found


def reflag(conn: sqlite3.Connection, dictionary: SpamDictionary | None = None, *, force: bool = False) -> ReflagReport:
    """Re-flag every listing with `dictionary` (default: the one in use) unless the mirror is
    already flagged with it (`force` re-flags anyway). One transaction; returns what changed."""
    dictionary = dictionary or current_dictionary()
    report = ReflagReport(dictionary)
    started = time.perf_counter()
    if not force and stored_fingerprint(conn) == dictionary.fingerprint:
        report.skipped = True
        return report
    updates = []
    match = dictionary.match
    report.checked = conn.execute("SELECT count(*) FROM listings").fetchone()[0]
    candidates = _candidates(conn, dictionary)
    if candidates is None:  # every row
        rows: Any = conn.execute("SELECT id, sld, name, spam_terms FROM listings")
    else:
        ids = sorted(candidates)
        rows = (
            row
            for start in range(0, len(ids), 500)
            for row in conn.execute(
                f"SELECT id, sld, name, spam_terms FROM listings WHERE id IN "
                f"({','.join('?' * len(ids[start : start + 500]))})",
                ids[start : start + 500],
            )
        )
    for row_id, sld, name, stored in rows:
        report.examined += 1
        terms = match(sld if sld is not None else name)
        if terms:
            text = json.dumps(terms, ensure_ascii=False, separators=(",", ":"))
        else:
            text = "[]"
        if text != stored:
            updates.append((text, len(terms), row_id))
    report.changed = len(updates)
    with conn:
        conn.executemany("UPDATE listings SET spam_terms = ?, spam_count = ? WHERE id = ?", updates)
        record_fingerprint(conn, dictionary)
        if updates:
            bump_generation(conn)
    report.flagged = conn.execute("SELECT count(*) FROM listings WHERE spam_count > 0").fetchone()[0]
    report.seconds = time.perf_counter() - started
    return report


def current_spam_flags(conn: sqlite3.Connection) -> None:
    """Before listings are written: when the spam dictionary changed since the mirror was
    flagged, every listing is re-flagged (a broken file fails here, before anything is written)."""
    dictionary = current_dictionary()
    if stored_fingerprint(conn) != dictionary.fingerprint:
        if conn.execute("SELECT 1 FROM listings LIMIT 1").fetchone():
            reflag(conn, dictionary)
        else:
            with conn:
                record_fingerprint(conn, dictionary)
