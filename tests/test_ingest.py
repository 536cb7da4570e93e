"""`toolkit.ingest`: public feed files into the mirror, all or nothing per file.

The .pl deletion list and the .nu zones and release lists are real (tests/fixtures/real, with
their SOURCES.md). The other feeds have no real public copy that was found, so their files are
written here in each feed's exact format."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import sys
import zipfile
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

import toolkit.ingest as ingest
import toolkit.ingest.file_ingest as file_ingest
from conftest import REAL, REFERENCE
from toolkit import Mirror
from toolkit.ingest import ADAPTERS, INGEST_ID_BASE, IngestError, ingest_file, ingest_id, ingest_url, parse_bardate
from toolkit.ingest.lifecycle import predict_drop_date
from toolkit.store.writer import StagedWrite, save_pending

PL_LIST = REAL / "registry_drop_lists" / "dnspl_deleted_domains_2025-08-19.txt"
SCHEMAS = REFERENCE / "json-schema"

SEEN = "2026-01-10T12:00:00Z"  # a Saturday
LATER = "2026-01-13T08:30:00Z"


def clock() -> datetime:
    return datetime(2026, 1, 10, 12, 0, 0, tzinfo=timezone.utc)  # SEEN: listings ending after it are live


@pytest.fixture()
def mirror(tmp_path):
    m = Mirror(tmp_path / "m.db", clock=clock, create=True)
    yield m
    m.close()


def rows(mirror: Mirror, sql: str, *args) -> list[dict]:
    cursor = mirror.connection().execute(sql, args)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, r)) for r in cursor]


def raw(mirror: Mirror, kind: str, row_id: int) -> dict:
    (text,) = (
        mirror.connection().execute("SELECT raw FROM raw_records WHERE kind = ? AND id = ?", [kind, row_id]).fetchone()
    )
    return json.loads(text)


def count(mirror: Mirror, table: str) -> int:
    return mirror.connection().execute(f"SELECT count(*) FROM {table}").fetchone()[0]


def zipped(path: Path, member: str, text: str) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(member, text)
    return path


# -- GoDaddy inventory ------------------------------------------------------------------------

GODADDY_ITEMS = [
    {
        "domainName": "PPN57.COM",
        "link": "https://auctions.godaddy.com/trpItemListing.aspx?miid=575001",
        "auctionType": "BuyNow",
        "auctionEndTime": "2026-01-14T16:00:00Z",
        "price": "$5",
        "numberOfBids": 0,
        "domainAge": 7,
        "pageviews": 0,
        "valuation": "$1,067",
        "isAdult": False,
    },
    {
        "domainName": "GreenKettle.net",
        "link": "https://auctions.godaddy.com/trpItemListing.aspx?miid=575002",
        "auctionType": "Bid",
        "auctionEndTime": "2026-01-15T09:30:00-08:00",
        "price": "$1,234",
        "numberOfBids": 7,
        "domainAge": 16,
        "valuation": "$2,400",
        "majesticTf": 21,
        "majesticCf": 34,
    },
    {
        "domainName": "quietharbor.org",
        "link": "https://auctions.godaddy.com/trpItemListing.aspx?miid=575003",
        "auctionType": "Bid",
        "auctionEndTime": "2026-01-16T18:05:00Z",
        "price": "$12",
        "numberOfBids": 0,
        "domainAge": 3,
        "valuation": "$310",
        "majesticTf": 0,
        "majesticCf": 2,
    },
]


def godaddy_zip(path: Path, items=GODADDY_ITEMS, meta=None) -> Path:
    body = json.dumps({"meta": meta or {"generatedAt": "2026-01-10T11:00:00Z"}, "data": items}, indent=1)
    return zipped(path, "all_listings.json", body)


def test_godaddy_zipped_json_maps_every_field(mirror, tmp_path):
    report = ingest_file(mirror, "godaddy", godaddy_zip(tmp_path / "all_listings.json.zip"), observed_at=SEEN)
    assert (report.written, report.new, report.skipped) == (3, 3, [])
    got = {r["name"]: r for r in rows(mirror, "SELECT * FROM listings")}
    assert set(got) == {"ppn57.com", "greenkettle.net", "quietharbor.org"}

    buy_now, bid, no_bids = got["ppn57.com"], got["greenkettle.net"], got["quietharbor.org"]
    assert (buy_now["type"], buy_now["auction_type"], buy_now["price"], buy_now["max_bid"]) == (
        "closeout",
        "BuyNow",
        5.0,
        None,
    )
    assert (bid["type"], bid["auction_type"], bid["price"], bid["max_bid"]) == ("auction", "Bid", None, 1234.0)
    assert (bid["effective_price"], bid["bids_count"], bid["trust_flow"], bid["citation_flow"]) == (1234.0, 7, 21, 34)
    assert (no_bids["price"], no_bids["max_bid"], no_bids["bids_count"]) == (12.0, None, 0)
    assert bid["auction_end_date"] == "2026-01-15T17:30:00Z"  # -08:00 to UTC
    assert buy_now["auction_end_date"] == "2026-01-14T16:00:00Z"
    for row in got.values():
        assert (row["source"], row["currency"], row["origin"]) == ("godaddy", "USD", "ingest:godaddy")
        assert row["id"] == ingest_id("godaddy", row["name"]) and INGEST_ID_BASE <= row["id"] < 2**53
        assert (row["first_seen_at"], row["created_at"], row["tld"]) == (SEEN, SEEN, "." + row["name"].split(".")[-1])
    assert buy_now["purchase_url"] == "https://auctions.godaddy.com/trpItemListing.aspx?miid=575001"
    kept = raw(mirror, "listing", bid["id"])["feed_record"]
    assert kept == GODADDY_ITEMS[1]  # the original row, valuation and all
    # the query layer sees them as live godaddy listings
    page = mirror.search_domains({"source": "godaddy", "sort": "name"}, plan="enterprise")
    assert [d["name"] for d in page["data"]] == ["greenkettle.net", "ppn57.com", "quietharbor.org"]


def test_godaddy_csv_with_pacific_end_times_and_a_bad_row(mirror, tmp_path):
    path = tmp_path / "tdnam_all_listings.csv"
    path.write_text(
        "Domain Name,Auction Type,Auction End Time (PDT),Price,Number of Bids,Domain Age,Valuation,Majestic TF,Majestic CF\n"
        'SunnyLoft.com,Bid,08/20/2025 09:21 AM (PDT),"$1,050",4,12,"$3,100",18,27\n'
        "brokenprice.com,Bid,08/20/2025 10:00 AM (PDT),about ten,0,2,$90,,\n"
        "tinycart.io,BuyNow,08/21/2025 14:00,$25,0,1,$400,,\n",
        encoding="utf-8",
    )
    report = ingest_file(mirror, "godaddy", path, observed_at=SEEN)
    assert report.written == 2
    assert [str(s) for s in report.skipped] == [f"{path}:3: price 'about ten' is not a US dollar amount like $1,234"]
    got = {r["name"]: r for r in rows(mirror, "SELECT * FROM listings")}
    assert set(got) == {"sunnyloft.com", "tinycart.io"}
    assert got["sunnyloft.com"]["auction_end_date"] == "2025-08-20T16:21:00Z"  # 09:21 PDT
    assert got["tinycart.io"]["auction_end_date"] == "2025-08-21T21:00:00Z"  # naive, the column says PDT
    assert (got["sunnyloft.com"]["max_bid"], got["sunnyloft.com"]["trust_flow"], got["tinycart.io"]["trust_flow"]) == (
        1050.0,
        18,
        None,
    )
    assert raw(mirror, "listing", got["tinycart.io"]["id"])["feed_record"]["Valuation"] == "$400"


def test_reingesting_changes_nothing_and_a_new_price_adds_one_history_row(mirror, tmp_path):
    path = godaddy_zip(tmp_path / "all_listings.json.zip")
    ingest_file(mirror, "godaddy", path, observed_at=SEEN)
    history = count(mirror, "listing_history")
    before = rows(mirror, "SELECT * FROM listings ORDER BY id")
    assert history == 3  # one per new listing

    again = ingest_file(mirror, "godaddy", path, observed_at=LATER)
    assert (again.written, again.new, again.updated, again.unchanged) == (3, 0, 0, 3)
    assert count(mirror, "listing_history") == history
    after = rows(mirror, "SELECT * FROM listings ORDER BY id")
    for old, new in zip(before, after):
        assert {k: v for k, v in old.items() if k != "last_seen_at"} == {
            k: v for k, v in new.items() if k != "last_seen_at"
        }
        assert new["last_seen_at"] == LATER

    changed = [dict(item) for item in GODADDY_ITEMS]
    changed[2]["price"] = "$15"
    third = ingest_file(mirror, "godaddy", godaddy_zip(tmp_path / "next.json.zip", changed), observed_at=LATER)
    assert (third.new, third.updated, third.unchanged) == (0, 1, 2)
    assert count(mirror, "listing_history") == history + 1
    listing_id = ingest_id("godaddy", "quietharbor.org")
    last = rows(mirror, "SELECT * FROM listing_history WHERE listing_id = ? ORDER BY id DESC LIMIT 1", listing_id)[0]
    assert (last["price"], last["effective_price"], last["observed_at"]) == (15.0, 15.0, LATER)
    stored = rows(mirror, "SELECT created_at, updated_at FROM listings WHERE id = ?", listing_id)[0]
    assert (stored["created_at"], stored["updated_at"]) == (SEEN, LATER)


# -- Internetstiftelsen release lists ----------------------------------------------------------


def test_bardate_json_gives_the_official_release_day(mirror, tmp_path):
    path = tmp_path / "bardate_domains.json"
    path.write_text(
        json.dumps(
            {
                "data": [
                    {"name": "fjallstuga.se", "release_at": "2026-01-20"},
                    {"name": "norrsken.nu", "release_at": "2026-01-21"},
                    {"name": "kanelbulle.se", "release_at": "2026-01-22T04:00:00Z"},
                ]
            },
            indent=2,
        )
    )
    report = ingest_file(mirror, "bardate", path, observed_at=SEEN)
    assert (report.pending.seen, report.skipped) == (3, [])
    got = {r["domain"]: r for r in rows(mirror, "SELECT * FROM pending_delete")}
    assert {d: r["estimated_drop_date"] for d, r in got.items()} == {
        "fjallstuga.se": "2026-01-20",
        "norrsken.nu": "2026-01-21",
        "kanelbulle.se": "2026-01-22",
    }
    row = got["norrsken.nu"]
    assert (row["tld"], row["source"], row["whois_status"], row["origin"]) == (
        "nu",
        "bardate",
        "pendingDelete",
        "ingest:bardate",
    )
    assert (row["week_end"], row["sld_length"], row["created_at"]) == ("2026-01-05", 8, SEEN)
    kept = raw(mirror, "pending_delete", row["id"])
    assert kept["feed_record"] == {"name": "norrsken.nu", "release_at": "2026-01-21"}
    assert "release date" in kept["drop_date_reason"]
    page = mirror.search_pending_delete({"tld": "se", "sort": "domain"}, plan="enterprise")
    assert [d["domain"] for d in page["data"]] == ["fjallstuga.se", "kanelbulle.se"]


def test_bardate_txt_skips_foreign_and_malformed_lines(mirror, tmp_path):
    path = tmp_path / "bardate_domains.txt"
    path.write_text(
        "fjallstuga.se\t2026-01-20\nexample.com\t2026-01-20\nnorrsken.nu\t2026-13-01\nsnokaos.nu\t2026-01-23\n"
    )
    report = ingest_file(mirror, "bardate", path, observed_at=SEEN)
    assert report.pending.seen == 2
    assert [(s.line, s.reason) for s in report.skipped] == [
        (2, "example.com is not a .se or .nu name (Internetstiftelsen's lists hold only those)"),
        (3, "'2026-13-01' is not a date (YYYY-MM-DD)"),
    ]
    got = {r["domain"]: r["estimated_drop_date"] for r in rows(mirror, "SELECT * FROM pending_delete")}
    assert got == {"fjallstuga.se": "2026-01-20", "snokaos.nu": "2026-01-23"}
    assert raw(mirror, "pending_delete", ingest_id("bardate", "snokaos.nu"))["feed_record"] == "snokaos.nu\t2026-01-23"
    # the generator on its own yields the same records, and stops at a bad row unless told to skip
    with pytest.raises(IngestError, match=r"bardate_domains.txt: line 2: example.com is not"):
        list(parse_bardate(path, observed_at=SEEN))
    assert [r["domain"] for r in parse_bardate(path, observed_at=SEEN, on_bad_row=lambda s: None)] == [
        "fjallstuga.se",
        "snokaos.nu",
    ]


# -- registry drop lists ----------------------------------------------------------------------


def test_real_pl_deletion_list(mirror):
    lines = PL_LIST.read_text(encoding="utf-8").splitlines()
    valid = [s.strip() for s in lines if re.fullmatch(r"[a-z0-9-]+(\.[a-z0-9-]+)+", s.strip())]
    report = ingest_file(mirror, "droplist", PL_LIST, observed_at="2025-08-19T10:00:00Z")
    assert report.skipped == []
    assert report.pending.seen == report.pending.new == len(valid) == len([s for s in lines if s.strip()])
    stored = rows(mirror, "SELECT * FROM pending_delete")
    assert len(stored) == len(valid) and {r["domain"] for r in stored} == set(valid)
    # the list is the names NASK deleted on the day its file is named for
    assert {r["estimated_drop_date"] for r in stored} == {"2025-08-19"}
    assert {(r["origin"], r["source"], r["whois_status"]) for r in stored} == {
        ("ingest:droplist", "droplist", "pendingDelete")
    }
    by_name = {r["domain"]: r for r in stored}
    assert by_name["0.edu.pl"]["tld"] == "edu.pl" and by_name["1by1.com.pl"]["tld"] == "com.pl"
    assert sum(r["is_idn"] for r in stored) == sum("xn--" in v for v in valid) > 0
    first = valid[0]
    assert raw(mirror, "pending_delete", by_name[first]["id"]) == {
        "feed_record": first,
        "drop_date_reason": "from the file name",
    }
    assert count(mirror, "raw_records") == len(valid)
    again = ingest_file(mirror, "droplist", PL_LIST, observed_at="2025-08-26T10:00:00Z")
    assert (again.new, again.updated, again.unchanged) == (0, 0, len(valid))
    assert rows(mirror, "SELECT DISTINCT week_end FROM pending_delete") == [{"week_end": "2025-08-18"}]


def test_real_pl_list_with_nasks_zoned_timestamp_header(mirror, tmp_path):
    """NASK's own file (2022) opens with `2022-07-05 08:17:48 MEST`, a blank line, then the names."""
    served = tmp_path / "deleted_domains.txt"  # as downloaded: the file's name carries no date
    served.write_bytes((REAL / "registry_drop_lists" / "nask_pl_2022_2024" / "2022-07-05.txt").read_bytes())
    report = ingest_file(mirror, "droplist", served, observed_at="2022-07-05T10:00:00Z")
    names = [n for n in served.read_text().splitlines()[2:] if n.strip()]
    assert report.skipped == [] and report.pending.new == len(names) == 1_800
    assert rows(mirror, "SELECT DISTINCT estimated_drop_date FROM pending_delete") == [
        {"estimated_drop_date": "2022-07-05"}
    ]
    assert (
        raw(mirror, "pending_delete", ingest_id("droplist", names[0]))["drop_date_reason"]
        == "from the file: header line 1"
    )


def test_real_pl_names_without_a_date_get_the_lifecycle_prediction(mirror, tmp_path):
    undated = tmp_path / "deleted_domains.txt"  # the same names, a name that carries no date
    undated.write_bytes(PL_LIST.read_bytes())
    report = ingest_file(mirror, "droplist", undated, observed_at="2025-08-19T10:00:00Z")
    drop, reason = predict_drop_date("pl", "pendingDelete", date(2025, 8, 19))
    assert drop == date(2025, 8, 24)
    assert {r["estimated_drop_date"] for r in rows(mirror, "SELECT * FROM pending_delete")} == {drop.isoformat()}
    assert raw(mirror, "pending_delete", ingest_id("droplist", "1982.pl"))["drop_date_reason"].startswith(
        f"predicted from its first sighting in this feed (2025-08-19): {reason}; first seen 2025-08-19, it may have "
        "begun up to 5 days earlier"
    )
    # no earlier sighting: the status may have begun up to its length earlier, so the window spans it
    assert rows(mirror, "SELECT DISTINCT drop_window_start, drop_window_end FROM pending_delete") == [
        {"drop_window_start": "2025-08-19", "drop_window_end": "2025-08-24"}
    ]
    # seen again three days later: the evidence is still the first sighting
    again = ingest_file(mirror, "droplist", undated, observed_at="2025-08-22T10:00:00Z")
    assert (again.updated, again.unchanged) == (0, report.written)
    assert {r["estimated_drop_date"] for r in rows(mirror, "SELECT * FROM pending_delete")} == {"2025-08-24"}


def test_auda_style_csv_takes_the_date_column(mirror, tmp_path):
    path = tmp_path / "auda_purge_list.csv"
    path.write_text("""\
Date, Eligible purge time (UTC), Domain name
2019-11-10, 03:32:31, fastframeless.com.au
2019-11-10, 03:32:40, not a domain
2019-11-11, 04:01:02, wattlegrove.net.au
2019-11-12, 04:10:00, fastframeless.com.au
""")
    report = ingest_file(mirror, "droplist", path, observed_at=SEEN)
    assert report.pending.seen == 2
    assert [str(s) for s in report.skipped] == [
        f"{path}:3: 'not a domain' is not a domain name (it contains a space)",
        f"{path}:5: fastframeless.com.au repeats line 2; the first is kept",
    ]
    got = {r["domain"]: r for r in rows(mirror, "SELECT * FROM pending_delete")}
    assert {d: r["estimated_drop_date"] for d, r in got.items()} == {
        "fastframeless.com.au": "2019-11-10",
        "wattlegrove.net.au": "2019-11-11",
    }
    assert got["wattlegrove.net.au"]["tld"] == "net.au"
    kept = raw(mirror, "pending_delete", got["wattlegrove.net.au"]["id"])
    assert kept == {
        "feed_record": {
            "Date": "2019-11-11",
            "Eligible purge time (UTC)": "04:01:02",
            "Domain name": "wattlegrove.net.au",
        },
        "drop_date_reason": "from the file: column 'Date'",
    }


def test_undated_list_predicts_per_tld_and_says_why_not(mirror, tmp_path):
    path = tmp_path / "drops.txt"
    path.write_text("# names leaving redemption\nboekhandel.nl\nsonnenhof.de\n", encoding="utf-8")
    ingest_file(mirror, "droplist", path, observed_at=SEEN, status="quarantine")
    got = {r["domain"]: r for r in rows(mirror, "SELECT * FROM pending_delete")}
    assert got["boekhandel.nl"]["estimated_drop_date"] == "2026-02-19"  # SIDN quarantine 40 days from 2026-01-10
    assert got["sonnenhof.de"]["estimated_drop_date"] is None
    why = raw(mirror, "pending_delete", got["sonnenhof.de"]["id"])["drop_date_reason"]
    assert (
        why
        == "predicted from its first sighting in this feed (2026-01-10): DENIC gives quarantine no fixed length for .de (TRANSIT has no fixed length)"
    )
    assert {r["whois_status"] for r in got.values()} == {"quarantine"}


# -- zone diffs ---------------------------------------------------------------------------------

OLD_ZONE = """$ORIGIN se.
$TTL 3600
@ IN SOA catcher-in-the-rye.nic.se. registry-default.nic.se. (
        2026010900 ; serial
        1800 ; refresh
        1800 ; retry
        864000 ; expire
        7200 ) ; minimum
@ IN NS a.ns.se.
fjallstuga 86400 IN NS ns1.fjallstuga.se.
fjallstuga 86400 IN NS ns2.example.net.
ns1.fjallstuga 86400 IN A 192.0.2.10
kanelbulle.se. 86400 IN NS ns.registrar.example.
norrsken 86400 IN NS ns.host.example.
         86400 IN DS 12345 13 2 ABCDEF
aldrig 86400 IN NS ns.host.example.
"""
NEW_ZONE = """$ORIGIN se.
@ IN SOA catcher-in-the-rye.nic.se. registry-default.nic.se. 2026011000 1800 1800 864000 7200
kanelbulle 86400 IN NS ns.registrar.example.
aldrig 86400 IN NS ns.host.example.
nyregistrerad 86400 IN NS ns.host.example.
"""


def test_zonediff_yields_candidates_and_regfree_only_when_confirmed(mirror, tmp_path):
    old, new = tmp_path / "se_2026-01-09.zone", tmp_path / "se_2026-01-10.zone"
    old.write_text(OLD_ZONE)
    new.write_text(NEW_ZONE)
    report = ingest_file(mirror, "zonediff", new, previous=old, observed_at=SEEN)
    assert (report.pending.seen, report.listings.seen, report.skipped) == (2, 0, [])
    got = {r["domain"]: r for r in rows(mirror, "SELECT * FROM pending_delete")}
    assert set(got) == {"fjallstuga.se", "norrsken.se"}  # glue (ns1.fjallstuga) and the apex are not names
    drop, _ = predict_drop_date("se", "serverHold", date(2026, 1, 10))
    for row in got.values():
        assert (row["source"], row["whois_status"], row["dns_status"]) == ("zonediff", "serverHold", "NXDOMAIN")
        assert (row["first_disappeared_at"], row["estimated_drop_date"]) == ("2026-01-10T00:00:00Z", drop.isoformat())
    assert drop == date(2026, 1, 10) + timedelta(days=67)
    assert raw(mirror, "pending_delete", got["norrsken.se"]["id"])["feed_record"] == {
        "previous_file": old.name,
        "current_file": new.name,
        "previous_line": "norrsken 86400 IN NS ns.host.example.",
    }
    assert count(mirror, "listings") == 0  # nothing is regfree without an availability check

    asked = []

    def rdap(name: str) -> bool | None:
        asked.append(name)
        return {"fjallstuga.se": True, "norrsken.se": None}[name]

    other = Mirror(tmp_path / "other.db", clock=clock, create=True)
    report = ingest_file(other, "zonediff", new, previous=old, observed_at=SEEN, is_available=rdap)
    assert sorted(asked) == ["fjallstuga.se", "norrsken.se"]
    assert (report.listings.seen, report.pending.seen) == (1, 1)
    (listing,) = rows(other, "SELECT * FROM listings")
    assert (listing["name"], listing["source"], listing["tld"], listing["origin"]) == (
        "fjallstuga.se",
        "regfree",
        ".se",
        "ingest:zonediff",
    )
    assert listing["id"] == ingest_id("regfree", "fjallstuga.se") and listing["price"] is None
    assert [r["domain"] for r in rows(other, "SELECT * FROM pending_delete")] == ["norrsken.se"]
    assert other.search_domains({"source": "regfree"}, plan="enterprise")["meta"]["total"] == 1
    other.close()


def test_zonediff_of_name_lists_and_of_two_tlds(mirror, tmp_path):
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("alpha.nl\nbravo.nl\ncharlie.nl\n")
    new.write_text("alpha.nl\ncharlie.nl\ndelta.nl\n")
    report = ingest_file(mirror, "zonediff", new, previous=old, observed_at=SEEN, status="quarantine")
    assert [r["domain"] for r in rows(mirror, "SELECT * FROM pending_delete")] == ["bravo.nl"]
    assert rows(mirror, "SELECT estimated_drop_date, first_disappeared_at FROM pending_delete") == [
        {"estimated_drop_date": "2026-02-19", "first_disappeared_at": SEEN}
    ]
    assert report.written == 1
    other = tmp_path / "other.txt"
    other.write_text("alpha.be\n")
    with pytest.raises(
        IngestError, match=r"other\.txt: this zone is \.be but .*old\.txt is \.nl; diff two files of the same TLD"
    ):
        ingest_file(mirror, "zonediff", other, previous=old)


# -- bad input: nothing written, what was there stays ---------------------------------------------


@pytest.fixture()
def seeded(mirror, tmp_path):
    """A mirror holding ingested rows of two feeds, and a snapshot of every table."""
    ingest_file(mirror, "godaddy", godaddy_zip(tmp_path / "seed.json.zip"), observed_at=SEEN)
    (tmp_path / "seed.txt").write_text("fjallstuga.se\t2026-01-20\n")
    ingest_file(mirror, "bardate", tmp_path / "seed.txt", observed_at=SEEN)

    def snapshot():
        return {
            t: rows(mirror, f"SELECT * FROM {t} ORDER BY 1, 2")
            for t in ("listings", "listing_history", "pending_delete", "raw_records")
        }

    return snapshot


def test_truncated_zip_is_refused_and_nothing_changes(mirror, tmp_path, seeded):
    before = seeded()
    whole = godaddy_zip(tmp_path / "full.json.zip", GODADDY_ITEMS + [dict(GODADDY_ITEMS[0], domainName="extra.com")])
    cut = tmp_path / "cut.json.zip"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size * 2 // 3])
    with pytest.raises(IngestError) as caught:
        ingest_file(mirror, "godaddy", cut, observed_at=LATER)
    assert str(cut) in str(caught.value) and "download the archive again" in str(caught.value)
    assert seeded() == before


def test_truncated_json_names_the_line(mirror, tmp_path, seeded):
    before = seeded()
    text = json.dumps({"meta": {}, "data": GODADDY_ITEMS}, indent=1)
    cut = tmp_path / "all_listings.json"
    cut.write_text(text[: len(text) - 60])
    with pytest.raises(IngestError) as caught:
        ingest_file(mirror, "godaddy", cut, observed_at=LATER)
    error = caught.value
    assert (error.file, error.line) == (str(cut), text[: len(text) - 60].count("\n") + 1)
    assert str(error).startswith(f"{cut}: line {error.line}: the JSON stops before its end")
    assert str(error).endswith("the file is truncated: download it again")
    # a meta count that the data does not reach is a truncated file too
    short = godaddy_zip(tmp_path / "short.json.zip", GODADDY_ITEMS[:2], meta={"totalRecords": 3})
    with pytest.raises(IngestError, match="meta declares 3 records but data holds 2"):
        ingest_file(mirror, "godaddy", short, observed_at=LATER)
    assert seeded() == before


def test_wrong_format_and_truncated_text_files(mirror, tmp_path, seeded):
    before = seeded()

    def refused(name: str, kind: str, body: bytes, error: str) -> None:
        (tmp_path / name).write_bytes(body)
        with pytest.raises(IngestError, match=error):
            ingest_file(mirror, kind, tmp_path / name)

    godaddy_wanted = r"bardate_domains.json: no record has a domainName field; .*GoDaddy"
    refused(
        "bardate_domains.json",
        "godaddy",
        b'{"data": [{"name": "fjallstuga.se", "release_at": "2026-01-20"}]}',
        godaddy_wanted,
    )
    no_domain = r"auda.csv: line 1: no domain column in the header \(Date, Time\)"
    refused("auda.csv", "droplist", b"Date,Time\n2019-11-10,03:32:31\n", no_domain)
    cut_csv = b"Date, Eligible purge time (UTC), Domain name\n2019-11-10, 03:32:31, fastframeless.com.au\n2019-11-1"
    refused(
        "cut.csv",
        "droplist",
        cut_csv,
        r"cut.csv: line 3: the last row stops after 1 of 3 columns; the file is truncated",
    )
    refused(
        "bardate.txt",
        "bardate",
        b"fjallstuga.se\t2026-01-20\nnorrsken.nu\t2026-0",
        r"bardate.txt: line 2: the last line is incomplete",
    )
    not_bardate = r"inventory.csv: line 1: no row of the file is a bardate row \(expected domain<TAB>YYYY-MM-DD, got .*\); check that it is a bardate file"
    refused("inventory.csv", "bardate", b"domainName,auctionType,price\nalpha.com,Bid,$5\n", not_bardate)
    refused("empty.txt", "droplist", b"", r"empty.txt: line 1: the file is empty")
    latin = "abc.pl\nzażółć.pl\n".encode("latin-1", "replace").replace(b"?", b"\xbf")
    refused("latin.txt", "droplist", latin, r"latin.txt: line 2: not UTF-8 text")
    assert seeded() == before


def test_a_failure_while_writing_rolls_back_the_whole_file(mirror, tmp_path, seeded, monkeypatch):
    before = seeded()
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("alpha.se\nbravo.se\n")
    new.write_text("charlie.se\n")

    written, real = [], StagedWrite.write

    def broken(self, **kwargs):  # the first kind's rows are written, then the second's fail
        if written:
            raise sqlite3.OperationalError("disk I/O error")
        written.append(self.kind.table)
        return real(self, **kwargs)

    monkeypatch.setattr(StagedWrite, "write", broken)
    with pytest.raises(sqlite3.OperationalError):
        ingest_file(mirror, "zonediff", new, previous=old, is_available=lambda n: n == "alpha.se")
    assert len(written) == 1 and seeded() == before


def test_id_collision_is_skipped_not_overwritten(mirror, tmp_path):
    taken = ingest_id("bardate", "fjallstuga.se")
    save_pending(
        mirror.connection(),
        [{"id": taken, "domain": "someone-else.se", "source": "oi-diff", "whois_status": "quarantine"}],
        origin="sync",
        observed_at=SEEN,
    )
    path = tmp_path / "bardate_domains.txt"
    path.write_text("fjallstuga.se\t2026-01-20\nsnokaos.nu\t2026-01-23\n")
    report = ingest_file(mirror, "bardate", path, observed_at=SEEN)
    assert report.written == 1
    assert [s.line for s in report.skipped] == [1] and "hash collision" in report.skipped[0].reason
    assert rows(mirror, "SELECT domain, origin FROM pending_delete WHERE id = ?", taken) == [
        {"domain": "someone-else.se", "origin": "sync"}
    ]


# -- the surface ------------------------------------------------------------------------------


def test_registry_options_and_ids(mirror, tmp_path):
    assert set(ADAPTERS) == {"godaddy", "namecheap", "bardate", "droplist", "zonediff"}
    assert set(ingest.__all__) <= set(dir(ingest))
    with pytest.raises(
        ValueError, match="unknown feed 'namejet'; choose one of godaddy, namecheap, bardate, droplist, zonediff"
    ):
        ingest_file(mirror, "namejet", tmp_path / "x.csv")
    with pytest.raises(TypeError, match=r"godaddy: unknown option status"):
        ingest_file(mirror, "godaddy", tmp_path / "x.csv", status="pendingDelete")
    with pytest.raises(TypeError, match="zonediff: pass previous="):
        ingest_file(mirror, "zonediff", tmp_path / "x.txt")
    with pytest.raises(ValueError, match="status: 'gone'"):
        ingest_file(mirror, "droplist", tmp_path / "x.txt", status="gone")
    # stable, feed-scoped, above the remote's ids and exact in a JavaScript number
    assert (
        ingest_id("godaddy", "example.com")
        == ingest_id("godaddy", "example.com")
        != ingest_id("regfree", "example.com")
    )
    ids = [ingest_id("droplist", f"name{i}.pl") for i in range(2000)]
    assert len(set(ids)) == 2000 and all(2**52 <= i <= 2**53 - 1 for i in ids)


def test_ingest_url_downloads_then_ingests(mirror, tmp_path):
    source = tmp_path / "served" / "bardate_domains.txt"
    source.parent.mkdir()
    source.write_text("fjallstuga.se\t2026-01-20\n")
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    report = ingest_url(mirror, "bardate", source.as_uri(), dest=downloads, observed_at=SEEN)
    assert report.written == 1 and (downloads / "bardate_domains.txt").read_text() == source.read_text()
    assert not list(downloads.glob("*.partial"))


def test_ingested_records_against_the_reference_schemas(mirror, tmp_path):
    import jsonschema

    ingest_file(mirror, "godaddy", godaddy_zip(tmp_path / "all.json.zip"), observed_at=SEEN)
    (tmp_path / "b.txt").write_text("fjallstuga.se\t2026-01-20\n")
    ingest_file(mirror, "bardate", tmp_path / "b.txt", observed_at=SEEN)
    domain = jsonschema.Draft202012Validator(json.loads((SCHEMAS / "catchdoms-domain-schema.json").read_text()))
    for record in mirror.search_domains({"source": "godaddy"}, plan="enterprise")["data"]:
        assert not list(domain.iter_errors(record)), record["name"]
    pending = jsonschema.Draft202012Validator(
        json.loads((SCHEMAS / "catchdoms-pending-delete-domain-schema.json").read_text())
    )
    (record,) = mirror.search_pending_delete({"include_past": "1"}, plan="enterprise")["data"]
    # the one documented deviation: `source` names the feed, not one of the live service's pipelines
    assert [list(e.path) for e in pending.iter_errors(record)] == [["source"]]
    assert not list(pending.iter_errors({**record, "source": "oi-diff"}))


def test_ingest_url_without_dest_removes_its_download(mirror, tmp_path, monkeypatch):
    source = tmp_path / "deleted_domains.txt"
    source.write_text("stary.pl\n")
    monkeypatch.setattr(file_ingest.tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    report = ingest_url(mirror, "droplist", source.as_uri(), observed_at=SEEN, list_date="2026-01-11")
    assert report.written == 1 and report.path.startswith(str(tmp_path / "tmp"))
    assert list((tmp_path / "tmp").iterdir()) == []
    assert rows(mirror, "SELECT domain, estimated_drop_date FROM pending_delete") == [
        {"domain": "stary.pl", "estimated_drop_date": "2026-01-11"}
    ]


# -- zonediff with the RDAP check ----------------------------------------------------------------

# IANA's bootstrap (RFC 9224) and an RFC 9083 domain answer, in their exact shapes.
RDAP_BASE = "https://rdap.registry.example/se/"


def bootstrap_json(base: str = RDAP_BASE) -> dict:
    return {
        "version": "1.0",
        "publication": "2026-01-01T00:00:00Z",
        "description": "test bootstrap",
        "services": [[["se", "nu"], [base]], [["cz"], ["https://rdap.nic.cz/"]]],
    }


def rdap_domain_json(name: str) -> dict:
    return {
        "objectClassName": "domain",
        "ldhName": name,
        "rdapConformance": ["rdap_level_0"],
        "status": ["client hold"],
        "events": [{"eventAction": "expiration", "eventDate": "2025-12-01T00:00:00Z"}],
    }


def rdap_registry(answers: dict[str, list[int]], asked: list[str]):
    """A MockTransport handler: the bootstrap, then per name its queued status codes."""

    def handle(request):
        if request.url.path.endswith("dns.json"):
            return httpx.Response(200, json=bootstrap_json())
        name = request.url.path.rsplit("/", 1)[1]
        asked.append(name)
        code = answers[name].pop(0) if len(answers[name]) > 1 else answers[name][0]
        if code == 200:
            return httpx.Response(200, json=rdap_domain_json(name))
        return httpx.Response(code, headers={"Retry-After": "3"} if code == 503 else {})

    return handle


def test_zonediff_check_rdap_makes_only_404_names_regfree(mirror, tmp_path):
    from toolkit.enrich.available import rdap_availability

    old, new = tmp_path / "se_2026-01-09.zone", tmp_path / "se_2026-01-10.zone"
    old.write_text(OLD_ZONE)
    new.write_text(NEW_ZONE)
    asked, waits = [], []
    # fjallstuga.se: a 503 (Retry-After 3), then 404: free. norrsken.se: still registered.
    handler = rdap_registry({"fjallstuga.se": [503, 404], "norrsken.se": [200]}, asked)
    with rdap_availability(mirror, transport=httpx.MockTransport(handler), sleep=waits.append) as check:
        report = ingest_file(mirror, "zonediff", new, previous=old, observed_at=SEEN, is_available=check)
    assert sorted(asked) == ["fjallstuga.se", "fjallstuga.se", "norrsken.se"] and 3 in waits
    assert (report.listings.seen, report.pending.seen) == (1, 1)
    assert rows(mirror, "SELECT name, source FROM listings") == [{"name": "fjallstuga.se", "source": "regfree"}]
    assert [r["domain"] for r in rows(mirror, "SELECT domain FROM pending_delete")] == ["norrsken.se"]
    assert check.summary() == "rdap: 1 available (regfree), 1 still registered, 2 asked, 0 from the cache"
    cached = rows(mirror, "SELECT domain, outcome FROM enrich_cache WHERE kind = 'rdap' ORDER BY domain")
    assert cached == [{"domain": "fjallstuga.se", "outcome": "available"}, {"domain": "norrsken.se", "outcome": "ok"}]

    # A re-run the same day asks nobody: the bootstrap and both answers come from the mirror.
    asked.clear()
    with rdap_availability(mirror, transport=httpx.MockTransport(handler), sleep=waits.append) as again:
        ingest_file(mirror, "zonediff", new, previous=old, observed_at=SEEN, is_available=again)
    assert asked == [] and again.traffic.requests == 0
    assert again.summary().endswith("0 asked, 2 from the cache")


def test_zonediff_check_rdap_never_guesses(mirror, tmp_path):
    from toolkit.enrich.available import rdap_availability

    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("alpha.de\nbravo.de\n")
    new.write_text("alpha.de\n")
    asked: list[str] = []
    with rdap_availability(
        mirror, transport=httpx.MockTransport(rdap_registry({}, asked)), sleep=lambda s: None
    ) as check:
        ingest_file(mirror, "zonediff", new, previous=old, observed_at=SEEN, is_available=check)
    assert asked == [] and count(mirror, "listings") == 0  # .de is not in the bootstrap: no request, no guess
    assert "no RDAP service for .de (1 names stay candidates)" in check.summary()

    def down(request):
        return httpx.Response(500)

    other = Mirror(tmp_path / "other.db", clock=clock, create=True)
    with rdap_availability(other, transport=httpx.MockTransport(down), sleep=lambda s: None, retries=1) as check:
        ingest_file(other, "zonediff", new, previous=old, observed_at=SEEN, is_available=check)
    assert count(other, "listings") == 0 and count(other, "pending_delete") == 1
    assert check.problems and "bootstrap is unavailable" in check.problems[0]
    other.close()


def test_cli_zonediff_check_rdap_over_a_loopback_registry(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    from toolkit.cli import cli
    from toolkit.serve.server import BackgroundServer

    asked: list[str] = []

    async def dns_json(request):
        return JSONResponse(bootstrap_json(f"{request.base_url}rdap/"))

    async def domain(request):
        name = request.path_params["name"]
        asked.append(name)
        return Response(status_code=404) if name == "fjallstuga.se" else JSONResponse(rdap_domain_json(name))

    app = Starlette(routes=[Route("/dns.json", dns_json), Route("/rdap/domain/{name}", domain)])
    old, new = tmp_path / "se_2026-01-09.zone", tmp_path / "se_2026-01-10.zone"
    old.write_text(OLD_ZONE)
    new.write_text(NEW_ZONE)
    db = tmp_path / "m.db"
    with BackgroundServer(app) as server:
        env = {"EDT_RDAP_BOOTSTRAP_URL": f"{server.url}/dns.json"}
        result = CliRunner().invoke(
            cli,
            ["ingest", "zonediff", "--db", str(db), "--previous", str(old), "--file", str(new), "--check-rdap"],
            env=env,
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    assert "rdap: 1 available (regfree), 1 still registered, 2 asked" in result.output
    assert sorted(asked) == ["fjallstuga.se", "norrsken.se"]
    with Mirror(db) as m:
        assert [r["name"] for r in m.search_domains({"source": "regfree"}, plan="enterprise")["data"]] == [
            "fjallstuga.se"
        ]
    wrong = CliRunner().invoke(cli, ["ingest", "droplist", "--db", str(db), "--file", str(new), "--check-rdap"])
    assert wrong.exit_code == 2 and "--check-rdap: only zonediff" in wrong.output


# -- zone replays: daily snapshots, windows ------------------------------------------------------

NU_DROPS = REAL / "nu_drops"


def _snapshots(folder: Path, days: dict[str, list[str]], gz: bool = True) -> None:
    import gzip

    folder.mkdir(exist_ok=True)
    for day, names in days.items():
        text = "".join(f"{n}\n" for n in sorted(names)).encode()
        if gz:
            (folder / f"nu_domains_{day}.txt.gz").write_bytes(gzip.compress(text))
        else:
            (folder / f"nu_domains_{day}.txt").write_bytes(text)


def test_a_replay_records_last_seen_and_first_absent_and_predicts_a_window(mirror, tmp_path):
    zone = tmp_path / "zone"
    _snapshots(
        zone,
        {
            "2025-12-30": ["alfa.nu", "bravo.nu", "charlie.nu", "delta.nu", "echo.nu"],
            "2025-12-31": ["alfa.nu", "charlie.nu", "delta.nu", "echo.nu"],  # bravo leaves
            # 2026-01-01 and 02 missing: charlie leaves somewhere in the gap
            "2026-01-03": ["alfa.nu", "delta.nu", "echo.nu", "foxtrot.nu"],
            "2026-01-04": ["alfa.nu", "echo.nu", "foxtrot.nu"],  # delta leaves...
            "2026-01-05": ["alfa.nu", "delta.nu", "foxtrot.nu"],  # ...and comes back (renewed); echo leaves
        },
    )
    report = ingest_file(mirror, "zonediff", zone, observed_at=SEEN)  # a folder
    assert (report.pending.seen, report.skipped) == (3, [])
    got = {r["domain"]: r for r in rows(mirror, "SELECT * FROM pending_delete")}
    assert set(got) == {"bravo.nu", "charlie.nu", "echo.nu"}
    windows = {
        d: (r["drop_window_start"], r["estimated_drop_date"], r["drop_window_end"], r["first_disappeared_at"])
        for d, r in got.items()
    }
    assert windows == {
        "bravo.nu": ("2026-03-07", "2026-03-08", "2026-03-08", "2025-12-31T00:00:00Z"),  # [L+67, A+67], L+1+67
        "charlie.nu": ("2026-03-08", "2026-03-09", "2026-03-11", "2026-01-03T00:00:00Z"),  # a 4-day window
        "echo.nu": ("2026-03-12", "2026-03-13", "2026-03-13", "2026-01-05T00:00:00Z"),
    }
    kept = raw(mirror, "pending_delete", got["charlie.nu"]["id"])
    assert kept["feed_record"] == {
        "previous_file": "nu_domains_2025-12-31.txt.gz",
        "current_file": "nu_domains_2026-01-03.txt.gz",
        "previous_line": "charlie.nu",
    }
    assert kept["drop_date_reason"].startswith(
        "predicted from the zone (last in the zone on 2025-12-31, gone on 2026-01-03)"
    )
    # the API returns the window with the record; drop_date_from/to still filter on the estimate
    page = mirror.search_pending_delete(
        {"drop_date_from": "2026-03-09", "drop_date_to": "2026-03-09", "include_past": "1"}, plan="enterprise"
    )
    assert [(d["domain"], d["drop_window_start"], d["drop_window_end"]) for d in page["data"]] == [
        ("charlie.nu", "2026-03-08", "2026-03-11")
    ]
    # a glob gives the same rows; re-running changes nothing
    again = ingest_file(mirror, "zonediff", str(zone / "nu_domains_*.txt.gz"), observed_at=SEEN)
    assert (again.new, again.updated, again.unchanged) == (0, 0, 3)


def test_a_replay_refuses_bad_snapshots_naming_file_and_line_and_writes_nothing(mirror, tmp_path):
    zone = tmp_path / "zone"
    _snapshots(zone, {"2025-12-30": ["alfa.nu", "bravo.nu"], "2025-12-31": ["alfa.nu"]})
    full = (zone / "nu_domains_2025-12-31.txt.gz").read_bytes()
    import gzip

    big = gzip.compress("".join(f"name{i:06d}.nu\n" for i in range(50_000)).encode())
    (zone / "nu_domains_2026-01-01.txt.gz").write_bytes(big[: len(big) // 2])  # truncated download
    with pytest.raises(IngestError, match=r"nu_domains_2026-01-01.txt.gz: line \d+: not a complete gzip file"):
        ingest_file(mirror, "zonediff", zone, observed_at=SEEN)
    assert count(mirror, "pending_delete") == 0
    (zone / "nu_domains_2026-01-01.txt.gz").unlink()
    (zone / "nu_domains_2026-01-01.csv").write_text("domain,tld,release_date\nalfa.nu,nu,2026-03-08\n")  # wrong feed
    with pytest.raises(
        IngestError,
        match=r"nu_domains_2026-01-01.csv: line 1: 'domain,tld,release_date' is not a "
        r"domain name .*a snapshot is a zone file or a list of one name a line",
    ):
        ingest_file(mirror, "zonediff", zone, observed_at=SEEN)
    (zone / "nu_domains_2026-01-01.csv").write_text("alfa.nu\nbravo.se\n")  # another TLD's name
    with pytest.raises(IngestError, match=r"nu_domains_2026-01-01.csv: line 2: bravo.se is not in .nu"):
        ingest_file(mirror, "zonediff", zone, observed_at=SEEN)
    (zone / "nu_domains_2026-01-01.csv").unlink()
    (zone / "latest.txt").write_bytes(full)
    with pytest.raises(IngestError, match=r"latest.txt: no date in the file name"):
        ingest_file(mirror, "zonediff", zone, observed_at=SEEN)
    with pytest.raises(IngestError, match=r"1 snapshot file\(s\) there; a replay needs two or more"):
        ingest_file(mirror, "zonediff", str(zone / "*2025-12-30*"), observed_at=SEEN)
    assert count(mirror, "pending_delete") == 0


def test_bardate_reads_the_archived_csv_form(mirror, tmp_path):
    path = tmp_path / "2026-03-01.csv"
    path.write_text("""\
domain,tld,release_date,available,indexed,estimated_pages,index_source,checked_at
fjallstuga.se,se,2026-03-01,True,False,0,wayback,2026-02-28T10:22:35+00:00
norrsken.nu,nu,2026-03-01,False,True,12,google,2026-02-28T10:22:35+00:00
trasig.nu,nu,2026-03-41,True,False,0,wayback,2026-02-28T10:22:35+00:00
""")
    report = ingest_file(mirror, "bardate", path, observed_at=SEEN)
    assert report.pending.seen == 2
    assert [(s.line, s.reason) for s in report.skipped] == [(4, "'2026-03-41' is not a date (YYYY-MM-DD)")]
    got = {r["domain"]: r for r in rows(mirror, "SELECT * FROM pending_delete")}
    assert {d: (r["estimated_drop_date"], r["drop_window_start"], r["drop_window_end"]) for d, r in got.items()} == {
        "fjallstuga.se": ("2026-03-01",) * 3,
        "norrsken.nu": ("2026-03-01",) * 3,
    }
    assert raw(mirror, "pending_delete", got["norrsken.nu"]["id"])["feed_record"]["indexed"] == "True"


def test_the_real_release_lists_in_csv(mirror):
    lists = sorted((NU_DROPS / "release_lists").glob("*.csv"))
    assert len(lists) == 18
    report = ingest_file(mirror, "bardate", lists[0], observed_at=SEEN)
    assert (report.pending.seen, report.skipped) == (600, [])
    days = rows(mirror, "SELECT DISTINCT estimated_drop_date AS d FROM pending_delete")
    assert days == [{"d": "2026-02-28"}]  # the list of a day holds that day's releases


def test_the_real_nu_replay_is_fast_and_small(tmp_path):
    import subprocess
    import sys

    # In a process of its own: its peak memory is the replay's, not that of the tests run before
    # it. Read as VmHWM, the peak of the process's own memory: ru_maxrss keeps, across exec,
    # the peak of the process it was forked from (this test process).
    script = (
        "import json, re, sys, time\n"
        "from toolkit import Mirror\nfrom toolkit.ingest import ingest_file\n"
        "m = Mirror(sys.argv[1], create=True); started = time.perf_counter()\n"
        "r = ingest_file(m, 'zonediff', sys.argv[2], observed_at=sys.argv[3])\n"
        "peak = int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))\n"
        "print(json.dumps({'seen': r.pending.seen, 'skipped': len(r.skipped), 'seconds': time.perf_counter() - started,"
        " 'kib': peak}))\n"
    )
    ran = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "nu.db"), str(NU_DROPS / "zone"), SEEN],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert ran.returncode == 0, ran.stderr
    measured = json.loads(ran.stdout.splitlines()[-1])
    assert (measured["seen"], measured["skipped"]) == (2111, 0)
    assert measured["seconds"] < 30, measured
    assert measured["kib"] < 1024 * 1024, measured  # under 1 GB, the whole process
    m = Mirror(tmp_path / "nu.db", clock=clock)
    row = rows(m, "SELECT * FROM pending_delete WHERE domain = '046.nu'")[0]
    assert (row["drop_window_start"], row["estimated_drop_date"], row["drop_window_end"]) == (
        "2026-03-04",
        "2026-03-05",
        "2026-03-05",
    )
    m.close()


def test_cli_replays_snapshots_with_zones(tmp_path):
    from click.testing import CliRunner

    from toolkit.cli import cli

    zone = tmp_path / "zone"
    _snapshots(zone, {"2025-12-30": ["alfa.nu", "bravo.nu"], "2025-12-31": ["alfa.nu"]}, gz=False)
    db = tmp_path / "m.db"
    result = CliRunner().invoke(cli, ["ingest", "zonediff", "--db", str(db), "--zones", str(zone / "*.txt")])
    assert result.exit_code == 0, result.output
    assert "1 pending-delete rows written" in result.output
    (zone / "nu_domains_2026-01-01.txt").write_text("alfa.nu\nnot a name\n")
    result = CliRunner().invoke(cli, ["ingest", "zonediff", "--db", str(db), "--zones", str(zone)])
    assert result.exit_code == 2 and "nu_domains_2026-01-01.txt: line 2:" in result.output
    wrong = CliRunner().invoke(cli, ["ingest", "bardate", "--db", str(db), "--zones", str(zone)])
    assert wrong.exit_code == 2 and "--zones: only zonediff" in wrong.output


# -- Namecheap Market ---------------------------------------------------------------------------

NAMECHEAP_HEADER = (
    "url,name,startDate,endDate,price,startPrice,renewPrice,bidCount,ahrefsDomainRating,umbrellaRanking,"
    "cloudflareRanking,estibotValue,extensionsTaken,keywordSearchCount,registeredDate,lastSoldPrice,"
    "lastSoldYear,isPartnerSale,semrushAScore,majesticCitation,ahrefsBacklinks,semrushBacklinks,"
    "majesticBacklinks,majesticTrustFlow,goValue"
)


def test_namecheap_auctions_and_a_bad_row(mirror, tmp_path):
    """Namecheap_Market_Sales.csv's documented columns; the rows are shaped as its published sample's."""
    path = tmp_path / "Namecheap_Market_Sales.csv"
    path.write_text(
        NAMECHEAP_HEADER + "\n"
        "https://www.namecheap.com/market/sale/2RWa/,sgs.cc,2026-01-03T08:38:08Z,2026-01-15T16:00:00Z,1.00,1.00,"
        "13.98,1,0,,,140.00,340,241000,2015-01-15T00:00:00Z,,,1,,,16,,,,1116.00\n"
        "https://www.namecheap.com/market/sale/qMNd/,menu.pro,2026-01-03T10:31:53Z,2026-01-24T16:00:00Z,1.00,"
        "1.00,33.98,0,1,,,270.00,384,633000,2016-01-26T00:00:00Z,,,1,2,,9,31,,,3853.00\n"
        "https://www.namecheap.com/market/sale/zzzz/,bad.example,2026-01-03T10:31:53Z,2026-01-24T16:00:00Z,1.00,"
        "1.00,33.98,lots,1,,,270.00,384,633000,2016-01-26T00:00:00Z,,,1,2,,9,31,,,3853.00\n"
    )
    report = ingest_file(mirror, "namecheap", path, observed_at=SEEN)
    assert report.listings.new == 2 and [s.line for s in report.skipped] == [4]
    assert "bidCount 'lots' is not a number" in report.skipped[0].reason
    by_name = {r["name"]: r for r in rows(mirror, "SELECT * FROM listings")}
    sgs, menu = by_name["sgs.cc"], by_name["menu.pro"]
    assert (sgs["max_bid"], sgs["price"], sgs["bids_count"], sgs["estibot_appraisal"]) == (1.0, None, 1, 140.0)
    assert (menu["max_bid"], menu["price"], menu["bids_count"]) == (None, 1.0, 0)
    assert (sgs["source"], sgs["type"], sgs["auction_type"], sgs["currency"]) == ("namecheap", "auction", "Bid", "USD")
    assert sgs["purchase_url"] == "https://www.namecheap.com/market/sale/2RWa/"
    assert raw(mirror, "listing", sgs["id"])["feed_record"]["keywordSearchCount"] == "241000"
    cut = tmp_path / "cut.csv"
    cut.write_text(path.read_text()[:-60])  # the download stopped inside the last row
    with pytest.raises(IngestError, match=r"cut.csv: line 4: the last row stops after \d+ of 25 columns"):
        ingest_file(mirror, "namecheap", cut, observed_at=LATER)
    buy_now = tmp_path / "Namecheap_Market_Sales_Buy_Now.csv"
    buy_now.write_text(
        "permalink,domain,price,extensions_taken\nhttps://www.namecheap.com/market/buynow/calm.io/,calm.io,2500.00,12\n"
    )
    ingest_file(mirror, "namecheap", buy_now, observed_at=SEEN)
    (calm,) = rows(mirror, "SELECT type, auction_type, price, bids_count FROM listings WHERE name = 'calm.io'")
    assert calm == {"type": "closeout", "auction_type": "BuyNow", "price": 2500.0, "bids_count": None}


def test_a_first_big_load_builds_the_indexes_once_and_writes_the_same_rows(tmp_path, monkeypatch):
    """A big platform file into a mirror without listings is a bulk load (indexes and the name
    search built at its end); it writes what a row-by-row load writes, and leaves the mirror whole."""
    from toolkit.store.schema import LISTING_INDEXES, missing_parts

    lines = [NAMECHEAP_HEADER]
    for i in range(300):
        lines.append(
            f"https://www.namecheap.com/market/sale/S{i}/,name{i:03d}harbor.com,2026-01-03T08:38:08Z,"
            f"2026-01-{15 + i % 10}T16:00:00Z,{i + 1}.00,1.00,13.98,{i % 4},0,,,140.00,340,241000,"
            "2015-01-15T00:00:00Z,,,1,,,16,,,,1116.00"
        )
    path = tmp_path / "Namecheap_Market_Sales.csv"
    path.write_text("\n".join(lines) + "\n")
    day2 = tmp_path / "day2.csv"  # a bid on every fifth, ten gone, two new
    moved = [line.replace(",13.98,", ",13.98,9") if i % 5 == 1 else line for i, line in enumerate(lines)]
    day2.write_text(
        "\n".join(moved[:100] + moved[110:] + [moved[-1].replace("name299harbor", f"fresh{i}harbor") for i in range(2)])
        + "\n"
    )
    tables, loads, real = {}, [], file_ingest.bulk_load
    monkeypatch.setattr(file_ingest, "bulk_load", lambda conn, tables: loads.append(tables) or real(conn, tables))
    for bulk in (False, True):
        monkeypatch.setattr(file_ingest, "BULK_BYTES", 0 if bulk else 1 << 40)
        loads.clear()
        with Mirror(tmp_path / f"m{bulk}.db", clock=clock, create=True) as m:
            assert ingest_file(m, "namecheap", path, observed_at=SEEN).listings.new == 300
            assert loads == ([("listings",)] if bulk else [])
            conn = m.connection()
            assert missing_parts(conn) == []
            assert {n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'index'")} >= set(
                LISTING_INDEXES
            )
            assert m.search_domains({"contains": "042harbor"})["meta"]["total"] == 1
            tables[bulk] = {
                t: rows(m, f"SELECT * FROM {t} ORDER BY 1, 2")
                for t in ("listings", "listing_history", "raw_records", "feed_digests")
            }
            second = ingest_file(m, "namecheap", day2, observed_at=LATER)  # into the indexes: never a bulk load
            assert (second.listings.new, second.listings.updated, second.unchanged) == (2, 58, 232)
            tables[bulk, 2] = {
                t: rows(m, f"SELECT * FROM {t} ORDER BY 1, 2")
                for t in ("listings", "listing_history", "raw_records", "feed_digests")
            }
            assert m.search_domains({"contains": "fresh1harbor"})["meta"]["total"] == 1 and missing_parts(conn) == []
    assert tables[True] == tables[False] and tables[True, 2] == tables[False, 2]
    assert len(tables[True, 2]["listing_history"]) == 300 + 58 + 2


def _auctions(names_prices: list[tuple[str, str]], order: list[int] | None = None) -> str:
    """A Namecheap auctions CSV of (name, price) rows (`order`: the columns' order)."""
    header = NAMECHEAP_HEADER.split(",")
    lines = [
        [
            f"https://www.namecheap.com/market/sale/{name}/",
            name,
            "2026-01-03T08:38:08Z",
            "2026-01-20T16:00:00Z",
            price,
            "1.00",
            "13.98",
            "0",
            "0",
            "",
            "",
            "140.00",
            "340",
            "241000",
            "2015-01-15T00:00:00Z",
            "",
            "",
            "1",
            "",
            "",
            "16",
            "",
            "",
            "",
            "1116.00",
        ]
        for name, price in names_prices
    ]
    order = order or list(range(len(header)))
    return "\n".join(",".join(cells[i] for i in order) for cells in [header, *lines]) + "\n"


def test_an_unchanged_row_of_a_platform_feed_is_never_mapped_again(mirror, tmp_path, monkeypatch):
    """A day that barely changed maps only what moved: a row whose text the mirror holds is only
    seen again, without being parsed; a file whose columns moved is read again whole, and its rows
    are still unchanged."""
    from toolkit.ingest import namecheap

    mapped, real = [], namecheap._record
    monkeypatch.setattr(namecheap, "_record", lambda *a: mapped.append(a[0]["name"]) or real(*a))
    names = [(f"steady{i}.com", f"{i + 1}.00") for i in range(40)]
    path = tmp_path / "Namecheap_Market_Sales.csv"
    path.write_text(_auctions(names))
    assert ingest_file(mirror, "namecheap", path, observed_at=SEEN).listings.new == 40 and len(mapped) == 40
    mapped.clear()
    path.write_text(_auctions([*names[:5], ("steady5.com", "99.00"), *names[6:], ("arriving.com", "3.00")]))
    report = ingest_file(mirror, "namecheap", path, observed_at=LATER)
    assert sorted(mapped) == ["arriving.com", "steady5.com"]
    assert (report.listings.new, report.listings.updated, report.unchanged) == (1, 1, 39)
    assert rows(mirror, "SELECT count(*) AS n FROM listings WHERE last_seen_at = ?", LATER) == [{"n": 41}]
    mapped.clear()
    shuffled = list(reversed(range(len(NAMECHEAP_HEADER.split(",")))))
    path.write_text(_auctions([*names[:5], ("steady5.com", "99.00"), *names[6:], ("arriving.com", "3.00")], shuffled))
    history = count(mirror, "listing_history")
    report = ingest_file(mirror, "namecheap", path, observed_at="2026-01-14T08:30:00Z")
    assert len(mapped) == 41 and (report.listings.new, report.listings.updated) == (0, 0)
    assert count(mirror, "listing_history") == history  # nothing moved: no history row


def test_a_repeated_name_keeps_its_first_row_whether_it_changed_or_not(mirror, tmp_path):
    path = tmp_path / "Namecheap_Market_Sales.csv"
    names = [("alpha.com", "5.00"), ("bravo.com", "6.00"), ("charlie.com", "7.00")]
    path.write_text(_auctions(names))
    ingest_file(mirror, "namecheap", path, observed_at=SEEN)
    # the moved row first, the unchanged one after it: the moved one is kept
    path.write_text(_auctions([("bravo.com", "60.00"), *names]))
    report = ingest_file(mirror, "namecheap", path, observed_at=LATER)
    assert [str(s).split(": ", 1)[1] for s in report.skipped] == ["bravo.com repeats line 2; the first is kept"]
    assert report.skipped[0].line == 4 and (report.listings.updated, report.unchanged) == (1, 2)
    assert rows(mirror, "SELECT price FROM listings WHERE name = 'bravo.com'") == [{"price": 60.0}]
    # the unchanged row first, a moved one after it: nothing moves
    path.write_text(_auctions([("bravo.com", "60.00"), ("alpha.com", "5.00"), ("bravo.com", "61.00")]))
    report = ingest_file(mirror, "namecheap", path, observed_at="2026-01-14T08:30:00Z")
    assert [(s.line, s.reason) for s in report.skipped] == [(4, "bravo.com repeats line 2; the first is kept")]
    assert rows(mirror, "SELECT price FROM listings WHERE name = 'bravo.com'") == [{"price": 60.0}]
    assert report.unchanged == 2 and report.updated == 0


# -- sales reported elsewhere (edt ingest sales) -------------------------------------------------

NAMEBIO = """Domain,Price,Date,Venue
kettleharbor.com,2500,2019-05-01,Sedo
Harbor.NET,"1,200",2019-06-01,GoDaddy
shop24.io,$450,2020-01-15,NameJet
"""
# A table copied from a DNJournal-style weekly chart: pipes, a rank, dollar amounts, long dates.
DNJOURNAL = """Rank | Domain | Price | Venue | Date
1 | Voice.com | $30,000,000 | Private | June 3, 2019
2 | kettle.io | €1,200 | Sedo | Jun 5, 2019
3 | harbor.de | 900 EUR | Sedo | 2019-06-07
"""


def _sales_rows(db) -> list[tuple]:
    from toolkit.store.schema import connect

    conn = connect(str(db))
    try:
        return conn.execute(
            "SELECT name, tld, sold_on, price, currency, round(price_eur, 2), venue, origin "
            "FROM reported_sales ORDER BY name"
        ).fetchall()
    finally:
        conn.close()


def test_edt_ingest_sales_reads_namebio_and_dnjournal_files_once(tmp_path):
    from click.testing import CliRunner

    from toolkit.cli import cli
    from toolkit.signals.fx import to_eur

    namebio, dnjournal, db = tmp_path / "namebio.csv", tmp_path / "dnjournal.txt", tmp_path / "m.db"
    namebio.write_text(NAMEBIO)
    dnjournal.write_text(DNJOURNAL)
    first = CliRunner().invoke(cli, ["ingest", "sales", str(namebio), "--db", str(db)])
    assert first.exit_code == 0 and first.output == f"{namebio}: 3 reported sales read, 3 new\n", first.output
    again = CliRunner().invoke(cli, ["ingest", "sales", "--file", str(namebio), "--db", str(db)])
    assert again.output == f"{namebio}: 3 reported sales read, 0 new (3 already kept)\n"  # nothing doubled
    packed = tmp_path / "namebio.csv.gz"  # the same export gzipped: read as a stream, nothing doubled either
    packed.write_bytes(__import__("gzip").compress(NAMEBIO.encode()))
    assert (
        CliRunner()
        .invoke(cli, ["ingest", "sales", str(packed), "--db", str(db)])
        .output.endswith("0 new (3 already kept)\n")
    )
    assert CliRunner().invoke(cli, ["ingest", "sales", str(dnjournal), "--db", str(db)]).exit_code == 0
    rows = _sales_rows(db)
    assert len(rows) == 6
    assert rows[0] == ("harbor.de", ".de", "2019-06-07", 900.0, "EUR", 900.0, "Sedo", "dnjournal.txt")
    assert rows[1] == (
        "harbor.net",
        ".net",
        "2019-06-01",
        1200.0,
        "USD",
        round(to_eur(1200, "USD", "2019-06-01"), 2),
        "GoDaddy",
        "namebio.csv",
    )
    assert ("kettle.io", ".io", "2019-06-05", 1200.0, "EUR", 1200.0, "Sedo", "dnjournal.txt") in rows
    assert ("voice.com", ".com", "2019-06-03", 30_000_000.0, "USD") == rows[-1][:5]
    # where they came from shows with them: in the comparables
    shown = CliRunner().invoke(cli, ["comps", "kettlebay.com", "--db", str(db), "--limit", "2"])
    assert "reported (namebio.csv)" in shown.output and "kettleharbor.com" in shown.output
    # and in what the mirror says it holds, and why it has no ranges yet
    status = CliRunner().invoke(cli, ["status", "--db", str(db)])
    assert "reported sales   6 sold 2019-05-01 to 2020-01-15 (`edt ingest sales`)" in status.output, status.output
    appraised = CliRunner().invoke(cli, ["appraise", "--db", str(db)])
    assert appraised.output.startswith("No price ranges for the 0 live listings yet"), appraised.output
    assert "too few sales to learn from (6 of the 200 needed)" not in appraised.output  # no listing lacks one
    backtest = json.loads(CliRunner().invoke(cli, ["appraise", "--backtest", "--json", "--db", str(db)]).output)
    assert backtest["scored"] == 0 and "the model needs 200" in backtest["summary"]


def test_comps_of_an_idn_written_in_letters_leave_out_its_own_sales(tmp_path):
    from click.testing import CliRunner

    from toolkit.cli import cli

    db, sales = tmp_path / "m.db", tmp_path / "idn.csv"
    sales.write_text("Domain,Price,Date,Venue\nmüller.de,500,2024-03-05,Sedo\nmueller.de,600,2024-03-06,Sedo\n")
    assert CliRunner().invoke(cli, ["ingest", "sales", str(sales), "--db", str(db)]).exit_code == 0
    for asked in ("müller.de", "xn--mller-kva.de"):
        shown = CliRunner().invoke(cli, ["comps", asked, "--db", str(db)])
        assert shown.exit_code == 0 and "xn--mller-kva.de" not in shown.output.split("\n", 1)[1], shown.output
        assert "mueller.de" in shown.output


@pytest.mark.parametrize(
    "body, line, problem",
    [
        (
            "Domain,Price,Date\nok.com,100,2020-01-01\nbad name.com,100,2020-01-02\n",
            3,
            "'bad name.com' is not a domain name",
        ),
        ("Domain,Price,Date\nok.com,a lot,2020-01-01\n", 2, "price 'a lot' is not an amount"),
        ("Domain,Price,Date\nok.com,100,01/02/2020\n", 2, "'01/02/2020' is not a date"),
        ("Domain,Price,Date\nok.com,$100 EUR,2020-01-01\n", 2, "more than one currency"),
        ("Name,Amount\nok.com,100\n", 1, "no date column in the header"),
        ("\n\n", 1, "the file is empty"),
        # an unquoted amount with a comma splits the row: a cell too many, not a price of 1
        ("Date,Domain,Price,Venue\n2024-03-05,x1.com,$1,200,Sedo\n", 2, "5 fields, the header has 4"),
        ("Domain,Price,Date\nf1.com,100,2031-03-05\n", 2, "sale date 2031-03-05 is after today"),
        ("Domain,Price,Date\nold.com,100,1899-02-03\n", 2, "before the first domain name was registered"),
        ("Domain,Price,Date,Currency\nc5.com,100,2024-03-05,XYZ\n", 2, "currency 'XYZ' is not one the ECB quotes"),
        ("Domain;Price;Date\ns1.com;1.200;2024-03-05\n", 2, "price '1.200' is ambiguous"),
        ("Domain,Price,Date\nh.com,99999999999999999999999,2024-03-05\n", 2, "at most 1,000,000,000"),
    ],
)
def test_a_bad_sales_row_names_its_line_exits_2_and_writes_nothing(tmp_path, body, line, problem):
    from click.testing import CliRunner

    from toolkit.cli import cli

    db, good, bad = tmp_path / "m.db", tmp_path / "good.csv", tmp_path / "bad.csv"
    good.write_text(NAMEBIO)
    assert CliRunner().invoke(cli, ["ingest", "sales", str(good), "--db", str(db)]).exit_code == 0
    bad.write_text(body)
    run = CliRunner().invoke(cli, ["ingest", "sales", str(bad), "--db", str(db)])
    assert run.exit_code == 2 and len(run.output.strip().splitlines()) == 1, run.output
    assert f"{bad}: line {line}: " in run.output and problem in run.output
    assert len(_sales_rows(db)) == 3  # the mirror holds what it held


def test_a_markdown_table_of_sales_is_read_and_a_folder_is_named_as_one(tmp_path):
    from click.testing import CliRunner

    from toolkit.cli import cli

    table = tmp_path / "chart.md"
    table.write_text(
        "| Rank | Domain | Price | Venue | Date |\n|---|:---:|---:|---|---|\n"
        "| 1 | big4.com | $12,500 | Sedo | May 30, 2020 |\n| 2 | kettle.io | 1,200 EUR | Sedo | Jun 5, 2019 |\n"
    )
    db = tmp_path / "m.db"
    run = CliRunner().invoke(cli, ["ingest", "sales", str(table), "--db", str(db)])
    assert run.exit_code == 0 and run.output == f"{table}: 2 reported sales read, 2 new\n", run.output
    assert [r[:4] for r in _sales_rows(db)] == [
        ("big4.com", ".com", "2020-05-30", 12500.0),
        ("kettle.io", ".io", "2019-06-05", 1200.0),
    ]
    folder = CliRunner().invoke(cli, ["ingest", "sales", str(tmp_path), "--db", str(db)])
    assert folder.exit_code == 2 and f"{tmp_path}: a folder; give the sales file in it" in folder.output


def test_a_killed_load_s_staging_folder_is_removed_by_the_next_load(tmp_path, monkeypatch):
    """`kill -9` runs no cleanup: the staging folder of a dead process goes at the next load."""
    import subprocess
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = tmp_path / "tmp" / f"edt-stage-{dead.pid}-x1y2"
    left.mkdir()
    (left / "stage.db").write_bytes(b"\0" * 1024)
    alive = tmp_path / "tmp" / f"edt-stage-{os.getpid()}-a1b2"  # this process's own: in use
    alive.mkdir()
    mirror = Mirror(tmp_path / "m.db", create=True)
    ingest_file(mirror, "godaddy", godaddy_zip(tmp_path / "all_listings.json.zip"), observed_at=SEEN)
    assert not left.exists() and alive.exists()
    assert [p.name for p in (tmp_path / "tmp").iterdir()] == [alive.name]  # the load's own went at its end


def test_a_count_past_any_real_one_is_a_skipped_row_naming_its_line_not_a_crash(tmp_path):
    """A 19-digit backlink count (SQLite's largest integer) or a 17-digit one (a float would
    round it): the row is skipped, the others written."""
    from click.testing import CliRunner
    from test_relisted import HEADER

    from toolkit.cli import cli

    row = (
        "https://www.namecheap.com/market/{0},{0},2026-11-20T10:00:00Z,2027-01-29T18:00:00Z,20,5,12.98,1,0,0,0,"
        "100,0,0,,0,0,false,0,5,0,0,{1},3,0"
    )
    path = tmp_path / "nc.csv"
    path.write_text(
        "\n".join(
            [
                HEADER,
                row.format("fine-one.com", 10),
                row.format("huge-two.com", 9223372036854775807),
                row.format("huge-three.com", 12345678901234567),
            ]
        )
        + "\n"
    )
    done = CliRunner().invoke(cli, ["ingest", "namecheap", str(path), "--db", str(tmp_path / "m.db")])
    assert done.exit_code == 0, done.output
    assert "1 new" in done.output and "nc.csv:3: majesticBacklinks" in done.output and "nc.csv:4:" in done.output
    assert [r[0] for r in sqlite3.connect(tmp_path / "m.db").execute("SELECT name FROM listings")] == ["fine-one.com"]
