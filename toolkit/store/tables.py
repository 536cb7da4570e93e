"""The mirror's tables, indexes and triggers, declared once: what `schema.py` applies.

Each table's columns, the indexes the queries are built on, the triggers that keep the
generation and the change log, and the trigram index's update trigger. Changing any of them
changes `declared_fingerprint()`, and the next read-write open applies the declarations again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from .fields import (
    LISTING_EXTRA_FIELDS,
    LISTING_FIELDS,
    PENDING_EXTRA_FIELDS,
    PENDING_FIELDS,
)

__all__ = [
    "SCHEMA_VERSION",
    "LISTING_COLUMNS",
    "PENDING_COLUMNS",
    "HISTORY_COLUMNS",
    "SYNC_RUN_COLUMNS",
    "SYNC_STATE_COLUMNS",
    "SAVED_SEARCH_COLUMNS",
    "ALERT_OUTBOX_COLUMNS",
    "ENRICH_CACHE_TABLE",
    "ENRICH_CACHE_COLUMNS",
    "ARCHIVE_PART_COLUMNS",
    "PACKED_COLUMNS",
    "PACKED_CODEC_COLUMNS",
    "PACKED_INDEXES",
    "PACKED_NAMES",
    "FEED_STATE_COLUMNS",
    "FEED_DIGEST_COLUMNS",
    "RESULT_COLUMNS",
    "RESULT_INDEXES",
    "REPORTED_SALE_COLUMNS",
    "REPORTED_SALE_INDEXES",
    "WATCHED_NAME_COLUMNS",
    "NAME_STAGE_COLUMNS",
    "NAME_STAGE_INDEXES",
    "SHORTLIST_COLUMNS",
    "DEAL_RATIO",
    "deal_ratio",
    "REAL_EXPRESSIONS",
    "SORT_COLUMNS",
    "FILTER_COLUMNS",
    "OPEN",
    "SORT_INDEXES",
    "FILTER_INDEXES",
    "LISTING_INDEXES",
    "PENDING_INDEXES",
    "HISTORY_INDEXES",
    "CHANGE_INDEXES",
    "GENERATION_BUMP",
    "SEEN_COLUMN",
    "SEEN_TRIGGERS",
    "CHANGE_TRIGGERS",
    "SYNC_RUN_INDEXES",
    "FTS_COLUMNS",
    "FTS_UPDATE_TRIGGERS",
    "declared_fingerprint",
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

# The watchlist (toolkit/sync/saved_searches.py writes these two tables, and only these): named
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
# The archive's manifest (toolkit/store/parquet_archive.py): one row per Parquet file of `<mirror>.archive/`,
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
RESULT_MOMENTS = ("ended_at", "last_seen_before_end", "next_seen_at", "derived_at")  # UTC, as the API writes them
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
GENERATION_BUMP = "UPDATE mirror_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'; "

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
        "ON CONFLICT(id) DO UPDATE SET generation = excluded.generation; " + GENERATION_BUMP + "END"
    )


# An update of a listing's last sighting alone (a feed's unchanged row, v18) changes no column
# the columnar index holds: it bumps the generation without noting the listing as changed.
SEEN_COLUMN = "last_seen_at"
_NOTED_COLUMNS = ", ".join(c for c in LISTING_COLUMNS if c != SEEN_COLUMN)
# The trigger that bumps the generation when a row's last sighting alone moves, by table. A
# writer moving many sightings at once sets it aside and bumps once (`schema.without_trigger`).
SEEN_TRIGGERS = {"listings": "listings_seen_update", "pending_delete": "pending_delete_writes_update"}

# name -> (table, body)
CHANGE_TRIGGERS = {
    "listings_changes_insert": ("listings", "AFTER INSERT ON listings BEGIN " + _note_change("new")),
    "listings_changes_update": (
        "listings",
        f"AFTER UPDATE OF {_NOTED_COLUMNS} ON listings BEGIN " + _note_change("new"),
    ),
    SEEN_TRIGGERS["listings"]: ("listings", f"AFTER UPDATE OF {SEEN_COLUMN} ON listings BEGIN {GENERATION_BUMP}END"),
    "listings_changes_rekey": (
        "listings",
        "AFTER UPDATE OF id ON listings WHEN old.id IS NOT new.id BEGIN " + _note_change("old"),
    ),
    "listings_changes_delete": ("listings", "AFTER DELETE ON listings BEGIN " + _note_change("old")),
    **{
        f"{table}_writes_{event.lower()}": (table, f"AFTER {event} ON {table} BEGIN {GENERATION_BUMP}END")
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


def declared_fingerprint() -> str:
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
