"""The mirror's shape, declared once and re-applied idempotently.

`ensure_schema` creates what is missing (tables, columns, indexes, the FTS index) and
records `SCHEMA_VERSION` in `PRAGMA user_version`, so opening an older mirror upgrades it
in place without touching its rows. A change that cannot be expressed as "add what is
missing" goes into `migrations.DATA_MIGRATIONS` under the version that introduces it. The tables,
indexes and triggers themselves are declared in `tables.py`.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils brings pandas: imported where the schema is applied, not to read it
    import sqlite_utils

from .access import BUSY_TIMEOUT_MS, read_only_uri
from .fields import SQL_TYPES
from .migrations import DATA_MIGRATIONS
from .tables import (
    ALERT_OUTBOX_COLUMNS,
    ARCHIVE_PART_COLUMNS,
    CHANGE_INDEXES,
    CHANGE_TRIGGERS,
    DEAL_RATIO,
    ENRICH_CACHE_COLUMNS,
    ENRICH_CACHE_TABLE,
    FEED_DIGEST_COLUMNS,
    FEED_STATE_COLUMNS,
    FTS_COLUMNS,
    FTS_UPDATE_TRIGGERS,
    HISTORY_COLUMNS,
    HISTORY_INDEXES,
    LISTING_COLUMNS,
    LISTING_INDEXES,
    NAME_STAGE_COLUMNS,
    NAME_STAGE_INDEXES,
    OPEN,
    PACKED_CODEC_COLUMNS,
    PACKED_COLUMNS,
    PACKED_INDEXES,
    PACKED_NAMES,
    PENDING_COLUMNS,
    PENDING_INDEXES,
    REAL_EXPRESSIONS,
    REPORTED_SALE_COLUMNS,
    REPORTED_SALE_INDEXES,
    RESULT_COLUMNS,
    RESULT_INDEXES,
    RESULT_MOMENTS,
    SAVED_SEARCH_COLUMNS,
    SCHEMA_VERSION,
    SHORTLIST_COLUMNS,
    SORT_COLUMNS,
    SORT_INDEXES,
    SYNC_RUN_COLUMNS,
    SYNC_RUN_INDEXES,
    SYNC_STATE_COLUMNS,
    WATCHED_NAME_COLUMNS,
    declared_fingerprint,
    deal_ratio,
)

__all__ = [
    "SCHEMA_VERSION",
    "ENRICH_CACHE_TABLE",
    "ensure_schema",
    "connect",
    "bulk_load",
    "without_indexes",
    "without_trigger",
    "apply_schema",
    "missing_parts",
    "LISTING_COLUMNS",
    "PENDING_COLUMNS",
    "SORT_COLUMNS",
    "DEAL_RATIO",
    "REAL_EXPRESSIONS",
    "deal_ratio",
    # declared in tables.py; offered here too, where the readers have always found them
    "OPEN",
    "SORT_INDEXES",
    "LISTING_INDEXES",
    "HISTORY_INDEXES",
    "CHANGE_TRIGGERS",
    "RESULT_COLUMNS",
    "RESULT_MOMENTS",
    "WATCHED_NAME_COLUMNS",
]


def _narrow_fts_update(conn: sqlite3.Connection, table: str) -> None:
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", [f"{table}_au"]).fetchone()
    if row is None or row[0] != FTS_UPDATE_TRIGGERS[table]:
        conn.execute(f"DROP TRIGGER IF EXISTS {table}_au")
        conn.execute(FTS_UPDATE_TRIGGERS[table])


def _table(db: "sqlite_utils.Database", name: str, columns: Mapping[str, type], pk: str | tuple[str, ...]) -> None:
    table = db.table(name)
    if not table.exists():
        table.create(dict(columns), pk=pk)
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
        and _stored(conn, "schema_fingerprint") == declared_fingerprint()
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
    for version in sorted(DATA_MIGRATIONS):
        if before < version:
            DATA_MIGRATIONS[version](db)
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
        db.table(table).enable_fts([FTS_COLUMNS[table]], tokenize="trigram", create_triggers=True, replace=True)
        _narrow_fts_update(conn, table)
    conn.executemany(
        "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [("schema_fingerprint", declared_fingerprint()), ("schema_cookie", _schema_cookie(conn))],
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
            db.table(table).enable_fts([FTS_COLUMNS[table]], tokenize="trigram", create_triggers=True, replace=True)
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
def without_trigger(conn: sqlite3.Connection, name: str) -> Iterator[None]:
    """Run a block of writes inside the caller's transaction without trigger `name` (a trigger
    is DDL, which SQLite commits or rolls back with the transaction): it is dropped, then
    created again from its own SQL when the block ends. What it would have done is the
    caller's to do once (a generation bump for a hundred thousand rows, not one a row). On an
    error it is not created here: the caller's rollback brings it back."""
    row = conn.execute("SELECT sql FROM main.sqlite_master WHERE type = 'trigger' AND name = ?", [name]).fetchone()
    if row is None:
        yield
        return
    conn.execute(f"DROP TRIGGER main.{name}")
    yield
    conn.execute(row[0])


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
