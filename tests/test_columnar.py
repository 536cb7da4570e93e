"""The columnar index answers exactly as the SQLite planner, stays fresh after writes, and
never mixes two generations in one answer."""

from __future__ import annotations

import multiprocessing
import os
import random
import time
from datetime import timedelta

import pytest
from conftest import NOW, fixed_clock, listing_records, ts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_query import POOLS

from toolkit import ApiError, Mirror
from toolkit.params import DOMAIN_PARAMS, DOMAIN_SORTS
from toolkit.query.columnar import build_index, index_path, load_index
from toolkit.store.writer import close_listings, save_listings

FILTERS = sorted(set(POOLS) - {"page", "per_page", "limit", "sort", "after_id"})
SORTS = list(DOMAIN_SORTS) + ["-" + s for s in DOMAIN_SORTS]


@pytest.fixture(scope="module")
def engines(synthetic_db):
    columnar = Mirror(synthetic_db, clock=fixed_clock, engine="columnar")
    sqlite = Mirror(synthetic_db, clock=fixed_clock, engine="sqlite")
    yield columnar, sqlite
    columnar.close()
    sqlite.close()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_filter_sets_give_the_same_answer_on_both_engines(engines, data):
    columnar, sqlite = engines
    names = data.draw(st.lists(st.sampled_from(FILTERS), min_size=1, max_size=4, unique=True))
    params = {name: data.draw(st.sampled_from(POOLS[name])) for name in names}
    if data.draw(st.booleans()):
        params["after_id"] = data.draw(st.integers(0, 2200))
    else:
        params["sort"] = data.draw(st.sampled_from(SORTS))
        params["page"] = data.draw(st.integers(1, 12))
    params["per_page"] = data.draw(st.sampled_from([1, 7, 50, 100]))
    expected, got = _answer(sqlite, params), _answer(columnar, params)
    assert got == expected, params
    if "data" in got:
        assert columnar.answered_by() == "columnar"


def _answer(mirror: Mirror, params: dict) -> dict:
    """The envelope, or the error the API would answer (a refusal must be the same too)."""
    try:
        return mirror.search_domains(params)
    except ApiError as exc:
        return {"status": exc.status, "body": exc.body}


def test_a_write_is_seen_by_the_next_query(tmp_path):
    path = tmp_path / "m.db"
    reader = Mirror(path, clock=fixed_clock, engine="columnar")
    records = listing_records(60, seed=3)
    save_listings(reader.connection(), records[:30], origin="sync", observed_at=ts(NOW - timedelta(days=1)))
    first = reader.search_domains({"include_closed": 1, "per_page": 100})["meta"]["total"]
    assert first == 30 - sum(r["source"] == "regfree" for r in records[:30])
    generation = reader.generation()
    writer = Mirror(path, clock=fixed_clock)  # another writer (as edt sync, edt ingest would be)
    save_listings(writer.connection(), records[30:], origin="sync", observed_at=ts(NOW))
    assert writer.generation() > generation
    answer = reader.search_domains({"include_closed": 1, "per_page": 100})
    assert reader.answered_by() == "columnar"
    assert answer["meta"]["total"] == 60 - sum(r["source"] == "regfree" for r in records)
    live_before = reader.search_domains({})["meta"]["total"]
    live_id = reader.search_domains({"per_page": 1})["data"][0]["id"]
    close_listings(writer.connection(), [live_id], closed_at=ts(NOW - timedelta(minutes=1)))
    after = reader.search_domains({})
    assert after["meta"]["total"] == live_before - 1 and live_id not in [r["id"] for r in after["data"]]


def test_the_saved_index_is_used_by_a_new_reader_and_a_stale_one_is_not(tmp_path):
    path = tmp_path / "m.db"
    writer = Mirror(path, clock=fixed_clock)
    save_listings(writer.connection(), listing_records(80, seed=5), origin="sync", observed_at=ts(NOW))
    built = writer.refresh_index()
    saved = load_index(index_path(path))
    assert saved is not None and saved.generation == built.generation == writer.generation()
    stamp = index_path(path).stat().st_mtime_ns
    assert writer.refresh_index() is built and index_path(path).stat().st_mtime_ns == stamp  # current: not rebuilt
    one_shot = Mirror(path, clock=fixed_clock)  # the default engine: uses a current saved index, never builds
    one_shot.search_domains({"tld": ".fr"})
    assert one_shot.answered_by() == "columnar"
    save_listings(writer.connection(), listing_records(90, seed=5)[80:], origin="sync", observed_at=ts(NOW))
    stale = Mirror(path, clock=fixed_clock)
    answer = stale.search_domains({"include_closed": 1, "per_page": 100})
    assert stale.answered_by() == "sqlite"  # the saved index is of an older generation
    assert answer == Mirror(path, clock=fixed_clock, engine="sqlite").search_domains({"include_closed": 1, "per_page": 100})


def test_a_damaged_index_file_is_ignored(tmp_path):
    path = tmp_path / "m.db"
    writer = Mirror(path, clock=fixed_clock)
    save_listings(writer.connection(), listing_records(50, seed=6), origin="sync", observed_at=ts(NOW))
    writer.refresh_index()
    index_path(path).write_bytes(b"EDTCOLS1" + b"\xff" * 40)
    reader = Mirror(path, clock=fixed_clock)
    expected = Mirror(path, clock=fixed_clock, engine="sqlite").search_domains({"sort": "name"})
    assert reader.search_domains({"sort": "name"}) == expected
    assert reader.answered_by() == "sqlite"


def test_a_background_reader_rebuilds_after_a_write(tmp_path):
    path = tmp_path / "m.db"
    writer = Mirror(path, clock=fixed_clock)
    save_listings(writer.connection(), listing_records(40, seed=8), origin="sync", observed_at=ts(NOW))
    reader = Mirror(path, clock=fixed_clock, engine="background")
    reader.search_domains({})
    deadline = time.monotonic() + 20
    while reader.answered_by() != "columnar" and time.monotonic() < deadline:
        time.sleep(0.05)
        reader.search_domains({})
    assert reader.answered_by() == "columnar"


def test_an_unusable_column_sends_its_filters_to_sqlite(tmp_path):
    """A stored timestamp in a form the index cannot compare as SQLite does (the writer
    never stores one) leaves that column out; its filters are answered by SQLite."""
    path = tmp_path / "m.db"
    writer = Mirror(path, clock=fixed_clock)
    save_listings(writer.connection(), listing_records(40, seed=9), origin="sync", observed_at=ts(NOW))
    conn = writer.connection()
    conn.execute("UPDATE listings SET created_at = '2026-11-20 10:00:00' WHERE id = 3")
    conn.execute("UPDATE mirror_meta SET value = value + 1 WHERE key = 'generation'")
    conn.commit()
    reader = Mirror(path, clock=fixed_clock, engine="columnar")
    reader.search_domains({"tf_min": 5})
    assert reader.answered_by() == "columnar"
    sqlite = Mirror(path, clock=fixed_clock, engine="sqlite")
    for params in ({"created_after": "2026-11-20", "include_closed": 1}, {"sort": "-created_at", "include_closed": 1}):
        assert reader.search_domains(params) == sqlite.search_domains(params), params
        assert reader.answered_by() == "sqlite"


def _write_batches(path: str, batches: int, size: int) -> None:
    """Another process: `batches` transactions of `size` listings in a TLD of their own."""
    mirror = Mirror(path, clock=fixed_clock)
    base = listing_records(1, seed=1)[0]
    for b in range(batches):
        rows = [{**base, "id": 100_000 + b * size + i, "name": f"batch{b}x{i}.zz", "tld": ".zz", "source": "sedo",
                 "type": "closeout", "auction_end_date": None} for i in range(size)]  # fmt: skip
        save_listings(mirror.connection(), rows, origin="sync", observed_at=ts(NOW))
        time.sleep(0.01)
    mirror.close()


def test_a_query_while_another_process_writes_is_of_one_generation(tmp_path):
    path = tmp_path / "m.db"
    Mirror(path, clock=fixed_clock).close()
    size, batches = 37, 40
    writer = multiprocessing.get_context("spawn").Process(target=_write_batches, args=(str(path), batches, size))
    writer.start()
    reader = Mirror(path, clock=fixed_clock, engine="columnar")
    seen, engines = set(), set()
    try:
        while writer.is_alive() or not seen:
            answer = reader.search_domains({"tld": ".zz", "sort": "-id", "per_page": 100})
            total, ids = answer["meta"]["total"], [r["id"] for r in answer["data"]]
            engines.add(reader.answered_by())
            assert total % size == 0, total  # never half a transaction
            assert len(ids) == min(total, 100)
            if ids:  # the page is of the same generation as the count: its newest id is the last written
                assert ids[0] == 100_000 + total - 1
            seen.add(total)
    finally:
        writer.join(60)
    assert reader.search_domains({"tld": ".zz"})["meta"]["total"] == size * batches
    assert len(seen) > 2 and "columnar" in engines


def test_the_commands_that_write_leave_a_current_index_behind(tmp_path):
    """`edt demo` and `edt ingest` rebuild the index after writing, so the next one-shot
    reader (the default engine, which never builds) answers from it, new rows included."""
    from click.testing import CliRunner
    from test_ingest import godaddy_zip

    from toolkit.cli import cli

    db = tmp_path / "m.db"
    result = CliRunner().invoke(cli, ["demo", "--db", str(db), "--scale", "small"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    reader = Mirror(db)
    assert load_index(index_path(db)).generation == reader.generation()
    reader.search_domains({"tld": ".com", "sort": "-trust_flow"})
    assert reader.answered_by() == "columnar"
    before = reader.generation()
    feed = godaddy_zip(tmp_path / "all_listings.json.zip")
    result = CliRunner().invoke(cli, ["ingest", "godaddy", "--db", str(db), "--file", str(feed)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    fresh = Mirror(db)
    assert load_index(index_path(db)).generation == fresh.generation() > before
    found = fresh.search_domains({"contains": "kettle", "include_closed": 1})
    assert fresh.answered_by() == "columnar"
    assert "greenkettle.net" in [r["name"] for r in found["data"]]


def test_an_index_saved_before_a_filter_column_existed_is_built_again(tmp_path, monkeypatch):
    """A `.colidx` written by an older toolkit lacks the columns of filters added since: it is
    not used (SQLite answers, then a rebuild holds them), never half-used."""
    import toolkit.query.columnar as columnar

    path = tmp_path / "m.db"
    save_listings(Mirror(path, clock=fixed_clock).connection(), listing_records(60), origin="sync", observed_at=ts(NOW))
    older = [c for c in columnar._number_columns() if c != "length"]
    monkeypatch.setattr(columnar, "_number_columns", lambda: tuple(older))
    build_index(path).save(index_path(path))
    monkeypatch.undo()
    assert load_index(index_path(path)) is None
    reader = Mirror(path, clock=fixed_clock, engine="auto")
    reader.search_domains({"length_min": "5"})
    assert reader.answered_by() == "sqlite"
    Mirror(path, clock=fixed_clock).refresh_index()
    assert "length" in load_index(index_path(path)).arrays
    reader.search_domains({"length_min": "5"})
    assert reader.answered_by() == "columnar"


@pytest.mark.parametrize("params", [{}, {"tld": ".com,.fr"}, {"tf_min": "10", "sort": "-trust_flow"},
                                    {"contains": "shop", "sort": "name"}, {"no_numbers": "1", "sort": "-age"}])  # fmt: skip
def test_a_sampled_frame_is_the_same_rows_in_the_same_order_on_both_engines(engines, params):
    """`domains_df(sample=N)` picks its rows from the columnar index when it can (the rows
    `id % step = 0` keeps, in the query's order), which must be exactly what SQLite picks."""
    columnar, sqlite = engines
    columns = ["name", "source", "trust_flow", "age", "effective_price"]
    got = columnar.domains_df(params, columns=columns, sample=20)
    expected = sqlite.domains_df(params, columns=columns, sample=20)
    assert 0 < len(got) < columnar.search_domains({**params, "per_page": 1})["meta"]["total"]  # sampling happened
    assert got.equals(expected), params


@pytest.mark.parametrize("params", [{}, {"tld": ".com,.fr"}, {"ends_after": "2026-11-23", "ends_before": "2026-11-26"},
                                    {"include_closed": "1"}, {"source": "regfree"}])  # fmt: skip
def test_auction_end_days_are_counted_alike_on_both_engines(engines, params):
    columnar, sqlite = engines
    got, expected = columnar.day_counts(params), sqlite.day_counts(params)
    assert got == expected and (sum(expected.values()) > 0 or params.get("source") == "regfree"), params
    assert columnar.answered_by() == "columnar"
