"""`edt demo --days N`: the demo source lives N days of scheduled syncs, through the writer
the sync uses. Checked on a small 14-day mirror whose window holds a 1st of the month (the
deleted-ccTLD database's refresh): closings with their final bid, saved searches and their
alerts, pending-delete names leaving for the regfree database, the inflation signal against
the demo's own truth, the same mirror for the same seed, the app and a notebook on it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import LAPSE_TODAY, demo_file, lapse_demo, mirror_digest
from test_notebooks import NOTEBOOKS

from toolkit import Mirror
from toolkit.cli import cli
from toolkit.demo import load_demo
from toolkit.demo.clock import anchor_of
from toolkit.demo.plan import Scale
from toolkit.demo.timelapse import DEMO_SEARCHES, plan_world, searches_and_runs, sync_moments
from toolkit.store.schema import connect

TODAY = date(2026, 12, 5)  # the window, Nov 21 - Dec 5, holds Dec 1: the regfree refresh
DAYS = 14
NOW = anchor_of(TODAY) + timedelta(hours=2)


def _load(path: Path, seed: int = 7, days: int = DAYS, scale: str | Scale = "small") -> Path:
    return demo_file(path, scale=scale, seed=seed, today=TODAY, days=days)


@pytest.fixture(scope="module")
def lapse(tmp_path_factory) -> Path:
    assert (TODAY, DAYS) == (LAPSE_TODAY, 14)  # the run's one time-lapse (conftest.lapse_demo)
    return lapse_demo(tmp_path_factory.mktemp("lapse") / "m.db")


@pytest.fixture
def copy(lapse, tmp_path) -> Path:
    path = tmp_path / "m.db"
    shutil.copy(lapse, path)
    return path


def rows(path: Path, sql: str, *args) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def test_the_window_is_played_on_the_services_schedules(lapse):
    first = int(anchor_of(TODAY - timedelta(days=DAYS)).timestamp())
    runs = sync_moments(first, int(anchor_of(TODAY).timestamp()))
    jobs = [job for _, job in runs]
    assert jobs[:3] == ["regfree", "pending", "listings"]  # the first sync runs every dataset's job
    assert jobs.count("listings") == DAYS + 1 and jobs.count("bids") == 6 * DAYS
    assert jobs.count("pending") == 1 + 2 and jobs.count("regfree") == 1 + 1  # Mondays Nov 23, 30; Dec 1
    seen = rows(lapse, "SELECT DISTINCT observed_at FROM listing_history")
    moments = {datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ") for t, _ in runs}
    assert {s for (s,) in seen} <= moments  # every observation is a scheduled run's
    days = rows(
        lapse,
        "SELECT substr(first_seen_at, 1, 10), count(*) FROM listings WHERE source != 'regfree' GROUP BY 1 ORDER BY 1",
    )
    assert len(days) == DAYS + 1 and all(n > 100 for _, n in days[1:])  # new listings every morning


def test_a_closed_auction_s_last_history_row_carries_its_final_bid(lapse):
    closed = rows(
        lapse,
        "SELECT id, bids_count, max_bid, auction_end_date, closed_at FROM listings "
        "WHERE type = 'auction' AND closed_at IS NOT NULL AND bids_count > 0",
    )
    assert len(closed) > 100
    for listing_id, bids, top, end, closed_at in closed:
        history = rows(
            lapse,
            "SELECT observed_at, bids_count, max_bid FROM listing_history WHERE listing_id = ? ORDER BY observed_at",
            listing_id,
        )
        assert history[-1][1:] == (bids, top), listing_id
        assert history[-1][0] < end <= closed_at  # seen before its end, closed at the next full pass
        assert [h[1] for h in history] == sorted(h[1] for h in history)  # bids only grow
    median = sorted(
        n
        for (n,) in rows(
            lapse,
            "SELECT count(*) FROM listing_history JOIN listings ON listings.id = listing_id "
            "WHERE type = 'auction' GROUP BY listing_id",
        )
    )
    assert median[len(median) // 2] >= 2


def test_a_search_saved_on_day_7_lists_exactly_the_listings_first_seen_after_it(copy):
    from toolkit.sync.saved_searches import new_matches_params, save_searches_at, saved_searches

    saved_at, runs = searches_and_runs(TODAY, DAYS, 7)
    save_searches_at(str(copy), {"short com": {"tld": ".com", "length_max": "8"}}, saved_at)
    mirror = Mirror(copy, clock=lambda: NOW)
    entry = next(e for e in saved_searches(mirror) if e["name"] == "short com")
    assert entry["created_at"] == saved_at.strftime("%Y-%m-%dT%H:%M:%SZ")
    listed = {r["id"] for r in mirror.search_domains({**new_matches_params(entry), "per_page": "100"})["data"]}
    expected = {
        i
        for (i,) in rows(
            copy,
            "SELECT id FROM listings WHERE tld = '.com' AND length <= 8 AND source != "
            "'regfree' AND first_seen_at > ? AND live_until > ?",
            entry["created_at"],
            NOW.strftime("%Y-%m-%dT%H:%M:%SZ"),
        )
    }
    assert entry["new_matches"] == len(expected) > 0
    assert listed == expected or (len(expected) > 100 and listed < expected)

    from toolkit.sync.alerts import replay_alerts

    report = replay_alerts(str(copy), runs)
    assert report.queued > 3 and not report.errors
    alerted: set[int] = set()
    for created_at, payload in rows(
        copy, "SELECT created_at, payload FROM alert_outbox WHERE search = 'short com' ORDER BY id"
    ):
        body = json.loads(payload)
        assert (created_at, body["job"]) in runs
        for match in body["matches"]:
            assert body["since"] < match["first_seen_at"] <= created_at
            alerted.add(match["id"])
    assert expected <= alerted  # each was news at the first run after it appeared


def test_the_demo_saves_its_searches_and_queues_their_alerts(copy):
    runner = CliRunner()
    result = runner.invoke(
        cli, ["demo", "--db", str(copy), "--days", "3", "--searches-day", "1"], env={"EDT_NOW": None}
    )
    assert result.exit_code == 0, result.output
    names = {n for (n,) in rows(copy, "SELECT name FROM saved_searches")}
    assert set(DEMO_SEARCHES) <= names
    assert "3 demo saved searches" in result.output
    assert rows(copy, "SELECT count(*) FROM alert_outbox WHERE search LIKE 'demo: %'")[0][0] > 0
    cleared = runner.invoke(cli, ["demo", "--db", str(copy), "--clear"])
    assert cleared.exit_code == 0
    assert rows(copy, "SELECT count(*) FROM saved_searches WHERE name LIKE 'demo: %'") == [(0,)]
    assert rows(copy, "SELECT count(*) FROM alert_outbox") == [(0,)]
    bad = runner.invoke(cli, ["demo", "--db", str(copy), "--days", "3", "--searches-day", "5"])
    assert bad.exit_code == 2 and "--searches-day 5" in bad.output


def test_a_dropped_pending_name_leaves_the_inventory_and_where_said_reaches_regfree(lapse):
    mirror = Mirror(lapse, clock=lambda: NOW)
    outcomes = dict(
        rows(
            lapse,
            "SELECT id, json_extract(raw, '$.pending_outcome') FROM raw_records "
            "WHERE kind = 'demo_truth' AND raw LIKE '%pending_outcome%'",
        )
    )
    world = plan_world("small", 7, TODAY - timedelta(days=DAYS), TODAY)
    by_id = {r["id"]: r for r in world.pending}
    held = {d for (d,) in rows(lapse, "SELECT domain FROM pending_delete")}
    regfree = {n for (n,) in rows(lapse, "SELECT name FROM listings WHERE source = 'regfree' AND closed_at IS NULL")}
    leaves = {r["id"]: int(t) for r, t in zip(world.pending, world.pending_leaves)}
    last_batch = max(t for t, job in sync_moments(world.first, world.last) if job == "pending")
    dropped = [by_id[i] for i, outcome in outcomes.items() if outcome in ("regfree", "re-registered")]
    assert len(dropped) > 20
    for record in dropped:  # past its drop date: not answered (unless include_past=1)...
        if record["estimated_drop_date"]:  # (a status no registry dates has no drop date to pass)
            answer = mirror.search_pending_delete({"contains": record["domain"].split(".")[0]})
            assert record["domain"] not in [r["domain"] for r in answer["data"]]
        if leaves[record["id"]] <= last_batch:  # ... and gone from the inventory at the next weekly batch
            assert record["domain"] not in held
    assert sum(leaves[r["id"]] <= last_batch for r in dropped) > 10
    to_regfree = [r["domain"] for r in dropped if outcomes[r["id"]] == "regfree"]
    assert to_regfree and set(to_regfree) <= regfree  # at the Dec 1 refresh
    # a re-registered name never reaches regfree after its drop (a regfree listing made earlier
    # under the same name, as the demo's random names sometimes draw, is another listing)
    created = {}
    for name, at in rows(lapse, "SELECT name, created_at FROM listings WHERE source = 'regfree' AND closed_at IS NULL"):
        created.setdefault(name, []).append(at)
    assert not [
        r["domain"]
        for r in dropped
        if outcomes[r["id"]] == "re-registered"
        and any(at[:10] >= (r["estimated_drop_date"] or "") for at in created.get(r["domain"], []))
    ]
    page = mirror.search_domains({"source": "regfree", "contains": to_regfree[0].split(".")[0]})
    assert to_regfree[0] in [r["name"] for r in page["data"]]


def test_the_inflation_signal_finds_exactly_the_jumps_the_source_made(lapse):
    flagged = {i for (i,) in rows(lapse, "SELECT id FROM listings WHERE metrics_jumped = 1")}
    truth = {i for (i,) in rows(lapse, "SELECT id FROM raw_records WHERE kind = 'demo_truth' AND raw LIKE '%jump%'")}
    assert truth and flagged == truth


def test_the_same_seed_gives_the_same_mirror(lapse, tmp_path):
    again = mirror_digest(_load(tmp_path / "again.db"))
    before = mirror_digest(lapse)
    volatile = {"mirror_meta"}  # when it was generated
    assert {k: v for k, v in again.items() if k not in volatile} == {
        k: v for k, v in before.items() if k not in volatile
    }
    other = mirror_digest(_load(tmp_path / "other.db", seed=8))
    assert other["listings"] != before["listings"]


def test_a_time_lapse_stopped_midway_leaves_the_mirror_as_it_was(copy):
    """Stopped on its fifth simulated day (Ctrl-C as the progress line is printed): nothing of
    it is written, the 14 days loaded before are all there."""
    before = mirror_digest(copy)

    def progress(stage: str, done: int) -> None:
        if stage == "day" and done == 5:
            raise KeyboardInterrupt

    conn = connect(str(copy))
    with pytest.raises(KeyboardInterrupt):
        load_demo(conn, scale="small", seed=9, today=TODAY, days=DAYS, progress=progress)
    conn.close()
    assert mirror_digest(copy) == before


def test_the_app_draws_an_auction_s_bids_through_time(lapse, monkeypatch, tmp_path):
    from test_app import app, charts_titled, no_exception

    monkeypatch.setenv("EDT_DB", str(lapse))
    monkeypatch.setenv("EDT_NOW", NOW.isoformat())
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    name, changes = rows(
        lapse,
        "SELECT name, count(*) FROM listing_history JOIN listings ON listings.id = listing_id "
        "WHERE type = 'auction' AND listings.bids_count > 2 GROUP BY listing_id "
        "ORDER BY count(*) DESC, listing_id LIMIT 1",
    )[0]
    at = app("detail", name=name)
    no_exception(at)
    history = charts_titled(at)["Price history"]
    assert changes > 2 and max(len(s["data"]) for s in history["series"]) == changes
    explore = app()
    no_exception(explore)


@pytest.fixture(scope="module")
def put_away(lapse, tmp_path_factory) -> Path:
    """The time-lapse mirror after `edt archive`: the full pass's closings (Nov 29) archived,
    the regfree refresh's (Dec 1) packed: the notebooks read them with the plain rows."""
    path = tmp_path_factory.mktemp("put-away") / "m.db"
    shutil.copy(lapse, path)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDT_NOW", NOW.isoformat())
        result = CliRunner().invoke(cli, ["archive", "--db", str(path), "--closed-before", "5d", "--pack-after", "1d"])
    assert result.exit_code == 0 and "archived " in result.output and "packed " in result.output, result.output
    return path


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_notebooks_run_on_a_time_lapse_mirror_packed_and_archived(notebook, put_away, monkeypatch, tmp_path):
    from test_notebooks import project_with, run_as_the_readme_starts_it

    monkeypatch.setenv("EDT_NOW", NOW.isoformat())
    ran = run_as_the_readme_starts_it(notebook, project_with(put_away, tmp_path), monkeypatch)
    assert not any(
        out.get("output_type") == "error" for cell in ran.cells if cell.cell_type == "code" for out in cell.outputs
    )
    printed = "".join(out.get("text", "") for out in ran.cells[-1].outputs if out.get("output_type") == "stream")
    assert "checked" in printed or "all routes agree" in printed


# -- the same days through the real path: a replica advanced run by run, `edt sync` on schedule ----


def test_days_synced_on_schedule_hold_what_the_time_lapse_holds(tmp_path):
    """The source is played run by run into a remote mirror (`Player(source=True)`: at each
    run, every listing as it is then); the replica serves it with its clock at that run; the
    sync runs that run's job with its own clock there. Nine days: two full listings passes
    (the first, then one when the last is older than seven days), a weekly pending batch, a
    monthly regfree refresh. The synced mirror then holds what `edt demo --days 9` holds:
    the same listings first seen at the same runs, closed at the same runs, the same history.
    What the live path does differently, on purpose: its rows carry origin `sync` (and a raw
    record of the fields the replica sends beyond the columns), and its bids runs re-read
    every auction with a bid, where the demo writes those whose bids or metrics changed: the
    last sighting of an auction with bids is later on the live path."""
    import asyncio

    from test_sync import KEY, make_client

    from toolkit.demo.playback import Player
    from toolkit.serve.server import create_app
    from toolkit.store.transaction import one_transaction
    from toolkit.sync import sync

    days, seed = 9, 11
    scale = Scale(listings=1_500, regfree=450, pending=300)  # a third of `small`: 68 runs are enough to go through
    world = plan_world(scale, seed, TODAY - timedelta(days=days), TODAY)
    remote, local, reference = tmp_path / "remote.db", tmp_path / "local.db", tmp_path / "reference.db"
    Mirror(remote, create=True).close()
    source = connect(str(remote))
    player = Player(world, seed, origin="demo", source=True)
    moment = [datetime.fromtimestamp(world.first, tz=timezone.utc)]
    app = create_app(remote, keys={KEY: "business"}, rates={"business": 1_000_000}, clock=lambda: moment[0])
    runs = sync_moments(world.first, world.last)
    for at, job in runs:
        with one_transaction(source) as writer:
            player.play_until(writer, at)
        moment[0] = datetime.fromtimestamp(at, tz=timezone.utc)

        async def run(job=job, when=moment[0]):
            async with make_client(app) as client:
                return await sync(local, client, plan="business", jobs=[job], clock=lambda: when)

        reports = asyncio.run(run())
        assert [r.status for r in reports] == ["ok"], (job, at, reports)
    source.close()
    _load(reference, seed=seed, days=days, scale=scale)

    def listings(db: Path) -> dict[int, tuple]:
        return {
            r[0]: r[1:]
            for r in rows(
                db,
                "SELECT id, name, source, type, price, max_bid, bids_count, auction_end_date, "
                "trust_flow, referring_domains, first_seen_at, last_seen_at, closed_at "
                "FROM listings",
            )
        }

    synced, lapsed = listings(local), listings(reference)
    assert len(lapsed) > scale.listings and synced.keys() == lapsed.keys()
    bids_runs = {i for (i,) in rows(reference, "SELECT id FROM listings WHERE bids_count > 0")}
    for listing_id, row in synced.items():  # a bids run re-reads every auction with a bid: seen later
        expected = lapsed[listing_id]
        if listing_id in bids_runs:
            assert row[:-2] == expected[:-2] and row[-1] == expected[-1] and row[-2] >= expected[-2], listing_id
        else:
            assert row == expected, listing_id
    history = (
        "SELECT listing_id, observed_at, price, max_bid, bids_count, effective_price, auction_end_date, "
        "trust_flow, citation_flow, domain_authority, referring_domains, backlinks_count FROM listing_history "
        "ORDER BY listing_id, observed_at, id"
    )
    assert rows(local, history) == rows(reference, history)
    pending = "SELECT id, domain, estimated_drop_date, first_seen_at, last_seen_at FROM pending_delete ORDER BY id"
    assert rows(local, pending) == rows(reference, pending)
    assert {o for (o,) in rows(local, "SELECT DISTINCT origin FROM listings")} == {"sync"}
    closed = rows(local, "SELECT count(*) FROM listings WHERE closed_at IS NOT NULL")[0][0]
    assert closed > scale.listings / 5  # the second full pass closed what left


def test_the_demo_guide_states_the_time_lapse_catalog_as_it_is():
    from toolkit.demo.catalog import timelapse_table

    guide = (Path(__file__).resolve().parents[1] / "docs" / "guides" / "demo.md").read_text()
    assert timelapse_table() in guide
