"""The free public feeds as sync jobs (toolkit/ingest/feed_runner.py), served from a local HTTP
server on a real loopback socket and a local zone-transfer server.

Real files: NASK's .pl deletion lists of three consecutive days, an Internetstiftelsen .nu
release list, two consecutive days of the .ee zone (tests/fixtures/real, SOURCES.md).
Nobody publishes copies of GoDaddy's or Namecheap's files, so those are written here from
their documented columns (GoDaddy's `{"meta", "data"}` inventory JSON, zipped; Namecheap's
25-column auction CSV and 4-column buy-now CSV, toolkit/ingest/namecheap.py)."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import json
import re
import socket
import socketserver
import sqlite3
import subprocess
import sys
import threading
import zipfile
from datetime import datetime, timezone
from email.utils import format_datetime
from pathlib import Path

import pytest

from conftest import REAL, QuietHandler, lived_demo, serve_in_background
from toolkit import Mirror
from toolkit.ingest import ingest_id
from toolkit.ingest.feed_runner import FeedClient, feeds_folder, run_feeds, transfer_zone
from toolkit.ingest.zonediff import snapshot_files
from toolkit.store.feed_catalog import FEEDS, feed_table
from toolkit.store.tables import CHANGE_TRIGGERS
from toolkit.sync.alerts import AlertConfig
from toolkit.sync.saved_searches import save_search

ROOT = Path(__file__).resolve().parents[1]
NASK = REAL / "registry_drop_lists" / "nask_pl_2022_2024"
EE = sorted((REAL / "ee_zone").glob("ee_domains_*.txt"))
NU_RELEASES = REAL / "nu_drops" / "release_lists" / "2026-03-01.csv"
DAYS = [datetime(2026, 8, d, 6, 0, tzinfo=timezone.utc) for d in (21, 22, 23)]


# -- the publishers ----------------------------------------------------------------------------


class Publisher:
    """Feed files on a real loopback port, with ETag / Last-Modified (a conditional request for
    an unchanged file gets 304) and faults: "500" (every answer), "cut" (the connection closes
    halfway through the body it announced)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.modified: dict[str, datetime] = {}
        self.faults: dict[str, str] = {}
        self.log: list[tuple[str, int]] = []
        publisher = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):  # noqa: N802
                path = self.path
                fault = publisher.faults.get(path)
                body = publisher.files.get(path)
                if fault == "500" or body is None:
                    status = 500 if fault == "500" else 404
                    self.send_response(status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    publisher.log.append((path, status))
                    return
                etag = '"' + hashlib.sha1(body).hexdigest()[:16] + '"'
                modified = format_datetime(publisher.modified[path], usegmt=True)
                if self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    publisher.log.append((path, 304))
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", modified)
                self.end_headers()
                publisher.log.append((path, 200))
                if fault == "cut":
                    self.wfile.write(body[: len(body) // 2])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.wfile.write(body)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{serve_in_background(self.server)}"

    def publish(self, path: str, body: bytes, at: datetime) -> None:
        if self.files.get(path) != body:
            self.files[path], self.modified[path] = body, at

    def hits(self, path: str) -> list[int]:
        return [status for p, status in self.log if p == path]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture()
def publisher():
    p = Publisher()
    yield p
    p.close()


def godaddy_zip(items: list[dict]) -> bytes:
    """GoDaddy's inventory file: zipped JSON {"meta": {...}, "data": [...]}."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(
            "all_listings_ending_today.json",
            json.dumps({"meta": {"totalRecords": len(items)}, "data": items}, indent=1),
        )
    return buffer.getvalue()


def gd(name: str, kind: str, price: str, bids: int, end: str, tf: int = 10) -> dict:
    return {
        "domainName": name,
        "link": f"https://auctions.godaddy.com/trpItemListing.aspx?domain={name}",
        "auctionType": kind,
        "auctionEndTime": end,
        "price": price,
        "numberOfBids": bids,
        "domainAge": 9,
        "pageviews": 0,
        "valuation": "$1,200",
        "isAdult": False,
        "majesticTf": tf,
        "majesticCf": tf + 5,
    }


NC_HEADER = (
    "url,name,startDate,endDate,price,startPrice,renewPrice,bidCount,ahrefsDomainRating,umbrellaRanking,"
    "cloudflareRanking,estibotValue,extensionsTaken,keywordSearchCount,registeredDate,lastSoldPrice,"
    "lastSoldYear,isPartnerSale,semrushAScore,majesticCitation,ahrefsBacklinks,semrushBacklinks,"
    "majesticBacklinks,majesticTrustFlow,goValue"
)


def nc_auctions(rows: list[tuple[str, str, int, str]]) -> bytes:
    """Namecheap_Market_Sales.csv: (name, price, bidCount, endDate) per auction."""
    lines = [NC_HEADER]
    for index, (name, price, bids, end) in enumerate(rows):
        lines.append(
            f"https://www.namecheap.com/market/sale/Sale{index}x/,{name},2026-08-15T08:38:08Z,{end},{price},"
            f"1.00,13.98,{bids},4,,,140.00,340,241000,2015-01-15T00:00:00Z,,,1,7,21,16,,55,14,1116.00"
        )
    return ("\n".join(lines) + "\n").encode()


def nc_buy_now(rows: list[tuple[str, str]]) -> bytes:
    return (
        "permalink,domain,price,extensions_taken\n"
        + "".join(f"https://www.namecheap.com/market/buynow/{n}/,{n},{p},12\n" for n, p in rows)
    ).encode()


def config_for(publisher: Publisher) -> dict:
    """Every declared feed off, then the ones this publisher serves on, at its addresses."""
    feeds = {name: {"enabled": False} for name in FEEDS}
    served = {
        "godaddy-ending": "/godaddy/all_listings_ending_today.json.zip",
        "godaddy-closeouts": "/godaddy/closeout_listings.json.zip",
        "namecheap-auctions": "/namecheap/Namecheap_Market_Sales.csv",
        "namecheap-buynow": "/namecheap/Namecheap_Market_Sales_Buy_Now.csv",
        "nask-pl": "/dns.pl/deleted_domains.txt",
        "bardate-nu": "/iis/bardate_domains_nu.csv",
    }
    for name, path in served.items():
        feeds[name] = {"enabled": True, "url": publisher.url + path}
    feeds["zone-ee"] = {"enabled": True, "url": publisher.url + "/zones/ee_domains.txt"}
    return {"feeds": feeds}


def rows(db: Path, sql: str, *args) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchall()


def outbox(db: Path) -> list[dict]:
    """The alerts queued, oldest first (each also appended to the alerts file)."""
    return [json.loads(p) for (p,) in rows(db, "SELECT payload FROM alert_outbox ORDER BY id")]


def no_sleep():
    async def sleep(seconds: float) -> None:
        return None

    return sleep


# -- three days of feeds -----------------------------------------------------------------------


def test_three_days_of_feeds(publisher, tmp_path):
    db = tmp_path / "mirror.db"
    config = config_for(publisher)
    alerts = tmp_path / "alerts.jsonl"
    client = lambda: FeedClient(limiter=None, sleep=no_sleep(), timeout=5)  # noqa: E731
    day = lambda i: lambda: DAYS[i]  # noqa: E731

    def run(i: int, names=None) -> dict:
        said: list[str] = []
        reports = run_feeds(
            db,
            names,
            config=config,
            client=client(),
            clock=day(i),
            say=said.append,
            alert_options={"config": AlertConfig(file=str(alerts))},
        )
        return {r.feed: r for r in reports} | {"said": said}

    # a saved search, made the evening before: new GoDaddy or Namecheap auctions
    Mirror(db, clock=lambda: datetime(2026, 8, 20, 20, 0, tzinfo=timezone.utc), create=True).close()
    with Mirror(db, clock=lambda: datetime(2026, 8, 20, 20, 0, tzinfo=timezone.utc)) as mirror:
        save_search(mirror, "auctions", {"type": "auction"})

    p = publisher

    def godaddy_ending(i: int, *auctions: dict) -> None:
        p.publish("/godaddy/all_listings_ending_today.json.zip", godaddy_zip(list(auctions)), DAYS[i])

    def namecheap_auctions(i: int, *auctions: tuple[str, str, int, str]) -> None:
        p.publish("/namecheap/Namecheap_Market_Sales.csv", nc_auctions(list(auctions)), DAYS[i])

    # day 1: GoDaddy's auctions ending today and its closeouts; Namecheap's files; the lists; the zone
    godaddy_ending(
        0,
        gd("kettleharbor.com", "Bid", "$10", 0, "2026-08-21T18:00:00Z"),
        gd("brightquay.com", "Bid", "$50", 2, "2026-08-22T18:00:00Z"),
        gd("bothplaces.com", "Bid", "$35", 1, "2026-08-23T18:00:00Z"),
    )
    p.publish(
        "/godaddy/closeout_listings.json.zip", godaddy_zip([gd("cheapcloseout.net", "BuyNow", "$20", 0, "")]), DAYS[0]
    )
    namecheap_auctions(
        0,
        ("bothplaces.com", "41.00", 3, "2026-08-24T16:00:00Z"),
        ("menuhouse.pro", "1.00", 0, "2026-08-25T16:00:00Z"),
    )
    p.publish("/namecheap/Namecheap_Market_Sales_Buy_Now.csv", nc_buy_now([("fixedprice.io", "2500.00")]), DAYS[0])
    p.publish("/dns.pl/deleted_domains.txt", (NASK / "2022-07-05.txt").read_bytes(), DAYS[0])
    p.publish("/iis/bardate_domains_nu.csv", NU_RELEASES.read_bytes(), DAYS[0])
    p.publish("/zones/ee_domains.txt", EE[0].read_bytes(), DAYS[0])

    first = run(0)
    assert {k: r.status for k, r in first.items() if k != "said"} == {
        "godaddy-ending": "ok",
        "godaddy-closeouts": "ok",
        "namecheap-auctions": "ok",
        "namecheap-buynow": "ok",
        "bardate-nu": "ok",
        "nask-pl": "ok",
        "zone-ee": "ok",
    }
    assert first["godaddy-ending"].ingest.new == 3 and first["namecheap-auctions"].ingest.new == 2
    nask_day1 = [line for line in (NASK / "2022-07-05.txt").read_text().splitlines()[2:] if line.strip()]
    assert first["nask-pl"].ingest.pending.new == len(set(nask_day1))
    assert "first snapshot" in first["zone-ee"].message
    # a name on both platforms stays two listings, one per platform, as the API keeps them
    both = rows(
        db, "SELECT source, max_bid, bids_count, origin FROM listings WHERE name = 'bothplaces.com' ORDER BY source"
    )
    assert both == [("godaddy", 35.0, 1, "ingest:godaddy"), ("namecheap", 41.0, 3, "ingest:namecheap")]
    # Namecheap's appraisal and link columns: mapped where the API has a field, the rest kept raw
    (menu,) = rows(
        db,
        "SELECT price, trust_flow, citation_flow, backlinks_count, estibot_appraisal, purchase_url, "
        "whois_registered_at, type, auction_type, auction_end_date FROM listings WHERE name = 'menuhouse.pro'",
    )
    assert menu == (
        1.0,
        14,
        21,
        55,
        140.0,
        "https://www.namecheap.com/market/sale/Sale1x/",
        "2015-01-15T00:00:00Z",
        "auction",
        "Bid",
        "2026-08-25T16:00:00Z",
    )
    (raw,) = rows(
        db, "SELECT raw FROM raw_records WHERE kind = 'listing' AND id = ?", ingest_id("namecheap", "menuhouse.pro")
    )
    assert json.loads(raw[0])["feed_record"]["goValue"] == "1116.00"
    assert json.loads(raw[0])["feed_record"]["semrushAScore"] == "7"
    # the saved search alerted on the feeds' arrivals, as after an API job
    sent = outbox(db)
    assert len(sent) == 1 and sent[0]["job"] == "feeds"
    assert sorted(m["name"] for m in sent[0]["matches"]) == [
        "bothplaces.com",
        "bothplaces.com",
        "brightquay.com",
        "kettleharbor.com",
        "menuhouse.pro",
    ]
    ee_day1 = {n for n in EE[0].read_text().split()}

    # day 2: bids moved, one auction ended, a new one; closeouts unchanged (304); Namecheap's
    # auctions cut off mid-download; its buy-now file answers 500; the .ee zone moved on
    godaddy_ending(
        1,
        gd("brightquay.com", "Bid", "$80", 5, "2026-08-22T18:00:00Z"),
        gd("bothplaces.com", "Bid", "$35", 1, "2026-08-23T18:00:00Z"),
        gd("newmorning.org", "Bid", "$15", 0, "2026-08-22T20:00:00Z"),
    )
    namecheap_auctions(
        1,
        ("bothplaces.com", "44.00", 4, "2026-08-24T16:00:00Z"),
        ("menuhouse.pro", "1.00", 0, "2026-08-25T16:00:00Z"),
        ("arrivedtuesday.com", "9.00", 1, "2026-08-26T16:00:00Z"),
    )
    p.faults["/namecheap/Namecheap_Market_Sales.csv"] = "cut"
    p.faults["/namecheap/Namecheap_Market_Sales_Buy_Now.csv"] = "500"
    p.publish("/dns.pl/deleted_domains.txt", (NASK / "2022-07-06.txt").read_bytes(), DAYS[1])
    p.publish("/zones/ee_domains.txt", EE[1].read_bytes(), DAYS[1])
    before = {t: rows(db, f"SELECT * FROM {t} ORDER BY 1") for t in ("listings", "listing_history")}
    closeout_seen = rows(db, "SELECT last_seen_at FROM listings WHERE name = 'cheapcloseout.net'")

    second = run(1)
    status = {k: r.status for k, r in second.items() if k != "said"}
    assert status == {
        "godaddy-ending": "ok",
        "godaddy-closeouts": "not_modified",
        "namecheap-auctions": "down",
        "namecheap-buynow": "down",
        "bardate-nu": "not_modified",
        "nask-pl": "ok",
        "zone-ee": "ok",
    }
    # the 304 wrote nothing: the closeout was not even seen again
    assert rows(db, "SELECT last_seen_at FROM listings WHERE name = 'cheapcloseout.net'") == closeout_seen
    assert p.hits("/godaddy/closeout_listings.json.zip") == [200, 304]
    # the cut download wrote nothing: Namecheap's rows are as day 1 left them, the new auction absent
    namecheap_now = [r for r in rows(db, "SELECT * FROM listings WHERE source = 'namecheap' ORDER BY 1")]
    assert namecheap_now == [r for r in before["listings"] if "namecheap" in r]
    assert "cut off" in second["namecheap-auctions"].message or "stopped at" in second["namecheap-auctions"].message
    assert not list(feeds_folder(db).rglob("*.partial"))
    # 500 three times: three tries, reported in one line, the other feeds ran
    assert p.hits("/namecheap/Namecheap_Market_Sales_Buy_Now.csv") == [200, 500, 500, 500]
    assert "HTTP 500" in second["namecheap-buynow"].line()
    # the bids moved: a history row; the auction that ended and left the file closed; a new one arrived
    history = rows(
        db,
        "SELECT h.max_bid, h.bids_count FROM listing_history h JOIN listings l ON l.id = h.listing_id "
        "WHERE l.name = 'brightquay.com' ORDER BY h.observed_at",
    )
    assert history == [(50.0, 2), (80.0, 5)]
    assert rows(db, "SELECT closed_at FROM listings WHERE name = 'kettleharbor.com'") == [("2026-08-22T06:00:00Z",)]
    assert rows(db, "SELECT closed_at FROM listings WHERE name IN ('brightquay.com', 'newmorning.org')") == [
        (None,),
        (None,),
    ]
    assert second["godaddy-ending"].closed == 1
    # the zone: every .ee name that left it between the two days is a pending-delete candidate
    ee_day2 = set(EE[1].read_text().split())
    gone = sorted(ee_day1 - ee_day2)
    assert gone and second["zone-ee"].ingest.pending.new == len(gone)
    stored = rows(
        db, "SELECT domain, first_disappeared_at FROM pending_delete WHERE source = 'zonediff' ORDER BY domain"
    )
    assert [d for d, _ in stored] == gone and {f for _, f in stored} == {"2026-08-22T00:00:00Z"}
    # the zone's daily snapshots are kept, one a day, for the backtest's replay
    assert [d.isoformat() for d, _ in snapshot_files(feeds_folder(db) / "zone-ee")] == ["2026-08-21", "2026-08-22"]
    # the alert names only the day's new auction
    sent = outbox(db)
    assert len(sent) == 2 and [m["name"] for m in sent[1]["matches"]] == ["newmorning.org"]
    assert any(line.startswith("namecheap-buynow: down:") for line in second["said"])

    # day 3: the feeds that failed succeed; the NASK list did not change (304)
    p.faults.clear()
    godaddy_ending(2, gd("bothplaces.com", "Bid", "$60", 4, "2026-08-23T18:00:00Z"))
    p.publish(
        "/namecheap/Namecheap_Market_Sales_Buy_Now.csv",
        nc_buy_now([("fixedprice.io", "2200.00"), ("cheaperlater.io", "900.00")]),
        DAYS[2],
    )
    third = run(2)
    status = {k: r.status for k, r in third.items() if k != "said"}
    assert (
        status["namecheap-auctions"] == "ok"
        and status["namecheap-buynow"] == "ok"
        and status["nask-pl"] == "not_modified"
    )
    assert third["namecheap-auctions"].ingest.new == 1 and third["namecheap-auctions"].ingest.updated == 1
    assert (third["namecheap-buynow"].ingest.new, third["namecheap-buynow"].ingest.updated) == (1, 1)
    assert rows(db, "SELECT price, type, auction_type FROM listings WHERE name = 'fixedprice.io'") == [
        (2200.0, "closeout", "BuyNow")
    ]
    assert rows(
        db, "SELECT max_bid, bids_count FROM listings WHERE name = 'bothplaces.com' AND source = 'namecheap'"
    ) == [(44.0, 4)]
    closed = rows(db, "SELECT name FROM listings WHERE closed_at IS NOT NULL ORDER BY name")
    assert closed == [("brightquay.com",), ("kettleharbor.com",), ("newmorning.org",)]
    sent = outbox(db)
    assert [m["name"] for m in sent[2]["matches"]] == ["arrivedtuesday.com"]
    filed = [json.loads(line)["name"] for line in alerts.read_text().splitlines()]
    assert filed == [m["name"] for payload in sent for m in payload["matches"]]
    # each feed's runs are in sync_runs, and its freshness is in the status beside the API jobs
    with Mirror(db, clock=day(2)) as mirror:
        info = mirror.status()
    feeds = {f["job"]: f for f in info["feeds"]}
    assert feeds["namecheap-auctions"]["fresh"] and feeds["nask-pl"]["last_ok"] == "2026-08-23T06:00:00Z"
    runs = rows(db, "SELECT status, count(*) FROM sync_runs WHERE job = 'namecheap-buynow' GROUP BY status ORDER BY 1")
    assert runs == [("failed", 1), ("ok", 2)]


def test_a_feed_whose_format_changed_is_exit_2_naming_the_feed_and_line(publisher, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from toolkit.cli import cli

    db = tmp_path / "mirror.db"
    config = tmp_path / "config.toml"
    config.write_text(
        f'[feeds.godaddy-closeouts]\nurl = "{publisher.url}/c.json.zip"\n'
        f'[feeds.nask-pl]\nurl = "{publisher.url}/pl.txt"\n'
    )
    monkeypatch.setenv("EDT_CONFIG", str(config))
    monkeypatch.setenv("EDT_BUDGET_FILE", str(tmp_path / "budget.sqlite"))
    publisher.publish("/pl.txt", (NASK / "2022-07-05.txt").read_bytes(), DAYS[0])
    publisher.publish("/c.json.zip", godaddy_zip([gd("fine.com", "BuyNow", "$5", 0, "")]), DAYS[0])
    ok = CliRunner().invoke(cli, ["sync", "--db", str(db), "--feeds", "godaddy-closeouts,nask-pl"])
    assert ok.exit_code == 0, ok.output
    assert "godaddy-closeouts: ok: 1 rows (1 new, 0 updated)" in ok.output
    status = CliRunner().invoke(cli, ["status", "--db", str(db)]).output
    feeds = status.split("Feeds (free public files", 1)[1]
    assert re.search(r"^  godaddy-closeouts +daily at 08:40 +fresh: last fetched 0\.0 h ago", feeds, flags=re.M)
    assert re.search(r"^  zone-se +daily at 05:00 +never fetched$", feeds, flags=re.M)
    assert "godaddy-all" not in feeds  # disabled and never run
    # GoDaddy renames its domain field: the file is refused whole, the other feed still runs
    renamed = [{("name" if k == "domainName" else k): v for k, v in gd("other.com", "BuyNow", "$6", 0, "").items()}]
    publisher.publish("/c.json.zip", godaddy_zip(renamed), DAYS[1])
    publisher.publish("/pl.txt", (NASK / "2022-07-06.txt").read_bytes(), DAYS[1])
    before = rows(db, "SELECT name, last_seen_at, closed_at FROM listings ORDER BY name")
    changed = CliRunner().invoke(cli, ["sync", "--db", str(db), "--feeds", "godaddy-closeouts,nask-pl"])
    assert changed.exit_code == 2
    assert (
        f"godaddy-closeouts: format: {publisher.url}/c.json.zip!all_listings_ending_today.json: no record "
        "has a domainName field" in changed.output
    )
    assert "nask-pl: ok" in changed.output
    assert rows(db, "SELECT name, last_seen_at, closed_at FROM listings ORDER BY name") == before
    said = CliRunner().invoke(cli, ["status", "--db", str(db)]).output
    line = next(line for line in said.splitlines() if line.startswith("  godaddy-closeouts "))
    assert re.search(
        r"^  godaddy-closeouts +daily at 08:40 +failed at \d{4}-\d\d-\d\d \d\d:\d\d UTC \(.*no record has a "
        r"domainName field.*\); fresh: last fetched",
        line,
    ), line  # the failure, then the last good run
    widths = {
        len(line) - len(line.lstrip()) for line in said.split("Feeds", 1)[1].splitlines()[1:] if line.startswith("  ")
    }
    assert widths == {2}
    unknown = CliRunner().invoke(cli, ["sync", "--db", str(db), "--feeds", "nosuch"])
    assert unknown.exit_code == 2 and "unknown feed nosuch" in unknown.output


def test_schedule_once_feeds_runs_under_crons_bare_environment(publisher, tmp_path):
    db = tmp_path / "data" / "mirror.db"
    config = tmp_path / "config.toml"
    off = "".join(f"[feeds.{name}]\nenabled = false\n" for name in FEEDS if name != "nask-pl")
    config.write_text(off + f'[feeds.nask-pl]\nurl = "{publisher.url}/pl.txt"\n')
    publisher.publish("/pl.txt", (NASK / "2022-07-07.txt").read_bytes(), DAYS[0])
    cron_env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "SHELL": "/bin/sh",
        "EDT_CONFIG": str(config),
        "EDT_BUDGET_FILE": str(tmp_path / "budget.sqlite"),
        "PYTHONPATH": str(ROOT),
    }
    command = [sys.executable, "-m", "toolkit", "schedule", "--db", str(db), "--once", "feeds"]
    ran = subprocess.run(command, cwd="/", env=cron_env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    names = [line for line in (NASK / "2022-07-07.txt").read_text().splitlines()[2:] if line.strip()]
    assert rows(db, "SELECT count(*) FROM pending_delete WHERE source = 'droplist'") == [(len(set(names)),)]
    assert "nask-pl: ok" in ran.stdout and "alerts:" in ran.stdout
    again = subprocess.run(
        [*command[:-1], "nask-pl"], cwd="/", env=cron_env, capture_output=True, text=True, timeout=120
    )
    assert again.returncode == 0 and "nask-pl: not modified" in again.stdout


# -- zones by transfer -------------------------------------------------------------------------


class ZoneServer:
    """A zone-transfer (AXFR over TCP) server on a real loopback port, serving `names` as the
    zone's delegations (an NS record each) between the zone's SOA records."""

    def __init__(self, zone: str, names: list[str]):
        import dns.message
        import dns.rrset

        self.zone, self.names, self.transfers = zone, names, 0
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                length = int.from_bytes(self._read(2), "big")
                query = dns.message.from_wire(self._read(length))
                response = dns.message.make_response(query)
                soa = dns.rrset.from_text(
                    f"{server.zone}.", 3600, "IN", "SOA", f"ns.{server.zone}. host.{server.zone}. 1 3600 600 86400 300"
                )
                response.answer.append(soa)
                response.answer.append(dns.rrset.from_text(f"{server.zone}.", 3600, "IN", "NS", f"ns.{server.zone}."))
                for name in server.names:
                    response.answer.append(dns.rrset.from_text(f"{name}.", 3600, "IN", "NS", "ns1.example.net."))
                response.answer.append(soa)
                wire = response.to_wire(max_size=65535)
                server.transfers += 1
                self.request.sendall(len(wire).to_bytes(2, "big") + wire)

            def _read(self, n: int) -> bytes:
                data = b""
                while len(data) < n:
                    chunk = self.request.recv(n - len(data))
                    if not chunk:
                        raise EOFError
                    data += chunk
                return data

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.url = f"axfr://127.0.0.1:{serve_in_background(self.server)}/{zone}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_zone_by_transfer_day_after_day(tmp_path):
    day1 = sorted(n for n in EE[0].read_text().split())[:400]
    day2 = [n for n in day1 if n not in day1[10:15]] + ["aaa-new-name.ee"]
    zone = ZoneServer("ee", day1)
    try:
        got = transfer_zone(zone.url, tmp_path / "ee.txt.gz")
        assert got == 400 and gzip.decompress((tmp_path / "ee.txt.gz").read_bytes()).decode().split() == day1
        db = tmp_path / "mirror.db"
        config = {"feeds": {**{n: {"enabled": False} for n in FEEDS}, "zone-ee": {"url": zone.url, "keep": 1}}}
        first = run_feeds(db, config=config, clock=lambda: DAYS[0], alerts=False)
        assert first[0].status == "ok" and "first snapshot" in first[0].message
        zone.names = day2
        second = run_feeds(db, config=config, clock=lambda: DAYS[1], alerts=False)
        assert second[0].ingest.pending.new == 5
        assert rows(db, "SELECT domain FROM pending_delete ORDER BY domain") == [(n,) for n in day1[10:15]]
        assert zone.transfers == 3
        kept = sorted(p.name for p in (feeds_folder(db) / "zone-ee").iterdir())
        assert kept == ["ee_domains_2026-08-22T060000.txt.gz"]  # keep = 1 day
    finally:
        zone.close()
    refused = run_feeds(db, config=config, clock=lambda: DAYS[2], alerts=False)
    assert refused[0].status == "down" and "zone transfer failed" in refused[0].message


def test_a_day_that_barely_changed_writes_only_what_moved(publisher, tmp_path):
    db = tmp_path / "mirror.db"
    path = "/namecheap/Namecheap_Market_Sales.csv"
    config = {"feeds": {**{n: {"enabled": False} for n in FEEDS}, "namecheap-auctions": {"url": publisher.url + path}}}
    client = lambda: FeedClient(limiter=None, sleep=no_sleep(), timeout=5)  # noqa: E731
    end = "2026-09-30T16:00:00Z"
    day1 = [("steady.com", "10.00", 1, end), ("moving.com", "20.00", 2, end), ("leaving.com", "5.00", 0, end)]
    day2 = [day1[0], ("moving.com", "35.00", 3, end), ("arriving.com", "7.00", 0, end)]
    for day, auctions in ((0, day1), (1, day2)):
        publisher.publish(path, nc_auctions(auctions), DAYS[day])
        if day == 1:
            generation = rows(db, "SELECT value FROM mirror_meta WHERE key = 'generation'")[0][0]
        (report,) = run_feeds(db, config=config, client=client(), clock=lambda: DAYS[day], alerts=False)
        assert report.status == "ok"
    assert (report.ingest.written, report.ingest.new, report.ingest.updated, report.closed) == (3, 1, 1, 1)
    listed = {
        name: (seen, updated, closed)
        for name, seen, updated, closed in rows(db, "SELECT name, last_seen_at, updated_at, closed_at FROM listings")
    }
    day1_at, day2_at = "2026-08-21T06:00:00Z", "2026-08-22T06:00:00Z"
    assert listed == {
        "steady.com": (day2_at, day1_at, None),
        "moving.com": (day2_at, day2_at, None),
        "leaving.com": (day1_at, day1_at, day2_at),
        "arriving.com": (day2_at, day2_at, None),
    }
    history = dict(
        rows(
            db, "SELECT l.name, count(*) FROM listing_history h JOIN listings l ON l.id = h.listing_id GROUP BY l.name"
        )
    )
    assert history == {"steady.com": 1, "moving.com": 2, "leaving.com": 1, "arriving.com": 1}
    # the unchanged listing was only seen again: not noted as changed for the columnar index
    noted = dict(
        rows(
            db, "SELECT l.name, c.generation > ? FROM listing_changes c JOIN listings l ON l.id = c.id", int(generation)
        )
    )
    assert noted == {"steady.com": 0, "moving.com": 1, "leaving.com": 1, "arriving.com": 1}
    assert int(rows(db, "SELECT value FROM mirror_meta WHERE key = 'generation'")[0][0]) > int(generation)
    # the sightings moved with their trigger set aside (one bump for all), which is back as declared
    assert rows(db, "SELECT sql FROM sqlite_master WHERE name = 'listings_seen_update'") == [
        (f"CREATE TRIGGER listings_seen_update {CHANGE_TRIGGERS['listings_seen_update'][1]}",)
    ]


def test_the_last_days_log_is_copied_while_the_index_is_refreshed(publisher, tmp_path, monkeypatch):
    """The feeds' commits leave their log to a background checkpoint (store/wal_checkpoint.py),
    waited for before the next feed; the last one runs beside the columnar index's refresh."""
    from toolkit.query import Mirror
    from toolkit.store import wal_checkpoint

    events: list[str] = []
    for name in ("start", "wait"):
        method = getattr(wal_checkpoint.BackgroundCheckpoint, name)
        monkeypatch.setattr(
            wal_checkpoint.BackgroundCheckpoint,
            name,
            lambda self, method=method, name=name: events.append(name) or method(self),
        )
    refresh = Mirror.refresh_indexes
    monkeypatch.setattr(Mirror, "refresh_indexes", lambda self: events.append("refresh") or refresh(self))
    path = "/namecheap/Namecheap_Market_Sales.csv"
    config = {"feeds": {**{n: {"enabled": False} for n in FEEDS}, "namecheap-auctions": {"url": publisher.url + path}}}
    publisher.publish(path, nc_auctions([("steady.com", "10.00", 1, "2026-09-30T16:00:00Z")]), DAYS[0])
    client = FeedClient(limiter=None, sleep=no_sleep(), timeout=5)
    (report,) = run_feeds(tmp_path / "m.db", config=config, client=client, clock=lambda: DAYS[0], alerts=False)
    assert report.status == "ok"
    assert events[events.index("refresh") - 1] == "start"  # the copy runs beside the refresh
    assert "wait" not in events[events.index("start") : events.index("refresh")]
    assert events[-1] == "wait"  # and is waited for at the end


def test_the_real_ee_days_by_the_default_zone_feed_give_every_gone_name_its_window(publisher, tmp_path):
    # the declared zone-ee feed as it ships (on by default), its address replaced by a local
    # publisher of the two real days of the .ee zone: each name that left it gets the EIS window
    assert FEEDS["zone-ee"].enabled
    day1, day2 = (set(path.read_text().split()) for path in EE)
    gone = sorted(day1 - day2)
    assert gone == ["analoogband.ee", "aoprojekt.ee"]  # of the excerpt's 13,400 names (the whole zone lost 49)
    db = tmp_path / "mirror.db"
    url = publisher.url + "/zones/ee_domains.txt"
    config = {"feeds": {"zone-ee": {"url": url}, **{n: {"enabled": False} for n in FEEDS if n != "zone-ee"}}}
    client = lambda: FeedClient(limiter=None, sleep=no_sleep(), timeout=5)  # noqa: E731
    for day, path in zip(DAYS, EE):
        publisher.publish("/zones/ee_domains.txt", path.read_bytes(), day)
        (second,) = run_feeds(db, config=config, client=client(), clock=lambda: day, alerts=False)
    assert second.status == "ok" and second.ingest.pending.new == len(gone)
    stored = rows(
        db,
        "SELECT domain, whois_status, drop_window_start, estimated_drop_date, drop_window_end "
        "FROM pending_delete ORDER BY domain",
    )
    # last in the zone on 21 August, gone on the 22nd: out of the zone 30 days, then deleted to the auction
    assert stored == [(name, "serverHold", "2026-09-20", "2026-09-21", "2026-09-21") for name in gone]
    with sqlite3.connect(db) as conn:
        reasons = {json.loads(r)["drop_date_reason"] for (r,) in conn.execute("SELECT raw FROM raw_records")}
    assert len(reasons) == 1 and "EIS: serverHold + 30 days" in reasons.pop()


def test_every_zone_feed_on_by_default_has_a_lifecycle():
    from toolkit.ingest.lifecycle import policy_for

    for feed in FEEDS.values():
        if feed.is_zone and feed.enabled:
            policy = policy_for(feed.options["tld"])
            assert policy is not None and "serverHold" in policy.days, feed.name


# -- the declaration -------------------------------------------------------------------------


def test_the_config_file_overrides_and_adds_feeds():
    table = feed_table(
        {
            "feeds": {
                "nask-pl": {"schedule": "5 7 * * *"},
                "godaddy-all": {"enabled": True},
                "my-list": {"adapter": "droplist", "url": "https://example.org/drops.txt", "schedule": "0 6 * * *"},
            }
        }
    )
    assert table["nask-pl"].schedule == "5 7 * * *" and table["nask-pl"].url == FEEDS["nask-pl"].url
    assert table["godaddy-all"].enabled and table["my-list"].adapter == "droplist"
    with pytest.raises(ValueError, match=r"\[feeds.nask-pl\] urll: not a feed setting"):
        feed_table({"feeds": {"nask-pl": {"urll": "x"}}})
    with pytest.raises(ValueError, match=r"\[feeds.mine\]: a feed of your own needs adapter, schedule"):
        feed_table({"feeds": {"mine": {"url": "https://example.org/x.txt"}}})
    bad_option = feed_table({"feeds": {"nask-pl": {"url": "file:///nonexistent/x.txt", "options": {"colour": "red"}}}})
    assert bad_option["nask-pl"].options == {"colour": "red"}
    with pytest.raises(ValueError, match=r"\[feeds.nask-pl\] enabled = 'no': expected bool"):
        feed_table({"feeds": {"nask-pl": {"enabled": "no"}}})
    assert all(f.url is None or f.url.startswith(("https://", "axfr://")) for f in FEEDS.values())


def test_the_scheduler_runs_the_feeds_without_a_key_and_skips_listing_feeds_with_one(monkeypatch, tmp_path):
    from toolkit.config import Settings
    from toolkit.sync.schedule import DEFAULT_SCHEDULES, build_scheduler, feed_schedules

    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    crons = {**DEFAULT_SCHEDULES, **feed_schedules(FEEDS)}
    enabled = [name for name, feed in FEEDS.items() if feed.enabled and feed.url]
    assert set(crons) - set(DEFAULT_SCHEDULES) == set(enabled) and "godaddy-all" not in crons
    said: list[str] = []
    runner = lambda job, settings, *, stop, say: None  # noqa: E731
    keyless = build_scheduler(
        Settings(db="unused.db"),
        crons,
        stop=threading.Event(),
        say=said.append,
        timezone=timezone.utc,
        feed_runner=runner,
    )
    assert sorted(j.id for j in keyless.get_jobs()) == sorted(enabled)
    assert said == [
        f"{job}: skipped: no API key (set EDT_API_KEY for the API jobs; the free feeds need none)"
        for job in DEFAULT_SCHEDULES
    ]
    said.clear()
    keyed = build_scheduler(
        Settings(db="unused.db", plan="enterprise", api_key="k"),
        crons,
        stop=threading.Event(),
        say=said.append,
        timezone=timezone.utc,
        feed_runner=runner,
    )
    listing_feeds = [n for n in enabled if FEEDS[n].adapter in ("godaddy", "namecheap")]
    assert sorted(j.id for j in keyed.get_jobs()) == sorted(set(crons) - set(listing_feeds))
    assert [line.split(":")[0] for line in said] == listing_feeds
    assert all("`edt sync --feeds" in line for line in said)


def test_schedule_next_lists_the_feeds_beside_the_api_jobs(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from toolkit.cli import cli

    config = tmp_path / "config.toml"
    config.write_text('[feeds.nask-pl]\nschedule = "5 7 * * *"\n[feeds.zone-se]\nenabled = false\n')
    monkeypatch.setenv("EDT_CONFIG", str(config))
    shown = CliRunner().invoke(cli, ["schedule", "--next", "--db", str(tmp_path / "m.db")])
    assert shown.exit_code == 0
    lines = {line.split()[0]: line.split()[1:] for line in shown.output.splitlines()}
    assert lines["nask-pl"][:6] == ["feed", "5", "7", "*", "*", "*"] and lines["listings"][0] == "API"
    assert "zone-se" not in lines and "godaddy-ending" in lines
    config.write_text('[feeds.nask-pl]\nschedule = "daily please"\n')
    bad = CliRunner().invoke(cli, ["schedule", "--next", "--db", str(tmp_path / "m.db")])
    assert bad.exit_code == 2 and "[feeds.nask-pl] schedule = 'daily please': not a crontab expression" in bad.output


def test_the_demo_says_how_to_switch_to_the_feeds_in_one_command(publisher, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from toolkit.cli import cli

    db = tmp_path / "mirror.db"
    config = tmp_path / "config.toml"
    config.write_text(f'[feeds.nask-pl]\nurl = "{publisher.url}/pl.txt"\n')
    monkeypatch.setenv("EDT_CONFIG", str(config))
    monkeypatch.setenv("EDT_BUDGET_FILE", str(tmp_path / "budget.sqlite"))
    publisher.publish("/pl.txt", (NASK / "2022-07-05.txt").read_bytes(), DAYS[0])
    demo = CliRunner().invoke(cli, ["demo", "--db", str(tmp_path / "plain.db")])  # what every demo ends with
    assert (
        demo.exit_code == 0
        and "`edt sync --feeds --clear-demo` swaps the demo for the free public feeds" in demo.output
    )
    lived_demo(db)  # `edt demo --days 21`: results, a price model, alerts
    assert Path(f"{db}.value-model").exists() and rows(db, "SELECT count(*) FROM alert_outbox")[0][0] > 5
    demo_rows = rows(db, "SELECT count(*) FROM listings WHERE origin = 'demo' AND source != 'regfree'")[0][0]
    mixed = CliRunner().invoke(cli, ["sync", "--db", str(db), "--feeds", "nask-pl"])
    assert mixed.exit_code == 0 and "also holds demo rows" in mixed.output
    assert "alerts: 0 new (0 listings), 0 logged" in mixed.output  # the demo's replayed alerts are its past, not news
    assert (
        rows(db, "SELECT count(*) FROM listings WHERE origin = 'demo' AND source != 'regfree'")
        == [(demo_rows,)]
        > [(4_000,)]
    )
    publisher.faults["/pl.txt"] = "500"  # offline: the demo stays rather than an empty mirror
    offline = CliRunner().invoke(cli, ["sync", "--db", str(db), "--feeds", "nask-pl", "--clear-demo"])
    assert offline.exit_code == 1 and f"No feed could be fetched: the demo rows stay in {db}." in offline.output
    assert rows(db, "SELECT count(*) FROM listings WHERE origin = 'demo' AND source != 'regfree'") == [(demo_rows,)]
    publisher.faults.clear()  # back, its file unchanged (304): its rows are in the mirror, the demo can go
    switched = CliRunner().invoke(cli, ["sync", "--db", str(db), "--feeds", "nask-pl", "--clear-demo"])
    assert switched.exit_code == 0 and f"Removed the demo rows from {db}: {demo_rows:,} listings" in switched.output
    assert "nask-pl: not modified" in switched.output
    assert [origin for origin, _ in rows(db, "SELECT origin, count(*) FROM pending_delete GROUP BY origin")] == [
        "ingest:droplist"
    ]
    assert rows(db, "SELECT count(*) FROM listings") == [(0,)]
    # everything the demo made went before the alerts ran: its results, searches, alerts and price model
    for table in ("auction_results", "saved_searches", "alert_outbox"):
        assert rows(db, f"SELECT count(*) FROM {table}") == [(0,)], table
    assert "alerts: 0 new (0 listings), 0 logged" in switched.output and not Path(f"{db}.value-model").exists()
    comps = CliRunner().invoke(cli, ["comps", "kettleharbor.com", "--db", str(db)])
    assert comps.exit_code == 0 and "No sale is in" in comps.output


def test_a_feed_from_a_local_file_and_a_bad_adapter_option(tmp_path):
    db = tmp_path / "mirror.db"
    listed = tmp_path / "deleted_domains.txt"
    listed.write_bytes((NASK / "2022-07-06.txt").read_bytes())
    feeds = {n: {"enabled": False} for n in FEEDS}
    config = {"feeds": {**feeds, "nask-pl": {"enabled": True, "url": listed.as_uri()}}}
    (first,) = run_feeds(db, config=config, clock=lambda: DAYS[0], alerts=False)
    assert first.status == "ok" and first.ingest.pending.new > 1_500
    (again,) = run_feeds(db, config=config, clock=lambda: DAYS[1], alerts=False)
    assert again.status == "not_modified"  # the file's modification time is its Last-Modified
    config["feeds"]["nask-pl"]["options"] = {"colour": "red"}
    listed.write_text("one-more-name.pl\n")
    (bad,) = run_feeds(db, config=config, clock=lambda: DAYS[2], alerts=False)
    assert bad.status == "format" and bad.message.startswith("[feeds.nask-pl] options: droplist: unknown option colour")
    assert rows(db, "SELECT count(*) FROM pending_delete WHERE domain = 'one-more-name.pl'") == [(0,)]


@pytest.mark.parametrize("bound", ["60", "0.5"])  # retried to the end; or given up on past EDT_TIMEOUT
def test_a_feed_whose_host_is_down_is_one_line_and_the_others_run(publisher, tmp_path, monkeypatch, bound):
    monkeypatch.setenv("EDT_TIMEOUT", bound)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens there now
    publisher.publish("/pl.txt", (NASK / "2022-07-05.txt").read_bytes(), DAYS[0])
    config = {
        "feeds": {
            **{n: {"enabled": False} for n in FEEDS},
            "godaddy-closeouts": {"url": f"http://127.0.0.1:{port}/closeout_listings.json.zip"},
            "nask-pl": {"url": f"{publisher.url}/pl.txt"},
        }
    }
    said: list[str] = []
    reports = run_feeds(
        tmp_path / "m.db",
        config=config,
        client=FeedClient(limiter=None, sleep=no_sleep()),
        clock=lambda: DAYS[0],
        say=said.append,
        alerts=False,
    )
    assert [r.status for r in reports] == ["down", "ok"]
    assert said[0].startswith(f"godaddy-closeouts: down: http://127.0.0.1:{port}/closeout_listings.json.zip: ")
    assert said[0].endswith("nothing was ingested, the next run tries again") and len(said) == 2
