"""The watchlist: schema v5 tables, saved searches with their new matches (`seen_after`),
and the shortlist."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import NOW, all_rows, fixed_clock, listing_records, refusal, ts
from toolkit import ApiError, Mirror
from toolkit.store.schema import SCHEMA_VERSION, ensure_schema
from toolkit.store.writer import save_listings
from toolkit.sync.saved_searches import (
    delete_search,
    mark_seen,
    new_matches_params,
    open_search,
    search_params,
    save_search,
    saved_searches,
    shortlist,
    shortlist_add,
    shortlist_note,
    shortlist_remove,
)

SEEN = ts(NOW - timedelta(days=2))  # when the synthetic mirror first saw every listing


class Clock:
    """A clock the tests move by hand."""

    def __init__(self, now: datetime = NOW) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture()
def db(synthetic_db, tmp_path) -> Path:
    """A private copy of the session's synthetic mirror (tests here write to it)."""
    path = tmp_path / "mirror.db"
    src, dst = sqlite3.connect(synthetic_db), sqlite3.connect(path)
    src.backup(dst)
    src.close()
    dst.close()
    return path


@pytest.fixture()
def clock() -> Clock:
    return Clock()


@pytest.fixture()
def wm(db, clock) -> Mirror:
    m = Mirror(db, clock=clock)
    yield m
    m.close()


def _listing(listing_id: int, name: str, **extra) -> dict:
    """A live listing (no end date) from a platform source."""
    base = {"id": listing_id, "name": name, "source": "dynadot", "type": "closeout", "price": 20.0}
    return {**base, "created_at": ts(NOW), "updated_at": ts(NOW), **extra}


# -- schema v5 --------------------------------------------------------------------------------------


def test_the_watchlist_tables_have_their_declared_shape(wm):
    assert SCHEMA_VERSION >= 5
    conn = wm.connection()
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert [r[1] for r in conn.execute("PRAGMA table_info(saved_searches)")] == [
        "name",
        "params",
        "created_at",
        "last_opened_at",
        "alerted_until",
        "webhook_url",
        "webhook_secret",
    ]
    assert [r[1] for r in conn.execute("PRAGMA table_info(shortlist)")] == [
        "listing_id",
        "note",
        "added_at",
        "updated_at",
    ]
    pks = {t: [r[1] for r in conn.execute(f"PRAGMA table_info({t})") if r[5]] for t in ("saved_searches", "shortlist")}
    assert pks == {"saved_searches": ["name"], "shortlist": ["listing_id"]}


def test_a_v4_mirror_upgrades_in_place_and_keeps_its_rows(tmp_path):
    path = tmp_path / "v4.db"
    conn = sqlite3.connect(path)
    ensure_schema(conn)
    save_listings(conn, listing_records(40), origin="sync", observed_at=SEEN)
    conn.execute("DROP TABLE saved_searches")
    conn.execute("DROP TABLE shortlist")
    conn.execute("PRAGMA user_version = 4")
    conn.commit()
    before = conn.execute("SELECT id, name, first_seen_at FROM listings ORDER BY id").fetchall()
    history = conn.execute("SELECT count(*) FROM listing_history").fetchone()[0]
    conn.close()
    assert len(before) == 40

    conn = sqlite3.connect(path)
    assert ensure_schema(conn) == 4  # the version it had
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"saved_searches", "shortlist"} <= tables
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT id, name, first_seen_at FROM listings ORDER BY id").fetchall() == before
    assert conn.execute("SELECT count(*) FROM listing_history").fetchone()[0] == history
    conn.close()

    with Mirror(path, clock=fixed_clock) as m:  # and the upgraded file is usable as a mirror
        assert m.connection().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        name = before[0][1]
        assert [r["name"] for r in m.search_domains({"contains": name, "include_closed": "1"})["data"]] == [name]
        save_search(m, "old file", {"tld": ".com"})
        assert [s["name"] for s in saved_searches(m)] == ["old file"]


def test_reopening_a_v5_mirror_changes_nothing(wm):
    save_search(wm, "kept", {"tld": ".fr"})
    shortlist_add(wm, 3, "look")
    conn = wm.connection()
    schema = conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall()
    assert ensure_schema(conn) == SCHEMA_VERSION
    conn.execute("PRAGMA user_version = 4")  # as if the upgrade ran again
    ensure_schema(conn)
    assert conn.execute("SELECT type, name, sql FROM sqlite_master ORDER BY name").fetchall() == schema
    assert [s["name"] for s in saved_searches(wm)] == ["kept"]
    assert [s["listing_id"] for s in shortlist(wm)] == [3]


# -- the seen_after filter ------------------------------------------------------------------------


def test_seen_after_filters_on_first_seen(wm):
    everything = wm.search_domains({})["meta"]["total"]
    assert everything > 100
    assert wm.search_domains({"seen_after": ts(NOW - timedelta(days=3))})["meta"]["total"] == everything
    assert wm.search_domains({"seen_after": SEEN})["meta"]["total"] == 0  # strictly after
    second_before = ts(NOW - timedelta(days=2, seconds=1))
    assert wm.search_domains({"seen_after": second_before})["meta"]["total"] == everything
    # any ISO 8601 form is normalised to UTC first: 13:59:59+02:00 is one second before SEEN
    assert wm.search_domains({"seen_after": "2026-11-20T13:59:59+02:00"})["meta"]["total"] == everything
    assert wm.search_domains({"seen_after": "2026-11-20T14:00:00+02:00"})["meta"]["total"] == 0
    assert wm.search_domains({"seen_after": NOW - timedelta(days=3)})["meta"]["total"] == everything  # a datetime
    # a fraction of a second still compares as time, not as text ("00.5Z" sorts before "00Z")
    assert wm.search_domains({"seen_after": "2026-11-20T12:00:00.5Z"})["meta"]["total"] == 0
    assert wm.search_domains({"seen_after": "2026-11-20T11:59:59.999Z"})["meta"]["total"] == everything


@pytest.mark.parametrize(
    "value", ["yesterday", "2026-13-01T00:00:00Z", "2026-11-22T25:00:00Z", "12", "9999-12-31T23:59:59-05:00"]
)
def test_a_bad_seen_after_is_a_422_naming_it(wm, value):
    with pytest.raises(ApiError) as caught:
        wm.search_domains({"seen_after": value})
    assert caught.value.status == 422
    assert caught.value.field == "seen_after"
    assert list(caught.value.body["errors"]) == ["seen_after"] and "ISO 8601" in caught.value.body["message"]


def test_a_bad_seen_after_over_http_is_the_same_422(synthetic_db):
    import httpx

    from toolkit.serve.server import create_app

    app = create_app(synthetic_db, {"pro-key": "pro"}, clock=fixed_clock)

    async def get(url: str):
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            return await client.get(url, headers={"Authorization": "Bearer pro-key"})

    bad = asyncio.run(get("/api/domains?seen_after=soon"))
    assert bad.status_code == 422 and list(bad.json()["errors"]) == ["seen_after"]
    good = asyncio.run(get(f"/api/domains?seen_after={SEEN}"))
    assert good.status_code == 200 and good.json()["meta"]["total"] == 0


def test_seen_after_is_documented_as_an_extension():
    from toolkit.serve.openapi import build_openapi
    from toolkit.query.params import DOMAIN_PARAMS

    param = DOMAIN_PARAMS["seen_after"]
    assert (param.extension, param.group, param.caption) == (True, "dates", "First seen after")
    listed = {p["name"]: p for p in build_openapi("http://testserver")["paths"]["/api/domains"]["get"]["parameters"]}
    assert listed["seen_after"]["x-extension"] is True and listed["seen_after"]["schema"]["type"] == "string"


# -- saved searches -------------------------------------------------------------------------------


def test_save_list_open_delete(wm, clock):
    save_search(wm, "  French shops  ", {"tld": ".fr", "contains": "shop"})
    save_search(wm, "Authority", {"da_min": "40", "sort": "-domain_authority"})
    listed = saved_searches(wm)
    assert [s["name"] for s in listed] == ["Authority", "French shops"]
    french = listed[1]
    assert french["params"] == {"tld": ".fr", "contains": "shop"}
    assert french["created_at"] == ts(NOW) and french["last_opened_at"] is None
    assert french["new_matches"] == 0  # every listing was first seen before it was saved
    stored = wm.connection().execute("SELECT params FROM saved_searches WHERE name = 'French shops'").fetchone()[0]
    assert json.loads(stored) == {"tld": ".fr", "contains": "shop"}

    clock.now = NOW + timedelta(hours=1)
    assert open_search(wm, "French shops") == {"tld": ".fr", "contains": "shop"}
    opened = {s["name"]: s for s in saved_searches(wm)}
    assert opened["French shops"]["last_opened_at"] == ts(NOW + timedelta(hours=1))
    assert opened["Authority"]["last_opened_at"] is None

    assert delete_search(wm, "French shops") is True
    assert delete_search(wm, "French shops") is False
    assert [s["name"] for s in saved_searches(wm)] == ["Authority"]
    with pytest.raises(KeyError, match="French shops"):
        open_search(wm, "French shops")


def test_resaving_replaces_params_and_keeps_created_at(wm, clock):
    save_search(wm, "mine", {"tld": ".com"})
    clock.now = NOW + timedelta(minutes=5)
    open_search(wm, "mine")
    clock.now = NOW + timedelta(minutes=10)
    save_search(wm, "mine", {"tld": ".de", "score_min": "30"})
    [entry] = saved_searches(wm)
    assert entry["params"] == {"tld": ".de", "score_min": "30"}
    assert entry["created_at"] == ts(NOW)
    assert entry["last_opened_at"] == ts(NOW + timedelta(minutes=5))


@pytest.mark.parametrize("name", ["", "   ", "x" * 81, None])
def test_a_bad_name_is_refused(wm, name):
    with pytest.raises(ValueError, match="name"):
        save_search(wm, name, {"tld": ".com"})
    assert saved_searches(wm) == []


def test_a_name_of_80_characters_is_fine(wm):
    save_search(wm, " " + "y" * 80 + " ", {})
    assert [s["name"] for s in saved_searches(wm)] == ["y" * 80]


@pytest.mark.parametrize(
    "params, field",
    [
        ({"tf_min": "abc"}, "tf_min"),
        ({"seen_after": "later"}, "seen_after"),
        ({"colour": "red"}, "colour"),
        ({"sort": "-nope"}, "sort"),
    ],
)
def test_bad_filters_are_refused_by_the_query_layer_and_nothing_is_saved(wm, params, field):
    refused = refusal(save_search, wm, "bad", params)
    assert refused.status == 422 and refused.field == field
    assert saved_searches(wm) == []


def test_a_saved_search_survives_reopening_the_mirror(db, clock):
    with Mirror(db, clock=clock) as m:
        save_search(m, "keeper", {"tld": ".io", "score_min": "20"})
        clock.now = NOW + timedelta(hours=2)
        open_search(m, "keeper")
    with Mirror(db, clock=clock) as m:
        [entry] = saved_searches(m)
    assert entry["name"] == "keeper" and entry["params"] == {"tld": ".io", "score_min": "20"}
    assert (entry["created_at"], entry["last_opened_at"]) == (ts(NOW), ts(NOW + timedelta(hours=2)))
    with Mirror(db, clock=clock, readonly=True) as m:  # a read-only mirror lists them too
        assert [s["name"] for s in saved_searches(m)] == ["keeper"]


def test_new_matches_count_listings_first_seen_after_the_last_open(wm, clock):
    params = {"tld": ".io", "contains": "cloud"}
    already = wm.search_domains(params)["meta"]["total"]
    assert already > 0  # the search matches old listings, which are never new
    save_search(wm, "io clouds", params)
    assert saved_searches(wm)[0]["new_matches"] == 0

    # one match arrives before the search is ever opened: new since it was saved
    clock.now = NOW + timedelta(hours=1)
    save_listings(wm.connection(), [_listing(90_001, "cloudearly.io")], origin="sync", observed_at=ts(clock.now))
    assert saved_searches(wm)[0]["new_matches"] == 1

    clock.now = NOW + timedelta(hours=2)
    open_search(wm, "io clouds")
    assert saved_searches(wm)[0]["new_matches"] == 0  # opening shows them: none are new any more

    clock.now = NOW + timedelta(hours=3)
    arrivals = [
        _listing(90_002, "cloudnine.io"),
        _listing(90_003, "mycloudy.io"),
        _listing(90_004, "cloud-base.io"),
        _listing(90_005, "cloudnine.fr"),  # other TLD
        _listing(90_006, "shopnine.io"),  # no "cloud"
    ]
    save_listings(wm.connection(), arrivals, origin="sync", observed_at=ts(clock.now))
    [entry] = saved_searches(wm)
    assert entry["new_matches"] == 3
    assert wm.search_domains(params)["meta"]["total"] == already + 4  # the early one and the three

    # a listing seen again later keeps its first sighting: not new again
    clock.now = NOW + timedelta(hours=4)
    open_search(wm, "io clouds")
    save_listings(
        wm.connection(), [_listing(90_002, "cloudnine.io", price=25.0)], origin="sync", observed_at=ts(clock.now)
    )
    assert saved_searches(wm)[0]["new_matches"] == 0


def test_new_matches_stay_new_until_marked_seen_up_to_when_they_were_listed(wm, clock):
    params = {"tld": ".io", "contains": "cloud"}
    save_search(wm, "io clouds", params)
    clock.now = NOW + timedelta(hours=1)
    save_listings(wm.connection(), [_listing(90_011, "cloudone.io")], origin="sync", observed_at=ts(clock.now))
    assert search_params(wm, "io clouds") == params  # reading the filters marks nothing
    [entry] = saved_searches(wm)
    assert entry["new_matches"] == 1
    listed = wm.search_domains(new_matches_params(entry))["data"]
    assert [r["name"] for r in listed] == ["cloudone.io"]  # the new names themselves
    listed_at = clock.now + timedelta(minutes=5)
    clock.now = NOW + timedelta(hours=2)  # another arrives while the user reads the list
    save_listings(wm.connection(), [_listing(90_012, "cloudtwo.io")], origin="sync", observed_at=ts(clock.now))
    mark_seen(wm, "io clouds", upto=listed_at.isoformat())
    [entry] = saved_searches(wm)
    assert entry["new_matches"] == 1  # only what was listed is seen; the later arrival stays new
    assert [r["name"] for r in wm.search_domains(new_matches_params(entry))["data"]] == ["cloudtwo.io"]
    with pytest.raises(KeyError):
        mark_seen(wm, "nobody")


# -- shortlist ------------------------------------------------------------------------------------


def test_shortlist_add_note_remove_with_the_listing_name(wm, clock):
    names = {r["id"]: (r["name"], r["source"]) for r in all_rows(wm, "listings")}
    first, second = 3, 12
    assert first in names and second in names and 999_999 not in names

    assert shortlist_add(wm, first) is True
    clock.now = NOW + timedelta(minutes=1)
    assert shortlist_add(wm, second, "call the seller") is True
    clock.now = NOW + timedelta(minutes=2)
    assert shortlist_add(wm, 999_999, "gone?") is True
    assert shortlist_add(wm, first) is False  # already there: unchanged

    listed = shortlist(wm)
    assert [e["listing_id"] for e in listed] == [999_999, second, first]  # most recent first
    by_id = {e["listing_id"]: e for e in listed}
    assert (by_id[first]["name"], by_id[first]["source"]) == names[first]
    assert (by_id[second]["name"], by_id[second]["source"]) == names[second]
    assert by_id[999_999]["name"] is None and by_id[999_999]["source"] is None
    assert by_id[first]["note"] == "" and by_id[second]["note"] == "call the seller"
    assert by_id[first]["added_at"] == by_id[first]["updated_at"] == ts(NOW)

    clock.now = NOW + timedelta(minutes=10)
    shortlist_note(wm, first, "ask for 50")
    noted = {e["listing_id"]: e for e in shortlist(wm)}[first]
    assert noted["note"] == "ask for 50"
    assert (noted["added_at"], noted["updated_at"]) == (ts(NOW), ts(NOW + timedelta(minutes=10)))

    clock.now = NOW + timedelta(minutes=11)
    assert shortlist_add(wm, first, "ask for 40") is False  # re-adding with a note replaces it
    again = {e["listing_id"]: e for e in shortlist(wm)}[first]
    assert again["note"] == "ask for 40" and again["added_at"] == ts(NOW)

    with pytest.raises(KeyError):
        shortlist_note(wm, 424_242, "not listed")
    assert shortlist_remove(wm, second) is True
    assert shortlist_remove(wm, second) is False
    assert [e["listing_id"] for e in shortlist(wm)] == [999_999, first]


@pytest.mark.parametrize("listing_id", [0, -3, "abc", True, 2.5])
def test_a_bad_listing_id_is_refused(wm, listing_id):
    with pytest.raises(ValueError, match="listing_id"):
        shortlist_add(wm, listing_id)
    assert shortlist(wm) == []


def test_the_shortlist_survives_reopening(db, clock):
    with Mirror(db, clock=clock) as m:
        shortlist_add(m, "6", "string ids are fine")
    with Mirror(db, clock=clock) as m:
        [entry] = shortlist(m)
    assert entry["listing_id"] == 6 and entry["note"] == "string ids are fine"


def test_a_webhook_address_without_http_is_a_bad_setting_named_once(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from toolkit.cli import cli

    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("EDT_WEBHOOK_URL", "127.0.0.1:8765/hook")
    db = str(tmp_path / "m.db")
    Mirror(db, create=True).close()
    done = CliRunner().invoke(cli, ["watch", "names", "--db", db, "--check"])
    assert done.exit_code == 2
    assert "EDT_WEBHOOK_URL: '127.0.0.1:8765/hook' is not an http:// or https:// address" in done.output
    # a slash short, or no host, is no address either (each setting says so in one line, exit 2)
    monkeypatch.setenv("EDT_WEBHOOK_URL", "https:/hooks.example.com/edt")
    done = CliRunner().invoke(cli, ["watch", "names", "--db", db, "--check"])
    assert done.exit_code == 2 and "EDT_WEBHOOK_URL: 'https:/hooks.example.com/edt' is not an http" in done.output
    monkeypatch.delenv("EDT_WEBHOOK_URL")
    monkeypatch.setenv("EDT_BASE_URL", "https://")
    done = CliRunner().invoke(cli, ["sync", "--db", db, "--api-key", "k"])
    assert done.exit_code == 2 and "EDT_BASE_URL: 'https://' is not an http:// or https:// address" in done.output
    done = CliRunner().invoke(cli, ["enrich", "--db", db])  # said as the setting it is, not as the mirror's fault
    assert done.exit_code == 2 and done.output.startswith("edt: EDT_BASE_URL: 'https://' is not an http")
