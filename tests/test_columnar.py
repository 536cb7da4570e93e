"""The columnar index answers exactly as the SQLite planner, stays fresh after writes, and
never mixes two generations in one answer."""

from __future__ import annotations

import multiprocessing
import random
import subprocess
import sys
import time
from datetime import datetime, timedelta

import pytest
from conftest import NOW, fixed_clock, listing_records, ts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_query import POOLS

from toolkit import ApiError, Mirror
from toolkit.query.params import DOMAIN_SORTS
from toolkit.query.columnar import build_index, index_path, load_index
from toolkit.store.writer import close_listings, save_listings

FILTERS = sorted(set(POOLS) - {"page", "per_page", "limit", "sort", "after_id"})
SORTS = list(DOMAIN_SORTS) + ["-" + s for s in DOMAIN_SORTS]


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
    reader = Mirror(path, clock=fixed_clock, engine="columnar", create=True)
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
    writer = Mirror(path, clock=fixed_clock, create=True)
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
    assert answer == Mirror(path, clock=fixed_clock, engine="sqlite").search_domains(
        {"include_closed": 1, "per_page": 100}
    )


def test_a_damaged_index_file_is_ignored(tmp_path):
    path = tmp_path / "m.db"
    writer = Mirror(path, clock=fixed_clock, create=True)
    save_listings(writer.connection(), listing_records(50, seed=6), origin="sync", observed_at=ts(NOW))
    writer.refresh_index()
    index_path(path).write_bytes(b"EDTCOLS1" + b"\xff" * 40)
    reader = Mirror(path, clock=fixed_clock)
    expected = Mirror(path, clock=fixed_clock, engine="sqlite").search_domains({"sort": "name"})
    assert reader.search_domains({"sort": "name"}) == expected
    assert reader.answered_by() == "sqlite"


def test_a_background_reader_rebuilds_after_a_write(tmp_path):
    path = tmp_path / "m.db"
    writer = Mirror(path, clock=fixed_clock, create=True)
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
    writer = Mirror(path, clock=fixed_clock, create=True)
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
        rows = [
            {
                **base,
                "id": 100_000 + b * size + i,
                "name": f"batch{b}x{i}.zz",
                "tld": ".zz",
                "source": "sedo",
                "type": "closeout",
                "auction_end_date": None,
            }
            for i in range(size)
        ]
        save_listings(mirror.connection(), rows, origin="sync", observed_at=ts(NOW))
        time.sleep(0.01)
    mirror.close()


def _write_batches_plainly(path: str, batches: int, size: int) -> None:
    """The same transactions through Python's own sqlite3 (a notebook's SQL): copies of a row."""
    import sqlite3

    conn = sqlite3.connect(path, timeout=30)
    columns = [r[1] for r in conn.execute("PRAGMA table_info(listings)")]
    template = conn.execute("SELECT id FROM listings WHERE source != 'regfree' LIMIT 1").fetchone()[0]
    values = {
        "id": "?",
        "name": "?",
        "tld": "'.zz'",
        "source": "'sedo'",
        "type": "'closeout'",
        "auction_end_date": "NULL",
        "closed_at": "NULL",
        "live_until": "'9999-12-31T23:59:59Z'",
    }
    select = ", ".join(values.get(c, c) for c in columns)
    for b in range(batches):
        for i in range(size):
            conn.execute(
                f"INSERT INTO listings ({', '.join(columns)}) SELECT {select} FROM listings WHERE id = ?",
                [100_000 + b * size + i, f"batch{b}x{i}.zz", template],
            )
        conn.commit()
        time.sleep(0.01)
    conn.close()


@pytest.mark.parametrize("write", [_write_batches, _write_batches_plainly], ids=["toolkit writer", "plain sqlite3"])
def test_a_query_while_another_process_writes_is_of_one_generation(tmp_path, write):
    path = tmp_path / "m.db"
    seeded = Mirror(path, clock=fixed_clock, create=True)
    save_listings(seeded.connection(), listing_records(20, seed=2), origin="sync", observed_at=ts(NOW))
    seeded.close()
    size, batches = 37, 40
    writer = multiprocessing.get_context("spawn").Process(target=write, args=(str(path), batches, size))
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
    result = CliRunner().invoke(
        cli, ["ingest", "godaddy", "--db", str(db), "--file", str(feed)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    fresh = Mirror(db)
    assert load_index(index_path(db)).generation == fresh.generation() > before
    fresh.search_domains({"contains": "kettle"})
    assert fresh.answered_by() == "columnar"
    # Ended rows may match only with include_closed: the `all` part, built when first asked
    # for (a long-lived reader builds it in the background); until then SQLite answers.
    found = fresh.search_domains({"contains": "kettle", "include_closed": 1})
    assert fresh.answered_by() == "sqlite" and not index_path(db, "all").exists()
    assert "greenkettle.net" in [r["name"] for r in found["data"]]
    fresh.refresh_index("all")
    assert fresh.search_domains({"contains": "kettle", "include_closed": 1}) == found
    assert fresh.answered_by() == "columnar"


# -- refreshing only the rows a write touched -------------------------------------------


def _held(index) -> dict:
    """What an index says, in plain values: each column by id (texts for codes, None for
    NULL), each sort order, the name order and the joined names."""
    import numpy as np

    said = {"id": index.arrays["id"].tolist(), "nonnull": index.meta["nonnull"], "unusable": index.meta["unusable"]}
    for name, values in index.arrays.items():
        if name.startswith("values:"):
            continue  # a real's distinct values: may keep one no row holds now; the rows are compared
        if name in index.meta["codes"]:
            texts = index.meta["codes"][name] + [None]
            said[name] = [texts[c] for c in values.tolist()]
        elif name in index.meta["whole"]:
            null = np.iinfo(values.dtype).min
            reals = index.arrays.get(f"values:{name}")
            decode = (lambda v: v) if reals is None else (lambda v: float(reals[v]))  # noqa: E731
            said[name] = [None if v == null else decode(v) for v in values.tolist()]
        elif values.dtype.kind == "f":
            said[name] = [None if v != v else v for v in values.tolist()]
        else:  # orders, run starts, the joined names
            said[name] = values.tolist()
    return said


def _refreshed(path, previous, save_to=None):
    from toolkit.query import columnar
    from toolkit.query.index_file import IndexFile

    out = IndexFile(save_to.parent, target=save_to) if save_to is not None else None
    index = columnar._refresh(str(path), previous, out)
    assert index is not None, "the change log should have allowed a refresh"
    return index


@pytest.mark.parametrize("part", ["live", "all"])
@pytest.mark.parametrize(
    "few_names, saved", [(2000, False), (0, False), (0, True)], ids=["names-by-bisect", "names-by-numpy", "saved"]
)
def test_a_refreshed_index_holds_exactly_what_a_whole_build_holds(tmp_path, monkeypatch, few_names, saved, part):
    """Random writes of every kind (new ids between old ones, names equal to held ones,
    updates that change metrics, texts never seen, renames; closes; deletes), each followed
    by a refresh of the previous index from the change log, compared with a whole build.
    A closed listing leaves the live part and stays in the `all` part. `saved`: the refresh
    and the build are written to their files an array at a time, and mapped from them."""
    from toolkit.query import name_order

    monkeypatch.setattr(name_order, "_FEW_NAMES", few_names)
    monkeypatch.setattr(name_order, "_NAME_STEP", 4)  # names placed among every 4th held one, then within
    path = tmp_path / "m.db"
    mirror = Mirror(path, clock=fixed_clock, create=True)
    conn = mirror.connection()
    records = listing_records(400, seed=11)
    save_listings(conn, records[::2], origin="sync", observed_at=ts(NOW - timedelta(days=3)))
    index = build_index(path, part=part)
    rnd = random.Random(5)
    pool = records[1::2]
    for step in range(12):
        kind = step % 4
        if kind == 0 and pool:  # new listings, ids between the held ones, some named as held ones
            batch, pool = pool[:25], pool[25:]
            held = [r[0] for r in conn.execute("SELECT name FROM listings ORDER BY random() LIMIT 8")]
            batch = [{**r, "name": held[n]} if n < len(held) else r for n, r in enumerate(batch)]
            save_listings(conn, batch, origin="sync", observed_at=ts(NOW - timedelta(days=2, hours=-step)))
        elif kind == 1:  # a sync page that changes metrics, a never-seen TLD, a new name
            ids = [r[0] for r in conn.execute("SELECT id FROM listings ORDER BY random() LIMIT 30")]
            with conn:
                for n, listing_id in enumerate(ids):
                    conn.execute(
                        "UPDATE listings SET trust_flow = ?, price = ?, effective_price = ?, tld = ?, language = ?, "
                        "name = CASE WHEN ? THEN 'zz' || name ELSE name END, wayback_snapshots = ? WHERE id = ?",
                        [
                            rnd.choice([None, 0, 55, 99]),
                            rnd.choice([None, 1.5, 2e6]),
                            rnd.choice([None, 3.25]),
                            rnd.choice([".fr", f".new{step}"]),
                            rnd.choice([None, "EN", f"X{step}"]),
                            n % 3 == 0,
                            rnd.choice([None, 7, 3_000_000_000]),
                            listing_id,
                        ],
                    )
                conn.execute("UPDATE mirror_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        elif kind == 2:  # closes
            ids = [r[0] for r in conn.execute("SELECT id FROM listings ORDER BY random() LIMIT 5")]
            close_listings(conn, ids, closed_at=ts(NOW - timedelta(minutes=step)))
        else:  # deletes (e.g. `edt demo --clear` below the bulk threshold)
            with conn:
                conn.execute("DELETE FROM listings WHERE id IN (SELECT id FROM listings ORDER BY random() LIMIT 7)")
                conn.execute("UPDATE mirror_meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation'")
        index = _refreshed(path, index, tmp_path / f"refreshed-{step}.colidx" if saved else None)
        whole = build_index(path, part=part, save_to=tmp_path / "whole.colidx" if saved else None)
        assert index.generation == whole.generation == mirror.generation()
        assert _held(index) == _held(whole), f"step {step}"
        open_ids = [r[0] for r in conn.execute("SELECT id FROM listings WHERE closed_at IS NULL ORDER BY id")]
        every_id = [r[0] for r in conn.execute("SELECT id FROM listings ORDER BY id")]
        assert index.arrays["id"].tolist() == (open_ids if part == "live" else every_id)
    assert len(open_ids) < len(every_id)  # closings happened
    mirror.close()


def test_a_clock_before_the_newest_closing_reads_closed_rows_as_they_were_live(synthetic_db):
    """With the clock set before some closings (EDT_NOW, a replay), those listings were live
    then: the live part and the open-only index cannot answer, and both engines agree."""
    closings = sorted(
        {
            r[0]
            for r in Mirror(synthetic_db, clock=fixed_clock)
            .connection()
            .execute("SELECT closed_at FROM listings WHERE closed_at IS NOT NULL")
        }
    )
    assert closings
    before = datetime.fromisoformat(closings[0].replace("Z", "+00:00")) - timedelta(hours=1)
    columnar = Mirror(synthetic_db, clock=lambda: before, engine="columnar")
    sqlite = Mirror(synthetic_db, clock=lambda: before, engine="sqlite")
    rnd = random.Random(3)
    for _ in range(60):
        names = rnd.sample(FILTERS, rnd.randint(0, 3))
        params = {name: rnd.choice(POOLS[name]) for name in names}
        params.update(sort=rnd.choice(SORTS), per_page=50)
        expected = _answer(sqlite, params)
        assert _answer(columnar, params) == expected, params
    # The listings closed after the clock are among the live ones then.
    live_then = {r["id"] for r in sqlite.search_domains({"per_page": 100, "sort": "id"})["data"]}
    closed_later = {r[0] for r in sqlite.connection().execute("SELECT id FROM listings WHERE closed_at IS NOT NULL")}
    assert closed_later & live_then
    assert (
        columnar.search_domains({"per_page": 1})["meta"]["total"]
        == sqlite.search_domains({"per_page": 1})["meta"]["total"]
    )


def test_a_refreshed_index_answers_as_sqlite(tmp_path):
    path = tmp_path / "m.db"
    mirror = Mirror(path, clock=fixed_clock, engine="columnar", create=True)
    sqlite = Mirror(path, clock=fixed_clock, engine="sqlite")
    records = listing_records(300, seed=4)
    save_listings(mirror.connection(), records[:200], origin="sync", observed_at=ts(NOW - timedelta(days=2)))
    mirror.refresh_index()
    save_listings(mirror.connection(), records[200:], origin="sync", observed_at=ts(NOW))
    refreshed = mirror.refresh_index()
    assert load_index(index_path(path)).generation == refreshed.generation == mirror.generation()
    rnd = random.Random(2)
    for _ in range(60):
        names = rnd.sample(FILTERS, rnd.randint(1, 3))
        params = {name: rnd.choice(POOLS[name]) for name in names}
        params.update(sort=rnd.choice(SORTS), page=rnd.randint(1, 4), per_page=rnd.choice([5, 50]))
        assert _answer(mirror, params) == _answer(sqlite, params), params
    mirror.close()
    sqlite.close()


def test_after_a_bulk_load_the_index_is_built_whole(tmp_path):
    """A bulk load writes without the change log: the log then starts after it, and an
    index older than that is never patched from it."""
    from toolkit.query import columnar
    from toolkit.store.schema import bulk_load

    path = tmp_path / "m.db"
    mirror = Mirror(path, clock=fixed_clock, create=True)
    conn = mirror.connection()
    records = listing_records(120, seed=8)
    save_listings(conn, records[:60], origin="sync", observed_at=ts(NOW - timedelta(days=2)))
    before = build_index(path)
    with bulk_load(conn):
        save_listings(conn, records[60:], origin="sync", observed_at=ts(NOW))
    assert columnar._refresh(str(path), before) is None
    whole = columnar.update_index(path, before)
    assert len(whole.arrays["id"]) == 120 and whole.generation == mirror.generation()
    save_listings(conn, [{**records[0], "price": 1.0}], origin="sync", observed_at=ts(NOW))
    assert _held(_refreshed(path, whole)) == _held(build_index(path))
    mirror.close()


def test_a_build_reads_the_columns_the_covering_index_lacks_apart_from_the_others(tmp_path, monkeypatch):
    """A build worker holds one group of its columns at a time (at 1.1 million listings, one
    worker's 30 columns held at once peaked at 560 MB, now 325 MB): those the covering index lacks in one
    pass that looks each row up in the table, then the others from the index alone."""
    from toolkit.query import columnar, mirror_scan
    from toolkit.store.tables import FILTER_COLUMNS

    path = tmp_path / "m.db"
    with Mirror(path, clock=fixed_clock, create=True) as mirror:
        save_listings(mirror.connection(), listing_records(120, seed=3), origin="sync", observed_at=ts(NOW))
    reads = []
    read_rows = mirror_scan.read_rows

    def spy(conn, columns, source, args=()):
        selected = ", ".join(map(mirror_scan.text_field, columns))
        plan = " ".join(str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN SELECT {selected} FROM {source}"))
        reads.append((columns, plan))
        return read_rows(conn, columns, source, args)

    monkeypatch.setattr(mirror_scan, "read_rows", spy)
    first = [*columnar.number_columns(), "created_at", "first_seen_at"]
    second = [c for c in columnar.TIME_COLUMNS + columnar.DAY_COLUMNS + columnar.CODE_COLUMNS if c not in first]
    for columns in (first, second):
        reads.clear()
        *_, scratch = columnar._build_part(str(path), columns, columns is second, "live", str(tmp_path))
        scratch.discard()
        groups = [(read[1:], plan) for read, plan in reads if read != ["id", "name"]]  # the name order's own scan
        assert all(read[0] == "id" for read, _ in reads)
        assert sorted(c for group, _ in groups for c in group) == sorted(columns)  # each column read once
        looked_up = [c for c in columns if c not in FILTER_COLUMNS]
        assert [set(group) for group, _ in groups] == [s for s in (set(looked_up), set(columns) - set(looked_up)) if s]
        if len(groups) == 2:
            assert "COVERING INDEX" in groups[1][1] and "COVERING INDEX" not in groups[0][1], groups


_PARSE_AND_FREE = """
import io, sys
import pyarrow as pa, pyarrow.csv as pacsv
from toolkit.query import columnar

def rss():
    return int(next(line for line in open("/proc/self/status") if line.startswith("VmRSS")).split()[1]) // 1024

if sys.argv[1] == "worker":
    columnar._give_freed_memory_back()
text = ("\\n".join(f"{i}\\x1f{i * 3.5}\\x1f2026-01-01T00:00:00Z" for i in range(200000)) + "\\n").encode()
base = rss()
for _ in range(20):  # a worker's slices, parsed and let go
    pacsv.read_csv(io.BytesIO(text), parse_options=pacsv.ParseOptions(delimiter="\\x1f"))
print(pa.default_memory_pool().backend_name, rss() - base)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_build_worker_gives_the_memory_of_its_parsed_slices_back():
    """Arrow's default allocator kept the freed buffers of the slices a build worker parsed;
    the worker's allocator gives them back (a worker's peak at 1.1 million listings: 404 MB ->
    330 MB). Measured beside the default, in the same run."""
    import pyarrow as pa

    try:
        pa.jemalloc_memory_pool()
    except NotImplementedError:
        pytest.skip("this pyarrow has no jemalloc: the worker keeps Arrow's default allocator")
    held = {}
    for kind in ("default", "worker"):
        run = subprocess.run([sys.executable, "-c", _PARSE_AND_FREE, kind], capture_output=True, text=True, check=True)
        backend, megabytes = run.stdout.split()
        held[kind] = int(megabytes)
    assert backend == "jemalloc"
    assert held["worker"] < held["default"] / 2, held


def test_building_and_refreshing_the_index_leave_pandas_out(tmp_path):
    """pyarrow's to_numpy imports pandas (over half a second in a fresh process, which
    `edt sync` or `edt ingest` would pay after every run): the index reads Arrow's buffers."""
    import subprocess
    import sys

    path = tmp_path / "m.db"
    mirror = Mirror(path, clock=fixed_clock, create=True)
    records = listing_records(50, seed=2)
    save_listings(mirror.connection(), records[:25], origin="sync", observed_at=ts(NOW))
    build_index(path).save(index_path(path))
    save_listings(mirror.connection(), records[25:], origin="sync", observed_at=ts(NOW))
    mirror.close()
    script = (
        "import sys\n"
        "from toolkit.query import columnar\n"
        f"path = {str(path)!r}\n"
        "old = columnar.load_index(columnar.index_path(path))\n"
        "new = columnar._refresh(path, old)\n"
        "whole = columnar.build_index(path)\n"
        "print(new is not None, new.rows, whole.rows, 'pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "50", "50", "False"]


def test_an_index_saved_before_a_filter_column_existed_is_built_again(tmp_path, monkeypatch):
    """A `.colidx` written by an older toolkit lacks the columns of filters added since: it is
    not used (SQLite answers, then a rebuild holds them), never half-used."""
    import toolkit.query.columnar as columnar

    path = tmp_path / "m.db"
    save_listings(
        Mirror(path, clock=fixed_clock, create=True).connection(),
        listing_records(60),
        origin="sync",
        observed_at=ts(NOW),
    )
    older = [c for c in columnar.number_columns() if c != "length"]
    monkeypatch.setattr(columnar, "number_columns", lambda: tuple(older))
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


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"tld": ".com,.fr"},
        {"tf_min": "10", "sort": "-trust_flow"},
        {"contains": "shop", "sort": "name"},
        {"no_numbers": "1", "sort": "-age"},
    ],
)
def test_a_sampled_frame_is_the_same_rows_in_the_same_order_on_both_engines(engines, params):
    """`domains_df(sample=N)` picks its rows from the columnar index when it can (the rows
    `id % step = 0` keeps, in the query's order), which must be exactly what SQLite picks."""
    columnar, sqlite = engines
    columns = ["name", "source", "trust_flow", "age", "effective_price"]
    got = columnar.domains_df(params, columns=columns, sample=20)
    expected = sqlite.domains_df(params, columns=columns, sample=20)
    assert 0 < len(got) < columnar.search_domains({**params, "per_page": 1})["meta"]["total"]  # sampling happened
    assert got.equals(expected), params


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"tld": ".com,.fr"},
        {"ends_after": "2026-11-23", "ends_before": "2026-11-26"},
        {"include_closed": "1"},
        {"source": "regfree"},
    ],
)
def test_auction_end_days_are_counted_alike_on_both_engines(engines, params):
    columnar, sqlite = engines
    got, expected = columnar.day_counts(params), sqlite.day_counts(params)
    assert got == expected and (sum(expected.values()) > 0 or params.get("source") == "regfree"), params
    assert columnar.answered_by() == "columnar"


def test_prices_held_as_ranks_compare_as_the_reals_do(engines):
    """Reals are held as ranks among their distinct values: a bound equal to a held price,
    between two, below the lowest and above the highest gives SQLite's answer for each."""
    columnar, sqlite = engines
    prices = sorted(
        {
            r[0]
            for r in sqlite.connection().execute(
                "SELECT effective_price FROM listings WHERE effective_price IS NOT NULL"
            )
        }
    )
    bounds = [
        prices[0],
        prices[len(prices) // 2],
        (prices[10] + prices[11]) / 2,
        prices[-1],
        prices[0] / 2,
        prices[-1] * 2,
        0,
    ]
    for bound in bounds:
        for name in ("price_min", "price_max"):
            params = {name: bound, "per_page": 100, "sort": "-effective_price"}
            assert _answer(columnar, params) == _answer(sqlite, params), params
            assert columnar.answered_by() == "columnar"
    assert "values:effective_price" in columnar.refresh_index().arrays


def test_an_index_build_worker_dies_with_the_process_that_forked_it(tmp_path):
    """`edt archive` (or any load) killed with SIGKILL while its columnar index builds must not
    leave the build's forked workers behind, each waiting forever for work."""
    import os
    import signal
    import subprocess
    import sys
    import time

    script = (
        "import multiprocessing, os, sys, time\n"
        "from concurrent.futures import ProcessPoolExecutor\n"
        "from toolkit.query.columnar import _worker_start\n"
        "with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context('fork'), initializer=_worker_start) as pool:\n"
        "    print(pool.submit(os.getpid).result(), flush=True)\n"
        "    pool.submit(time.sleep, 120)\n"
        "    time.sleep(120)\n"
    )
    from pathlib import Path

    parent = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parents[1]
    )
    worker = int(parent.stdout.readline())
    os.kill(worker, 0)  # alive while its parent is
    parent.send_signal(signal.SIGKILL)
    parent.wait(30)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(worker, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        os.kill(worker, signal.SIGKILL)
        raise AssertionError(f"the worker {worker} outlived its parent")


def test_an_index_file_is_finished_by_renaming_its_scratch_file_and_reads_as_before(tmp_path, monkeypatch):
    """`IndexFile.finish` writes the header into the scratch file's room for it and renames the
    file into place: the part's file is the scratch file itself (its inode), with the mode of the
    file it replaces; where the header outgrows the room, the file is copied with the header
    sized to it (the layout files before this had), and both load with the same arrays."""
    import os

    import numpy as np

    from toolkit.query import index_file
    from toolkit.query.index_file import IndexFile

    path = tmp_path / "m.db"
    writer = Mirror(path, clock=fixed_clock, create=True)
    save_listings(writer.connection(), listing_records(60, seed=12), origin="sync", observed_at=ts(NOW))
    built = writer.refresh_index()
    arrays = {name: np.asarray(built.arrays[name]) for name in built.arrays}
    target = tmp_path / "part.colidx"
    target.write_bytes(b"older")
    target.chmod(0o640)
    out = IndexFile(tmp_path, target=target)
    for name, array in arrays.items():
        out.add(name, array)
    inode = os.stat(out.scratch).st_ino
    out.finish(built.generation, len(arrays["id"]), built.meta)
    assert os.stat(target).st_ino == inode and not os.path.exists(out.scratch)
    assert target.stat().st_mode & 0o777 == 0o640
    renamed = load_index(target)
    assert renamed is not None and renamed.generation == built.generation
    assert all(np.array_equal(renamed.arrays[name], array) for name, array in arrays.items())

    monkeypatch.setattr(index_file, "HEAD", index_file.ALIGN)  # a header past its room: copied
    copied_to = tmp_path / "copied.colidx"
    out = IndexFile(tmp_path, target=copied_to)
    for name, array in arrays.items():
        out.add(name, array)
    inode = os.stat(out.scratch).st_ino
    out.finish(built.generation, len(arrays["id"]), built.meta)
    assert os.stat(copied_to).st_ino != inode and not os.path.exists(out.scratch)
    size = int.from_bytes(copied_to.read_bytes()[8:16], "little")
    assert size < 64 * 1024  # the header as long as it is, no room left
    copied = load_index(copied_to)
    assert copied is not None and all(np.array_equal(copied.arrays[name], array) for name, array in arrays.items())
