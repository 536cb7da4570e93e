"""The mirror's shape (versioned, upgraded in place, WAL) and the one writer."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import fixed_clock, listing_records, pending_row
from toolkit import Mirror
from toolkit.query.dataframes import HISTORY_COLUMNS
from toolkit.store.schema import CHANGE_TRIGGERS, SCHEMA_VERSION, ensure_schema
from toolkit.store.tables import GENERATION_BUMP
from toolkit.store.writer import close_listings, save_listings, save_pending


def test_a_new_mirror_has_every_table_in_wal_mode(tmp_path):
    m = Mirror(tmp_path / "m.db", create=True)
    conn = m.connection()
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {
        "listings",
        "listing_history",
        "pending_delete",
        "sync_runs",
        "raw_records",
        "mirror_meta",
        "listings_fts",
        "pending_delete_fts",
    } <= tables
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    sync_cols = [r[1] for r in conn.execute("PRAGMA table_info(sync_runs)")]
    assert sync_cols == [
        "id",
        "job",
        "started_at",
        "finished_at",
        "status",
        "requests",
        "rows_seen",
        "rows_new",
        "rows_updated",
        "rows_closed",
        "throttled",
        "error",
    ]
    history_cols = [r[1] for r in conn.execute("PRAGMA table_info(listing_history)")]
    assert history_cols == ["id", "listing_id", *HISTORY_COLUMNS]  # what `listing_history` reads, in order


def test_opening_an_older_mirror_upgrades_it_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    # A version-1 mirror: no live_until column, no indexes, no FTS yet.
    conn.execute(
        "CREATE TABLE listings (id INTEGER PRIMARY KEY, name TEXT, source TEXT, auction_end_date TEXT, "
        "closed_at TEXT, score INTEGER)"
    )
    conn.execute("INSERT INTO listings VALUES (7, 'old.com', 'sedo', '2030-01-01T00:00:00Z', NULL, 55)")
    conn.execute("PRAGMA user_version = 1")
    conn.commit()
    conn.close()
    m = Mirror(path, clock=fixed_clock)
    conn = m.connection()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT live_until FROM listings WHERE id = 7").fetchone()[0] == "2030-01-01T00:00:00Z"
    page = m.search_domains({"contains": "old"})
    assert [r["id"] for r in page["data"]] == [7]  # FTS was built over the old rows


def test_v7_declares_the_enrichment_cache_and_keeps_a_v6_cache(tmp_path):
    fresh = Mirror(tmp_path / "fresh.db", create=True).connection()
    columns = [(r[1], r[5]) for r in fresh.execute("PRAGMA table_info(enrich_cache)")]
    assert columns == [("kind", 1), ("domain", 2), ("fetched_at", 0), ("outcome", 0), ("value", 0)]
    # A v6 mirror whose cache was created on first use by `edt enrich`, with an answer in it.
    path = tmp_path / "v6.db"
    Mirror(path, create=True).close()
    conn = sqlite3.connect(path)
    conn.execute("DROP TABLE enrich_cache")
    conn.execute(
        "CREATE TABLE enrich_cache (kind TEXT NOT NULL, domain TEXT NOT NULL, fetched_at TEXT NOT NULL, "
        "outcome TEXT NOT NULL, value TEXT, PRIMARY KEY (kind, domain))"
    )
    conn.execute("INSERT INTO enrich_cache VALUES ('rdap', 'a.com', '2026-11-01T00:00:00Z', 'available', '{}')")
    conn.execute("PRAGMA user_version = 6")
    conn.commit()
    conn.close()
    upgraded = Mirror(path).connection()
    assert upgraded.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 7
    assert upgraded.execute("SELECT kind, domain, outcome FROM enrich_cache").fetchall() == [
        ("rdap", "a.com", "available")
    ]


def test_v8_adds_the_drop_window_to_a_v7_mirror_in_place(tmp_path):
    """A v7 mirror (no drop window columns) with a pending row: opening it upgrades it, the row
    is kept with a null window, and new rows carry theirs."""
    path = tmp_path / "v7.db"
    m = Mirror(path, create=True)
    old = pending_row(1, "old.nu", "2026-01-05", "2026-03-10")
    save_pending(m.connection(), [old], origin="sync", observed_at="2026-01-05T00:00:00Z")
    m.close()
    conn = sqlite3.connect(path)
    conn.execute("ALTER TABLE pending_delete DROP COLUMN drop_window_start")
    conn.execute("ALTER TABLE pending_delete DROP COLUMN drop_window_end")
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    assert "drop_window_start" not in [r[1] for r in conn.execute("PRAGMA table_info(pending_delete)")]
    conn.close()
    upgraded = Mirror(path)
    conn = upgraded.connection()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 8
    columns = {r[1]: r[2] for r in conn.execute("PRAGMA table_info(pending_delete)")}
    assert (columns["drop_window_start"], columns["drop_window_end"]) == ("TEXT", "TEXT")
    assert conn.execute(
        "SELECT domain, estimated_drop_date, drop_window_start, drop_window_end FROM pending_delete"
    ).fetchall() == [("old.nu", "2026-03-10", None, None)]
    new = pending_row(
        2, "new.nu", "2026-01-05", "2030-03-11", drop_window_start="2030-03-10", drop_window_end="2030-03-11"
    )
    save_pending(conn, [new], origin="sync", observed_at="2026-01-06T00:00:00Z")
    got = upgraded.get_pending_delete("new.nu", plan="enterprise")["data"]
    assert (got["drop_window_start"], got["drop_window_end"], got["estimated_drop_date"]) == (
        "2030-03-10",
        "2030-03-11",
        "2030-03-11",
    )
    ensure_schema(conn)  # re-applied: nothing changes
    assert conn.execute("SELECT COUNT(*) FROM pending_delete").fetchone()[0] == 2
    upgraded.close()


def test_ensure_schema_is_idempotent(tmp_path):
    m = Mirror(tmp_path / "m.db", create=True)
    conn = m.connection()
    before = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    conn.execute("PRAGMA user_version = 0")
    ensure_schema(conn)
    assert conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall() == before


def test_a_newer_mirror_is_refused_clearly(tmp_path):
    path = tmp_path / "new.db"
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(RuntimeError, match="upgrade the toolkit"):
        Mirror(path)


def test_readers_read_while_a_writer_holds_a_transaction(tmp_path):
    path = tmp_path / "m.db"
    writer = Mirror(path, clock=fixed_clock, create=True)
    save_listings(writer.connection(), listing_records(50), origin="sync")
    reader = Mirror(path, readonly=True, clock=fixed_clock)
    before = reader.search_domains({})["meta"]["total"]
    conn = writer.connection()
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM listings")
    results = []
    thread = threading.Thread(target=lambda: results.append(reader.search_domains({})["meta"]["total"]))
    thread.start()
    thread.join(5)
    conn.rollback()
    assert results == [before] and before > 0


def _stamp_version(conn: sqlite3.Connection, version: int) -> None:
    """Make a mirror read as one of an older schema version (its declarations forgotten)."""
    conn.execute("DELETE FROM mirror_meta WHERE key IN ('schema_fingerprint', 'schema_cookie')")
    conn.execute(f"PRAGMA user_version = {version}")
    conn.commit()


def _listing(**overrides):
    record = {
        "id": 1,
        "name": "Example.CO.UK",
        "source": "sedo",
        "type": "auction",
        "price": 10,
        "bids_count": 0,
        "auction_end_date": "2026-12-01T10:00:00+00:00",
        "created_at": "2026-11-01T00:00:00Z",
    }
    record.update(overrides)
    return record


def test_writer_derives_fields_and_tolerates_type_drift(tmp_path):
    m = Mirror(tmp_path / "m.db", clock=fixed_clock, create=True)
    conn = m.connection()
    save_listings(
        conn,
        [
            _listing(
                price="12",
                bids_count="3",
                max_bid="15.5",
                is_spammy="false",
                language="fr",
                historical_tech='["WordPress"]',
                wayback_first_date="2001-05-06T00:00:00Z",
            )
        ],
        origin="sync",
        observed_at="2026-11-20T00:00:00Z",
    )
    record = m.get_domain(1)["data"]
    assert record["name"] == "example.co.uk" and record["tld"] == ".co.uk" and record["sld"] == "example"
    assert (record["length"], record["hyphens"], record["digits"]) == (7, 0, 0)
    assert record["price"] == 12.0 and record["bids_count"] == 3 and record["effective_price"] == 15.5
    assert record["auction_end_date"] == "2026-12-01T10:00:00Z" and record["is_spammy"] is False
    assert record["historical_tech"] == ["WordPress"] and record["language"] == "FR"
    assert record["wayback_first_date"] == "2001-05-06" and record["age"] == 25
    assert record["has_gmb"] is False and record["updated_at"] == "2026-11-01T00:00:00Z"


def test_history_rows_only_when_a_price_field_changes(tmp_path):
    m = Mirror(tmp_path / "m.db", clock=fixed_clock, create=True)
    conn = m.connection()
    first = save_listings(conn, [_listing()], origin="sync", observed_at="2026-11-20T00:00:00Z")
    same = save_listings(conn, [_listing(price=10.0)], origin="sync", observed_at="2026-11-21T00:00:00Z")
    bid = save_listings(conn, [_listing(max_bid=30, bids_count=2)], origin="sync", observed_at="2026-11-22T00:00:00Z")
    renamed = save_listings(
        conn, [_listing(max_bid=30, bids_count=2, score=40)], origin="sync", observed_at="2026-11-22T06:00:00Z"
    )
    assert (first.new, same.new, same.updated, bid.updated, renamed.updated) == (1, 0, 0, 1, 1)
    history = conn.execute(
        "SELECT observed_at, max_bid, bids_count, effective_price FROM listing_history WHERE listing_id = 1 ORDER BY id"
    ).fetchall()
    assert history == [("2026-11-20T00:00:00Z", None, 0, 10.0), ("2026-11-22T00:00:00Z", 30.0, 2, 30.0)]
    record = m.get_domain(1)["data"]
    assert record["first_seen_at"] == "2026-11-20T00:00:00Z" and record["last_seen_at"] == "2026-11-22T06:00:00Z"


def test_unknown_fields_are_kept_in_raw_and_closing_reopens(tmp_path):
    m = Mirror(tmp_path / "m.db", clock=fixed_clock, create=True)
    conn = m.connection()
    save_listings(conn, [_listing(renewal_price=9.99, brand_new_field={"a": 1})], origin="sync")
    raw = json.loads(conn.execute("SELECT raw FROM raw_records WHERE kind = 'listing' AND id = 1").fetchone()[0])
    assert raw == {"renewal_price": 9.99, "brand_new_field": {"a": 1}}  # known fields live in their columns
    assert conn.execute("SELECT count(*) FROM raw_records").fetchone()[0] == 1
    assert close_listings(conn, [1, 2], closed_at="2026-11-21T00:00:00Z") == 1
    assert m.search_domains({})["meta"]["total"] == 0
    save_listings(conn, [_listing()], origin="sync")  # seen again: live again
    assert m.search_domains({})["meta"]["total"] == 1


def test_bad_records_are_refused_naming_what_is_missing(tmp_path):
    m = Mirror(tmp_path / "m.db", create=True)
    with pytest.raises(ValueError, match="id and a name"):
        save_listings(m.connection(), [{"name": "x.com"}], origin="sync")
    with pytest.raises(ValueError, match="id and a domain"):
        save_pending(m.connection(), [{"id": 3}], origin="sync")
    assert m.search_domains({})["meta"]["total"] == 0


def test_the_default_sort_and_common_filters_read_an_index(mirror):
    conn = mirror.connection()
    sql = mirror.search.sql({}, mirror.now())
    plan = " ".join(
        str(r)
        for r in conn.execute(
            f"EXPLAIN QUERY PLAN SELECT id FROM listings WHERE {sql.where} ORDER BY {sql.order} LIMIT 50", sql.args
        )
    )
    assert "idx_listings_score" in plan and "TEMP B-TREE" not in plan
    sql = mirror.search.sql({"sort": "auction_end_date"}, mirror.now())
    plan = " ".join(
        str(r)
        for r in conn.execute(
            f"EXPLAIN QUERY PLAN SELECT id FROM listings WHERE {sql.where} ORDER BY {sql.order} LIMIT 50", sql.args
        )
    )
    assert "idx_listings_ending" in plan and "TEMP B-TREE" not in plan


def test_generation_changes_with_every_write(tmp_path):
    """Whoever writes: the toolkit's writer, or plain SQL on another connection, to any table
    a reader caches (listings, pending-delete, history). Other tables leave it alone."""
    m = Mirror(tmp_path / "m.db", clock=fixed_clock, create=True)
    seen = [m.generation()]
    save_listings(m.connection(), [_listing()], origin="sync")
    seen.append(m.generation())
    other = sqlite3.connect(tmp_path / "m.db")
    for sql in (
        "UPDATE listings SET trust_flow = 33",
        "INSERT INTO listing_history (listing_id, observed_at) VALUES (1, 'x')",
        "UPDATE listing_history SET price = 2",
        "DELETE FROM listing_history WHERE observed_at = 'x'",
        "INSERT INTO pending_delete (id, domain) VALUES (9, 'a.fr')",
        "UPDATE pending_delete SET tld = '.fr'",
        "DELETE FROM pending_delete",
        "DELETE FROM listings",
    ):
        other.execute(sql)
        other.commit()
        seen.append(m.generation())
    assert all(a < b for a, b in zip(seen, seen[1:])), seen
    other.execute("INSERT INTO saved_searches (name, params) VALUES ('s', '{}')")
    other.commit()
    assert m.generation() == seen[-1]


def test_the_canonical_shortcut_writes_what_the_checked_path_writes():
    """The demo skips type checks for its records; that must never change a stored value."""
    from datetime import date

    from toolkit.demo import generate_listings, generate_pending
    from toolkit.store.writer import listing_row, pending_row

    at = "2026-11-22T07:00:00Z"
    listings = list(generate_listings("small", 7, date(2026, 11, 22)))
    pending = list(generate_pending("small", 7, date(2026, 11, 22)))
    assert len(listings) > 6000 and len(pending) > 900
    for record in listings:
        assert listing_row(record, origin="demo", observed_at=at, canonical=True) == listing_row(
            record, origin="demo", observed_at=at
        ), record["id"]
    for record in pending:
        assert pending_row(record, origin="demo", observed_at=at, canonical=True) == pending_row(
            record, origin="demo", observed_at=at
        ), record["id"]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.lists(st.text()),
        st.lists(st.one_of(st.text(), st.integers(), st.none())),
        st.dictionaries(st.text(), st.text()),
    )
)
def test_compact_json_matches_json_dumps(value):
    from toolkit.store.rows import compact_json

    assert compact_json(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def test_a_trigger_set_aside_comes_back_as_it_was_and_with_a_rollback(tmp_path):
    from toolkit.store.schema import without_trigger

    m = Mirror(tmp_path / "m.db", clock=fixed_clock, create=True)
    save_listings(m.connection(), [_listing()], origin="sync")
    conn = sqlite3.connect(tmp_path / "m.db", isolation_level=None)
    declared = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'listings_seen_update'").fetchone()
    generation = lambda: conn.execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()[0]  # noqa: E731
    before = generation()
    conn.execute("BEGIN")
    with without_trigger(conn, "listings_seen_update"):
        conn.execute("UPDATE listings SET last_seen_at = '2026-01-02T00:00:00Z'")
        assert generation() == before  # no bump a row while it is aside
    conn.execute("COMMIT")
    assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'listings_seen_update'").fetchone() == declared
    conn.execute("UPDATE listings SET last_seen_at = '2026-01-03T00:00:00Z'")
    assert int(generation()) == int(before) + 1  # back at work
    conn.execute("BEGIN")
    with pytest.raises(sqlite3.IntegrityError):
        with without_trigger(conn, "listings_seen_update"):
            conn.execute("INSERT INTO listings (id) SELECT id FROM listings")  # fails inside the block
    conn.execute("ROLLBACK")
    assert conn.execute("SELECT sql FROM sqlite_master WHERE name = 'listings_seen_update'").fetchone() == declared


def test_a_v9_mirror_is_upgraded_so_that_outside_writes_are_seen(tmp_path):
    """A v9 mirror's triggers logged a listing's change without changing the generation: the
    upgrade re-creates them (a new generation), rows kept, and plain writes count from then."""
    path = tmp_path / "v9.db"
    m = Mirror(path, clock=fixed_clock, create=True)
    save_listings(m.connection(), [_listing()], origin="sync")
    m.close()
    conn = sqlite3.connect(path)
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%_writes_%'"
    ).fetchall():
        conn.execute(f"DROP TRIGGER {name}")  # v9 had no triggers on pending_delete and listing_history
    for name, (_, body) in CHANGE_TRIGGERS.items():
        if name.startswith("listings_"):
            conn.execute(f"DROP TRIGGER {name}")
            if name != "listings_seen_update":  # v18's: a last sighting alone bumps the generation
                conn.execute(f"CREATE TRIGGER {name} {body.replace(GENERATION_BUMP, '')}")
    conn.execute("DELETE FROM mirror_meta WHERE key IN ('schema_fingerprint', 'schema_cookie')")
    conn.execute("PRAGMA user_version = 9")
    conn.commit()
    conn.execute("UPDATE listings SET trust_flow = 1")
    conn.commit()
    generation = conn.execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()[0]
    conn.execute("UPDATE listings SET trust_flow = 2")
    conn.commit()
    assert conn.execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()[0] == generation  # unseen

    upgraded = Mirror(path, clock=fixed_clock)
    assert upgraded.connection().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 19
    start = upgraded.generation()
    assert start > int(generation)
    assert upgraded.search_domains({"include_closed": "1"})["meta"]["total"] == 1
    conn.execute("UPDATE listings SET trust_flow = 3")
    conn.commit()
    assert upgraded.generation() > start
    assert upgraded.search_domains({"tf_min": "3", "include_closed": "1"})["meta"]["total"] == 1


def test_a_v14_mirror_keeps_its_price_ranges_on_the_listings_and_its_name_index_untouched_by_them(tmp_path):
    """v14 kept the ranges in `listing_values`: the upgrade moves them onto the listings and
    drops that table; the trigram index is re-indexed on a changed name only, so writing a
    range leaves it alone while a renamed listing is found by its new name."""
    path = tmp_path / "v14.db"
    m = Mirror(path, clock=fixed_clock, create=True)
    records = listing_records(20)
    save_listings(m.connection(), records, origin="sync")
    m.close()
    conn = sqlite3.connect(path)
    for column in ("value_low", "value_mid", "value_high", "value_reason", "valued_at"):
        conn.execute(f"ALTER TABLE listings DROP COLUMN {column}")
    conn.execute(
        "CREATE TABLE listing_values (listing_id INTEGER PRIMARY KEY, value_low FLOAT, value_mid FLOAT, "
        "value_high FLOAT, reason TEXT, valued_at TEXT)"
    )
    conn.executemany(
        "INSERT INTO listing_values VALUES (?, ?, ?, ?, ?, '2026-11-21T07:00:00Z')",
        [(records[0]["id"], 10.0, 20.0, 40.0, None), (records[1]["id"], None, None, None, "no family")],
    )
    conn.execute("DROP TRIGGER listings_au")  # sqlite-utils' own: every update re-indexed the name
    conn.execute(
        "CREATE TRIGGER listings_au AFTER UPDATE ON listings BEGIN INSERT INTO listings_fts (listings_fts, "
        "rowid, name) VALUES('delete', old.rowid, old.name); INSERT INTO listings_fts (rowid, name) "
        "VALUES (new.rowid, new.name); END"
    )
    _stamp_version(conn, 14)

    upgraded = Mirror(path, clock=fixed_clock)
    db = upgraded.connection()
    assert db.execute("SELECT count(*) FROM sqlite_master WHERE name = 'listing_values'").fetchone()[0] == 0
    stored = db.execute(
        "SELECT id, value_low, value_mid, value_high, value_reason FROM listings WHERE valued_at "
        "IS NOT NULL ORDER BY id"
    ).fetchall()
    assert stored == sorted(
        [(records[0]["id"], 10.0, 20.0, 40.0, None), (records[1]["id"], None, None, None, "no family")]
    )
    assert upgraded.search_domains({"value_min": "15", "include_closed": "1"})["meta"]["total"] == 1
    before = db.execute("SELECT total_changes()").fetchone()[0]
    with db:
        db.execute("UPDATE listings SET value_mid = 5")
    # each row, its change-log line and the generation's bump; no trigram entry (2 more a row before)
    assert db.execute("SELECT total_changes()").fetchone()[0] - before == 3 * 20
    with db:
        db.execute("UPDATE listings SET name = 'zebrafinchxyz.com' WHERE id = ?", [records[2]["id"]])
    assert [r["id"] for r in upgraded.search_domains({"contains": "zebrafinch", "include_closed": "1"})["data"]] == [
        records[2]["id"]
    ]


def test_a_v16_mirror_gains_the_reported_sales_and_the_live_estimate_and_keeps_it_while_the_bidding_stands(tmp_path):
    """v17 adds `reported_sales` and the live estimate's columns to an older mirror; the writer
    keeps an estimate through a sync that sees the same bidding and drops it on a new bid."""
    from toolkit.store.results import save_live

    path = tmp_path / "v16.db"
    m = Mirror(path, clock=fixed_clock, create=True)
    record = {
        **_listing(),
        "type": "auction",
        "max_bid": 40.0,
        "bids_count": 3,
        "currency": "USD",
        "auction_end_date": "2026-12-01T18:00:00Z",
    }
    save_listings(m.connection(), [record], origin="sync")
    m.close()
    conn = sqlite3.connect(path)
    for column in ("live_low", "live_mid", "live_high"):
        conn.execute(f"ALTER TABLE listings DROP COLUMN {column}")
    conn.execute("DROP TABLE reported_sales")
    _stamp_version(conn, 16)

    upgraded = Mirror(path, clock=fixed_clock)
    db = upgraded.connection()
    assert db.execute("SELECT count(*) FROM reported_sales").fetchone()[0] == 0
    with db:
        save_live(db, [(record["id"], 40.0, 55.0, 90.0)])
    live = "SELECT live_low, live_mid, live_high FROM listings WHERE id = ?"
    save_listings(db, [record], origin="sync")  # the same bidding: kept
    assert db.execute(live, [record["id"]]).fetchone() == (40.0, 55.0, 90.0)
    save_listings(db, [{**record, "max_bid": 60.0, "bids_count": 4}], origin="sync")  # a new bid: dropped
    assert db.execute(live, [record["id"]]).fetchone() == (None, None, None)


def test_a_bulk_load_stopped_inside_a_read_loop_is_the_stop_and_leaves_nothing(tmp_path):
    """A stop that lands while a read is half done (the cursor lives on in the traceback):
    SQLite refuses WAL while that statement is unfinished. The caller sees the stop, not
    that refusal; nothing of the load is kept; the next opener is in WAL again."""
    from toolkit.store.schema import connect
    from toolkit.store.transaction import one_transaction

    path = tmp_path / "m.db"
    m = Mirror(path, clock=fixed_clock, create=True)
    save_listings(m.connection(), listing_records(50), origin="sync")
    m.close()
    conn = connect(str(path))
    with pytest.raises(KeyboardInterrupt):
        with one_transaction(conn, bulk=True) as writer:
            writer.execute("DELETE FROM listings WHERE id > 30")
            rows = writer.execute("SELECT id FROM listings")
            rows.fetchone()  # a read half done when the stop comes
            raise KeyboardInterrupt
    assert conn.execute("SELECT count(*) FROM listings").fetchone()[0] == 50
    del rows  # the process ends with the stop: its unfinished read goes with it
    conn.close()
    reopened = connect(str(path))
    assert reopened.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert reopened.execute("SELECT count(*) FROM listings").fetchone()[0] == 50


def _staged_day(conn, table, records, observed_at, *, seen=()):
    """`records` written set-based (StagedWrite) in one transaction; the ids of `seen` only seen again."""
    from toolkit.store.transaction import one_transaction
    from toolkit.store.writer import StagedWrite, staging

    with staging(conn) as stage, one_transaction(conn) as writer:
        write = StagedWrite(writer, table, stage, origin="sync", observed_at=observed_at)
        assert write.direct == (conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0)
        assert write.add(records) == []
        write.seen(list(seen))
        return write.write()


def _tables(conn):
    return {
        t: conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
        for t in ("listings", "listing_history", "raw_records", "pending_delete")
    }


def test_a_set_based_write_writes_what_the_row_by_row_writer_writes(tmp_path):
    """StagedWrite (a feed's day) against save_listings / save_pending, record by record: a first
    day into an empty mirror (rows straight in), then a day that moved prices, bids and metrics,
    dropped and added rows, gave fewer archive signals, and left many rows as they were (only
    seen again): the same listings, history, raw records, metric jumps and counts. A stored row
    keeps its price range, its archive signals and its EUR price at the rate of the day its price
    was first seen."""
    from toolkit.store.results import save_values

    day1 = [
        {**r, "archive_years": 4 if r["id"] % 5 == 0 else None, "extra_field": r["id"] % 3}
        for r in listing_records(400)
    ]
    for record in day1:
        record.pop("updated_at", None)
    day2, unchanged = [], []
    for i, record in enumerate(day1):
        if i % 11 == 0:
            continue  # gone
        moved = dict(record, archive_years=None)  # no signal given: the stored one is kept
        if i % 4 == 0 and moved["price"] is not None:
            moved["price"] = round(moved["price"] + 7, 2)
        if i % 6 == 0:
            moved["bids_count"], moved["max_bid"] = 5, round((moved["price"] or 10) + 50, 2)
        if i % 5 == 1 and moved.get("trust_flow") is not None:
            moved["trust_flow"] = moved["trust_flow"] * 2 + 12  # a metric rose sharply: a jump
        if i % 7 == 3:
            moved["extra_field"] = "changed"  # only the raw record moved
        if moved == dict(record, archive_years=None) and i % 2:
            unchanged.append(record)
        else:
            day2.append(moved)
    day2 += [dict(r, id=r["id"] + 100_000) for r in listing_records(30, seed=9)]  # new
    pending = [
        {"id": 7, "domain": "alpha.se", "source": "bardate", "estimated_drop_date": "2024-03-05", "tld": ".se"},
        {"id": 8, "domain": "bravo.nu", "source": "bardate", "estimated_drop_date": "2024-03-06", "tld": ".nu"},
    ]
    pending2 = [
        dict(pending[0], estimated_drop_date="2024-03-07"),
        pending[1],
        {"id": 9, "domain": "carl.se", "source": "bardate", "tld": ".se"},
    ]
    # two days within the 30 days before the auctions' ends (a rise there is a jump), ten days apart
    first, second = "2026-11-12T06:00:00Z", "2026-11-22T06:00:00Z"
    mirrors = {name: Mirror(tmp_path / f"{name}.db", clock=fixed_clock, create=True) for name in ("rows", "set")}
    counts = {}
    for name, m in mirrors.items():
        conn = m.connection()
        if name == "rows":
            one = save_listings(conn, day1, origin="sync", observed_at=first, canonical=True, batch_size=97)
            save_pending(conn, pending, origin="sync", observed_at=first, canonical=True)
        else:
            one = _staged_day(conn, "listings", day1, first)
            _staged_day(conn, "pending_delete", pending, first)
        with conn:
            save_values(conn, [(r["id"], 10.0, 20.0, 30.0, None) for r in day1[::3]], "2024-04-01T00:00:00Z")
        if name == "rows":
            two = save_listings(
                conn, day2 + unchanged, origin="sync", observed_at=second, canonical=True, batch_size=97
            )
            pend = save_pending(conn, pending2, origin="sync", observed_at=second, canonical=True)
        else:
            two = _staged_day(conn, "listings", day2, second, seen=[r["id"] for r in unchanged])
            pend = _staged_day(conn, "pending_delete", pending2, second)
        counts[name] = (vars(one), vars(two), vars(pend))
    assert counts["rows"] == counts["set"]
    assert counts["set"][1]["updated"] > 100 and counts["set"][1]["new"] == 30 and len(unchanged) > 50
    rows, staged = (_tables(m.connection()) for m in mirrors.values())
    assert rows == staged
    conn = mirrors["set"].connection()
    assert conn.execute("SELECT count(*) FROM listings WHERE metrics_jumped = 1").fetchone()[0] > 0
    assert conn.execute("SELECT count(*) FROM listings WHERE value_mid = 20 AND archive_years = 4").fetchone()[0] > 0
    assert conn.execute("SELECT count(DISTINCT observed_at) FROM listing_history").fetchone()[0] == 2


@pytest.mark.parametrize("deferred", [True, False])
def test_a_deferred_checkpoint_leaves_a_big_commit_in_the_log_and_copies_it_beside(tmp_path, deferred):
    """A feed's day commits into the write-ahead log and a thread copies it into the file while
    the load goes on (store/wal_checkpoint.py); a plain commit past 1,000 pages copies it itself."""
    import contextlib
    import os

    from toolkit.store.schema import connect
    from toolkit.store.wal_checkpoint import deferred_checkpoints

    path = str(tmp_path / "mirror.db")
    conn = connect(path)
    with conn:
        conn.execute("CREATE TABLE t (x BLOB)")
    empty = os.path.getsize(path)
    with deferred_checkpoints(conn, path) if deferred else contextlib.nullcontext() as checkpoint:
        with conn:
            conn.executemany("INSERT INTO t VALUES (randomblob(4000))", [()] * 3000)  # about 3,000 pages
        committed = os.path.getsize(path)
        if checkpoint is not None:
            checkpoint.start()
            checkpoint.wait()
    assert (committed == empty) is deferred
    assert os.path.getsize(path) > empty + 10_000_000
    assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 3000
    conn.close()
