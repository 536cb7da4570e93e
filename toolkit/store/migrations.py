"""The upgrades that "add what is missing" cannot express: each data migration runs once, when
a mirror older than its version is opened read-write (`schema.apply_schema`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # sqlite_utils brings pandas: imported where the schema is applied, not to read it
    import sqlite_utils

__all__ = ["DATA_MIGRATIONS"]


def _migrate_v2(db: "sqlite_utils.Database") -> None:
    # v2 derives live_until for rows written by v1.
    db.execute(
        "UPDATE listings SET live_until = COALESCE(closed_at, auction_end_date, '9999-12-31T23:59:59Z') "
        "WHERE live_until IS NULL"
    )


def _migrate_v9(db: "sqlite_utils.Database") -> None:
    # v9 derives the signals of rows written before them: EUR prices at the ECB rate of the
    # day each row was last seen, spam words with the dictionary in use, no metric jump
    # (older rows have no metric history). Only rows still without them: cheap to run again.
    # A broken ECB file or spam list leaves its columns null here (opening the mirror must
    # not fail on them); `edt fx` and `edt spam reflag` name the problem and fill them.
    from ..signals.fx import fx_table
    from ..signals.spam import SpamDictionaryError, current_dictionary, record_fingerprint

    conn = db.conn
    try:
        table = fx_table()
    except ValueError:
        table = None
    if table is not None:
        rows = conn.execute(
            "SELECT id, price, effective_price, currency, last_seen_at FROM listings WHERE price_eur IS NULL "
            "AND effective_price_eur IS NULL AND currency IS NOT NULL AND effective_price IS NOT NULL "
            "AND last_seen_at IS NOT NULL"
        ).fetchall()
        prices = [
            (table.to_eur(price, currency, seen[:10]), table.to_eur(effective, currency, seen[:10]), row_id)
            for row_id, price, effective, currency, seen in rows
        ]
        conn.executemany("UPDATE listings SET price_eur = ?, effective_price_eur = ? WHERE id = ?", prices)
    try:
        dictionary = current_dictionary()
    except SpamDictionaryError:
        dictionary = None
    if dictionary is not None:
        spam = []
        for row_id, sld, name in conn.execute("SELECT id, sld, name FROM listings WHERE spam_count IS NULL").fetchall():
            terms = dictionary.match(sld if sld is not None else name)
            spam.append((json.dumps(terms, ensure_ascii=False, separators=(",", ":")), len(terms), row_id))
        conn.executemany("UPDATE listings SET spam_terms = ?, spam_count = ? WHERE id = ?", spam)
        if spam:
            record_fingerprint(conn, dictionary)
    conn.execute("UPDATE listings SET metrics_jumped = 0 WHERE metrics_jumped IS NULL")


def _migrate_v15(db: "sqlite_utils.Database") -> None:
    # v15 keeps the price ranges on the listings themselves (filtered and sorted as any
    # field); v14 kept them in a table of their own, moved here and dropped.
    if db["listing_values"].exists():
        db.execute(
            "UPDATE listings AS l SET (value_low, value_mid, value_high, value_reason, valued_at) = "
            "(v.value_low, v.value_mid, v.value_high, v.reason, v.valued_at) FROM listing_values v "
            "WHERE v.listing_id = l.id"
        )
        db.execute("DROP TABLE listing_values")


DATA_MIGRATIONS: dict[int, Callable[["sqlite_utils.Database"], None]] = {
    2: _migrate_v2,
    9: _migrate_v9,
    15: _migrate_v15,
}
# v3 changed index declarations only: `_ensure_indexes` rebuilds them. v4 adds sync_state.
# v5 adds the watchlist tables (saved_searches, shortlist); v6 the alerts (a column, a table);
# v7 the enrichment cache; v8 the drop window (pending_delete.drop_window_start/_end,
# null on older rows: `_table` adds the columns to an existing table); v9 the signals
# (listings' EUR prices, spam words, metric jump, archive signals; listing_history's metrics); v10 the
# triggers that bump the generation on every write, whoever writes (a v9 mirror read read-only
# would not see another program's writes: it is upgraded by opening it once read-write);
# v11 the covering index holds open listings only, closings are indexed by time, and the
# archive's manifest (`archive_parts`); v12 packed closed listings (`packed_listings`, `packed_codecs`);
# v13 the public feeds' conditional-request state (`feed_state`); v14 the auctions' results
# (`auction_results`, store/results.py) and the live listings' price ranges (`listing_values`);
# v15 the price ranges as columns of the listings (`value_low`, ...), the trigram index's
# update trigger narrowed to a changed name; v16 the watched names and their stages
# (`watched_names`, `name_stages`); v17 the reported sales (`reported_sales`) and the live
# estimate of auctions with bids (`live_low`, `live_mid`, `live_high`); v18 the feed rows'
# digests (`feed_digests`) and a listing's last sighting updated alone noted as a write but not
# as a change of the listing; v19 is both of them together (two changes made side by side).
