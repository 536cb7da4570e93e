"""A name that closes, leaves SQLite (packed or archived) and is listed again: nothing it was
seen at is lost or doubled, wherever its rows are; the live listing is never moved out.
The feed is a Namecheap auctions CSV in the publisher's 25 columns, fetched by `edt sync --feeds`
from a `file://` address, as a user's config would name it."""

from __future__ import annotations

import json
import sqlite3
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolkit.cli import cli
from toolkit.store import parquet_archive as archive

HEADER = (
    "url,name,startDate,endDate,price,startPrice,renewPrice,bidCount,ahrefsDomainRating,umbrellaRanking,"
    "cloudflareRanking,estibotValue,extensionsTaken,keywordSearchCount,registeredDate,lastSoldPrice,lastSoldYear,"
    "isPartnerSale,semrushAScore,majesticCitation,ahrefsBacklinks,semrushBacklinks,majesticBacklinks,"
    "majesticTrustFlow,goValue"
)
NAME = "bravo-two.com"


class Feed:
    """One mirror fed by a Namecheap file the test rewrites between syncs."""

    def __init__(self, folder: Path, monkeypatch: pytest.MonkeyPatch):
        self.folder, self.db, self.file = folder, folder / "m.db", folder / "nc.csv"
        config = folder / "feeds.toml"
        config.write_text(f'[feeds.namecheap-auctions]\nurl = "{self.file.as_uri()}"\n')
        monkeypatch.setenv("EDT_CONFIG", str(config))
        monkeypatch.setenv("EDT_BUDGET_FILE", str(folder / "budget.sqlite"))
        monkeypatch.delenv("EDT_NOW", raising=False)
        monkeypatch.delenv("EDT_DB", raising=False)

    def run(self, *args: str) -> str:
        done = CliRunner().invoke(cli, [*args, "--db", str(self.db)], catch_exceptions=False)
        assert done.exit_code == 0, done.output
        return done.output

    def day(self, **bids: float) -> None:
        """The file lists these names at these bids; a sync reads it (a name left out closes)."""
        time.sleep(1.05)  # each sync its own second: the mirror's moments are whole seconds
        lines = [HEADER] + [
            f"https://www.namecheap.com/market/{name},{name},2026-11-20T10:00:00Z,2027-01-29T18:00:00Z,{bid},5,"
            "12.98,1,0,0,0,100,0,0,,0,0,false,0,5,0,0,10,3,0"
            for name, bid in bids.items()
        ]
        self.file.write_text("\n".join(lines) + "\n")
        self.run("sync", "--feeds", "namecheap-auctions")

    def history(self) -> list[float]:
        """The name's bids as seen, from the mirror and its archive together (DuckDB)."""
        found = archive.open_duckdb(self.db).sql(
            "SELECT h.max_bid FROM listing_history h WHERE h.listing_id IN "
            f"(SELECT id FROM listings WHERE name = '{NAME}') ORDER BY h.observed_at"
        )
        return [row[0] for row in found.fetchall()]

    def live(self) -> list[str]:
        out = json.loads(self.run("query", "--format", "json"))
        return sorted(r["name"] for r in out["data"])


def _closed_before_now(feed: Feed, *extra: str) -> str:
    """`edt archive`: what closed before now goes to the archive (or, with --pack-after 0d, is packed)."""
    time.sleep(1.05)
    packing = "--pack-after" in extra and extra[extra.index("--pack-after") + 1] == "0d"
    return feed.run("archive", "--closed-before", "3650d" if packing else "0d", *extra)


def test_a_packed_name_listed_again_stays_live_and_keeps_its_history_through_an_archive(tmp_path, monkeypatch):
    feed = Feed(tmp_path, monkeypatch)
    feed.day(**{"alpha-one.com": 20, NAME: 20})
    feed.day(**{"alpha-one.com": 20})  # the name closes
    _closed_before_now(feed, "--pack-after", "0d")  # and is packed
    feed.day(**{"alpha-one.com": 20, NAME: 30})  # listed again: live
    _closed_before_now(feed, "--pack-after", "none")
    assert feed.live() == ["alpha-one.com", NAME]
    assert feed.history() == [20, 30]


def test_a_packed_history_comes_back_whole_when_unpacked_after_new_names_arrived(tmp_path, monkeypatch):
    feed = Feed(tmp_path, monkeypatch)
    feed.day(**{"alpha-one.com": 20, NAME: 20})
    feed.day(**{"alpha-one.com": 20, NAME: 35})
    feed.day(**{"alpha-one.com": 20})
    _closed_before_now(feed, "--pack-after", "0d")
    feed.day(**{"alpha-one.com": 20, "charlie-three.com": 9})  # new rows take the packed rows' ids
    feed.day(**{"alpha-one.com": 21, "charlie-three.com": 9})
    feed.run("archive", "--unpack")
    conn = sqlite3.connect(feed.db)
    bids = conn.execute(
        "SELECT h.max_bid FROM listing_history h JOIN listings l ON l.id = h.listing_id WHERE l.name = ? "
        "ORDER BY h.observed_at",
        [NAME],
    ).fetchall()
    assert [b for (b,) in bids] == [20, 35]


def test_a_name_packed_twice_keeps_every_sighting(tmp_path, monkeypatch):
    feed = Feed(tmp_path, monkeypatch)
    feed.day(**{"alpha-one.com": 20, NAME: 20})
    feed.day(**{"alpha-one.com": 20, NAME: 25})
    feed.day(**{"alpha-one.com": 20})
    _closed_before_now(feed, "--pack-after", "0d")
    feed.day(**{"alpha-one.com": 20, NAME: 40})
    feed.day(**{"alpha-one.com": 20})
    _closed_before_now(feed, "--pack-after", "0d")
    assert feed.history() == [20, 25, 40]


def test_a_name_archived_twice_is_one_listing_with_both_histories_and_its_month_restores(tmp_path, monkeypatch):
    feed = Feed(tmp_path, monkeypatch)
    feed.day(**{"alpha-one.com": 20, NAME: 20})
    feed.day(**{"alpha-one.com": 20})
    _closed_before_now(feed, "--pack-after", "none")
    feed.day(**{"alpha-one.com": 20, "charlie-three.com": 9, NAME: 30})
    feed.day(**{"alpha-one.com": 20, "charlie-three.com": 9})
    _closed_before_now(feed, "--pack-after", "none")
    everything = json.loads(feed.run("query", "include_closed=1", "--format", "json"))["data"]
    assert sorted(r["name"] for r in everything) == ["alpha-one.com", NAME, "charlie-three.com"]
    assert [r["max_bid"] for r in everything if r["name"] == NAME] == [30]  # the newer copy
    assert feed.history() == [20, 30]
    assert "1 archived" in feed.run("status")
    month = datetime.now(timezone.utc).strftime("%Y-%m")
    feed.run("archive", "--restore", month)
    conn = sqlite3.connect(feed.db)
    assert conn.execute("SELECT count(*) FROM listings WHERE name = ?", [NAME]).fetchone()[0] == 1
    assert feed.history() == [20, 30]


def test_a_cut_inside_a_second_takes_the_listings_closed_at_its_start(tmp_path, monkeypatch):
    feed = Feed(tmp_path, monkeypatch)
    feed.day(**{"alpha-one.com": 20, NAME: 20})
    feed.day(**{"alpha-one.com": 20})
    closed = sqlite3.connect(feed.db).execute("SELECT closed_at FROM listings WHERE name = ?", [NAME]).fetchone()[0]
    moment = datetime.fromisoformat(closed.replace("Z", "+00:00")) + timedelta(milliseconds=500)
    report = archive.archive_closed(feed.db, moment)
    assert sum(report.listings.values()) == 1


def test_parquet_reads_moments_written_with_a_fraction_of_a_second_or_a_short_year(tmp_path, monkeypatch):
    """Mirrors loaded before moments were cut to the second hold feeds' fractions."""
    import pyarrow.parquet as pq

    feed = Feed(tmp_path, monkeypatch)
    feed.day(**{"alpha-one.com": 20, NAME: 20})
    conn = sqlite3.connect(feed.db)
    conn.execute("UPDATE listings SET auction_end_date = '2027-01-29T18:00:00.250000Z' WHERE name = ?", [NAME])
    conn.commit()
    feed.run("export", "--out", str(tmp_path / "all.parquet"))
    ends = pq.read_table(tmp_path / "all.parquet").column("auction_end_date").to_pylist()
    assert datetime(2027, 1, 29, 18, 0, 0, 250000, tzinfo=timezone.utc) in ends
    conn.execute("UPDATE listings SET auction_end_date = '1-01-01T00:00:00Z' WHERE name = ?", [NAME])
    conn.commit()
    refused = CliRunner().invoke(cli, ["export", "--db", str(feed.db), "--out", str(tmp_path / "b.parquet")])
    assert refused.exit_code == 2 and "auction_end_date holds '1-01-01T00:00:00Z'" in refused.output
    assert not (tmp_path / "b.parquet").exists()


def test_export_never_writes_over_the_mirror_nor_its_archive(tmp_path, monkeypatch):
    feed = Feed(tmp_path, monkeypatch)
    feed.day(**{"alpha-one.com": 20, NAME: 20})
    feed.day(**{"alpha-one.com": 20})
    _closed_before_now(feed, "--pack-after", "none")
    part = next(archive.archive_dir(feed.db).rglob("*.parquet"))
    before = feed.db.read_bytes(), part.read_bytes()
    for out in (feed.db, Path(f"{feed.db}-wal"), part, tmp_path / "link.db"):
        if out.name == "link.db":
            out.symlink_to(feed.db)
        refused = CliRunner().invoke(
            cli, ["export", "--db", str(feed.db), "--format", "csv", "--out", str(out), "tld=.zz"]
        )
        assert refused.exit_code == 2 and "the mirror's own file" in refused.output, refused.output
    assert (feed.db.read_bytes(), part.read_bytes()) == before
    assert "alpha-one.com" in feed.live()


def test_a_stopped_export_or_archive_says_what_is_kept_and_leaves_no_half_file(tmp_path, monkeypatch):
    import toolkit.formats as formats
    import toolkit.store.parquet_archive as archiving

    feed = Feed(tmp_path, monkeypatch)
    feed.day(**{"alpha-one.com": 20, NAME: 20})
    out = tmp_path / "all.csv"
    out.write_text("yesterday's export\n")

    def stopped(rows, columns, handle):
        handle.write("id,name\n1,half")
        raise KeyboardInterrupt  # Ctrl-C, or a kill (SIGTERM is made one)

    monkeypatch.setattr(formats, "write_csv", stopped)
    done = CliRunner().invoke(cli, ["export", "--db", str(feed.db), "--out", str(out)])
    assert done.exit_code == 130 and f"{out} was not written (left as it was)" in done.output
    assert out.read_text() == "yesterday's export\n" and [p.name for p in tmp_path.glob("*all.csv*")] == ["all.csv"]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(archiving, "archive_closed", interrupted)
    done = CliRunner().invoke(cli, ["archive", "--db", str(feed.db), "--closed-before", "0d"])
    assert done.exit_code == 130 and "each batch is all or nothing" in done.output


def test_history_rows_put_back_with_one_id_between_them_all_go_in():
    """Two listings' archived sightings holding one row id (ids reused while they were out)."""
    from toolkit.store.closing import put_back
    from toolkit.store.schema import connect, ensure_schema

    conn = connect(":memory:")
    ensure_schema(conn)
    conn.execute("INSERT INTO listing_history (id, listing_id, observed_at) VALUES (2, 9, '2026-11-01T00:00:00Z')")
    names = ["id", "listing_id", "observed_at", "max_bid"]
    rows = [
        (2, 7, "2026-10-01T00:00:00Z", 20.0),
        (3, 8, "2026-10-02T00:00:00Z", 5.0),
        (3, 7, "2026-10-03T00:00:00Z", 30.0),
    ]
    assert put_back(conn, "listing_history", names, rows) == 3
    assert put_back(conn, "listing_history", names, rows) == 0  # each sighting once
    found = conn.execute("SELECT listing_id, observed_at, max_bid FROM listing_history ORDER BY observed_at").fetchall()
    assert [(r[0], r[2]) for r in found] == [(7, 20.0), (8, 5.0), (7, 30.0), (9, None)]
