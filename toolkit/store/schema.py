"""The mirror's shape, declared once and re-applied idempotently.

`ensure_schema` creates what is missing (tables, columns, indexes, the FTS index) and
records `SCHEMA_VERSION` in `PRAGMA user_version`, so opening an older mirror upgrades it
in place without touching its rows. A change that cannot be expressed as "add what is
missing" goes into `_DATA_MIGRATIONS` under the version that introduces it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import sqlite_utils

from .fields import (
    LISTING_EXTRA_FIELDS,
    LISTING_FIELDS,
    PENDING_EXTRA_FIELDS,
    PENDING_FIELDS,
    SQL_TYPES,
)

__all__ = ["SCHEMA_VERSION", "ensure_schema", "connect", "bulk_load", "LISTING_COLUMNS", "PENDING_COLUMNS", "SORT_COLUMNS"]

SCHEMA_VERSION = 2

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

# Columns a listing can be sorted on (contract section 3 `sort`), mapped to the stored
# column and whether the stored order is the reverse of the field's (age grows as the
# first snapshot date goes back).
SORT_COLUMNS: dict[str, tuple[str, bool]] = {
    "id": ("id", False),
    "name": ("name", False),
    "score": ("score", False),
    "age": ("wayback_first_date", True),
    "price": ("price", False),
    "effective_price": ("effective_price", False),
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
}
_NOT_NULL_SORTS = {"id", "name", "created_at", "first_seen_at"}
# Sorts people run ascending (cheapest first, ending soonest, oldest first) get an index
# for that direction too; other ascending sorts are answered with a sort step.
_ASCENDING_SORTS = {"price", "effective_price", "max_bid", "auction_end_date", "wayback_first_date"}


def _listing_indexes() -> dict[str, str]:
    """Index name -> column list. Each sort column gets one index per direction, so that a
    sort with nulls last and ties by id reads the index in order and stops at the page."""
    indexes: dict[str, str] = {}
    for column, _ in SORT_COLUMNS.values():
        if column == "id":
            continue
        indexes[f"idx_listings_{column}_desc"] = f"{column} DESC"
        if column in _ASCENDING_SORTS:
            indexes[f"idx_listings_{column}_asc"] = f"({column} IS NULL), {column}"
    indexes.update(
        {
            "idx_listings_source_score": "source, score DESC",
            "idx_listings_tld_score": "tld, score DESC",
            "idx_listings_type_score": "type, score DESC",
            "idx_listings_language": "language",
            "idx_listings_live_until": "live_until",
            "idx_listings_ttf_topic": "ttf_topic COLLATE NOCASE",
        }
    )
    return indexes


LISTING_INDEXES = _listing_indexes()

PENDING_INDEXES = {
    "idx_pending_drop": "estimated_drop_date",
    "idx_pending_tld_drop": "tld, estimated_drop_date",
    "idx_pending_status_drop": "whois_status, estimated_drop_date",
    "idx_pending_week": "week_end",
    "idx_pending_domain": "domain COLLATE NOCASE",
}


def _table(db: sqlite_utils.Database, name: str, columns: dict[str, type], pk) -> None:
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


def _migrate_v2(db: sqlite_utils.Database) -> None:
    # v2 derives live_until for rows written by v1.
    db.execute(
        "UPDATE listings SET live_until = COALESCE(closed_at, auction_end_date, '9999-12-31T23:59:59Z') "
        "WHERE live_until IS NULL"
    )


_DATA_MIGRATIONS: dict[int, Callable[[sqlite_utils.Database], None]] = {2: _migrate_v2}


def connect(path: str, *, readonly: bool = False) -> sqlite3.Connection:
    """A connection with the mirror's pragmas. Read-only connections never take a write lock."""
    if readonly:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
    else:
        conn = sqlite3.connect(path, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute("PRAGMA cache_size=-65536")
    conn.execute("PRAGMA mmap_size=1073741824")
    conn.execute("PRAGMA temp_store=MEMORY")
    return conn


def ensure_schema(conn: sqlite3.Connection) -> int:
    """Create or upgrade the mirror's shape; returns the version it had before."""
    db = sqlite_utils.Database(conn)
    before = conn.execute("PRAGMA user_version").fetchone()[0]
    if before == SCHEMA_VERSION and db["listings_fts"].exists():
        return before
    if before > SCHEMA_VERSION:
        raise RuntimeError(
            f"the mirror has schema version {before}, newer than this toolkit's {SCHEMA_VERSION}: upgrade the toolkit"
        )
    with conn:
        _table(db, "listings", _sqlite_types(LISTING_COLUMNS), "id")
        _table(db, "listing_history", HISTORY_COLUMNS, "id")
        _table(db, "pending_delete", _sqlite_types(PENDING_COLUMNS), "id")
        _table(db, "sync_runs", SYNC_RUN_COLUMNS, "id")
        _table(db, "raw_records", {"kind": str, "id": int, "raw": str}, ("kind", "id"))
        _table(db, "mirror_meta", {"key": str, "value": str}, "key")
        for version in sorted(_DATA_MIGRATIONS):
            if before < version:
                _DATA_MIGRATIONS[version](db)
        for name, cols in LISTING_INDEXES.items():
            conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON listings ({cols})")
        for name, cols in PENDING_INDEXES.items():
            conn.execute(f"CREATE INDEX IF NOT EXISTS {name} ON pending_delete ({cols})")
        conn.execute("CREATE INDEX IF NOT EXISTS idx_history_listing ON listing_history (listing_id, observed_at)")
        conn.execute("CREATE INDEX IF NOT EXISTS idx_sync_runs_job ON sync_runs (job, started_at)")
        for table in ("listings", "pending_delete"):
            column = "name" if table == "listings" else "domain"
            if not db[f"{table}_fts"].exists():
                db[table].enable_fts([column], tokenize="trigram", create_triggers=True)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    return before


def _index_names(conn: sqlite3.Connection, table: str) -> list[str]:
    return [
        name
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [table]
        )
    ]


@contextmanager
def bulk_load(conn: sqlite3.Connection, tables: tuple[str, ...] = ("listings", "pending_delete")) -> Iterator[None]:
    """Write many rows fast: secondary indexes and FTS triggers are dropped for the load,
    then rebuilt in one pass each (far cheaper than maintaining them row by row)."""
    with conn:
        for table in tables:
            for name in _index_names(conn, table):
                conn.execute(f"DROP INDEX {name}")
            for (trigger,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?", [table]
            ).fetchall():
                conn.execute(f"DROP TRIGGER {trigger}")
    try:
        yield
    finally:
        db = sqlite_utils.Database(conn)
        with conn:
            for table in tables:
                column = "name" if table == "listings" else "domain"
                db[table].enable_fts([column], tokenize="trigram", create_triggers=True, replace=True)
                conn.execute(f"INSERT INTO {table}_fts ({table}_fts) VALUES ('rebuild')")
        conn.execute("PRAGMA user_version = 0")  # makes ensure_schema re-create the indexes
        ensure_schema(conn)
        conn.execute("ANALYZE")
