"""The mirror's shape, declared once and re-applied idempotently.

`ensure_schema` creates what is missing (tables, columns, indexes, the FTS index) and
records `SCHEMA_VERSION` in `PRAGMA user_version`, so opening an older mirror upgrades it
in place without touching its rows. A change that cannot be expressed as "add what is
missing" goes into `_DATA_MIGRATIONS` under the version that introduces it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils brings pandas: imported where the schema is applied, not to read it
    import sqlite_utils

from .access import BUSY_TIMEOUT_MS, read_only_uri
from .fields import (
    LISTING_EXTRA_FIELDS,
    LISTING_FIELDS,
    PENDING_EXTRA_FIELDS,
    PENDING_FIELDS,
    SQL_TYPES,
)

__all__ = [
    "SCHEMA_VERSION",
    "ENRICH_CACHE_TABLE",
    "ensure_schema",
    "connect",
    "bulk_load",
    "without_indexes",
    "apply_schema",
    "missing_parts",
    "LISTING_COLUMNS",
    "PENDING_COLUMNS",
    "SORT_COLUMNS",
    "DEAL_RATIO",
    "REAL_EXPRESSIONS",
    "deal_ratio",
]

SCHEMA_VERSION = 19

LISTING_COLUMNS: dict[str, str] = {**LISTING_FIELDS, **LISTING_EXTRA_FIELDS}
PENDING_COLUMNS: dict[str, str] = {**PENDING_FIELDS, **PENDING_EXTRA_FIELDS}

HISTORY_COLUMNS = {
    "id": int,
    "listing_id": int,
    "observed_at": str,
    "price": float,
    "max_bid": float,
    "bids_count": int,
    "effective_price": float,
    "auction_end_date": str,
    # v9: the metrics too, so a rise just before the auction end can be seen (signals/inflation.py)
    "trust_flow": int,
    "citation_flow": int,
    "domain_authority": int,
    "referring_domains": int,
    "backlinks_count": int,
}

SYNC_RUN_COLUMNS = {
    "id": int,
    "job": str,
    "started_at": str,
    "finished_at": str,
    "status": str,
    "requests": int,
    "rows_seen": int,
    "rows_new": int,
    "rows_updated": int,
    "rows_closed": int,
    "throttled": int,
    "error": str,
}

# Where each sync job stands: its paginator's state, committed in the same transaction as
# the rows of the page it follows, so rows and cursor never disagree (a killed sync resumes).
SYNC_STATE_COLUMNS = {
    "job": str,
    "run_id": int,  # the sync_runs row of the pass in progress
    "mode": str,  # full | incremental
    "pass_started_at": str,  # rows seen since then count as seen by this pass
    "cursor": str,  # the paginator's state, JSON
    "high_water": str,  # newest created_at a completed pass saw (incremental runs start below it)
    "last_full_at": str,  # when the last complete full pass ended
    "updated_at": str,
}

# The watchlist (toolkit/sync/watchlist.py writes these two tables, and only these): named
# searches and a shortlist of listings with notes. Timestamps are UTC `YYYY-MM-DDTHH:MM:SSZ`.
SAVED_SEARCH_COLUMNS = {
    "name": str,
    "params": str,  # the query parameters as a JSON object of strings
    "created_at": str,
    "last_opened_at": str,  # null until the search is first opened
    "alerted_until": str,  # alerts have covered listings first seen up to here (null: since created_at)
    "webhook_url": str,  # this search's own webhook (one registered through POST /api/webhooks)
    "webhook_secret": str,  # its HMAC secret (the subscriber's, not an API key)
}
# Alerts waiting for (or past) delivery: one row per saved search and sync run with new
# matches; a channel's column is stamped when it delivered, so nothing is lost or sent twice.
ALERT_OUTBOX_COLUMNS = {
    "id": int,
    "search": str,
    "created_at": str,
    "matches": int,
    "payload": str,  # the JSON body a webhook receives
    "logged_at": str,
    "filed_at": str,
    "posted_at": str,
    "attempts": int,
    "last_error": str,
}
# The enrichment cache (toolkit/enrich/ reads and writes it): one answer per (kind, domain),
# used instead of a request while younger than the kind's maximum age. kind: wayback | rdap
# | language; outcome: ok | available (an RDAP 404) | undetermined; value: the parsed answer, JSON.
ENRICH_CACHE_TABLE = "enrich_cache"
ENRICH_CACHE_COLUMNS = {
    "kind": str,
    "domain": str,  # lower case
    "fetched_at": str,  # UTC, ISO 8601 with Z
    "outcome": str,
    "value": str,
}
# The archive's manifest (toolkit/store/archive.py): one row per Parquet file of `<mirror>.archive/`,
# written in the same transaction that deletes its rows from the mirror. A file it does not
# list is what a stopped archive left, and is removed.
ARCHIVE_PART_COLUMNS = {
    "path": str,  # relative to the archive folder: <table>/month=YYYY-MM/part-<batch>.parquet
    "tbl": str,
    "month": str,  # the month its listings closed in
    "rows": int,
    "checksum": str,  # SHA-256 of its rows as CSV, in primary-key order
    "first_id": int,
    "last_id": int,
    "batch": str,
    "archived_at": str,
}
# Packed closed listings (toolkit/store/packed.py): a listing closed some weeks ago, with its
# history and raw records, as one compressed record (`edt archive --pack-after`); read back
# with the archive's rows. `closed` is its closed_at in milliseconds since 1970 (the archive's
# cut, in 6 bytes rather than 20); `codec` names the `packed_codecs` row (the columns and the
# zstd dictionary) that wrote it; `packed_names` finds a name's packed listings.
PACKED_COLUMNS = {"id": int, "closed": int, "codec": int, "record": bytes}
PACKED_CODEC_COLUMNS = {"id": int, "columns": str, "dictionary": bytes, "made_at": str}
PACKED_INDEXES = {"idx_packed_closed": "closed"}
PACKED_NAMES = (
    "CREATE TABLE IF NOT EXISTS packed_names (name TEXT NOT NULL, id INTEGER NOT NULL, "
    "PRIMARY KEY (name, id)) WITHOUT ROWID"
)
# Each public feed's last download (toolkit/ingest/feed_runner.py): the validators a conditional
# request sends (a 304 writes nothing), committed with the rows of the file they describe.
FEED_STATE_COLUMNS = {
    "feed": str,
    "url": str,  # the address the validators belong to (another address starts afresh)
    "etag": str,
    "last_modified": str,
    "checked_at": str,  # the last answer, 304 or 200
    "changed_at": str,  # the last file ingested
    "snapshot": str,  # zone feeds: the newest snapshot file, which the next one is compared with
}
# The digest of the feed row each ingested listing or pending-delete row was last written from
# (toolkit/ingest): a row of the next file with the same digest is that row unchanged, and only
# its last sighting moves (v18).
FEED_DIGEST_COLUMNS = {"kind": str, "id": int, "digest": int}  # kind: listing | pending_delete, as raw_records
# What each auction the mirror saw end came to (store/results.py derives it after each load).
RESULT_COLUMNS = {
    "listing_id": int,
    "name": str,
    "tld": str,
    "source": str,
    "currency": str,
    "ended_at": str,  # the auction's end
    "final_price": float,  # the last bid before the end, in `currency`; null when nobody bid
    "final_price_eur": float,  # null when the currency has no ECB rate that day
    "asking_price": float,  # the last price asked before the end (the start price without bids)
    "bids": int,
    "sold": int,  # 1: it had bids at its end
    "last_seen_before_end": str,  # the sighting the result comes from
    "next_kind": str,  # closeout | platform | drop; null: not seen again (yet)
    "next_id": int,  # the listing (or pending-delete row) it went to
    "next_source": str,
    "next_seen_at": str,
    "derived_at": str,
}
RESULT_INDEXES = {"idx_results_ended": "ended_at", "idx_results_name": "name"}
# Sales reported elsewhere (a NameBio export, a DNJournal chart: `edt ingest sales`), kept apart
# from the auctions the mirror saw end; `key` makes a repeated import write nothing twice.
REPORTED_SALE_COLUMNS = {
    "key": str,  # name|day|price|currency|venue
    "name": str,
    "tld": str,
    "sold_on": str,  # YYYY-MM-DD
    "price": float,
    "currency": str,
    "price_eur": float,  # at the ECB rate of the day; null when the currency has none
    "venue": str,  # where it sold, as the file says (empty when it does not)
    "origin": str,  # the file it came from
    "imported_at": str,
}
REPORTED_SALE_INDEXES = {"idx_reported_sold": "sold_on", "idx_reported_name": "name"}
# Names watched through their registration lifecycle (sync/watched_names.py writes both):
# each name's latest stage and what comes next, and every change of stage as history.
WATCHED_NAME_COLUMNS = {
    "name": str,  # lower case, as typed (an IDN in Unicode)
    "note": str,
    "added_at": str,
    "stage": str,  # registered | expired | redemption | pending_delete | available | renewed | re_registered; null: not checked yet
    "stage_since": str,  # the first observation in this stage
    "statuses": str,  # the registry's statuses (EPP names), JSON
    "pending": str,  # the pending-delete status the statuses show (lifecycle's six), if any
    "pending_since": str,  # its first observation
    "pending_after": str,  # the observation before that one (the status began between the two)
    "registered_at": str,
    "expires_at": str,
    "registrar": str,
    "checked_at": str,  # the last answer from the registry (or the cache)
    "next_stage": str,
    "expected_from": str,  # the day the next stage is expected from / to (YYYY-MM-DD)
    "expected_to": str,
    "expected_reason": str,
    "listed": str,  # JSON: where the mirror lists it (listings, pending-delete rows), each alerted once
    "rdap": str,  # null until checked; "ok"; or why it cannot be asked ("no RDAP service for .xx")
    "last_error": str,  # the last failed check (the stage is then left as it was: never a guess)
}
NAME_STAGE_COLUMNS = {
    "id": int,
    "name": str,
    "stage": str,
    "previous": str,
    "observed_at": str,
    "statuses": str,
    "expires_at": str,
    "registered_at": str,
    "expected_from": str,
    "expected_to": str,
}
NAME_STAGE_INDEXES = {"idx_name_stages_name": "name, observed_at"}
SHORTLIST_COLUMNS = {
    "listing_id": int,  # a listings id (not a foreign key: a shortlisted row may be pruned)
    "note": str,
    "added_at": str,
    "updated_at": str,
}

# How much a listing is priced under its value: the middle of its live estimate (an auction with
# bids) or else of its price range, over its effective price in EUR (2: priced at half its value).
# No ratio without both, or at a price of 0.
DEAL_RATIO = "iif(effective_price_eur > 0, coalesce(live_mid, value_mid) / effective_price_eur, NULL)"


def deal_ratio(record: Mapping[str, Any]) -> float | None:
    """DEAL_RATIO of one listing record (what the app's and the command line's tables show)."""
    mid = record.get("live_mid") if record.get("live_mid") is not None else record.get("value_mid")
    eur = record.get("effective_price_eur")
    return mid / eur if mid is not None and eur else None


# Expressions of real numbers the filters and sorts read (the columnar index holds them as reals).
REAL_EXPRESSIONS = (DEAL_RATIO,)

# Columns a listing can be sorted on (`sort`, docs/reference/semantics.md), mapped to the stored
# column and whether the stored order is the reverse of the field's (age grows as the
# first snapshot date goes back).
SORT_COLUMNS: dict[str, tuple[str, bool]] = {
    "id": ("id", False),
    "name": ("name", False),
    "score": ("score", False),
    "age": ("wayback_first_date", True),
    "price": ("price", False),
    "effective_price": ("effective_price", False),
    "price_eur": ("price_eur", False),
    "effective_price_eur": ("effective_price_eur", False),
    "max_bid": ("max_bid", False),
    "bids_count": ("bids_count", False),
    "auction_end_date": ("auction_end_date", False),
    "trust_flow": ("trust_flow", False),
    "citation_flow": ("citation_flow", False),
    "domain_authority": ("domain_authority", False),
    "referring_domains": ("referring_domains", False),
    "backlinks_count": ("backlinks_count", False),
    "wayback_snapshots": ("wayback_snapshots", False),
    "historical_traffic_etv": ("historical_traffic_etv", False),
    "created_at": ("created_at", False),
    "first_seen_at": ("first_seen_at", False),
    "value_mid": ("value_mid", False),
    "live_mid": ("live_mid", False),
    "deal": (DEAL_RATIO, False),
}
# Columns every filter and sort reads. One covering index holds them all, so a count (and
# a sort with no index of its own) reads this narrow index instead of the wide table.
# source then tld lead: with ANALYZE's statistics SQLite skip-scans the few sources to seek a tld.
FILTER_COLUMNS = (
    "source",
    "tld",
    "live_until",
    "type",
    "score",
    "trust_flow",
    "citation_flow",
    "domain_authority",
    "referring_domains",
    "backlinks_count",
    "wayback_snapshots",
    "historical_traffic_etv",
    "effective_price",
    "price",
    "max_bid",
    "bids_count",
    "wayback_first_date",
    "has_gmb",
    "ref_domains_edu",
    "ref_domains_gov",
    "language",
    "created_at",
    "auction_end_date",
    "first_seen_at",
    "ttf_topic",
    "name",
    "historical_tech",
    "use_cases",
)

# Sorts people run often get an index in their direction, so a page is a short index walk:
# best score, ending soonest, oldest, cheapest, newest, most bids, TF, RD, DA, traffic, A-Z.
# (Each costs ~1.4 s to build at full scale; other sorts take a top-N over the covering index.)
# Every index ends with what every query checks (id for ties, live_until, source) and the
# listing type, so walking it never reads the table unless another filter asks for more.
#
# Every one holds the open listings only (partial: `closed_at IS NULL`, a column of each so
# that the condition is checked inside it): a live query, which states the condition,
# never walks past closed rows, and a year of closings neither grows them nor slows each
# write. Requests that may match closed rows (`include_closed`, a clock set in the past)
# state no such condition and use none of them: the columnar index's `all` part answers them.
OPEN = "closed_at IS NULL"
_BASE = "id, live_until, source, type, closed_at"
_ONLY_OPEN = f") WHERE ({OPEN}"
SORT_INDEXES = {
    "idx_listings_score": f"score DESC, {_BASE}{_ONLY_OPEN}",
    "idx_listings_ending": f"(auction_end_date IS NULL), auction_end_date, {_BASE}{_ONLY_OPEN}",
    "idx_listings_oldest": f"(wayback_first_date IS NULL), wayback_first_date, {_BASE}{_ONLY_OPEN}",
    "idx_listings_cheapest": f"(effective_price IS NULL), effective_price, {_BASE}{_ONLY_OPEN}",
    "idx_listings_price": f"(price IS NULL), price, {_BASE}{_ONLY_OPEN}",
    "idx_listings_newest": f"created_at DESC, {_BASE}{_ONLY_OPEN}",
    "idx_listings_bids": f"bids_count DESC, {_BASE}{_ONLY_OPEN}",
    "idx_listings_trust_flow": f"trust_flow DESC, {_BASE}{_ONLY_OPEN}",
    "idx_listings_referring": f"referring_domains DESC, {_BASE}{_ONLY_OPEN}",
    "idx_listings_authority": f"domain_authority DESC, {_BASE}{_ONLY_OPEN}",
    "idx_listings_traffic": f"historical_traffic_etv DESC, {_BASE}{_ONLY_OPEN}",
    "idx_listings_name": f"name, {_BASE}{_ONLY_OPEN}",
}

# Filters that only the wide covering index could check get a small index of their own:
# rare flags as partial indexes in score order, topics and languages as seekable keys.
FILTER_INDEXES = {
    "idx_listings_gmb": f"score DESC, {_BASE}) WHERE (has_gmb = 1) AND ({OPEN}",
    "idx_listings_edu_gov": f"score DESC, {_BASE}, wayback_snapshots) WHERE (ref_domains_edu + ref_domains_gov > 0) AND ({OPEN}",
    "idx_listings_tech": f"score DESC, {_BASE}, historical_tech, use_cases) WHERE (historical_tech IS NOT NULL OR use_cases IS NOT NULL) AND ({OPEN}",
    "idx_listings_topic": f"ttf_topic COLLATE NOCASE, {_BASE}{_ONLY_OPEN}",
    "idx_listings_language": f"language, wayback_first_date, {_BASE}{_ONLY_OPEN}",
}

LISTING_INDEXES = {
    # The covering index: every filter's column, open listings only. The live scans (the
    # columnar index's build, a count no narrower index serves) read it and nothing else.
    "idx_listings_filters": ", ".join(FILTER_COLUMNS) + f", closed_at{_ONLY_OPEN}",
    "idx_listings_source_score": f"source, score DESC, id, live_until, type, closed_at{_ONLY_OPEN}",
    "idx_listings_tld_score": f"tld, score DESC, {_BASE}{_ONLY_OPEN}",
    **SORT_INDEXES,
    **FILTER_INDEXES,
    # Every listing, closed ones too: by closing time (the archive's cut, the newest
    # closing) and by name (a domain's listings, its page).
    "idx_listings_closed": "closed_at) WHERE (closed_at IS NOT NULL",
    "idx_listings_lookup": "name",
}

PENDING_INDEXES = {
    "idx_pending_soonest": "(estimated_drop_date IS NULL), estimated_drop_date, id",
    "idx_pending_latest": "(estimated_drop_date IS NOT NULL), estimated_drop_date DESC, id",
    "idx_pending_drop": "estimated_drop_date",
    "idx_pending_tld_drop": "tld, estimated_drop_date, hyphens, digits",  # counts name-shape filters per TLD
    "idx_pending_status_drop": "whois_status, estimated_drop_date",
    "idx_pending_source_drop": "source, estimated_drop_date",
    "idx_pending_week": "week_end",
    "idx_pending_lookup": "domain COLLATE NOCASE",
    "idx_pending_domain": "domain, id, estimated_drop_date",
}
HISTORY_INDEXES = {"idx_history_listing": "listing_id, observed_at"}
CHANGE_INDEXES = {"idx_listing_changes_generation": "generation"}

# Every committed write changes `mirror_meta.generation`, whoever writes: triggers bump it for
# each row inserted, updated or deleted in the tables readers cache (the toolkit's writer,
# `edt enrich`, a notebook's own SQL, sqlite-utils or Datasette alike), so the next query of
# every engine and process sees the write. One UPDATE of a hot one-row page per row: within
# noise on a sync page (83.3 against 84.1 ms for 100 listings at full scale).
_BUMP = "UPDATE mirror_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; "

# The change log: every insert, update or delete of a listing notes its id with the mirror's
# generation at that moment, so the columnar index can re-read only the rows a write
# touched (`toolkit/query/columnar.py`). One row per listing id: the log never outgrows
# the table. `mirror_meta.changes_from` is the first generation the log is complete from:
# a bulk load drops these triggers, and re-creating them starts a new generation after it.
_GENERATION_NOW = "(SELECT COALESCE(CAST(value AS INTEGER), 0) FROM mirror_meta WHERE key = 'generation')"


def _note_change(row: str) -> str:
    # An upsert, not INSERT OR REPLACE: an outer statement's conflict policy would override that.
    return (
        f"INSERT INTO listing_changes (id, generation) VALUES ({row}.id, {_GENERATION_NOW}) "
        "ON CONFLICT(id) DO UPDATE SET generation = excluded.generation; " + _BUMP + "END"
    )


# An update of a listing's last sighting alone (a feed's unchanged row, v18) changes no column
# the columnar index holds: it bumps the generation without noting the listing as changed.
SEEN_COLUMN = "last_seen_at"
_NOTED_COLUMNS = ", ".join(c for c in LISTING_COLUMNS if c != SEEN_COLUMN)

# name -> (table, body)
CHANGE_TRIGGERS = {
    "listings_changes_insert": ("listings", "AFTER INSERT ON listings BEGIN " + _note_change("new")),
    "listings_changes_update": (
        "listings",
        f"AFTER UPDATE OF {_NOTED_COLUMNS} ON listings BEGIN " + _note_change("new"),
    ),
    "listings_seen_update": ("listings", f"AFTER UPDATE OF {SEEN_COLUMN} ON listings BEGIN {_BUMP}END"),
    "listings_changes_rekey": (
        "listings",
        "AFTER UPDATE OF id ON listings WHEN old.id IS NOT new.id BEGIN " + _note_change("old"),
    ),
    "listings_changes_delete": ("listings", "AFTER DELETE ON listings BEGIN " + _note_change("old")),
    **{
        f"{table}_writes_{event.lower()}": (table, f"AFTER {event} ON {table} BEGIN {_BUMP}END")
        for table in ("pending_delete", "listing_history")
        for event in ("INSERT", "UPDATE", "DELETE")
    },
}
SYNC_RUN_INDEXES = {"idx_sync_runs_job": "job, started_at"}
# The trigram full-text index of each searchable table (`contains`, `q`, the name box).
FTS_COLUMNS = {"listings": "name", "pending_delete": "domain"}
# sqlite-utils' update trigger re-indexes a row's name on every update; ours only when the
# name or the rowid changed, so an update of other columns (a sync's upsert, the price
# ranges of every live listing) leaves the trigram index alone: 11 s instead of 28 s for an
# update of 727,000 listings. (sqlite-utils checks the trigger's name only, so it keeps it.)
FTS_UPDATE_TRIGGERS = {
    table: (
        f"CREATE TRIGGER {table}_au AFTER UPDATE ON {table} WHEN old.rowid IS NOT new.rowid OR old.{column} "
        f"IS NOT new.{column} BEGIN INSERT INTO {table}_fts ({table}_fts, rowid, {column}) VALUES('delete', "
        f"old.rowid, old.{column}); INSERT INTO {table}_fts (rowid, {column}) VALUES (new.rowid, new.{column}); END"
    )
    for table, column in FTS_COLUMNS.items()
}


def _narrow_fts_update(conn: sqlite3.Connection, table: str) -> None:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", [f"{table}_au"]).fetchone()
    if row is None or row[0] != FTS_UPDATE_TRIGGERS[table]:
        conn.execute(f"DROP TRIGGER IF EXISTS {table}_au")
        conn.execute(FTS_UPDATE_TRIGGERS[table])


def _table(db: "sqlite_utils.Database", name: str, columns: dict[str, type], pk) -> None:
    table = db[name]
    if not table.exists():
        table.create(columns, pk=pk)
        return
    existing = set(table.columns_dict)
    for column, col_type in columns.items():
        if column not in existing:
            table.add_column(column, col_type)


def _sqlite_types(columns: dict[str, str]) -> dict[str, type]:
    mapping = {"INTEGER": int, "REAL": float, "TEXT": str}
    return {name: mapping[SQL_TYPES[kind]] for name, kind in columns.items()}


def _ensure_indexes(conn: sqlite3.Connection, table: str, declared: dict[str, str]) -> None:
    """Make the table's indexes exactly the declared ones: a changed declaration is rebuilt,
    an index no longer declared is dropped (FTS shadow tables are not touched)."""
    existing = dict(
        conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [table]
        ).fetchall()
    )
    for name, sql in existing.items():
        if name not in declared or " ".join(sql.split()) != _index_sql(name, table, declared[name]):
            conn.execute(f"DROP INDEX {name}")
            existing[name] = None
    for name, cols in declared.items():
        if existing.get(name) is None:
            conn.execute(_index_sql(name, table, cols))


def _index_sql(name: str, table: str, cols: str) -> str:
    return f"CREATE INDEX {name} ON {table} ({cols})"


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


_DATA_MIGRATIONS: dict[int, Callable[["sqlite_utils.Database"], None]] = {
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


def connect(path: str, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection with the mirror's pragmas. Read-only connections never take a write lock."""
    if readonly:  # mode=ro, or immutable=1 in a read-only place (store/access.py)
        conn = sqlite3.connect(read_only_uri(path), uri=True, check_same_thread=False)
    else:
        new = path == ":memory:" or not os.path.exists(path) or os.path.getsize(path) == 0
        conn = sqlite3.connect(path, check_same_thread=False)
        if new:  # a new file gives pages back as they free (an archive): settable only before WAL and tables
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")  # wait for another writer, never fail at once
        _switch_to_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA cache_size=-65536")
    conn.execute("PRAGMA mmap_size=1073741824")
    conn.execute("PRAGMA temp_store=MEMORY")
    return conn


def _switch_to_wal(conn: sqlite3.Connection) -> None:
    """`PRAGMA journal_mode=WAL`, waiting as the busy timeout would. A bulk load that has the
    file to itself runs in rollback-journal mode (`one_transaction(bulk=True)`); while it
    holds the write lock, switching back to WAL is refused at once, without SQLite's busy
    handler. So a reader started during `edt demo` waits here, up to BUSY_TIMEOUT_MS, for
    the load to end, then answers (after that, SQLite's "database is locked")."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    pause = 0.005
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _fingerprint() -> str:
    """Changes whenever a declared table, column or index changes."""
    declared = (
        LISTING_COLUMNS,
        PENDING_COLUMNS,
        HISTORY_COLUMNS,
        SYNC_RUN_COLUMNS,
        SYNC_STATE_COLUMNS,
        SAVED_SEARCH_COLUMNS,
        SHORTLIST_COLUMNS,
        ALERT_OUTBOX_COLUMNS,
        ENRICH_CACHE_COLUMNS,
        ARCHIVE_PART_COLUMNS,
        LISTING_INDEXES,
        PENDING_INDEXES,
        HISTORY_INDEXES,
        SYNC_RUN_INDEXES,
        CHANGE_INDEXES,
        CHANGE_TRIGGERS,
        PACKED_COLUMNS,
        PACKED_CODEC_COLUMNS,
        PACKED_INDEXES,
        PACKED_NAMES,
        FEED_STATE_COLUMNS,
        RESULT_COLUMNS,
        RESULT_INDEXES,
        FTS_UPDATE_TRIGGERS,
        WATCHED_NAME_COLUMNS,
        NAME_STAGE_COLUMNS,
        NAME_STAGE_INDEXES,
        FEED_DIGEST_COLUMNS,
        REPORTED_SALE_COLUMNS,
        REPORTED_SALE_INDEXES,
    )
    return hashlib.sha1(repr(declared).encode()).hexdigest()[:16]


def _stored(conn: sqlite3.Connection, key: str) -> str | None:
    try:
        row = conn.execute("SELECT value FROM mirror_meta WHERE key = ?", [key]).fetchone()
    except sqlite3.OperationalError:
        return None
    return row[0] if row else None


def _schema_cookie(conn: sqlite3.Connection) -> str:
    # SQLite's own counter of schema changes: a tool that drops or rebuilds a table (and our
    # triggers with it) changes it, and the next read-write open re-applies the declarations.
    return str(conn.execute("PRAGMA schema_version").fetchone()[0])


def ensure_schema(conn: sqlite3.Connection) -> int:
    """Create or upgrade the mirror's shape; returns the version it had before."""
    before = conn.execute("PRAGMA user_version").fetchone()[0]
    if (
        before == SCHEMA_VERSION
        and _stored(conn, "schema_fingerprint") == _fingerprint()
        and _stored(conn, "schema_cookie") == _schema_cookie(conn)
    ):
        return before  # the usual case, without importing sqlite_utils (and pandas with it)
    if before > SCHEMA_VERSION:
        raise RuntimeError(
            f"the mirror has schema version {before}, newer than this toolkit's {SCHEMA_VERSION}: upgrade the toolkit"
        )
    if before:  # an upgrade rewrites much of an existing mirror: never around damage (edt doctor says what to do)
        found = [row[0] for row in conn.execute("PRAGMA quick_check(3)")]
        if found != ["ok"]:
            raise sqlite3.DatabaseError(f"database disk image is malformed ({'; '.join(found)})")
    with conn:
        apply_schema(conn, before)
    return before


def apply_schema(conn: sqlite3.Connection, before: int | None = None) -> None:
    """`ensure_schema`'s work inside the caller's transaction (a bulk load's, which must not
    commit midway): every declared table, column, index, trigger and FTS index made present,
    the data migrations newer than `before` (default: the stored version) run."""
    import sqlite_utils

    if before is None:
        before = conn.execute("PRAGMA user_version").fetchone()[0]
    db = sqlite_utils.Database(conn)
    _table(db, "listings", _sqlite_types(LISTING_COLUMNS), "id")
    _table(db, "listing_history", HISTORY_COLUMNS, "id")
    _table(db, "pending_delete", _sqlite_types(PENDING_COLUMNS), "id")
    _table(db, "sync_runs", SYNC_RUN_COLUMNS, "id")
    _table(db, "sync_state", SYNC_STATE_COLUMNS, "job")
    _table(db, "raw_records", {"kind": str, "id": int, "raw": str}, ("kind", "id"))
    _table(db, "mirror_meta", {"key": str, "value": str}, "key")
    # v5 adds the watchlist tables
    _table(db, "saved_searches", SAVED_SEARCH_COLUMNS, "name")
    _table(db, "shortlist", SHORTLIST_COLUMNS, "listing_id")
    # v6 adds alerts: saved_searches.alerted_until and the alert_outbox
    _table(db, "alert_outbox", ALERT_OUTBOX_COLUMNS, "id")
    # v7 declares the enrichment cache (earlier toolkits created it on first use)
    _table(db, ENRICH_CACHE_TABLE, ENRICH_CACHE_COLUMNS, ("kind", "domain"))
    _table(db, "listing_changes", {"id": int, "generation": int}, "id")
    _table(db, "archive_parts", ARCHIVE_PART_COLUMNS, "path")  # v11
    _table(db, "packed_listings", PACKED_COLUMNS, "id")  # v12
    _table(db, "packed_codecs", PACKED_CODEC_COLUMNS, "id")
    _table(db, "feed_state", FEED_STATE_COLUMNS, "feed")  # v13
    _table(db, "auction_results", RESULT_COLUMNS, "listing_id")  # v14
    _table(db, "watched_names", WATCHED_NAME_COLUMNS, "name")  # v16
    _table(db, "name_stages", NAME_STAGE_COLUMNS, "id")
    _table(db, "feed_digests", FEED_DIGEST_COLUMNS, ("kind", "id"))  # v18
    _table(db, "reported_sales", REPORTED_SALE_COLUMNS, "key")  # v17
    conn.execute(PACKED_NAMES)  # keyed by name, with no rowid: a name's lookup without an index beside it
    for version in sorted(_DATA_MIGRATIONS):
        if before < version:
            _DATA_MIGRATIONS[version](db)
    _ensure_indexes(conn, "listings", LISTING_INDEXES)
    _ensure_indexes(conn, "pending_delete", PENDING_INDEXES)
    _ensure_indexes(conn, "listing_history", HISTORY_INDEXES)
    _ensure_indexes(conn, "sync_runs", SYNC_RUN_INDEXES)
    _ensure_indexes(conn, "listing_changes", CHANGE_INDEXES)
    _ensure_indexes(conn, "packed_listings", PACKED_INDEXES)
    _ensure_indexes(conn, "auction_results", RESULT_INDEXES)
    _ensure_indexes(conn, "name_stages", NAME_STAGE_INDEXES)
    _ensure_indexes(conn, "reported_sales", REPORTED_SALE_INDEXES)
    _ensure_change_triggers(conn)
    for table in ("listings", "pending_delete"):
        # present and kept by its triggers, else (re)created and filled from the table
        db[table].enable_fts([FTS_COLUMNS[table]], tokenize="trigram", create_triggers=True, replace=True)
        _narrow_fts_update(conn, table)
    conn.executemany(
        "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [("schema_fingerprint", _fingerprint()), ("schema_cookie", _schema_cookie(conn))],
    )
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def _ensure_change_triggers(conn: sqlite3.Connection) -> None:
    """Create the change log's and the generation's triggers as declared. When any had to be
    (re)created, writes may have gone unseen (a bulk load, an older toolkit, a tool that
    rebuilt a table): the log restarts, complete from a new generation on."""
    existing = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'").fetchall())
    missing = [
        name for name, (_, body) in CHANGE_TRIGGERS.items() if existing.get(name) != f"CREATE TRIGGER {name} {body}"
    ]
    if not missing:
        return
    for name in missing:
        conn.execute(f"DROP TRIGGER IF EXISTS {name}")
        conn.execute(f"CREATE TRIGGER {name} {CHANGE_TRIGGERS[name][1]}")
    # A new generation, from which the log is complete: an index of an older one is built whole.
    conn.execute("DELETE FROM listing_changes")
    conn.execute(
        "INSERT INTO mirror_meta (key, value) VALUES ('generation', '1') "
        "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
    )
    conn.execute(
        "INSERT INTO mirror_meta (key, value) SELECT 'changes_from', value FROM mirror_meta WHERE key = 'generation' "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value"
    )


def missing_parts(conn: sqlite3.Connection) -> list[str]:
    """What of the declared shape the mirror lacks (an interrupted load of an older toolkit, a
    tool that dropped a table's triggers or indexes), each as `index idx_...`, `trigger ...` or
    `full-text index of listings (N of M rows)`. Opening the mirror read-write puts them back."""
    found = {(kind, name) for kind, name in conn.execute("SELECT type, name FROM sqlite_master")}
    declared = [
        *LISTING_INDEXES,
        *PENDING_INDEXES,
        *HISTORY_INDEXES,
        *SYNC_RUN_INDEXES,
        *CHANGE_INDEXES,
        *PACKED_INDEXES,
    ]
    missing = [f"index {name}" for name in declared if ("index", name) not in found]
    missing += [f"trigger {name}" for name in CHANGE_TRIGGERS if ("trigger", name) not in found]
    for table in FTS_COLUMNS:
        triggers = [f"{table}_{suffix}" for suffix in ("ai", "ad", "au")]
        if ("table", f"{table}_fts_docsize") not in found or any(("trigger", t) not in found for t in triggers):
            missing.append(f"full-text index of {table}")
            continue
        indexed = conn.execute(f"SELECT count(*) FROM {table}_fts_docsize").fetchone()[0]
        rows = conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        if indexed != rows:
            missing.append(f"full-text index of {table} ({indexed:,} of {rows:,} rows)")
    return missing


def _index_names(conn: sqlite3.Connection, table: str) -> list[str]:
    return [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [table]
        )
    ]


@contextmanager
def without_indexes(
    conn: sqlite3.Connection, tables: tuple[str, ...] = ("listings", "pending_delete")
) -> Iterator[None]:
    """Write many rows fast inside the caller's transaction: the tables' secondary indexes and
    triggers (and the generation's triggers on every table) are dropped, then (when the block ends without an error) rebuilt in one pass each,
    far cheaper than maintaining them row by row. Re-creating the change triggers starts a new
    generation, so every reader's cache is renewed. On an error nothing is rebuilt: the
    caller's rollback brings the dropped ones back."""
    for table in tables:
        for name in _index_names(conn, table):
            conn.execute(f"DROP INDEX {name}")
    for trigger, table in conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        if table in tables or trigger in CHANGE_TRIGGERS:  # history rows too are written without a bump each
            conn.execute(f"DROP TRIGGER {trigger}")
    yield
    import sqlite_utils

    db = sqlite_utils.Database(conn)
    # Index builds sort every row. SQLite's sorter is fastest with a small cache and temp
    # files: it then sorts runs of ~4 MB on a second thread and merges them, where one
    # large in-memory run sorts on one thread (measured at full scale: 0.6 s against
    # 1.4 s an index).
    cache = conn.execute("PRAGMA cache_size").fetchone()[0]
    temp_store = conn.execute("PRAGMA temp_store").fetchone()[0]
    conn.execute("PRAGMA cache_size=-4000")
    with contextlib.suppress(sqlite3.OperationalError):  # refused once this transaction used a temp table
        conn.execute("PRAGMA temp_store=FILE")
    conn.execute("PRAGMA threads=2")
    try:
        for table in tables:
            # replace=True recreates the FTS table and fills it from the content table.
            db[table].enable_fts([FTS_COLUMNS[table]], tokenize="trigram", create_triggers=True, replace=True)
        apply_schema(conn)  # the indexes and triggers again, a new generation
        conn.execute("PRAGMA analysis_limit=1000")  # sampled statistics: enough for the planner
        conn.execute("ANALYZE")
        conn.execute(
            "INSERT INTO mirror_meta (key, value) VALUES ('schema_cookie', ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            [_schema_cookie(conn)],  # ANALYZE may have created its table
        )
    finally:
        conn.execute(f"PRAGMA cache_size={cache}")
        with contextlib.suppress(sqlite3.OperationalError):
            conn.execute(f"PRAGMA temp_store={temp_store}")
        conn.execute("PRAGMA threads=0")


@contextmanager
def bulk_load(conn: sqlite3.Connection, tables: tuple[str, ...] = ("listings", "pending_delete")) -> Iterator[Any]:
    """A load that is all or nothing, written fast: one transaction (`one_transaction(bulk=True)`)
    with the tables' indexes dropped for the load and rebuilt at its end (`without_indexes`).
    Write through the connection it yields; a Ctrl-C, a kill or an error anywhere, index
    builds included, leaves the mirror as it was before."""
    from .transaction import one_transaction

    with one_transaction(conn, bulk=True) as writer:
        with without_indexes(conn, tables):
            yield writer
