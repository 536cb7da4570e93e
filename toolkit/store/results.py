"""What each auction the mirror saw end came to: `auction_results`, derived from the listings
and their history after every sync and ingest.

The final price is the last bid seen *before* the auction's end (a sighting after the end,
a late page of a sync, is not a bid that counted); the bids are that sighting's count; an
auction with bids sold, one without did not (its asking price is kept). The EUR price is
at the ECB rate of the end's day (`toolkit.signals.fx`); a currency without a rate gives a
result without EUR, never a guess. Where the name went next is the first later sighting of
the same name elsewhere in the mirror: a closeout of the same platform (`closeout`), a
listing of another platform (`platform`), or the drop (`drop`: a pending-delete row or a
deleted-ccTLD listing). A result is derived again when its listing was seen since, and its
"next" is looked for until found.

    from toolkit.store.results import derive_results
    derive_results(conn, now="2026-11-26T07:00:00Z")   # returns how many results were written

`save_values` writes the price ranges `edt appraise` learns from these results onto the
listings themselves (`value_low`, `value_mid`, `value_high`, `value_reason`, `valued_at`), so
that they are filtered, sorted and exported as any field; the writer keeps them through
every later sync of the listing. `save_live` writes the live estimate of the auctions with
bids (`live_low`, `live_mid`, `live_high`), which the writer keeps while the bidding stays as
it was read.

`save_reported_sales` keeps the sales reported elsewhere (`edt ingest sales`) in
`reported_sales`, apart from the auctions the mirror saw end: each sale once, however often
its file is imported.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

from ..signals.fx import to_eur
from .fields import iso_timestamp

__all__ = [
    "derive_results",
    "place_next",
    "save_values",
    "save_live",
    "save_reported_sales",
    "reported_sale_key",
    "forget_values",
    "value_model_path",
    "VALUE_COLUMNS",
]

_CHUNK = 500


def _stamp(now: Any) -> str:
    stamp = iso_timestamp(now) if now is not None else iso_timestamp(datetime.now().astimezone())
    if stamp is None:
        raise ValueError(f"now: {now!r} is not a moment")
    return stamp


def derive_results(conn: sqlite3.Connection | Any, now: Any = None) -> int:
    """Write the result of every auction that ended by `now` whose result is missing or whose
    listing was seen since it was derived, then look for where the unplaced ones went next.
    Runs in the caller's transaction when there is one; returns how many results were written."""
    stamp = _stamp(now)
    due = [
        row[0]
        for row in conn.execute(
            "SELECT l.id FROM listings l LEFT JOIN auction_results r ON r.listing_id = l.id "
            "WHERE l.type = 'auction' AND l.auction_end_date IS NOT NULL AND l.auction_end_date <= ? "
            "AND (r.listing_id IS NULL OR l.last_seen_at > r.derived_at)",
            [stamp],
        )
    ]
    written = 0
    for start in range(0, len(due), _CHUNK):
        ids = due[start : start + _CHUNK]
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            f"""SELECT l.id, l.name, l.tld, l.source, l.currency, l.auction_end_date,
                       h.observed_at, h.max_bid, h.price, h.bids_count
                FROM listings l
                LEFT JOIN (
                    SELECT listing_id, observed_at, max_bid, price, bids_count,
                           row_number() OVER (PARTITION BY listing_id ORDER BY observed_at DESC, id DESC) AS rank
                    FROM listing_history h
                    WHERE listing_id IN ({marks})
                      AND observed_at <= (SELECT auction_end_date FROM listings WHERE id = h.listing_id)
                ) h ON h.listing_id = l.id AND h.rank = 1
                WHERE l.id IN ({marks})""",
            [*ids, *ids],
        ).fetchall()
        values = []
        for listing_id, name, tld, source, currency, ended, seen, max_bid, price, bids in rows:
            sold = bool(bids) and max_bid is not None
            final = max_bid if sold else None
            values.append(
                (
                    listing_id,
                    name,
                    tld,
                    source,
                    currency,
                    ended,
                    final,
                    to_eur(final, currency, ended[:10]) if final is not None else None,
                    price,
                    bids,
                    int(sold),
                    seen,
                    stamp,
                )
            )
        conn.executemany(
            "INSERT INTO auction_results (listing_id, name, tld, source, currency, ended_at, final_price, "
            "final_price_eur, asking_price, bids, sold, last_seen_before_end, derived_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(listing_id) DO UPDATE SET "
            "final_price = excluded.final_price, final_price_eur = excluded.final_price_eur, "
            "asking_price = excluded.asking_price, bids = excluded.bids, sold = excluded.sold, "
            "ended_at = excluded.ended_at, last_seen_before_end = excluded.last_seen_before_end, "
            "derived_at = excluded.derived_at",
            values,
        )
        written += len(values)
    place_next(conn)
    return written


_NEXT = """SELECT kind, id, source, seen FROM (
        SELECT CASE WHEN l.source = 'regfree' THEN 'drop'
                    WHEN l.source = r.source AND l.type = 'closeout' THEN 'closeout'
                    WHEN l.source != r.source THEN 'platform' END AS kind,
               l.id, l.source, l.first_seen_at AS seen
        FROM listings l WHERE l.name = r.name AND l.closed_at IS NULL AND l.id != r.listing_id
                              AND l.first_seen_at >= r.ended_at
        UNION ALL
        SELECT 'drop', p.id, p.source, p.first_seen_at FROM pending_delete p
        WHERE p.domain = r.name COLLATE NOCASE AND p.first_seen_at >= r.ended_at)
    WHERE kind IS NOT NULL ORDER BY seen, id LIMIT 1"""


def place_next(conn: Any) -> None:
    """Where each result not yet placed went: the earliest later sighting of its name (one
    statement; each name found through the open listings' and the pending-delete rows' name
    indexes: derived after every load, a relisting is found while it is open)."""
    conn.execute(
        f"UPDATE auction_results AS r SET (next_kind, next_id, next_source, next_seen_at) = ({_NEXT}) "
        f"WHERE r.next_kind IS NULL AND EXISTS ({_NEXT})"
    )


def save_values(
    conn: sqlite3.Connection | Any,
    rows: list[tuple[int, Any, Any, Any, str | None]],
    valued_at: str,
    live: dict[int, tuple[Any, Any, Any]] | None = None,
) -> int:
    """Write each listing's range, `(listing_id, low, mid, high, reason)` in EUR (a null
    range has its reason), stamped `valued_at`, in the caller's transaction when there is
    one; with `live` (listing_id -> its live estimate's low, mid, high), each listing's live
    estimate in the same statement (null for a listing `live` does not hold). Returns how
    many listings were written."""
    if live is None:
        cursor = conn.executemany(
            "UPDATE listings SET value_low = ?, value_mid = ?, value_high = ?, value_reason = ?, valued_at = ? WHERE id = ?",
            [(low, mid, high, reason, valued_at, listing_id) for listing_id, low, mid, high, reason in rows],
        )
        return cursor.rowcount
    none = (None, None, None)
    cursor = conn.executemany(
        "UPDATE listings SET value_low = ?, value_mid = ?, value_high = ?, value_reason = ?, valued_at = ?, "
        "live_low = ?, live_mid = ?, live_high = ? WHERE id = ?",
        [
            (low, mid, high, reason, valued_at, *live.get(listing_id, none), listing_id)
            for listing_id, low, mid, high, reason in rows
        ],
    )
    return cursor.rowcount


VALUE_COLUMNS = (
    "value_low",
    "value_mid",
    "value_high",
    "value_reason",
    "valued_at",
    "live_low",
    "live_mid",
    "live_high",
)


def value_model_path(mirror_path: str | Any) -> Path:
    """Where `edt appraise` keeps its last model: beside the mirror, as its columnar index is."""
    return Path(f"{os.fspath(mirror_path)}.value-model")


def forget_values(conn: sqlite3.Connection | Any) -> int:
    """Every listing's range and live estimate, and the last training's summary, gone (a model
    that learnt from rows no longer in the mirror), in the caller's transaction; the model file
    is the caller's to remove once that commits (`value_model_path`). Returns the listings that
    had a range."""
    cursor = conn.execute(
        f"UPDATE listings SET {', '.join(f'{c} = NULL' for c in VALUE_COLUMNS)} WHERE valued_at IS NOT NULL"
    )
    conn.execute("DELETE FROM mirror_meta WHERE key = 'value_model'")
    return cursor.rowcount


def save_live(conn: sqlite3.Connection | Any, rows: list[tuple[int, Any, Any, Any]]) -> int:
    """Write each listing's live estimate, `(listing_id, low, mid, high)` in EUR (null: none),
    in the caller's transaction when there is one. Returns how many listings were written."""
    cursor = conn.executemany(
        "UPDATE listings SET live_low = ?, live_mid = ?, live_high = ? WHERE id = ?",
        [(low, mid, high, listing_id) for listing_id, low, mid, high in rows],
    )
    return cursor.rowcount


def reported_sale_key(name: str, sold_on: str, price: float, currency: str, venue: str) -> str:
    """What makes a reported sale the same one in another import: name, day, price, currency, venue."""
    return f"{name}|{sold_on}|{price:.2f}|{currency}|{venue.lower()}"


def save_reported_sales(conn: sqlite3.Connection | Any, sales: Any, *, origin: str, imported_at: str) -> int:
    """Insert reported sales (dicts with name, tld, sold_on, price, currency, venue) not
    already kept, each with its EUR price at the ECB rate of its day, in the caller's
    transaction. Returns how many were new."""
    before = conn.total_changes
    conn.executemany(
        "INSERT INTO reported_sales (key, name, tld, sold_on, price, currency, price_eur, venue, origin, imported_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING",
        (
            (
                reported_sale_key(s["name"], s["sold_on"], s["price"], s["currency"], s["venue"]),
                s["name"],
                s["tld"],
                s["sold_on"],
                s["price"],
                s["currency"],
                to_eur(s["price"], s["currency"], s["sold_on"]),
                s["venue"],
                origin,
                imported_at,
            )
            for s in sales
        ),
    )
    return conn.total_changes - before
