"""`edt schedule` and the saved-search alerts: triggers with a frozen clock, coalescing after
a gap, a scheduled `bids` job end to end (replica in-process, webhook on a real loopback
HTTP server, signature checked, delivery after an outage), and SIGTERM mid-job."""

from __future__ import annotations

import functools
import hashlib
import hmac
import http.server
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest

from conftest import as_synced, NOW, QuietHandler, small_demo
from toolkit import Mirror
from toolkit.sync.alerts import AlertConfig
from toolkit.sync.saved_searches import save_search
from toolkit.config import Settings
from toolkit.sync.remote import RemoteClient
from toolkit.sync.schedule import (
    DEFAULT_SCHEDULES,
    build_scheduler,
    crontab,
    next_runs,
    run_job,
    schedules,
    systemd_units,
)
from toolkit.serve.server import BackgroundServer, create_app
from toolkit.store.fields import LISTING_FIELDS
from toolkit.store.feed_catalog import FEEDS
from toolkit.store.schema import connect
from toolkit.store.writer import save_listings
from toolkit.sync.saved_searches import save_search

KEY = "schedule-test-key-91ab"
ROOT = Path(__file__).resolve().parents[1]


# -- triggers --------------------------------------------------------------------------------


def test_next_run_of_each_job_from_a_frozen_clock():
    runs = next_runs(DEFAULT_SCHEDULES, NOW, timezone.utc)  # Sunday 2026-11-22 12:00 UTC
    assert runs == {
        "bids": datetime(2026, 11, 22, 16, 0, tzinfo=timezone.utc),
        "listings": datetime(2026, 11, 23, 7, 0, tzinfo=timezone.utc),
        "regfree": datetime(2026, 12, 1, 7, 30, tzinfo=timezone.utc),
        "pending": datetime(2026, 11, 23, 8, 0, tzinfo=timezone.utc),
    }


def test_schedules_come_from_the_config_file_and_bad_ones_are_named():
    assert schedules({"schedule": {"bids": "15 */2 * * *"}})["bids"] == "15 */2 * * *"
    assert schedules({})["listings"] == "0 7 * * *"
    with pytest.raises(ValueError, match=r"\[schedule\] pending = 'every monday'"):
        schedules({"schedule": {"pending": "every monday"}})


def test_crontab_and_systemd_equivalents():
    lines = crontab(DEFAULT_SCHEDULES, db="/srv/edt/data/mirror.db", edt="edt", workdir="/srv/edt").splitlines()
    assert lines[1:] == [
        f"{cron} cd /srv/edt && edt schedule --db /srv/edt/data/mirror.db --once {job} "
        ">> /srv/edt/data/mirror.db.sync.log 2>&1"
        for job, cron in DEFAULT_SCHEDULES.items()
    ]
    unit = systemd_units(db="/srv/edt/data/mirror.db", edt="edt", workdir="/srv/edt")
    assert "ExecStart=edt schedule --db /srv/edt/data/mirror.db" in unit and "KillSignal=SIGTERM" in unit
    assert "WorkingDirectory=/srv/edt" in unit


def test_jobs_the_plan_cannot_use_are_skipped_once():
    said = []
    settings = Settings(db="unused.db", plan="pro", api_key="k")
    scheduler = build_scheduler(
        settings, DEFAULT_SCHEDULES, stop=threading.Event(), say=said.append, timezone=timezone.utc
    )
    assert sorted(j.id for j in scheduler.get_jobs()) == ["bids", "listings"]
    assert said == [
        "regfree: skipped: the pro plan cannot use it (needs authority or above)",
        "pending: skipped: the pro plan cannot use it (needs authority_plus or above)",
    ]
    assert all(j.max_instances == 1 and j.coalesce and j.misfire_grace_time >= 3600 for j in scheduler.get_jobs())


def test_runs_missed_during_a_gap_are_coalesced_into_one():
    calls = []

    def runner(job, settings, *, stop, say):
        calls.append((job, datetime.now(timezone.utc)))

    settings = Settings(db="unused.db", plan="business", api_key="k")
    scheduler = build_scheduler(
        settings,
        {"bids": "0 */4 * * *"},
        stop=threading.Event(),
        runner=runner,
        timezone=timezone.utc,
        say=lambda line: None,
    )
    scheduler.modify_job("bids", next_run_time=datetime.now(timezone.utc) - timedelta(hours=13))  # 4 fires missed
    thread = threading.Thread(target=scheduler.start, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not calls and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    next_run = scheduler.get_job("bids").next_run_time
    scheduler.shutdown(wait=True)
    assert [job for job, _ in calls] == ["bids"]  # one run, not four
    assert next_run > datetime.now(timezone.utc)


# -- end to end: a scheduled bids job, a saved search, a signed webhook ----------------------------


class Receiver:
    """A webhook endpoint on a real loopback port, recording what it receives."""

    def __init__(self, port: int):
        received = self.received = []

        class Handler(QuietHandler):
            def do_POST(self):  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                received.append((dict(self.headers), body))
                self.send_response(204)
                self.end_headers()

        self.server = http.server.HTTPServer(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _new_bid_listings(remote: Path, specs: list[tuple[int, str]], **extra) -> None:
    """Add auctions with bids to the remote (as a platform would)."""
    conn = connect(str(remote))
    cols = ", ".join(LISTING_FIELDS)
    template = dict(
        zip(
            LISTING_FIELDS,
            conn.execute(
                f"SELECT {cols} FROM listings WHERE type = 'auction' AND bids_count > 0 AND auction_end_date > ? LIMIT 1",
                [datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")],
            ).fetchone(),
        )
    )
    for name in ("historical_tech", "use_cases", "historical_traffic", "ref_domains_by_tld", "anchors", "topics"):
        template.pop(name, None)
    end = (datetime.now(timezone.utc) + timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    records = [
        {
            **template,
            "id": listing_id,
            "name": name,
            "tld": None,
            "created_at": now,
            "auction_end_date": end,
            "bids_count": 3,
            "max_bid": 40.0,
            **extra,
        }
        for listing_id, name in specs
    ]
    save_listings(conn, records, origin="demo", observed_at=now, keep_raw=False)
    conn.close()


def test_a_scheduled_bids_job_alerts_a_saved_search_through_a_signed_webhook(tmp_path, monkeypatch):
    remote, local = tmp_path / "remote.db", tmp_path / "local.db"
    small_demo(remote, 4)
    as_synced(Path(shutil.copy(remote, local)))  # the local mirror starts as a copy (as after a first sync)
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    app = create_app(remote, keys={KEY: "business"}, rates={"business": 100_000})
    settings = Settings(db=str(local), plan="business", api_key=KEY, base_url="http://replica")

    def client():
        return RemoteClient(
            "http://replica", KEY, plan="business", transport=httpx.ASGITransport(app=app), limiter=None
        )

    mirror = Mirror(local)
    save_search(mirror, "french auctions with bids", {"tld": ".fr", "has_bids": "1"})
    time.sleep(1.1)  # first-seen stamps have whole seconds
    _new_bid_listings(
        remote,
        [
            (9_300_001, "bonjourvelo.fr"),
            (9_300_002, "cafeparis.fr"),
            (9_300_003, "lunemer.fr"),
            (9_300_004, "gutenmorgen.de"),
            (9_300_005, "sunnyday.com"),
        ],
    )
    port = _free_port()
    secret = "s3cret-for-hmac"
    config = AlertConfig(
        file=str(tmp_path / "alerts.jsonl"),
        webhook_url=f"http://127.0.0.1:{port}/hook",
        webhook_secret=secret,
        retries=1,
    )
    said = []
    runner = functools.partial(
        run_job, client_factory=client, alert_options={"config": config, "sleep": lambda s: None}
    )
    scheduler = build_scheduler(
        settings,
        {"bids": "0 */4 * * *"},
        stop=threading.Event(),
        say=said.append,
        runner=runner,
        run_now=True,
        timezone=timezone.utc,
    )
    thread = threading.Thread(target=scheduler.start, daemon=True)
    with Receiver(port) as receiver:
        thread.start()
        deadline = time.monotonic() + 30
        while not any(line.startswith("alerts:") for line in said) and time.monotonic() < deadline:
            time.sleep(0.1)
        scheduler.shutdown(wait=True)
    assert any(line.startswith("bids: ok") for line in said), said
    assert len(receiver.received) == 1
    headers, body = receiver.received[0]
    expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    assert headers["X-EDT-Signature-256"] == expected
    payload = json.loads(body)
    assert payload["search"] == "french auctions with bids"
    assert [m["id"] for m in payload["matches"]] == [9_300_001, 9_300_002, 9_300_003]  # exactly its new matches
    assert len((tmp_path / "alerts.jsonl").read_text().splitlines()) == 3

    # The webhook is down: the next alert waits in the outbox and arrives on the run after.
    time.sleep(1.1)
    _new_bid_listings(remote, [(9_300_006, "boulangerie.fr")])
    runner("bids", settings, say=said.append)  # as the scheduler runs it
    assert any("pending" in line and "retried on the next run" in line for line in said[-1:]), said[-1]
    with Receiver(port) as receiver:
        runner("bids", settings, say=said.append)
    assert [json.loads(b)["matches"][0]["name"] for _, b in receiver.received] == ["boulangerie.fr"]
    outbox = sqlite3.connect(local).execute(
        "SELECT count(*), sum(posted_at IS NOT NULL), max(attempts) FROM alert_outbox"
    )
    assert outbox.fetchone() == (2, 2, 2)


# -- SIGTERM during a job ----------------------------------------------------------------------------


def test_sigterm_during_a_job_stops_after_a_whole_page(tmp_path):
    remote, local = tmp_path / "remote.db", tmp_path / "local.db"
    small_demo(remote, 6)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDT_")}
    config = tmp_path / "config.toml"  # the API jobs only: the public feeds are not on this machine's network
    config.write_text("".join(f"[feeds.{name}]\nenabled = false\n" for name in FEEDS))
    env.update(EDT_API_KEY=KEY, EDT_PLAN="pro", EDT_BUDGET_FILE=str(tmp_path / "budget.sqlite"), EDT_CONFIG=str(config))
    with BackgroundServer(create_app(remote, keys={KEY: "pro"}, rates={"pro": 100_000})) as server:
        env["EDT_BASE_URL"] = server.url
        child = subprocess.Popen(
            [sys.executable, "-m", "toolkit", "schedule", "--db", str(local), "--now"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            time.sleep(0.1)
            # The pro plan's 15 requests go out at once, then pacing holds the `listings` pass
            # mid-way (bids takes the first few): the signal lands inside a job, deterministically.
            try:
                with sqlite3.connect(f"file:{local}?mode=ro", uri=True, timeout=1) as db:
                    row = db.execute("SELECT cursor FROM sync_state WHERE job = 'listings' AND cursor IS NOT NULL")
                    cursor = row.fetchone()
                    pages = db.execute("SELECT count(*) FROM listings").fetchone()[0]
            except sqlite3.Error:
                continue
            if cursor and json.loads(cursor[0]).get("after_id", 0) > 0 and pages >= 200:
                time.sleep(0.5)
                break
        second = subprocess.run(  # a second scheduler for the same mirror: every job of it would be refused
            [sys.executable, "-m", "toolkit", "schedule", "--db", str(local)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
        child.send_signal(signal.SIGTERM)
        output, _ = child.communicate(timeout=60)
    assert second.returncode == 1 and second.stderr.strip().splitlines()[-1] == (
        f"edt: {local}: another `edt schedule` runs for this mirror; one is enough (stop it first to start this one)"
    )
    assert child.returncode == 0, output
    assert "stopping (SIGTERM)" in output and "stopped" in output.splitlines()[-1]
    assert re.search(r"^listings: daily at 07:00, next \w{3} \d{2} \w{3} 07:00$", output, re.M), (
        output
    )  # words, not cron
    with sqlite3.connect(local) as db:
        listings = db.execute("SELECT count(*) FROM listings").fetchone()[0]
        history = db.execute("SELECT count(*) FROM listing_history").fetchone()[0]
        job, status = db.execute("SELECT job, status FROM sync_runs ORDER BY id DESC").fetchone()
        cursor = db.execute("SELECT cursor FROM sync_state WHERE job = ?", [job]).fetchone()[0]
        written = db.execute("SELECT sum(rows_new) FROM sync_runs").fetchone()[0]
    assert listings >= 200 and written == listings  # every row came with a whole, recorded page
    assert history == listings  # and its history row with it
    assert status == "interrupted" and json.loads(cursor) is not None  # the next run resumes here


def test_schedules_read_as_words():
    from toolkit.sync.schedule import schedule_words

    assert [schedule_words(c) for c in ("* * * * *", "*/2 * * * *", "0 */4 * * *", "30 6 * * *", "5 4 * 1-6 *")] == [
        "every minute",
        "every 2 minutes",
        "every 4 hours on the hour",
        "daily at 06:30",
        "cron 5 4 * 1-6 *",
    ]


def test_weekday_numbers_read_as_cron_reads_them():
    monday_8 = next_runs({"pending": "0 8 * * 1", "weekdays": "0 9 * * 1-5", "sunday": "0 9 * * 0"}, NOW, timezone.utc)
    assert monday_8 == {
        "pending": datetime(2026, 11, 23, 8, 0, tzinfo=timezone.utc),
        "weekdays": datetime(2026, 11, 23, 9, 0, tzinfo=timezone.utc),
        "sunday": datetime(2026, 11, 29, 9, 0, tzinfo=timezone.utc),
    }


def test_edt_watch_add_list_show_rm(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from toolkit.cli import cli

    db = tmp_path / "m.db"
    small_demo(db, 4)
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    run = lambda *args: CliRunner().invoke(cli, [*args[:2], "--db", str(db), *args[2:]])  # noqa: E731
    added = run("watch", "add", "fr strong", "tld=.fr", "has_bids=1")
    assert added.exit_code == 0 and "Saved 'fr strong'" in added.output
    assert run("watch", "add", "bad", "tf_min=lots").exit_code == 2
    time.sleep(1.1)
    _new_bid_listings(db, [(9_400_001, "soleilvert.fr"), (9_400_002, "grandvent.de")])
    _new_bid_listings(db, [(9_400_003, "sansmetrique.fr")], trust_flow=None)  # a row without metrics prints too
    listed = run("watch", "list")
    expected = Mirror(db).search_domains({"tld": ".fr", "has_bids": "1", "seen_after": _saved_at(db), "per_page": "1"})
    new = expected["meta"]["total"]
    assert re.search(rf"fr strong: has_bids=1 tld=\.fr \([\d,]+ matches now, {new:,} new since saved ", listed.output)
    assert new == 2
    shown = run("watch", "show", "fr strong")
    assert shown.exit_code == 0, shown.output
    assert f"{new:,} new since" in shown.output and "soleilvert.fr" in shown.output
    assert "sansmetrique.fr" in shown.output and "TF -" in shown.output
    assert "0 new since last shown" in run("watch", "list").output
    assert run("watch", "rm", "fr strong").exit_code == 0
    gone = run("watch", "rm", "fr strong")
    assert gone.exit_code == 2 and "no saved search named" in gone.output


def _saved_at(db: Path) -> str:
    return sqlite3.connect(db).execute("SELECT created_at FROM saved_searches").fetchone()[0]


def test_the_replica_registers_webhooks_for_enterprise_keys_only(tmp_path):
    from starlette.testclient import TestClient

    db = tmp_path / "m.db"
    small_demo(db, 4)
    app = create_app(db, keys={"ent": "enterprise", "biz": "business"})
    with TestClient(app) as client:
        body = {"url": "https://hooks.example.com/new", "filters": {"tld": ".fr", "tf_min": 10}, "secret": "abc"}
        refused = client.post("/api/webhooks", json=body, headers={"Authorization": "Bearer biz"})
        assert refused.status_code == 403 and refused.json()["required_plan"] == "enterprise"
        created = client.post("/api/webhooks", json=body, headers={"Authorization": "Bearer ent"})
        assert created.status_code == 201, created.text
        assert created.json()["data"] == {
            "name": "webhook 1",
            "url": "https://hooks.example.com/new",
            "filters": {"tf_min": "10", "tld": ".fr"},
            "signed": True,
        }
        bad = client.post("/api/webhooks", json={**body, "url": "ftp://x"}, headers={"Authorization": "Bearer ent"})
        assert bad.status_code == 422 and "url" in bad.json()["errors"]
        bad_filter = client.post(
            "/api/webhooks", json={**body, "filters": {"tf_min": "lots"}}, headers={"Authorization": "Bearer ent"}
        )
        assert bad_filter.status_code == 422 and "tf_min" in bad_filter.json()["errors"]
        assert client.post("/api/webhooks", json=body).status_code == 401
    row = sqlite3.connect(db).execute("SELECT name, webhook_url, webhook_secret FROM saved_searches").fetchall()
    assert row == [("webhook 1", "https://hooks.example.com/new", "abc")]


def test_a_webhook_never_replaces_a_saved_search_and_takes_filters_as_a_query_would(tmp_path):
    from starlette.testclient import TestClient

    db = tmp_path / "m.db"
    small_demo(db, 4)
    with Mirror(db) as mirror:
        save_search(mirror, "mine: French", {"tld": ".fr", "tf_min": "15"})
        save_search(mirror, "webhook 1", {"tld": ".de"})  # a name the replica would give first
    ent = {"Authorization": "Bearer ent"}
    with TestClient(create_app(db, keys={"ent": "enterprise"})) as client:

        def post(**body):
            return client.post("/api/webhooks", json={"url": "https://hooks.example.com/in", **body}, headers=ent)

        taken = post(name="mine: French", filters={"tld": ".com"})
        assert taken.status_code == 422 and list(taken.json()["errors"]) == ["name"]
        assert "already named 'mine: French'" in taken.json()["message"]
        listed = post(filters={"tld": [".fr", ".de"], "tf_min": 10})
        assert listed.status_code == 201, listed.text
        assert listed.json()["data"]["name"] == "webhook 2"  # the first free number
        assert listed.json()["data"]["filters"] == {"tf_min": "10", "tld": ".fr,.de"}
        for body, field in [
            ({"filters": {"tld": None}}, "filters.tld"),
            ({"filters": {"tld": {"a": 1}}}, "filters.tld"),
            ({"secret": 5}, "secret"),
            ({"name": "x" * 81}, "name"),
            ({"name": "two\nlines"}, "name"),
        ]:
            refused = post(**body)
            assert refused.status_code == 422 and list(refused.json()["errors"]) == [field], (body, refused.text)
        wrong_method = client.get("/api/webhooks", headers=ent)
        assert wrong_method.status_code == 405 and wrong_method.headers["Allow"] == "POST"
        assert wrong_method.json()["message"] == "Method not allowed: this route answers POST."
    rows = dict(sqlite3.connect(db).execute("SELECT name, params FROM saved_searches").fetchall())
    assert json.loads(rows["mine: French"]) == {"tld": ".fr", "tf_min": "15"} and json.loads(rows["webhook 1"]) == {
        "tld": ".de"
    }
    assert len(rows) == 3


def test_a_webhook_registered_on_the_replica_is_delivered_by_the_alerts(tmp_path, monkeypatch):
    from starlette.testclient import TestClient

    from toolkit.sync.alerts import run_alerts

    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "m.db"
    small_demo(db, 4)
    port = _free_port()
    with TestClient(create_app(db, keys={"ent": "enterprise"})) as client:
        created = client.post(
            "/api/webhooks",
            headers={"Authorization": "Bearer ent"},
            json={"url": f"http://127.0.0.1:{port}/in", "filters": {"tld": ".de"}, "secret": "k2"},
        )
        assert created.status_code == 201
    time.sleep(1.1)
    _new_bid_listings(db, [(9_500_001, "morgenrot.de"), (9_500_002, "petitpain.fr")])
    with Receiver(port) as receiver:
        report = run_alerts(Mirror(db), AlertConfig(), job="bids", sleep=lambda s: None)
    assert report.posted == 1 and report.pending == 0
    headers, body = receiver.received[0]
    assert headers["X-EDT-Signature-256"] == "sha256=" + hmac.new(b"k2", body, hashlib.sha256).hexdigest()
    assert [m["name"] for m in json.loads(body)["matches"]] == ["morgenrot.de"]


class _HangsUp(QuietHandler):
    """A receiver that reads the post, then closes the connection without an answer."""

    received: list[bytes] = []

    def do_POST(self):  # noqa: N802
        _HangsUp.received.append(self.rfile.read(int(self.headers["Content-Length"])))
        self.close_connection = True
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)


def test_a_post_the_receiver_took_without_answering_is_never_sent_again(tmp_path, monkeypatch):
    from toolkit.sync.alerts import run_alerts

    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "m.db"
    small_demo(db, 4)
    save_search(Mirror(db), "german", {"tld": ".de"})
    time.sleep(1.1)
    _new_bid_listings(db, [(9_500_001, "morgenrot.de")])
    server = http.server.HTTPServer(("127.0.0.1", 0), _HangsUp)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _HangsUp.received.clear()
    try:
        config = AlertConfig(webhook_url=f"http://127.0.0.1:{server.server_address[1]}/in")
        first = run_alerts(Mirror(db), config, job="bids", sleep=lambda s: None)
        again = run_alerts(Mirror(db), config, job="bids", sleep=lambda s: None)
    finally:
        server.shutdown()
        server.server_close()
    assert len(_HangsUp.received) == 1  # once, though no answer came
    assert first.posted == 1 and first.pending == 0 and again.posted == 0
    assert any("did not answer" in e and "not sent again" in e for e in first.errors)


def test_a_removed_search_takes_its_pending_alerts_with_it(tmp_path, monkeypatch):
    from click.testing import CliRunner
    from starlette.testclient import TestClient

    from toolkit.cli import cli
    from toolkit.sync.alerts import run_alerts

    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "m.db"
    small_demo(db, 4)
    with TestClient(create_app(db, keys={"ent": "enterprise"})) as client:
        created = client.post(
            "/api/webhooks",
            headers={"Authorization": "Bearer ent"},
            json={"url": f"http://127.0.0.1:{_free_port()}/gone", "filters": {"tld": ".de"}, "secret": "theirs"},
        )
        assert created.status_code == 201
        name = created.json()["data"]["name"]
    time.sleep(1.1)
    _new_bid_listings(db, [(9_500_001, "morgenrot.de")])
    kept = run_alerts(Mirror(db), AlertConfig(), job="bids", sleep=lambda s: None)
    assert kept.pending == 1  # their receiver is down: kept
    assert CliRunner().invoke(cli, ["watch", "rm", name, "--db", str(db)]).exit_code == 0
    port = _free_port()
    with Receiver(port) as receiver:
        after = run_alerts(Mirror(db), AlertConfig(webhook_url=f"http://127.0.0.1:{port}/owner"), sleep=lambda s: None)
    assert receiver.received == [] and after.pending == 0


def _three_alerts_queued(tmp_path: Path, monkeypatch) -> Path:
    """A small demo with three saved searches, each with one new match queued in the outbox."""
    from toolkit.sync.alerts import queue_alerts

    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    db = tmp_path / "m.db"
    small_demo(db, 4)
    for tld in (".de", ".fr", ".com"):
        save_search(Mirror(db), f"by {tld}", {"tld": tld})
    time.sleep(1.1)
    _new_bid_listings(db, [(9_500_001, "morgenrot.de"), (9_500_002, "petitpain.fr"), (9_500_003, "downhill.com")])
    assert queue_alerts(Mirror(db), job="bids").queued == 3
    return db


def test_two_deliveries_at_once_post_each_alert_once(tmp_path, monkeypatch):
    """Two runs ending together (a scheduled job and a manual check), a receiver taking its time."""
    from toolkit.sync.alerts import deliver_alerts

    db = _three_alerts_queued(tmp_path, monkeypatch)
    received: list[bytes] = []

    class Slow(QuietHandler):
        def do_POST(self):  # noqa: N802
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            time.sleep(0.5)
            self.send_response(204)
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    config = AlertConfig(webhook_url=f"http://127.0.0.1:{server.server_address[1]}/in")
    reports = []
    runs = [threading.Thread(target=lambda: reports.append(deliver_alerts(Mirror(db), config))) for _ in range(2)]
    try:
        for run in runs:
            run.start()
        for run in runs:
            run.join(timeout=60)
    finally:
        server.shutdown()
        server.server_close()
    assert len(received) == 3 and sorted(r.posted for r in reports) == [0, 3]


def test_a_receiver_that_is_down_is_tried_once_a_run_not_once_an_alert(tmp_path, monkeypatch):
    from toolkit.sync.alerts import deliver_alerts

    db = _three_alerts_queued(tmp_path, monkeypatch)
    config = AlertConfig(webhook_url=f"http://127.0.0.1:{_free_port()}/in")  # nothing listens
    report = deliver_alerts(Mirror(db), config, sleep=lambda s: None)
    assert report.pending == 3 and report.posted == 0
    tried = connect(str(db)).execute("SELECT attempts FROM alert_outbox ORDER BY id").fetchall()
    assert sorted(a for (a,) in tried) == [0, 0, 1]


def test_a_receiver_asking_to_wait_a_day_keeps_its_alerts_for_the_next_run(tmp_path, monkeypatch):
    """A 429 with Retry-After 86400 is not slept on (a run never waits for a day); the
    receiver is asked once a run, and every alert stays pending for the next."""
    from toolkit.sync.alerts import deliver_alerts

    db = _three_alerts_queued(tmp_path, monkeypatch)
    received: list[bytes] = []

    class NotNow(QuietHandler):
        wait = "86400"

        def do_POST(self):  # noqa: N802
            received.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(429)
            self.send_header("Retry-After", self.wait)
            self.send_header("Content-Length", "0")
            self.end_headers()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotNow)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    slept: list[float] = []
    config = AlertConfig(webhook_url=f"http://127.0.0.1:{server.server_address[1]}/in")
    try:
        report = deliver_alerts(Mirror(db), config, sleep=slept.append)
        NotNow.wait = "2"  # a short wait is waited out, as the receiver asks, then the run moves on
        short = deliver_alerts(Mirror(db), config, sleep=slept.append)
    finally:
        server.shutdown()
        server.server_close()
    assert len(received) == 1 + 1 + config.retries and report.pending == 3 and report.posted == 0
    assert any("asking to wait 86400 s" in e for e in report.errors)
    assert slept == [2.0] * config.retries and short.pending == 3
    said = [p for p in Mirror(db).status()["problems"] if "alerts not delivered" in p]
    assert said == [
        "3 alerts not delivered yet (the receiver's last answer: HTTP 429); each run tries again: "
        "check the receiver, or the webhook in [alerts]"
    ]
