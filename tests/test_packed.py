"""Packed closed listings (`edt archive --pack-after`): a listing closed some weeks ago leaves
the plain tables for one compressed record in the mirror; every reader answers as before,
unpacking is exact, the archive takes packed listings as it takes plain ones, a stop leaves
nothing half done, and a listing listed again after it was packed keeps one history."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_archive import AGE, CUT, NOW, TABLES, _archive_process, _closed_ids, _mirror, _rows, _what_readers_say
from test_archive import aged, copy  # noqa: F401  (fixtures)

from toolkit.cli import cli
from toolkit.store import packed
from toolkit.store import parquet_archive as archive
from toolkit.store.schema import connect


def _packed_ids(path: Path) -> list[int]:
    return [r[0] for r in _rows(path, "packed_listings")]


def _everything(path: Path) -> dict[str, list[tuple]]:
    return {t: _rows(path, t) for t in TABLES}


def test_packed_rows_leave_the_tables_and_every_reader_answers_as_before(copy):
    ids = _closed_ids(copy)
    assert len(ids) > 1000
    before = _what_readers_say(copy, ids)
    comps = [row for rows in before["comps"].values() for row in rows]
    assert comps and sum("TF/CF" in row["why"] for row in comps) > 0  # metrics scored, and compared after
    mirror = _mirror(copy)
    contains = {"include_closed": "1", "contains": "shop", "per_page": 100}
    before["contains"] = mirror.search_domains(contains)
    assert any(r["id"] in set(ids) for r in before["contains"]["data"])  # the search finds closed names too
    counts = {t: len(_rows(copy, t)) for t in TABLES}

    report = packed.pack_closed(copy, CUT, batch=700)
    assert report.listings == len(ids) and report.batches == -(-len(ids) // 700)
    assert _closed_ids(copy) == [] and _packed_ids(copy) == ids
    left = {t: len(_rows(copy, t)) for t in TABLES}
    assert report.history == counts["listing_history"] - left["listing_history"] > 0
    assert report.raw_records == counts["raw_records"] - left["raw_records"] > 0
    assert sorted(r[1] for r in _rows(copy, "packed_names")) == ids
    conn = connect(str(copy), readonly=True)
    assert sum(packed.packed_months(conn).values()) == len(ids)
    conn.close()

    after = _what_readers_say(copy, ids)
    after["contains"] = _mirror(copy).search_domains(contains)
    assert after == before
    assert archive.verify(copy) == []
    # The name search's index holds no tombstones of the packed rows: it is no larger than
    # the same index built anew (unmerged, it was a quarter larger here).
    conn = sqlite3.connect(copy)
    merged = conn.execute("SELECT sum(length(block)) FROM listings_fts_data").fetchone()[0]
    conn.execute("INSERT INTO listings_fts (listings_fts) VALUES ('rebuild')")
    assert merged <= conn.execute("SELECT sum(length(block)) FROM listings_fts_data").fetchone()[0]
    conn.rollback()
    conn.close()


def test_unpacking_gives_back_every_row_exactly(copy):
    original = _everything(copy)
    packed.pack_closed(copy, CUT)
    assert _everything(copy) != original
    assert packed.unpack(copy) == len(_closed_ids(copy)) > 1000
    assert _everything(copy) == original
    assert _packed_ids(copy) == [] and _rows(copy, "packed_names") == []


def test_a_dictionary_trained_on_the_mirror_packs_a_listing_in_a_fraction_of_its_bytes(copy):
    import zstandard

    report = packed.pack_closed(copy, CUT)
    conn = sqlite3.connect(copy)
    codecs = conn.execute("SELECT count(*), count(dictionary), max(length(dictionary)) FROM packed_codecs").fetchone()
    records = [r for (r,) in conn.execute("SELECT record FROM packed_listings")]
    conn.close()
    assert codecs[0] == 1 and codecs[1] == 1 and codecs[2] > 10_000  # one codec, with its trained dictionary
    assert len(records) == report.listings
    conn = connect(str(copy), readonly=True)
    codec = packed._codecs(conn)[1]
    conn.close()
    documents = [codec._decompressor.decompress(r) for r in records]
    alone = zstandard.ZstdCompressor(level=packed.LEVEL)
    packed_bytes, json_bytes = sum(map(len, records)), sum(map(len, documents))
    without = sum(len(alone.compress(d)) for d in documents)
    print(
        f"{len(records)} listings: JSON {json_bytes / len(records):.0f} B, zstd alone {without / len(records):.0f} B, "
        f"with the dictionary {packed_bytes / len(records):.0f} B"
    )
    assert packed_bytes < 0.3 * json_bytes and packed_bytes < 0.6 * without


def test_the_archive_takes_packed_listings_and_a_month_restores_exactly(copy):
    from datetime import datetime

    from test_archive import _archived_ids

    original = _everything(copy)
    ids = _closed_ids(copy)
    before = _what_readers_say(copy, ids)
    first = datetime.fromisoformat(_first_closing(copy))
    conn = sqlite3.connect(copy)
    closings = dict(conn.execute("SELECT id, closed_at FROM listings WHERE closed_at IS NOT NULL").fetchall())
    conn.close()
    packed.pack_closed(copy, CUT)
    report = archive.archive_closed(copy, first + (CUT - first) / 2)  # about half of them
    assert 0 < report.moved < len(ids)
    held, moved = set(_packed_ids(copy)), set(_archived_ids(copy))
    assert held | moved == set(ids) and not held & moved
    assert _what_readers_say(copy, ids) == before
    db = archive.open_duckdb(copy)
    for table in TABLES:
        assert db.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == len(original[table])
    # a filter on a moment reads packed and archived rows alike (the packed ones hold text)
    import pyarrow as pa
    import pyarrow.compute as pc

    middle = first + (CUT - first) * 3 / 4
    early = archive.archive_table(
        copy,
        "listings",
        columns=["id", "closed_at"],
        filter=pc.field("closed_at") < pa.scalar(middle, pa.timestamp("ms", "UTC")),
    )
    stamp = middle.strftime("%Y-%m-%dT%H:%M:%SZ")
    expected = {i for i in ids if closings[i] < stamp}
    assert set(early.column("id").to_pylist()) == expected and held & expected and moved & expected
    conn = connect(str(copy), readonly=True)
    months = list(archive.months(conn))
    conn.close()
    for month in months:
        archive.restore_month(copy, month)
    packed.unpack(copy)
    assert _everything(copy) == original


def _first_closing(path: Path):
    conn = sqlite3.connect(path)
    first = conn.execute("SELECT min(closed_at) FROM listings").fetchone()[0]
    conn.close()
    return first.replace("Z", "+00:00")


def test_a_listing_listed_again_after_it_was_packed_keeps_one_history(copy):
    mirror = _mirror(copy)
    listing_id = _closed_ids(copy)[0]
    history = mirror.listing_history(listing_id)
    assert len(history)
    packed.pack_closed(copy, CUT)
    # Listed again (a sync finds it back): its plain row returns, with a new history row.
    conn = sqlite3.connect(copy)
    row = conn.execute("SELECT * FROM listings LIMIT 0").description
    names = [d[0] for d in row]
    restored = packed.packed_rows(conn, "listings", "id", [listing_id], names)[0]
    values = dict(zip(names, restored), closed_at=None, live_until="9999-12-31T23:59:59Z")
    conn.execute(
        f"INSERT INTO listings ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})", list(values.values())
    )
    conn.execute(
        "INSERT INTO listing_history (listing_id, observed_at, price) VALUES (?, ?, 9.5)",
        [listing_id, NOW.strftime("%Y-%m-%dT%H:%M:%SZ")],
    )
    conn.commit()
    conn.close()
    mirror = _mirror(copy)
    name = values["name"]
    assert mirror.get_domain(listing_id)["data"]["closed_at"] is None  # its plain row, not the packed one
    assert [i for i, _, _ in mirror.listings_named(name)].count(listing_id) == 1
    # Closed again and packed again: one record, with the history of both stays.
    conn = sqlite3.connect(copy)
    conn.execute(
        "UPDATE listings SET closed_at = ?, live_until = ? WHERE id = ?",
        [values["updated_at"], values["updated_at"], listing_id],
    )
    conn.commit()
    conn.close()
    packed.pack_closed(copy, NOW)
    assert _packed_ids(copy).count(listing_id) == 1
    both = _mirror(copy).listing_history(listing_id)
    assert len(both) == len(history) + 1 and both["price"].iloc[-1] == 9.5
    assert archive.verify(copy) == []


@pytest.mark.parametrize("seed", [1, 2])
def test_packing_killed_midway_loses_and_doubles_nothing_and_a_rerun_finishes(copy, seed):
    everything = sorted(r[0] for r in _rows(copy, "listings"))
    history = len(_rows(copy, "listing_history"))
    wanted = _closed_ids(copy)
    env_args = ("--closed-before", "400d", "--pack-after", AGE, "--batch", "150")
    process = _archive_process(copy, *env_args)
    time.sleep(random.Random(seed).uniform(0.8, 2.0))
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    held, moved = sorted(r[0] for r in _rows(copy, "listings")), _packed_ids(copy)
    assert not set(held) & set(moved) and sorted(held + moved) == everything
    rerun = _archive_process(copy, *env_args)
    out, err = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, err
    assert _packed_ids(copy) == wanted and _closed_ids(copy) == []
    conn = connect(str(copy), readonly=True)
    kept = len(packed.packed_rows(conn, "listing_history", "listing_id", wanted, ["id"]))
    conn.close()
    assert len(_rows(copy, "listing_history")) + kept == history
    assert archive.verify(copy) == []


def test_the_command_packs_lists_unpacks_and_refuses_a_bad_age(copy, monkeypatch):
    monkeypatch.setenv("EDT_NOW", NOW.strftime("%Y-%m-%dT%H:%M:%SZ"))
    runner = CliRunner()
    ids = _closed_ids(copy)
    bad = runner.invoke(cli, ["archive", "--db", str(copy), "--pack-after", "soon"])
    assert bad.exit_code == 2 and "--pack-after" in bad.output and _packed_ids(copy) == []
    done = runner.invoke(cli, ["archive", "--db", str(copy), "--closed-before", "400d", "--pack-after", AGE, "--json"])
    assert done.exit_code == 0, done.output
    said = json.loads(done.output)
    assert said["packed"] == len(ids) and said["file_bytes_after"] > 0 and _packed_ids(copy) == ids
    listed = runner.invoke(cli, ["archive", "--db", str(copy), "--list", "--json"])
    assert sum(json.loads(listed.output)["packed"].values()) == len(ids)
    text = runner.invoke(cli, ["archive", "--db", str(copy), "--list"])
    assert "packed in the mirror: 2026-11" in text.output
    back = runner.invoke(cli, ["archive", "--db", str(copy), "--unpack"])
    assert back.exit_code == 0 and f"{len(ids):,} packed listings back" in back.output
    assert _packed_ids(copy) == [] and _closed_ids(copy) == ids
    none = runner.invoke(cli, ["archive", "--db", str(copy), "--closed-before", "400d", "--pack-after", "none"])
    assert none.exit_code == 0 and _packed_ids(copy) == []
    assert "packed nothing: packing is off (--pack-after none)" in none.output
    again = runner.invoke(cli, ["archive", "--db", str(copy), "--closed-before", "400d", "--pack-after", AGE])
    twice = runner.invoke(cli, ["archive", "--db", str(copy), "--closed-before", "400d", "--pack-after", AGE])
    assert f"({len(ids):,} packed in all)" in again.output  # what it did, and what the mirror holds packed
    assert twice.output.splitlines()[:2] == [
        f"archived nothing: no listing closed before {said['cut']} is left in {copy}",
        f"packed nothing: no plain listing closed before {said['pack_cut']} is left ({len(ids):,} packed already)",
    ]


def test_the_scheduler_packs_when_the_config_says(copy, tmp_path, monkeypatch):
    from toolkit.sync.schedule import _archive_after

    config = tmp_path / "config.toml"
    config.write_text(f'[archive]\npack_after = "{AGE}"\n')
    monkeypatch.setenv("EDT_CONFIG", str(config))
    said: list[str] = []
    _archive_after(_mirror(copy), said.append)
    assert len(said) == 1 and said[0].startswith(f"archive: {len(_packed_ids(copy)):,} listings closed before ")
    assert said[0].endswith(" packed")
    assert _closed_ids(copy) == [] and len(_packed_ids(copy)) > 1000


def test_the_history_frames_count_packed_and_archived_listings(copy):
    from toolkit.analysis import closed_listings, first_seen_cohorts

    def frames() -> tuple:
        mirror = _mirror(copy)
        return closed_listings(mirror).to_dict("records"), first_seen_cohorts(mirror).to_dict("records")

    from datetime import datetime

    before = frames()
    assert len(before[0]) == len(_rows(copy, "listings", "closed_at IS NOT NULL")) > 1000
    first = datetime.fromisoformat(_first_closing(copy))
    packed.pack_closed(copy, CUT)
    archive.archive_closed(copy, first + (CUT - first) / 2)
    assert _packed_ids(copy) and archive.manifest(connect(str(copy), readonly=True))  # both kinds now
    assert frames() == before


def test_a_write_during_packing_is_kept(copy):
    from test_archive import _assert_writes_kept_during

    wanted = _closed_ids(copy)
    _assert_writes_kept_during(
        copy, lambda: _archive_process(copy, "--closed-before", "400d", "--pack-after", AGE, "--batch", "150")
    )
    assert _packed_ids(copy) == wanted


def test_packing_on_a_full_disk_is_one_line_and_removes_nothing(copy):
    import resource

    before = _everything(copy)

    def full_disk() -> None:  # files of this process cannot grow past 64 KiB: the disk is full for them
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    process = _archive_process(copy, "--closed-before", "400d", "--pack-after", AGE, preexec_fn=full_disk)
    out, err = process.communicate(timeout=120)
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode in (1, 2) and len(lines) == 1, err
    assert "full" in lines[0] and str(copy) in lines[0]
    assert _everything(copy) == before and _packed_ids(copy) == []


def test_a_closing_time_that_is_not_one_stops_packing_naming_it(copy, monkeypatch):
    monkeypatch.setenv("EDT_NOW", NOW.strftime("%Y-%m-%dT%H:%M:%SZ"))
    bad = _closed_ids(copy)[5]
    conn = sqlite3.connect(copy)
    conn.execute("UPDATE listings SET closed_at = '2026-11-2x' WHERE id = ?", [bad])
    conn.commit()
    conn.close()
    before = _everything(copy)
    result = CliRunner().invoke(cli, ["archive", "--db", str(copy), "--closed-before", "400d", "--pack-after", AGE])
    assert result.exit_code == 2
    assert f"listing {bad} is '2026-11-2x', not a timestamp: packing stopped at its batch" in result.output
    assert _everything(copy) == before and _packed_ids(copy) == []
