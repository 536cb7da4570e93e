"""How far the judging signals reach across the mirror, for `edt spam` and `edt fx`: the
listings the spam words flag and the commonest words (`spam_counts`), the words stored on one
name (`stored_spam_terms`), the listings with a EUR price and the currencies left without one
(`eur_counts`)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..sources import REGFREE

__all__ = ["spam_counts", "stored_spam_terms", "eur_counts"]


def spam_counts(conn: sqlite3.Connection, top: int = 10) -> dict[str, Any]:
    """Flagged and all listings, platforms' and regfree rows (deleted ccTLD names) apart as
    `edt status` counts them, and the `top` commonest words as (word, listings) pairs."""
    (flagged, total), (regfree_flagged, regfree_total) = (
        conn.execute(
            f"SELECT coalesce(sum(spam_count > 0), 0), count(*) FROM listings WHERE source {op} ?", [REGFREE]
        ).fetchone()
        for op in ("!=", "=")
    )
    words = conn.execute(
        "SELECT value, count(*) FROM listings, json_each(listings.spam_terms) WHERE spam_count > 0 "
        "GROUP BY value ORDER BY 2 DESC, 1 LIMIT ?",
        [top],
    ).fetchall()
    return {
        "flagged": flagged,
        "listings": total,
        "regfree_flagged": regfree_flagged,
        "regfree": regfree_total,
        "top": [(word, n) for word, n in words],
    }


def stored_spam_terms(conn: sqlite3.Connection, name: str) -> list[str] | None:
    """The spam words the mirror holds for a name (its first listing), None when it holds no listing of it."""
    row = conn.execute("SELECT spam_terms FROM listings WHERE name = ? LIMIT 1", [name]).fetchone()
    return None if row is None else json.loads(row[0] or "[]")


def eur_counts(conn: sqlite3.Connection) -> tuple[int, list[tuple[str, int]]]:
    """The listings with a EUR price, and the priced ones without, counted per currency
    (`(none)` where the row gives none), most first."""
    converted = conn.execute("SELECT count(*) FROM listings WHERE effective_price_eur IS NOT NULL").fetchone()[0]
    missing = conn.execute(
        "SELECT coalesce(currency, '(none)'), count(*) FROM listings WHERE effective_price IS NOT NULL "
        "AND effective_price_eur IS NULL GROUP BY 1 ORDER BY 2 DESC"
    ).fetchall()
    return converted, [(currency, n) for currency, n in missing]
