"""From the demo to real data: `edt demo --clear`, a second `edt demo` and `edt sync --feeds
--clear-demo` take out everything the demo made, wherever it went (plain, packed and archived
listings, history, results, raw records, saved searches and their alerts, the price model
learnt from its results), and nothing else. Checked as a user does it, with the commands, and
compared table by table and file by file with a mirror that never held the demo."""

from __future__ import annotations

import json
import sqlite3
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import lived_demo, mirror_digest
from toolkit import Mirror
from toolkit.analysis.appraise import appraise_if_due
from toolkit.cli import cli

# Bookkeeping that differs between any two mirrors with the same rows: the write counters
# (generation, the change log the columnar index reads) and the versions readers key caches on.
COUNTERS = {"generation", "changes_from", "packed_version", "schema_cookie"}


def edt(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _godaddy(path: Path, items: list[dict], generated: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("all_listings.json", json.dumps({"meta": {"generatedAt": generated}, "data": items}))
    return path


def _item(name: str, kind: str, price: str, bids: int, end: str) -> dict:
    return {
        "domainName": name,
        "link": f"https://auctions.godaddy.com/trpItemListing.aspx?miid={abs(hash(name)) % 10**6}",
        "auctionType": kind,
        "auctionEndTime": end,
        "price": price,
        "numberOfBids": bids,
        "domainAge": 9,
        "valuation": "$1,200",
        "majesticTf": 12,
        "majesticCf": 20,
    }


def load_real_rows(db: Path, folder: Path) -> None:
    """The same real rows into any mirror, as a user loads them: two days of a GoDaddy file
    (an auction that ends between them, with bids: a result; auctions live until next year)
    and a registry's deletion list."""
    first = [
        _item("kettleharbor.com", "Bid", "$310", 6, "2026-11-05T18:00:00Z"),
        _item("brightorchard.net", "Bid", "$45", 0, "2027-01-20T18:00:00Z"),
        _item("copperlantern.org", "Bid", "$120", 3, "2027-02-01T18:00:00Z"),
        _item("quietmeadow.com", "BuyNow", "$900", 0, "2027-03-01T18:00:00Z"),
    ]
    second = [dict(first[1]), dict(first[2], price="$150", numberOfBids=5), dict(first[3])]
    day1 = _godaddy(folder / "day1.json.zip", first, "2026-11-01T11:00:00Z")
    day2 = _godaddy(folder / "day2.json.zip", second, "2026-11-10T11:00:00Z")
    edt("ingest", "godaddy", "--db", str(db), "--file", str(day1), "--observed-at", "2026-11-01T12:00:00Z")
    edt("ingest", "godaddy", "--db", str(db), "--file", str(day2), "--observed-at", "2026-11-10T12:00:00Z")
    listed = folder / "deleted_domains_2026-11-10.txt"
    listed.write_text("przyklad-realny.pl\nkolejna-nazwa.pl\n")
    edt("ingest", "droplist", "--db", str(db), "--file", str(listed), "--observed-at", "2026-11-10T12:00:00Z")


def _meta(db: Path) -> dict[str, str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return {k: v for k, v in conn.execute("SELECT key, value FROM mirror_meta") if k not in COUNTERS}
    finally:
        conn.close()


def _tables(db: Path) -> dict[str, str]:
    """Every table's digest but the bookkeeping ones (the meta compared apart, without its
    counters), and the history rows without their row numbers (which count every row a
    mirror ever held, as SQLite's rowids do)."""
    tables = {k: v for k, v in mirror_digest(db).items() if k not in ("mirror_meta", "listing_changes")}
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(listing_history)") if row[1] != "id"]
        tables["listing_history"] = conn.execute(
            f"SELECT {', '.join(columns)} FROM listing_history ORDER BY listing_id, observed_at"
        ).fetchall()
    finally:
        conn.close()
    return tables


def _files(db: Path) -> list[str]:
    """The files beside the mirror, named as if it were `m.db` (its columnar index is a cache, compared by answers)."""
    return sorted(
        p.name.replace(db.name, "m.db")
        for p in db.parent.iterdir()
        if p.name.startswith(db.name) and ".colidx" not in p.name
    )


def _answers(db: Path) -> list:
    with Mirror(db, engine="columnar") as mirror:
        pages = [
            mirror.search_domains({"include_closed": "1", "per_page": "100", "sort": "name"}),
            mirror.search_domains({"per_page": "100", "sort": "-price"}),
            mirror.search_pending_delete({"per_page": "100", "sort": "domain"}),
        ]
    return [
        [(r["id"], r["name"] if "name" in r else r["domain"]) for r in page["data"]] + [page["meta"]["total"]]
        for page in pages
    ]


def _assert_same_mirror(got: Path, want: Path) -> None:
    assert _tables(got) == _tables(want)
    assert _meta(got) == _meta(want)
    assert _files(got) == _files(want)
    assert _answers(got) == _answers(want)


@pytest.fixture(scope="module")
def never_demo(tmp_path_factory) -> Path:
    """A mirror that only ever held the real rows."""
    folder = tmp_path_factory.mktemp("real")
    db = folder / "real.db"
    load_real_rows(db, folder)
    edt("status", "--db", str(db))
    return db


def test_clearing_a_packed_and_archived_demo_leaves_the_mirror_that_never_had_it(never_demo, tmp_path):
    db = lived_demo(tmp_path / "mixed.db")
    archived = edt("archive", "--db", str(db), "--closed-before", "10d", "--pack-after", "3d")
    assert "archived " in archived and "packed " in archived  # both places hold demo listings now
    load_real_rows(db, tmp_path)
    with Mirror(db) as mirror:  # what a scheduled sync does next: the demo's model prices the real listings
        appraise_if_due(mirror, say=lambda line: None)
    conn = sqlite3.connect(db)
    valued = conn.execute("SELECT count(*) FROM listings WHERE origin != 'demo' AND value_mid IS NOT NULL").fetchone()[
        0
    ]
    demo_results = conn.execute("SELECT count(*) FROM auction_results").fetchone()[0]
    conn.close()
    assert valued >= 2 and demo_results > 1_000 and Path(f"{db}.value-model").exists()
    assert Path(f"{db}.archive").is_dir()

    said = edt("demo", "--clear", "--db", str(db))
    assert "packed listings" in said and "archived listings" in said and "auction results" in said
    _assert_same_mirror(db, never_demo)
    assert not Path(f"{db}.value-model").exists() and not Path(f"{db}.archive").exists()
    comps = edt("comps", "brightorchard.net", "--db", str(db), "--json")
    assert {row["name"] for row in json.loads(comps)} <= {"kettleharbor.com"}  # no demo "sale" is a comparable


def test_a_second_demo_replaces_the_packed_and_archived_one(tmp_path):
    db, fresh = lived_demo(tmp_path / "again.db"), tmp_path / "fresh.db"
    edt("archive", "--db", str(db), "--closed-before", "10d", "--pack-after", "3d")
    edt("demo", "--db", str(db))
    edt("demo", "--db", str(fresh))
    exported = tmp_path / "all.csv"
    edt("export", "--db", str(db), "--out", str(exported), "include_closed=1")
    ids = [line.split(",")[0] for line in exported.read_text().splitlines()[1:]]
    assert len(ids) == len(set(ids)), "a listing exported twice: the old demo's packed copy survived"
    got, want = _meta(db), _meta(fresh)
    assert got.pop("demo_generated_at") and want.pop("demo_generated_at")
    assert got == want
    assert _tables(db) == _tables(fresh) and _files(db) == _files(fresh)


def test_a_watched_name_is_no_longer_listed_where_only_the_demo_listed_it(tmp_path):
    from toolkit.sync.watched_names import queue_listed

    db = tmp_path / "watched.db"
    edt("demo", "--db", str(db))
    conn = sqlite3.connect(db)
    (name,) = conn.execute(
        "SELECT name FROM listings WHERE origin = 'demo' AND live_until > "
        "strftime('%Y-%m-%dT%H:%M:%SZ', 'now', '+2 days') ORDER BY id LIMIT 1"
    ).fetchone()
    conn.close()
    edt("watch", "name", name, "--db", str(db))
    with Mirror(db) as mirror:
        queue_listed(mirror)  # what runs after every job
    conn = sqlite3.connect(db)
    assert "listing:" in conn.execute("SELECT listed FROM watched_names").fetchone()[0]
    conn.close()
    edt("demo", "--clear", "--db", str(db))
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT name, listed FROM watched_names").fetchall() == [(name, None)]  # still watched
    conn.close()


def test_an_archive_file_holding_real_rows_beside_the_demos_keeps_them(tmp_path):
    """Demo and real listings closed on the same day go into the same archive files; the clear
    writes those files again with the real rows alone, and the archive stays whole."""
    from datetime import datetime, timedelta, timezone

    from toolkit.store.writer import close_listings, save_listings

    db = lived_demo(tmp_path / "shared.db")
    conn = sqlite3.connect(db)
    (closed_at,) = conn.execute("SELECT min(closed_at) FROM listings WHERE closed_at IS NOT NULL").fetchone()
    conn.close()
    seen = (datetime.fromisoformat(closed_at.replace("Z", "+00:00")) - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    real = [
        {
            "id": 2**52 + n,
            "name": f"realname{n}.com",
            "tld": ".com",
            "source": "sedo",
            "type": "auction",
            "price": 50.0 + n,
            "currency": "EUR",
            "bids_count": 0,
            "created_at": seen,
        }
        for n in range(3)
    ]
    with Mirror(db) as mirror:
        save_listings(mirror.connection(), real, origin="sync", observed_at=seen)
        close_listings(mirror.connection(), [r["id"] for r in real], closed_at=closed_at)
    age = f"{(datetime.now(timezone.utc) - datetime.fromisoformat(closed_at.replace('Z', '+00:00'))).days - 1}d"
    edt("archive", "--db", str(db), "--closed-before", age, "--pack-after", "none")
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM listings WHERE id >= ?", [2**52]).fetchone()[0] == 0  # archived
    parts = conn.execute("SELECT count(*) FROM archive_parts").fetchone()[0]
    conn.close()
    assert parts >= 2

    edt("demo", "--clear", "--db", str(db))
    assert edt("archive", "--db", str(db), "--verify").strip() == "the archive is whole"
    exported = tmp_path / "all.csv"
    edt("export", "--db", str(db), "--out", str(exported), "include_closed=1")
    names = sorted(line.split(",")[1] for line in exported.read_text().splitlines()[1:])
    assert names == [r["name"] for r in real]
    conn = sqlite3.connect(db)
    history = conn.execute("SELECT count(*) FROM archive_parts WHERE tbl = 'listing_history'").fetchone()[0]
    conn.close()
    assert history >= 1  # their history went with them, still archived


def test_a_shortlisted_demo_listing_leaves_with_the_demo_and_never_moves_to_another_name(tmp_path):
    """The shortlist keeps listing ids, and the demo's ids are the service's: kept, the note
    would sit on whatever real listing a sync numbers so."""
    from toolkit.sync.saved_searches import shortlist, shortlist_add

    db = tmp_path / "short.db"
    edt("demo", "--db", str(db))
    (demo_id,) = sqlite3.connect(db).execute("SELECT min(id) FROM listings WHERE origin = 'demo'").fetchone()
    with Mirror(db) as mirror:
        shortlist_add(mirror, demo_id, "my note on a demo listing")
    said = edt("demo", "--clear", "--db", str(db))
    assert "1 shortlisted demo listings" in said
    with Mirror(db) as mirror:
        assert shortlist(mirror) == []
