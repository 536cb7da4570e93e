"""`edt archive`: closed listings past a cut leave SQLite for a Parquet dataset beside the
mirror, with their history and raw records; every reader answers as before (from the
archive), a month restored is exact, a stop or a full disk leaves nothing half done, and a
write made meanwhile is kept."""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import built_once
from test_query import POOLS

from toolkit import Mirror
from toolkit.analysis.comps import comparables
from toolkit.store import parquet_archive as archive
from toolkit.cli import cli
from toolkit.demo import load_demo
from toolkit.demo.clock import anchor_of
from toolkit.store.schema import connect

TODAY = date(2026, 12, 10)  # the window, Nov 19 - Dec 10: closings in two months
DAYS = 21
NOW = anchor_of(TODAY) + timedelta(hours=2)
CUT = NOW - timedelta(days=6)  # `--closed-before 6d` as of NOW (EDT_NOW)
AGE = "6d"
TABLES = ("listings", "listing_history", "raw_records")


@pytest.fixture(scope="module")
def aged(tmp_path_factory) -> Path:
    """A 21-day time-lapse (seed 3) to TODAY, with raw records as a sync keeps them for some
    closed listings (they must travel too); made once per run (this module's and test_packed's)."""

    def build(path: Path) -> None:
        conn = connect(str(path))
        load_demo(conn, scale="small", seed=3, today=TODAY, days=DAYS)
        conn.executemany(
            "INSERT INTO raw_records (kind, id, raw) VALUES ('listing', ?, ?)",
            [
                (i, json.dumps({"extra": i}))
                for (i,) in conn.execute("SELECT id FROM listings WHERE closed_at IS NOT NULL ORDER BY id LIMIT 300")
            ],
        )
        conn.commit()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()

    return built_once("aged", build, tmp_path_factory.mktemp("aged") / "m.db")


@pytest.fixture
def copy(aged, tmp_path) -> Path:
    path = tmp_path / "m.db"
    shutil.copy(aged, path)
    return path


def _mirror(path: Path) -> Mirror:
    return Mirror(path, clock=lambda: NOW)


def _rows(path: Path, table: str, where: str = "1") -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(f"SELECT * FROM {table} WHERE {where} ORDER BY 1, 2").fetchall()
    finally:
        conn.close()


def _closed_ids(path: Path) -> list[int]:
    return [r[0] for r in _rows(path, "listings", f"closed_at < '{CUT:%Y-%m-%dT%H:%M:%SZ}'")]


def _frame(frame) -> list[dict]:
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def _what_readers_say(path: Path, ids: list[int]) -> dict:
    """Every reader of closed rows, on seeded requests and on the archived listings' ids."""
    mirror = _mirror(path)
    rnd = random.Random(11)
    said: dict = {}
    filters = ["tld", "type", "has_bids", "source", "has_backlinks"]
    for n in range(14):
        params = {
            "include_closed": "1",
            "per_page": "100",
            "page": str(1 + n % 3),
            "sort": rnd.choice(["-score", "name", "-bids_count", "price", "-auction_end_date", "id"]),
        }
        for name in rnd.sample(filters, rnd.randint(0, 2)):
            params[name] = rnd.choice(POOLS[name])
        said[json.dumps(params, sort_keys=True)] = mirror.search_domains(params)
    said["cursor"] = mirror.search_domains(
        {"include_closed": "1", "after_id": str(ids[len(ids) // 2]), "per_page": 100}
    )
    chosen = rnd.sample(ids, 25)
    said["domains"] = {i: mirror.get_domain(i) for i in chosen}
    said["history"] = {i: _frame(mirror.listing_history(i)) for i in chosen}
    names = [mirror.get_domain(i)["data"]["name"] for i in chosen]
    said["named"] = {name: mirror.listings_named(name) for name in names}
    # comparable sales score a sold auction's metrics, wherever its listing now lies
    said["comps"] = {name: comparables(mirror, name).to_dict("records") for name in names[:6]}
    said["export"] = list(mirror.export_rows({"include_closed": "1", "tld": ".com", "sort": "-score"}))
    said["live"] = mirror.search_domains({"per_page": 100, "sort": "-score"})
    return said


def test_archived_rows_leave_sqlite_and_every_reader_answers_as_before(copy):
    ids = _closed_ids(copy)
    assert len(ids) > 1000
    before = _what_readers_say(copy, ids)
    assert any(before["history"][i] for i in before["history"])  # archived listings with history
    counts = {t: len(_rows(copy, t)) for t in TABLES}

    report = archive.archive_closed(copy, CUT, batch=700)
    assert report.moved == len(ids) and report.batches == -(-len(ids) // 700)
    assert set(report.listings) == {"2026-11", "2026-12"}
    assert _closed_ids(copy) == []  # nothing closed before the cut is left in SQLite
    left = {t: len(_rows(copy, t)) for t in TABLES}
    conn = connect(str(copy), readonly=True)
    months = archive.months(conn)
    conn.close()
    for table in TABLES:
        assert counts[table] - left[table] == sum(m[table] for m in months.values()) > 0
    assert report.history == counts["listing_history"] - left["listing_history"]

    after = _what_readers_say(copy, ids)
    assert after == before
    assert archive.verify(copy) == []


def test_the_archive_reads_alone_with_pyarrow_and_as_one_with_the_mirror_in_duckdb(copy):
    import pyarrow.dataset as ds

    counts = {t: len(_rows(copy, t)) for t in TABLES}
    listing_ids = sorted(r[0] for r in _rows(copy, "listings"))
    archive.archive_closed(copy, CUT)
    folder = archive.archive_dir(copy)
    # pyarrow alone, as Spark or any Parquet reader would: the folder, Hive partitioning
    alone = ds.dataset(folder / "listings", format="parquet", partitioning="hive").to_table()
    assert sorted(alone.column("month").unique().to_pylist()) == ["2026-11", "2026-12"]
    assert alone.num_rows + len(_rows(copy, "listings")) == counts["listings"]
    # moments are timestamps (UTC) and days dates, as any engine compares and groups them
    closed = alone.column("closed_at")
    assert str(closed.type) == "timestamp[ms, tz=UTC]" and str(alone.column("wayback_first_date").type) == "date32[day]"
    assert {(c.year, c.month) for c in closed.to_pylist()} == {(2026, 11), (2026, 12)}
    moments = [f for f in alone.schema if f.name.endswith("_at") or f.name == "live_until"]
    assert len(moments) > 10 and {str(f.type) for f in moments} == {"timestamp[ms, tz=UTC]"}, moments
    assert alone.column("live_until").to_pylist() == closed.to_pylist()  # a closed listing's live_until
    # DuckDB: the mirror's rows and the archive's as one table
    duck = archive.open_duckdb(copy)
    for table in TABLES:
        assert duck.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == counts[table]
    assert [r[0] for r in duck.execute("SELECT id FROM listings ORDER BY id").fetchall()] == listing_ids
    archived = duck.execute("SELECT count(*) FROM listings WHERE month IS NOT NULL").fetchone()[0]
    assert archived == alone.num_rows
    kinds = duck.execute(
        "SELECT DISTINCT typeof(closed_at), typeof(observed_at) FROM listings "
        "JOIN listing_history h ON h.listing_id = listings.id"
    ).fetchall()
    assert kinds == [("TIMESTAMP WITH TIME ZONE", "TIMESTAMP WITH TIME ZONE")]
    by_month = duck.execute(
        "SELECT strftime(closed_at AT TIME ZONE 'UTC', '%Y-%m') AS m, count(*) FROM listings "
        "WHERE month IS NOT NULL GROUP BY m ORDER BY m"
    ).fetchall()
    assert [m for m, _ in by_month] == ["2026-11", "2026-12"] and sum(n for _, n in by_month) == archived
    duck.close()


def test_a_month_archived_with_moments_as_text_is_still_read(copy):
    """An archive written before moments were typed held them as text: every reader still reads
    it (and DuckDB and pyarrow as timestamps), and it restores exactly."""
    import pyarrow.parquet as pq

    from toolkit.store.closing import as_stored

    ids = _closed_ids(copy)
    november = "closed_at >= '2026-11' AND closed_at < '2026-12'"
    before_rows = _rows(copy, "listings", november)
    before = _what_readers_say(copy, ids)
    archive.archive_closed(copy, CUT)
    conn = sqlite3.connect(copy)
    for path, tbl in conn.execute("SELECT path, tbl FROM archive_parts WHERE month = '2026-11'").fetchall():
        file = archive.archive_dir(copy) / path
        text = as_stored(pq.read_table(file))  # the file as the earlier toolkit wrote it
        pq.write_table(text, file, compression="zstd")
        conn.execute("UPDATE archive_parts SET checksum = ? WHERE path = ?", [archive.checksum(text), path])
    conn.commit()
    conn.close()
    old = pq.read_table(next((archive.archive_dir(copy) / "listings").glob("month=2026-11/*.parquet")))
    assert str(old.schema.field("closed_at").type) == "string"
    assert archive.verify(copy) == []
    assert _what_readers_say(copy, ids) == before
    typed = archive.archive_table(copy, "listings", columns=["id", "closed_at", "month"])
    assert set(typed.column("month").to_pylist()) == {"2026-11", "2026-12"}
    duck = archive.open_duckdb(copy)
    assert duck.execute("SELECT DISTINCT typeof(closed_at) FROM listings WHERE month IS NOT NULL").fetchall() == [
        ("TIMESTAMP WITH TIME ZONE",)
    ]
    assert duck.execute(
        "SELECT count(*) FROM listings WHERE month = '2026-11' AND closed_at < TIMESTAMPTZ '2026-12-01 00:00:00+00'"
    ).fetchone()[0] == len(before_rows)
    duck.close()
    assert archive.restore_month(copy, "2026-11")["listings"] == len(before_rows)
    assert _rows(copy, "listings", november) == before_rows


def test_a_restored_month_is_exactly_what_was_archived(copy):
    month_rows = {}
    november = "closed_at >= '2026-11' AND closed_at < '2026-12'"
    ids = [r[0] for r in _rows(copy, "listings", november)]
    id_list = ",".join(map(str, ids))
    wheres = {
        "listings": f"id IN ({id_list})",
        "listing_history": f"listing_id IN ({id_list})",
        "raw_records": f"kind = 'listing' AND id IN ({id_list})",
    }
    for table, where in wheres.items():
        month_rows[table] = _rows(copy, table, where)
    assert month_rows["raw_records"] and month_rows["listing_history"]
    archive.archive_closed(copy, CUT)
    assert all(not _rows(copy, table, where) for table, where in wheres.items())

    restored = archive.restore_month(copy, "2026-11")
    assert restored == {table: len(rows) for table, rows in month_rows.items()}
    for table, where in wheres.items():
        assert _rows(copy, table, where) == month_rows[table]
    assert not list((archive.archive_dir(copy) / "listings").glob("month=2026-11/*"))
    conn = connect(str(copy), readonly=True)
    assert list(archive.months(conn)) == ["2026-12"]
    conn.close()
    with pytest.raises(archive.ArchiveError, match="no archived month 2026-11"):
        archive.restore_month(copy, "2026-11")


def test_a_mirror_made_now_gives_the_space_back(copy, tmp_path):
    conn = connect(str(copy), readonly=True)
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # incremental, from its creation
    conn.close()
    report = archive.archive_closed(copy, CUT)
    assert report.file_bytes_after < report.file_bytes_before
    assert 0 < report.archive_bytes < (report.file_bytes_before - report.file_bytes_after)


def _archive_process(path: Path, *extra: str, **popen) -> subprocess.Popen:
    env = {**os.environ, "EDT_NOW": NOW.strftime("%Y-%m-%dT%H:%M:%SZ")}
    return subprocess.Popen(
        [sys.executable, "-m", "toolkit", "archive", "--db", str(path), "--closed-before", AGE, *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        **popen,
    )


def _archived_ids(path: Path) -> list[int]:
    """The listing ids the archive's manifest lists, read from the files themselves."""
    import pyarrow.parquet as pq

    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    files = [p for (p,) in conn.execute("SELECT path FROM archive_parts WHERE tbl = 'listings'")]
    conn.close()
    return sorted(i for f in files for i in pq.read_table(archive.archive_dir(path) / f).column("id").to_pylist())


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_archive_killed_midway_loses_and_doubles_nothing_and_a_rerun_finishes(copy, seed):
    everything = sorted(r[0] for r in _rows(copy, "listings"))
    history = len(_rows(copy, "listing_history"))
    wanted = _closed_ids(copy)
    process = _archive_process(copy, "--batch", "200")
    time.sleep(random.Random(seed).uniform(0.8, 2.5))
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    assert _left_running(copy) == []  # nor its index build's workers (they die with it)
    held = sorted(r[0] for r in _rows(copy, "listings"))
    moved = _archived_ids(copy)
    assert not set(held) & set(moved)  # nothing in both
    assert sorted(held + moved) == everything  # nothing lost
    # A rerun cleans what the stop left and finishes.
    rerun = _archive_process(copy, "--batch", "200")
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert _archived_ids(copy) == wanted and _closed_ids(copy) == []
    assert not archive.archive_dir(copy).with_name(f"{copy.name}.archive-staging").exists()
    listed = {p["path"] for p in _manifest(copy)}
    on_disk = {
        p.relative_to(archive.archive_dir(copy)).as_posix() for p in archive.archive_dir(copy).rglob("*.parquet")
    }
    assert on_disk == listed
    assert archive.verify(copy) == []
    conn = connect(str(copy), readonly=True)
    assert (
        len(_rows(copy, "listing_history")) + sum(m["listing_history"] for m in archive.months(conn).values())
        == history
    )
    conn.close()


def _left_running(path: Path, wait: float = 5.0) -> list[str]:
    """The processes still running with `path` in their command line, after `wait` seconds at most."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                command = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if str(path) in command and proc.name != str(os.getpid()):
                found.append(command)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _manifest(path: Path) -> list[dict]:
    conn = connect(str(path), readonly=True)
    try:
        return archive.manifest(conn)
    finally:
        conn.close()


_WRITER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], timeout=60)
columns = [r[1] for r in conn.execute("PRAGMA table_info(listings)")]
select = ", ".join("id + 90000000" if c == "id" else ("'zzkept' || name" if c == "name" else c) for c in columns)
done = 0
for (source,) in conn.execute("SELECT id FROM listings WHERE closed_at IS NULL AND source != 'regfree' ORDER BY id LIMIT 40").fetchall():
    conn.execute(f"INSERT INTO listings ({', '.join(columns)}) SELECT {select} FROM listings WHERE id = ?", [source])
    conn.execute("UPDATE listings SET trust_flow = 77 WHERE id = ?", [source])
    conn.commit()
    done += 1
    time.sleep(0.03)
print(done, flush=True)
"""


def _assert_writes_kept_during(path: Path, start: Callable[[], subprocess.Popen]) -> None:
    """40 live listings written to (each copied under an id from 90000000, its TF set to 77)
    while the process `start` starts (an archive or a pack) runs: both end well, every write kept."""
    live = [r[0] for r in _rows(path, "listings", "closed_at IS NULL AND source != 'regfree'")][:40]
    process = start()
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stdout=subprocess.PIPE, text=True)
    assert writer.communicate(timeout=120)[0].strip() == "40"
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    copies = _rows(path, "listings", "id >= 90000000")
    assert len(copies) == 40 and all(r[1].startswith("zzkept") for r in copies)
    assert {r[0] for r in _rows(path, "listings", "trust_flow = 77")} >= set(live)
    assert _mirror(path).search_domains({"contains": "zzkept", "include_closed": "1"})["meta"]["total"] == 40


def test_a_write_during_an_archive_is_kept(copy):
    wanted = _closed_ids(copy)
    _assert_writes_kept_during(copy, lambda: _archive_process(copy, "--batch", "150"))
    assert _archived_ids(copy) == wanted


def test_an_archive_to_a_full_disk_is_one_line_and_removes_nothing(copy):
    before = {t: _rows(copy, t) for t in TABLES}

    def small_disk() -> None:  # files of this process cannot grow past 64 KiB: the disk is full for them
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    process = _archive_process(copy, preexec_fn=small_disk)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "the disk is full" in lines[0] and "nothing was removed" in lines[0], err
    assert {t: _rows(copy, t) for t in TABLES} == before
    assert _manifest(copy) == [] and not list(archive.archive_dir(copy).rglob("*.parquet"))


def test_a_file_where_the_archive_folder_goes_is_one_line_and_removes_nothing(copy, monkeypatch):
    before = {t: _rows(copy, t) for t in TABLES}
    blocker = archive.archive_dir(copy)
    blocker.write_text("not a folder\n")
    monkeypatch.setenv("EDT_NOW", NOW.isoformat())
    result = CliRunner().invoke(cli, ["archive", "--db", str(copy), "--closed-before", AGE])
    assert result.exit_code == 2
    line = result.output.strip()
    assert line == (
        f"edt: {blocker} is a file where the archive needs a folder; nothing was removed from {copy}. "
        "Move that file away and run this again"
    )
    assert {t: _rows(copy, t) for t in TABLES} == before and _manifest(copy) == []


def test_a_value_of_another_type_stops_the_archive_naming_it(copy):
    conn = sqlite3.connect(copy)
    victim = conn.execute(f"SELECT id FROM listings WHERE closed_at < '{CUT:%Y-%m-%d}' LIMIT 1").fetchone()[0]
    conn.execute("UPDATE listings SET trust_flow = 'lots' WHERE id = ?", [victim])
    conn.commit()
    conn.close()
    before = _rows(copy, "listings")
    with pytest.raises(archive.ArchiveError, match=r"listings\.trust_flow holds 'lots'"):
        archive.archive_closed(copy, CUT)
    assert _rows(copy, "listings") == before and _manifest(copy) == []


def test_the_command_lists_verifies_restores_and_refuses_bad_input(copy):
    runner = CliRunner()
    runner = CliRunner(env={"EDT_NOW": NOW.strftime("%Y-%m-%dT%H:%M:%SZ")})
    done = runner.invoke(cli, ["archive", "--db", str(copy), "--closed-before", AGE, "--json"])
    assert done.exit_code == 0, done.output
    moved = json.loads(done.stdout)
    assert sum(moved["listings"].values()) > 1000 and moved["archive_bytes"] > 0
    listed = runner.invoke(cli, ["archive", "--db", str(copy), "--list"])
    assert listed.exit_code == 0 and "2026-11" in listed.output and "2026-12" in listed.output
    assert f"{moved['listings']['2026-11']:,}" in listed.output
    assert runner.invoke(cli, ["archive", "--db", str(copy), "--verify"]).output.strip() == "the archive is whole"
    bad = runner.invoke(cli, ["archive", "--db", str(copy), "--closed-before", "soon"])
    assert bad.exit_code == 2 and "--closed-before" in bad.output and "180d" in bad.output
    month = runner.invoke(cli, ["archive", "--db", str(copy), "--restore", "Nov"])
    assert month.exit_code == 2 and "YYYY-MM" in month.output
    back = runner.invoke(cli, ["archive", "--db", str(copy), "--restore", "2026-12"])
    assert back.exit_code == 0 and f"{moved['listings']['2026-12']:,} listings" in back.output
    # a damaged archive file is found by --verify (exit 1, the file named)
    part = next(archive.archive_dir(copy).rglob("listings/*/*.parquet"))
    part.write_bytes(part.read_bytes()[:-100])
    broken = runner.invoke(cli, ["archive", "--db", str(copy), "--verify"])
    assert broken.exit_code == 1 and part.name in broken.output


def test_the_scheduler_archives_after_the_listings_run_when_the_config_says(copy, tmp_path, monkeypatch):
    from toolkit.sync.schedule import _archive_after

    said: list[str] = []
    mirror = _mirror(copy)
    _archive_after(mirror, said.append)
    assert said == [] and _manifest(copy) == []  # no [archive] in the config: nothing moves
    config = tmp_path / "config.toml"
    config.write_text(f'[archive]\nclosed_before = "{AGE}"\n')
    monkeypatch.setenv("EDT_CONFIG", str(config))
    _archive_after(mirror, said.append)
    assert len(said) == 1 and said[0].startswith(f"archive: {len(_archived_ids(copy)):,} listings closed before")
    assert _closed_ids(copy) == []


def test_a_mirror_made_before_gives_the_space_back_once_vacuumed(copy):
    conn = sqlite3.connect(copy)  # as a mirror made by an older toolkit: no incremental reclaiming
    conn.execute("PRAGMA journal_mode=DELETE")
    conn.execute("PRAGMA auto_vacuum=NONE")
    conn.execute("VACUUM")
    conn.close()
    report = archive.archive_closed(copy, CUT)
    assert report.moved and report.file_bytes_after >= report.file_bytes_before  # freed pages kept for later writes
    before = {t: _rows(copy, t) for t in TABLES}
    done = CliRunner().invoke(cli, ["archive", "--db", str(copy), "--vacuum", "--json"])
    assert done.exit_code == 0, done.output
    sizes = json.loads(done.stdout)
    assert sizes["file_bytes_after"] < report.file_bytes_before - report.archive_bytes
    conn = connect(str(copy), readonly=True)
    assert conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2
    conn.close()
    assert {t: _rows(copy, t) for t in TABLES} == before


def test_a_file_archived_before_a_column_was_declared_reads_it_as_null(copy):
    """An archive written by an older toolkit lacks the listing columns declared since (the
    price range): every reader sees them null, and filters and sorts on them still answer."""
    import pyarrow.parquet as pq

    from toolkit.store.results import save_values
    from toolkit.store.writer import VALUE_FIELDS

    conn = connect(str(copy))
    with conn:  # every listing valued, closed ones too: the archive's copies lose theirs below
        save_values(
            conn,
            [(i, 10.0, 20.0 + i % 7, 40.0, None) for (i,) in conn.execute("SELECT id FROM listings")],
            "2026-11-30T07:00:00Z",
        )
    conn.close()
    ids = _closed_ids(copy)
    archive.archive_closed(copy, CUT, batch=700)
    conn = connect(str(copy), readonly=True)
    parts = [p for p in archive.manifest(conn) if p["table"] == "listings"]
    valued_in_sqlite = conn.execute(
        "SELECT count(*) FROM listings WHERE value_mid >= 21 AND source != 'regfree'"
    ).fetchone()[0]
    conn.close()
    for part in parts:
        file = archive.archive_dir(copy) / part["path"]
        pq.write_table(pq.read_table(file).drop_columns(list(VALUE_FIELDS)), file)

    mirror = _mirror(copy)
    assert mirror.get_domain(ids[0])["data"]["value_mid"] is None
    assert mirror.search_domains({"include_closed": "1", "value_min": "21"})["meta"]["total"] == valued_in_sqlite > 0
    dealt = mirror.search_domains({"include_closed": "1", "sort": "-deal", "per_page": "100"})
    assert dealt["meta"]["total"] > valued_in_sqlite and dealt["data"][0]["value_mid"] is not None


def test_the_old_module_name_still_imports_and_warns():
    """`toolkit.store.archive` (docs and notebooks once imported it) is now
    `toolkit.store.parquet_archive`: the old name hands on the same functions, with a warning."""
    sys.modules.pop("toolkit.store.archive", None)
    with pytest.warns(DeprecationWarning, match="parquet_archive"):
        from toolkit.store.archive import archive_table, open_duckdb
    assert open_duckdb is archive.open_duckdb and archive_table is archive.archive_table


def test_bad_ages_empty_values_and_a_missing_mirror_are_one_line_exit_2_and_write_nothing(copy, tmp_path):
    runner = CliRunner(env={"EDT_NOW": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"), "EDT_CONFIG": str(tmp_path / "none.toml")})
    before = _rows(copy, "listings")
    for args, said in (
        (["--closed-before", "800000d"], "--closed-before: '800000d' is older than any listing"),
        (["--pack-after", "99999999999999d"], "--pack-after: '99999999999999d' is older than any listing"),
        (["--closed-before", ""], "--closed-before is empty"),
        (["--restore", ""], "--restore is empty"),
        (["--batch", "99999999999999999999"], "--batch"),
    ):
        done = runner.invoke(cli, ["archive", "--db", str(copy), *args])
        assert done.exit_code == 2 and said in done.output, (args, done.output)
        assert "Traceback" not in done.output
    config = tmp_path / "ages.toml"
    config.write_text('[archive]\nclosed_before = "six months"\n')
    done = CliRunner(env={"EDT_CONFIG": str(config)}).invoke(cli, ["archive", "--db", str(copy)])
    assert done.exit_code == 2 and f"[archive] closed_before in {config}" in done.output
    assert "--closed-before" not in done.output
    assert _rows(copy, "listings") == before and _manifest(copy) == []
    typo = tmp_path / "typo" / "deeper" / "mirror.db"
    done = runner.invoke(cli, ["archive", "--db", str(typo)])
    assert done.exit_code == 2 and "no mirror there" in done.output
    assert not (tmp_path / "typo").exists()


def test_closed_listings_are_read_while_an_archive_moves_them(copy):
    """Each batch of an archive spoils an index build under way: a reader of closed rows waits
    for one that holds, and every read counts every listing (it said 'build again', exit 1)."""
    everything = _mirror(copy).search_domains({"include_closed": "1", "per_page": "1"})["meta"]["total"]
    first = _archive_process(copy, "--batch", "25", "--pack-after", "none")
    time.sleep(1.0)  # the archive has moved its first batches
    totals = []
    while first.poll() is None and len(totals) < 4:
        done = subprocess.run(
            [sys.executable, "-m", "toolkit", "query", "--db", str(copy), "include_closed=1", "--format", "json"],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert done.returncode == 0, done.stderr
        totals.append(json.loads(done.stdout)["meta"]["total"])
    assert first.wait(timeout=180) == 0
    assert totals and set(totals) == {everything}


def test_a_missing_archived_file_is_said_in_words_and_a_link_to_the_mirror_finds_its_archive(copy, tmp_path):
    link = tmp_path / "link.db"
    link.symlink_to(copy)
    runner = CliRunner(env={"EDT_NOW": NOW.strftime("%Y-%m-%dT%H:%M:%SZ"), "EDT_CONFIG": str(tmp_path / "none.toml")})
    assert runner.invoke(cli, ["archive", "--db", str(link), "--closed-before", AGE]).exit_code == 0
    assert archive.archive_dir(copy).is_dir() and not Path(f"{link}.archive").exists()
    whole = runner.invoke(cli, ["query", "--db", str(copy), "include_closed=1", "--format", "json"])
    assert whole.exit_code == 0
    next(archive.archive_dir(copy).rglob("listings/*/*.parquet")).unlink()
    broken = runner.invoke(cli, ["query", "--db", str(copy), "include_closed=1", "--format", "json"])
    assert broken.exit_code != 0 and "an archived file is missing" in broken.output and "--verify" in broken.output
    assert "Traceback" not in broken.output
