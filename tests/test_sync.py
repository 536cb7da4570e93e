"""`edt sync` against our own replica: in-process through httpx's ASGI transport, and over
real loopback sockets (a uvicorn thread; a sync subprocess killed with SIGKILL and resumed).
Faults are injected at the transport, shaped as the live service's (contract section 7)."""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from conftest import default_sigint, NOW, fixed_clock, small_demo, writer_lock_held
from toolkit.cli import cli
from toolkit.sync.remote import RemoteClient, shared_limiter
from toolkit.serve.server import BackgroundServer, create_app
from toolkit.store.fields import LISTING_FIELDS, PENDING_FIELDS
from toolkit.store.schema import connect
from toolkit.store.writer import close_listings, save_listings
from toolkit.sync import JOBS, SyncBusy, SyncStopped, plan_sync, sync

KEY = "test-sync-key-5f2c9a"
NOW_TEXT = NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
ROOT = Path(__file__).resolve().parents[1]


# -- the remote: a small demo mirror behind the replica --------------------------------------


@pytest.fixture(scope="session")
def remote_template(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("remote") / "remote.db"
    small_demo(path, 5, NOW.date())
    return path


@pytest.fixture()
def remote(remote_template, tmp_path) -> Path:
    path = tmp_path / "remote.db"
    shutil.copy(remote_template, path)
    return path


def replica(remote_db: Path, plan: str = "business"):
    return create_app(remote_db, keys={KEY: plan}, rates={plan: 100_000}, clock=fixed_clock)


class Sleeps:
    """Records the waits the client asks for instead of waiting."""

    def __init__(self):
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def make_client(
    app, plan: str = "business", *, wrap=None, key: str = KEY, sleeps: Sleeps | None = None, retries: int = 8
) -> RemoteClient:
    transport = httpx.ASGITransport(app=app)
    if wrap is not None:
        transport = wrap(transport)
    return RemoteClient(
        "http://replica", key, plan=plan, transport=transport, limiter=None, sleep=sleeps or Sleeps(), retries=retries
    )


def run_sync(local: Path, client: RemoteClient, plan: str = "business", **kwargs):
    async def go():
        async with client:
            return await sync(local, client, plan=plan, **kwargs)

    return asyncio.run(go())


def served_listings(remote_db: Path, *, regfree: bool = True) -> dict[int, tuple]:
    """What the replica serves at NOW: live listings (ended auctions and closed rows are not)."""
    cols = ", ".join(LISTING_FIELDS)
    where = "live_until > ?" + ("" if regfree else " AND source != 'regfree'")
    with sqlite3.connect(remote_db) as conn:
        return {row[0]: row for row in conn.execute(f"SELECT {cols} FROM listings WHERE {where}", [NOW_TEXT])}


def local_listings(local_db: Path) -> dict[int, tuple]:
    cols = ", ".join(LISTING_FIELDS)
    with sqlite3.connect(local_db) as conn:
        return {row[0]: row for row in conn.execute(f"SELECT {cols} FROM listings WHERE closed_at IS NULL")}


def table_rows(db: Path, table: str, fields) -> dict[int, tuple]:
    with sqlite3.connect(db) as conn:
        return {row[0]: row for row in conn.execute(f"SELECT {', '.join(fields)} FROM {table}")}


def scalar(db: Path, sql: str, *args):
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, args).fetchone()[0]


# -- end to end --------------------------------------------------------------------------------


def test_sync_into_an_empty_mirror_equals_the_remote(remote, tmp_path):
    local = tmp_path / "local.db"
    reports = run_sync(local, make_client(replica(remote)))
    assert [(r.job, r.status) for r in reports] == [
        ("listings", "ok"),
        ("bids", "ok"),
        ("regfree", "ok"),
        ("pending", "ok"),
    ]
    expected = served_listings(remote)
    assert local_listings(local) == expected  # same ids, every reference field equal
    assert table_rows(local, "pending_delete", PENDING_FIELDS) == table_rows(remote, "pending_delete", PENDING_FIELDS)
    # one history row per listing (first sight); the bids pass changed nothing
    assert scalar(local, "SELECT count(*) FROM listing_history") == len(expected)
    assert scalar(local, "SELECT count(*) FROM raw_records") == 0  # no field the schema lacks
    runs = {
        r[0]: r[1:]
        for r in sqlite3.connect(local).execute(
            "SELECT job, status, requests, rows_seen, rows_new, throttled FROM sync_runs"
        )
    }
    platform = sum(1 for row in expected.values() if row[3] != "regfree")
    assert runs["listings"] == ("ok", math.ceil(platform / 100) + (platform % 100 == 0), platform, platform, 0)
    regfree = len(expected) - platform
    assert runs["regfree"] == ("ok", math.ceil(regfree / 100), regfree, regfree, 0)
    assert scalar(local, "SELECT count(*) FROM sync_state WHERE cursor IS NOT NULL") == 0  # no pass left open


def test_jobs_the_plan_cannot_use_are_skipped_with_one_line(remote, tmp_path):
    local = tmp_path / "local.db"
    reports = {r.job: r for r in run_sync(local, make_client(replica(remote, "pro"), "pro"), "pro")}
    assert reports["regfree"].status == reports["pending"].status == "skipped"
    assert "needs authority" in reports["regfree"].line() and "needs authority_plus" in reports["pending"].line()
    assert local_listings(local) == served_listings(remote, regfree=False)
    assert scalar(local, "SELECT count(*) FROM pending_delete") == 0


def test_a_403_from_the_remote_stops_that_job_only(remote, tmp_path):
    """The key's real plan is lower than the one declared: the remote refuses regfree."""
    local = tmp_path / "local.db"
    reports = {
        r.job: r
        for r in run_sync(local, make_client(replica(remote, "pro"), "pro"), "business", jobs=["regfree", "listings"])
    }
    assert reports["regfree"].status == "stopped" and "Authority plan required" in reports["regfree"].message
    assert reports["listings"].status == "ok"
    assert scalar(local, "SELECT error FROM sync_runs WHERE job = 'regfree'").startswith("Authority plan required")


def test_remote_changes_arrive_exactly(remote, tmp_path):
    local = tmp_path / "local.db"
    run_sync(local, make_client(replica(remote)))
    history_before = scalar(local, "SELECT count(*) FROM listing_history")
    conn = connect(str(remote))
    live = sorted(i for i, row in served_listings(remote, regfree=False).items())
    rows = {
        r["id"]: r
        for r in (
            dict(zip([d[0] for d in c.description], v))
            for c in [conn.execute(f"SELECT * FROM listings WHERE id IN ({','.join(map(str, live[:5]))})")]
            for v in c
        )
    }
    bid_on, closing = live[:3], live[3:5]
    new_ids = [9_000_001, 9_000_002]
    records = []
    for n, listing_id in enumerate(bid_on):
        record = {k: v for k, v in rows[listing_id].items() if k in LISTING_FIELDS}
        record.update(bids_count=(record["bids_count"] or 0) + 2, max_bid=(record["price"] or 10) + 25 + n)
        records.append(record)
    template = {k: v for k, v in rows[live[0]].items() if k in LISTING_FIELDS}
    for n, new_id in enumerate(new_ids):
        records.append({**template, "id": new_id, "name": f"brandnew{n}.com", "created_at": NOW_TEXT})
    save_listings(
        conn,
        [
            {
                k: (
                    json.loads(v)
                    if k in ("historical_tech", "use_cases", "historical_traffic", "ref_domains_by_tld", "anchors")
                    and isinstance(v, str)
                    else v
                )
                for k, v in r.items()
            }
            for r in records
        ],
        origin="demo",
        observed_at=NOW_TEXT,
        keep_raw=False,
    )
    close_listings(conn, closing, closed_at=NOW_TEXT)
    conn.close()

    def with_new_field(inner):
        class AddField(httpx.AsyncBaseTransport):
            async def handle_async_request(self, request):
                response = await inner.handle_async_request(request)
                body = json.loads(await response.aread())
                for record in body.get("data", []):
                    record["renewal_price"] = 12.5
                return httpx.Response(
                    response.status_code,
                    headers={"content-type": "application/json"},
                    content=json.dumps(body).encode(),
                )

        return AddField()

    reports = {
        r.job: r
        for r in run_sync(local, make_client(replica(remote), wrap=with_new_field), jobs=["listings"], full=True)
    }
    assert reports["listings"].closed == 2 and reports["listings"].new == 2
    assert local_listings(local) == served_listings(remote, regfree=True) | {
        i: r for i, r in local_listings(local).items() if r[3] == "regfree"
    }
    closed = [r[0] for r in sqlite3.connect(local).execute("SELECT id FROM listings WHERE closed_at IS NOT NULL")]
    assert sorted(closed) == sorted(closing)
    # history: exactly one row per bid change and per new listing
    assert scalar(local, "SELECT count(*) FROM listing_history") == history_before + 3 + 2
    for n, listing_id in enumerate(bid_on):
        last = (
            sqlite3.connect(local)
            .execute(
                "SELECT bids_count, max_bid FROM listing_history WHERE listing_id = ? ORDER BY id DESC LIMIT 1",
                [listing_id],
            )
            .fetchone()
        )
        assert last == ((rows[listing_id]["bids_count"] or 0) + 2, (rows[listing_id]["price"] or 10) + 25 + n)
    raw = json.loads(scalar(local, "SELECT raw FROM raw_records WHERE id = ?", new_ids[0]))
    assert raw == {"renewal_price": 12.5}  # the unknown field is kept, nothing else duplicated


def test_an_incremental_run_asks_only_for_recent_listings(remote, tmp_path):
    local = tmp_path / "local.db"
    first = run_sync(local, make_client(replica(remote)), jobs=["listings"])[0]
    assert first.mode == "full"
    conn = connect(str(remote))
    template = dict(
        zip(LISTING_FIELDS, served_listings(remote, regfree=False)[min(served_listings(remote, regfree=False))])
    )
    fresh = [
        {
            **{
                k: v
                for k, v in template.items()
                if k not in ("historical_tech", "use_cases", "historical_traffic", "ref_domains_by_tld", "anchors")
            },
            "id": 9_100_000 + n,
            "name": f"justlisted{n}.com",
            "created_at": NOW_TEXT,
        }
        for n in range(30)
    ]
    save_listings(conn, fresh, origin="demo", observed_at=NOW_TEXT, keep_raw=False)
    conn.close()
    second = run_sync(local, make_client(replica(remote)), jobs=["listings"])[0]
    assert second.mode == "incremental" and second.new == 30
    assert second.requests < first.requests / 2
    assert set(local_listings(local)) >= {9_100_000 + n for n in range(30)}


# -- faults ------------------------------------------------------------------------------------


class Faults(httpx.AsyncBaseTransport):
    """Answers request number N (1-based) with a scripted fault instead of passing it on."""

    def __init__(
        self, inner: httpx.AsyncBaseTransport, script: dict[int, str], every_from: int | None = None, every: str = "500"
    ):
        self.inner, self.script, self.every_from, self.every, self.count = inner, script, every_from, every, 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.count += 1
        fault = self.script.get(self.count) or (
            self.every if self.every_from and self.count >= self.every_from else None
        )
        if fault == "garbage":  # a 200 from something that is not the API (a captive portal, a proxy's page)
            return httpx.Response(200, headers={"content-type": "text/html"}, content=b"<html>Welcome!</html>")
        json_headers = {"content-type": "application/json"}
        if fault == "429":
            return httpx.Response(
                429, headers={**json_headers, "Retry-After": "60"}, content=b'{"message": "Too Many Attempts."}'
            )
        if fault == "429-bare":
            return httpx.Response(429, headers=json_headers, content=b'{"message": "Too Many Attempts."}')
        if fault == "503":
            return httpx.Response(
                503, headers={**json_headers, "Retry-After": "7"}, content=b'{"error": "count_busy", "message": "busy"}'
            )
        if fault == "500":
            return httpx.Response(500, headers=json_headers, content=b'{"message": "Server Error"}')
        if fault == "timeout":
            raise httpx.ReadTimeout("timed out", request=request)
        if fault == "refused":
            raise httpx.ConnectError("connection refused", request=request)
        response = await self.inner.handle_async_request(request)
        if fault == "truncated":
            body = await response.aread()
            return httpx.Response(200, headers=json_headers, content=body[: len(body) // 2])
        return response


def test_faults_at_the_transport_are_waited_out_and_the_result_is_exact(remote, tmp_path):
    local = tmp_path / "local.db"
    sleeps = Sleeps()
    script = {2: "429", 3: "429", 4: "503", 6: "500", 8: "timeout", 10: "truncated", 12: "refused", 14: "429-bare"}
    holder = {}

    def wrap(inner):
        holder["faults"] = Faults(inner, script)
        return holder["faults"]

    reports = run_sync(local, make_client(replica(remote), wrap=wrap, sleeps=sleeps), jobs=["listings", "pending"])
    assert [r.status for r in reports] == ["ok", "ok"]
    assert local_listings(local) == served_listings(remote, regfree=False)
    assert table_rows(local, "pending_delete", PENDING_FIELDS) == table_rows(remote, "pending_delete", PENDING_FIELDS)
    # Retry-After is obeyed (60 after a 429, 7 after this 503, 60 when a 429 has none); others back off
    assert sleeps.waits[:3] == [60.0, 60.0, 7.0] and 60.0 in sleeps.waits[3:]
    assert len(sleeps.waits) == len(script)
    listings = reports[0]
    assert listings.throttled == 3
    assert scalar(local, "SELECT throttled FROM sync_runs WHERE job = 'listings'") == 3
    assert listings.requests == holder["faults"].count - reports[1].requests  # retries count as requests


def test_a_remote_answering_what_is_not_json_stops_in_one_line_and_records_the_run(remote, tmp_path):
    local, said = tmp_path / "local.db", []
    client = make_client(
        replica(remote), wrap=lambda inner: Faults(inner, {}, every_from=3, every="garbage"), retries=2
    )
    client._client._transport.retry.say = said.append  # type: ignore[attr-defined]  # the retry lines a user reads
    with pytest.raises(SyncStopped) as stopped:
        run_sync(local, client, jobs=["listings"])
    assert "answered 21 bytes that are not JSON (after 2 retries): check --base-url" in str(stopped.value)
    assert said and all("HTTP 200 but no JSON object in the answer" in line for line in said)
    assert scalar(local, "SELECT status FROM sync_runs") == "failed"  # not left running


def test_a_remote_that_keeps_failing_stops_clearly_and_the_next_run_resumes(remote, tmp_path):
    local = tmp_path / "local.db"
    with pytest.raises(SyncStopped) as stopped:
        run_sync(
            local,
            make_client(replica(remote), wrap=lambda inner: Faults(inner, {}, every_from=6), retries=3),
            jobs=["listings"],
        )
    assert "HTTP 500" in str(stopped.value) and "listings" in str(stopped.value)
    kept = scalar(local, "SELECT count(*) FROM listings")
    assert kept == 500  # the five pages before the failure are kept
    assert scalar(local, "SELECT status FROM sync_runs") == "failed"
    assert json.loads(scalar(local, "SELECT cursor FROM sync_state WHERE job = 'listings'"))["after_id"] > 0
    resumed = run_sync(local, make_client(replica(remote)), jobs=["listings"])[0]
    assert (
        resumed.resumed
        and resumed.status == "ok"
        and resumed.seen == len(served_listings(remote, regfree=False)) - kept
    )
    assert local_listings(local) == served_listings(remote, regfree=False)
    assert scalar(local, "SELECT count(*) FROM listing_history") == len(local_listings(local))  # nothing twice


def test_a_401_stops_the_run_with_the_services_message(remote, tmp_path):
    local = tmp_path / "local.db"
    with pytest.raises(SyncStopped, match="Unauthenticated"):
        run_sync(local, make_client(replica(remote), key="not-a-key"))
    assert scalar(local, "SELECT count(*) FROM listings") == 0
    error = scalar(local, "SELECT status || ' ' || error FROM sync_runs")
    assert error.startswith("stopped Unauthenticated: replica refused the API key; set the right one in EDT_API_KEY")
    assert error.endswith("(HTTP 401)")


def test_two_syncs_never_run_on_one_mirror(remote, tmp_path):
    local = tmp_path / "local.db"
    with writer_lock_held(local, "edt sync") as pid:
        with pytest.raises(SyncBusy, match=rf"another load is writing to this mirror \(pid {pid} \(edt sync, since "):
            run_sync(local, make_client(replica(remote)))


def test_dry_run_plans_each_job_from_one_count_request(remote, tmp_path):
    client = make_client(replica(remote, "authority"), "authority")

    async def go():
        async with client:
            return await plan_sync(tmp_path / "none.db", client, plan="authority")

    planned = {p.job: p for p in asyncio.run(go())}
    assert client.traffic.requests == 3  # listings, bids, regfree; pending is not in the plan
    assert not planned["pending"].allowed and "authority_plus" in planned["pending"].line()
    served = served_listings(remote)
    regfree = sum(1 for r in served.values() if r[3] == "regfree")
    assert planned["listings"].rows == len(served) - regfree and planned["regfree"].rows == regfree
    assert planned["regfree"].requests == math.ceil(regfree / 100)
    assert planned["listings"].minutes == pytest.approx(planned["listings"].requests / 60)
    assert not (tmp_path / "none.db").exists()  # a dry run writes nothing


# -- pacing: one budget per key, shared by processes ---------------------------------------------

_PACED_CHILD = """
import asyncio, sys, time, httpx
from toolkit.sync.remote import PacedTransport, Traffic, shared_limiter
limiter = shared_limiter(sys.argv[1], 4, path=sys.argv[2], window_ms=1000)
stamps = []
def answer(request):
    stamps.append(time.time())
    return httpx.Response(200, json={"data": []})
async def main():
    transport = PacedTransport(httpx.MockTransport(answer), limiter, Traffic())
    async with httpx.AsyncClient(transport=transport) as client:
        for _ in range(8):
            await client.get("http://remote/api/domains")
asyncio.run(main())
print(" ".join(repr(s) for s in stamps))
"""


def test_two_processes_share_one_keys_budget(tmp_path):
    budget = tmp_path / "budget.sqlite"
    shared_limiter(KEY, 4, path=budget, window_ms=1000)  # create the file before the race
    children = [
        subprocess.Popen(
            [sys.executable, "-c", _PACED_CHILD, KEY, str(budget)], stdout=subprocess.PIPE, text=True, cwd=ROOT
        )
        for _ in range(2)
    ]
    stamps = sorted(float(s) for child in children for s in child.communicate(timeout=60)[0].split())
    assert len(stamps) == 16
    # in any one-second window, at most 4 requests between the two processes
    tightest = min(b - a for a, b in zip(stamps, stamps[4:]))
    assert tightest >= 0.95, tightest
    assert KEY not in budget.read_bytes().decode("latin-1")  # the budget is named by a digest


# -- over real sockets: the CLI, a kill -9 and the resume --------------------------------------


def LoopbackReplica(remote_db: Path) -> BackgroundServer:
    """The replica on a real loopback port, in a thread (its clock frozen at NOW)."""
    return BackgroundServer(replica(remote_db))


def _sync_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDT_")}
    env.update(EDT_API_KEY=KEY, EDT_BUDGET_FILE=str(tmp_path / "budget.sqlite"), EDT_CONFIG=str(tmp_path / "none.toml"))
    return env


@pytest.fixture(scope="module")
def uninterrupted(remote_template, tmp_path_factory) -> Path:
    """The remote synced once without a stop: what every stopped and resumed sync must hold."""
    folder = tmp_path_factory.mktemp("uninterrupted")
    remote, reference = folder / "remote.db", folder / "uninterrupted.db"
    shutil.copy(remote_template, remote)
    with LoopbackReplica(remote) as server:
        plain = CliRunner().invoke(
            cli,
            ["sync", "--db", str(reference), "--base-url", server.url, "--plan", "business", "--rate", "6000"],
            env=_sync_env(folder),
        )
    assert plain.exit_code == 0, plain.output
    for path in folder.iterdir():  # the key is in no file: the mirror, its logs, the budget
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    return reference


@pytest.mark.parametrize(("stop", "seed"), [(signal.SIGKILL, 1), (signal.SIGINT, 2), (signal.SIGTERM, 3)])
def test_a_sync_killed_at_any_moment_resumes_to_the_same_rows(remote, uninterrupted, tmp_path, stop, seed):
    """kill -9, Ctrl-C or a plain kill, at a moment drawn from the seed after the first page."""
    local, reference = tmp_path / "killed.db", uninterrupted
    delay = random.Random(seed).uniform(0, 0.6)
    with LoopbackReplica(remote) as server:
        # the listings job's 47 pages take some 7 s at this rate: a stop drawn within 0.6 s of a page lands in it
        sync = ["sync", "--db", str(local), "--base-url", server.url, "--plan", "business", "--rate", "400"]
        child = subprocess.Popen(
            [sys.executable, "-m", "toolkit", *sync],
            env=_sync_env(tmp_path),
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            preexec_fn=default_sigint,
        )
        deadline = time.monotonic() + 60
        killed_at = None
        while time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.05)
            try:
                with sqlite3.connect(f"file:{local}?mode=ro", uri=True, timeout=1) as conn:
                    row = conn.execute(
                        "SELECT cursor FROM sync_state WHERE job = 'listings' AND cursor IS NOT NULL"
                    ).fetchone()
            except sqlite3.Error:
                continue
            if row and json.loads(row[0]).get("after_id", 0) > 0:
                time.sleep(delay)
                if child.poll() is None:
                    child.send_signal(stop)
                    killed_at = json.loads(row[0])["after_id"]
                break
        child.wait(timeout=10)
        said = child.stdout.read().decode()
        assert killed_at, f"the sync ended before it could be killed: {said[-500:]}"
        if stop == signal.SIGKILL:
            assert child.returncode == -signal.SIGKILL
        else:  # one line saying what was kept, exit 130
            assert child.returncode == 130, said
            assert said.strip().splitlines()[-1] == (
                f"edt: interrupted: the pages already written are kept in {local}; run `edt sync` again to resume"
            )

        resumed = CliRunner().invoke(
            cli,
            ["sync", "--db", str(local), "--base-url", server.url, "--plan", "business", "--rate", "6000"],
            env=_sync_env(tmp_path),
        )
        assert resumed.exit_code == 0, resumed.output
        assert "listings: ok (resumed)" in resumed.output
        assert KEY not in resumed.output
    for table, fields in (("listings", LISTING_FIELDS), ("pending_delete", PENDING_FIELDS)):
        assert table_rows(local, table, fields) == table_rows(reference, table, fields)
    history = "SELECT listing_id, price, max_bid, bids_count, effective_price, auction_end_date FROM listing_history ORDER BY 1, id"
    with sqlite3.connect(local) as a, sqlite3.connect(reference) as b:
        assert a.execute(history).fetchall() == b.execute(history).fetchall()
        assert a.execute("SELECT status FROM sync_runs WHERE job = 'listings' ORDER BY id").fetchall() == [
            ("interrupted",),
            ("ok",),
        ]
    for path in tmp_path.iterdir():  # the key is in no file: mirrors, their logs, the budget
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path


def test_cli_sync_refuses_without_a_key_or_with_an_unknown_job(tmp_path):
    env = {**_sync_env(tmp_path), "EDT_API_KEY": ""}
    no_key = CliRunner().invoke(cli, ["sync", "--db", str(tmp_path / "m.db")], env=env)
    assert no_key.exit_code == 2 and "no API key" in no_key.output and "edt demo" in no_key.output
    bad_job = CliRunner().invoke(
        cli, ["sync", "--db", str(tmp_path / "m.db"), "--jobs", "listings,auctions"], env=_sync_env(tmp_path)
    )
    assert bad_job.exit_code == 2 and "unknown job auctions" in bad_job.output


def test_cli_sync_takes_the_plan_from_the_config_file_after_the_flag_and_the_environment(remote, tmp_path):
    """The settings' order (toolkit/config.py): --plan > EDT_PLAN > the config file's plan > pro."""
    (tmp_path / "config.toml").write_text('plan = "authority"\n')
    env = {**_sync_env(tmp_path), "EDT_CONFIG": str(tmp_path / "config.toml")}
    args = ["sync", "--db", str(tmp_path / "m.db"), "--dry-run", "--jobs", "regfree"]
    with LoopbackReplica(remote) as server:
        configured = CliRunner().invoke(cli, [*args, "--base-url", server.url], env=env)
        from_env = CliRunner().invoke(cli, [*args, "--base-url", server.url], env={**env, "EDT_PLAN": "business"})
        flagged = CliRunner().invoke(
            cli, [*args, "--base-url", server.url, "--plan", "pro"], env={**env, "EDT_PLAN": "business"}
        )
    assert configured.exit_code == 0, configured.output
    assert "authority plan" in configured.output and "Assuming" not in configured.output
    assert "regfree: skipped" not in configured.output
    assert "business plan" in from_env.output and "pro plan" in flagged.output and "regfree: skipped" in flagged.output
    (tmp_path / "config.toml").write_text('plan = "gold"\n')
    bad = CliRunner().invoke(cli, [*args, "--base-url", "http://127.0.0.1:9"], env=env)
    assert bad.exit_code == 2 and "config.toml: plan: unknown plan 'gold'" in bad.output


def test_cli_dry_run_and_status_over_a_socket(remote, tmp_path):
    local = tmp_path / "local.db"
    with LoopbackReplica(remote) as server:
        dry = CliRunner().invoke(
            cli, ["sync", "--db", str(local), "--base-url", server.url, "--dry-run"], env=_sync_env(tmp_path)
        )
        assert dry.exit_code == 0, dry.output
        assert "Assuming the pro plan" in dry.output and "regfree: skipped" in dry.output
        assert "listings: full pass, about" in dry.output and not local.exists()
        pro = ["--plan", "pro", "--rate", "6000", "--jobs", "listings"]
        done = CliRunner().invoke(
            cli, ["sync", "--db", str(local), "--base-url", server.url, *pro], env=_sync_env(tmp_path)
        )
        assert done.exit_code == 0, done.output
    status = CliRunner().invoke(cli, ["status", "--db", str(local)])
    assert status.exit_code == 0
    lines = {line.split()[0]: line for line in status.output.splitlines() if line.startswith("  ") and "synced" in line}
    assert "fresh: last synced 0.0 h ago" in lines["listings"] and "never synced" in lines["regfree"]


def test_every_job_is_declared_with_its_schedule():
    assert list(JOBS) == ["listings", "bids", "regfree", "pending"]
    assert {j.schedule for j in JOBS.values()} == {"daily, 07:00 local", "every 4 hours", "monthly", "weekly"}


def test_type_drift_from_the_remote_is_tolerated(remote, tmp_path):
    """Numbers as strings, `+00:00` for `Z`, booleans as words: the rows stored are the same."""

    def drift(value):
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return str(value)
        if isinstance(value, str) and value.endswith("Z") and "T" in value:
            return value[:-1] + "+00:00"
        return value

    class Drift(httpx.AsyncBaseTransport):
        def __init__(self, inner):
            self.inner = inner

        async def handle_async_request(self, request):
            response = await self.inner.handle_async_request(request)
            body = json.loads(await response.aread())
            body["data"] = [{k: (v if k == "id" else drift(v)) for k, v in r.items()} for r in body.get("data", [])]
            return httpx.Response(
                response.status_code, headers={"content-type": "application/json"}, content=json.dumps(body).encode()
            )

    local = tmp_path / "local.db"
    run_sync(local, make_client(replica(remote), wrap=Drift), jobs=["listings", "pending"])
    assert local_listings(local) == served_listings(remote, regfree=False)
    assert table_rows(local, "pending_delete", PENDING_FIELDS) == table_rows(remote, "pending_delete", PENDING_FIELDS)


def test_a_key_s_sync_never_goes_beside_the_demo_unless_it_clears_it_first(remote, tmp_path):
    """The demo numbers its listings as the service does: a sync into it would write over
    some and leave the rest live beside the real ones. Refused; `--clear-demo` removes the
    demo once the service has answered, and a wrong key keeps it."""
    local = tmp_path / "m.db"
    small_demo(local, 42, NOW.date())
    demo_rows = sqlite3.connect(local).execute("SELECT count(*) FROM listings WHERE origin = 'demo'").fetchone()[0]
    with LoopbackReplica(remote) as server:
        sync = ["sync", "--db", str(local), "--base-url", server.url, "--plan", "business", "--rate", "6000"]
        refused = CliRunner().invoke(cli, [*sync, "--jobs", "listings"], env=_sync_env(tmp_path))
        assert refused.exit_code == 2 and "holds the demo" in refused.output and "--clear-demo" in refused.output
        from toolkit.config import Settings
        from toolkit.sync.schedule import run_job

        said: list[str] = []  # a scheduled run is refused the same way, in its one line
        settings = Settings(db=str(local), base_url=server.url, plan="business", api_key=KEY)
        assert run_job("listings", settings, say=said.append) == []
        assert said == [
            f"listings: {local} holds the demo: the service's listings would go beside invented ones "
            "and write over those numbered as theirs. `edt sync --clear-demo` removes the demo first; or "
            "sync into another file (--db PATH)"
        ]
        wrong = CliRunner().invoke(
            cli, [*sync, "--jobs", "listings", "--clear-demo"], env={**_sync_env(tmp_path), "EDT_API_KEY": "nope"}
        )
        assert wrong.exit_code == 1 and "EDT_API_KEY" in wrong.output
        held = sqlite3.connect(local).execute("SELECT count(*) FROM listings WHERE origin = 'demo'").fetchone()[0]
        assert held == demo_rows  # nothing written, nothing removed
        switched = CliRunner().invoke(cli, [*sync, "--jobs", "listings", "--clear-demo"], env=_sync_env(tmp_path))
        assert switched.exit_code == 0, switched.output
        assert "Removed the demo rows" in switched.output
    with sqlite3.connect(local) as conn:
        assert conn.execute("SELECT DISTINCT origin FROM listings").fetchall() == [("sync",)]
        assert not conn.execute("SELECT 1 FROM mirror_meta WHERE key LIKE 'demo_%'").fetchall()
    served = served_listings(remote, regfree=False)
    assert sqlite3.connect(local).execute("SELECT count(*) FROM listings WHERE source != 'regfree'").fetchone()[
        0
    ] == len(served)
