"""The judging signals on worked examples: EUR prices from the bundled ECB table, spam words
on segmented names, metric jumps before an auction end, archive-content signals from real
CDX answers; how the writer, the enrichment run, the demo, the CLI, MCP and the app carry
them; and bad input (unknown currency, a non-UTF-8 word list, a CDX 400)."""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from conftest import NOW, fixed_clock, small_demo, ts
from test_enrich import FakeWeb, _json_from_text, cdx, cdx_route, no_sleep, ok

from toolkit import Mirror
from toolkit.cli import cli
from toolkit.enrich.listings import enrich
from toolkit.enrich.wayback import Capture, parse_cdx_text, summarize
from toolkit.query.params import DOMAIN_PARAMS
from toolkit.signals import archive_signals, load_dictionary, metric_jump, parking_service
from toolkit.signals.fx import FxTable, to_eur
from toolkit.signals.spam import SpamDictionaryError, stored_fingerprint
from toolkit.store.reflag import reflag
from toolkit.store.schema import SCHEMA_VERSION
from toolkit.store.writer import save_listings

NEW_FILTERS = (
    "price_eur_min",
    "price_eur_max",
    "exclude_spam",
    "exclude_inflated",
    "archive_gap_max",
    "continuity_min",
    "exclude_parked",
)


@pytest.fixture(autouse=True)
def no_user_settings(tmp_path, monkeypatch):
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.delenv("EDT_SPAM_WORDS", raising=False)
    monkeypatch.delenv("EDT_ECB_FILE", raising=False)


def listing(i: int, name: str, **fields) -> dict:
    base = {"id": i, "name": name, "source": "sedo", "type": "auction", "currency": "EUR"}
    return {**base, "created_at": "2026-10-01T08:00:00Z", **fields}


# -- prices in EUR -----------------------------------------------------------------------------


def test_a_rate_on_a_given_day_from_the_bundled_ecb_table():
    table = FxTable()
    # ECB reference rates: 1 EUR = 1.0945 USD on Monday 2024-01-15, 1.0942 on Friday 2024-01-12
    assert table.rate("USD", "2024-01-15") == pytest.approx(1 / 1.0945)
    assert to_eur(100, "USD", "2024-01-15") == 91.37
    assert to_eur(100, "usd", date(2024, 1, 13)) == to_eur(100, "USD", "2024-01-12") == 91.39  # Saturday: Friday's
    assert to_eur(1000, "JPY", "2024-01-15") == round(1000 / 159.67, 2) == 6.26  # 159.67 JPY that day
    assert to_eur(55.5, "EUR", "2024-01-15") == 55.5
    assert table.first_date == date(1999, 1, 4) and table.last_date >= date(2026, 1, 1)


def test_a_days_rate_is_looked_up_once_whatever_the_hour():
    """A feed prices each row at its own moment: one lookup a currency and day, not one a row."""
    table = FxTable()
    asked = []
    convert = table._converter.convert
    table._converter.convert = lambda *args: asked.append(args) or convert(*args)
    rates = {table.rate("USD", f"2024-01-15T{hour:02d}:{minute:02d}:00Z") for hour in range(24) for minute in (0, 30)}
    assert len(rates) == 1 and rates.pop() == pytest.approx(1 / 1.0945) and len(asked) == 1


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet="aeiostrnlbcdkzé", max_size=40), max_size=20))
def test_many_runs_are_split_into_the_same_words_as_one_at_a_time(runs):
    """`segment_many` (an automaton over the dictionary) and `segment` (every slice) agree."""
    from toolkit.signals.spam import segment, segment_many

    assert segment_many(runs) == [segment(run) for run in runs]


def test_no_rate_is_none_never_a_guess():
    assert to_eur(100, "XYZ", "2024-01-15") is None  # not an ECB currency
    assert to_eur(100, None, "2024-01-15") is None and to_eur(None, "USD", "2024-01-15") is None
    assert to_eur(100, "USD", "1998-06-01") is None  # before the table's first rate
    assert to_eur(100, "RUB", "2026-06-01") is None  # no longer quoted since 2022
    assert to_eur(100, "RUB", "2021-06-01") is not None


def test_the_writer_converts_at_the_rate_of_the_day_seen_and_keeps_it_while_the_price_stands(tmp_path):
    m = Mirror(tmp_path / "m.db", clock=fixed_clock, create=True)
    conn = m.connection()
    rows = [
        listing(1, "alpha.com", source="godaddy", currency="USD", price=100.0),
        listing(2, "beta.com", currency="XYZ", price=100.0),
        listing(3, "gamma.fr", price=80.0, max_bid=95.0),
    ]
    save_listings(conn, rows, origin="sync", observed_at="2024-01-15T09:00:00Z")
    got = {r["id"]: r for r in (m.get_domain(i)["data"] for i in (1, 2, 3))}
    assert (got[1]["price_eur"], got[1]["effective_price_eur"]) == (91.37, 91.37)
    assert (got[2]["price_eur"], got[2]["price"]) == (None, 100.0)  # unknown currency: null, the row kept
    assert (got[3]["price_eur"], got[3]["effective_price_eur"]) == (80.0, 95.0)
    save_listings(conn, rows, origin="sync", observed_at="2024-01-16T09:00:00Z")  # same price, a day later
    assert m.get_domain(1)["data"]["price_eur"] == 91.37
    save_listings(conn, [{**rows[0], "price": 200.0}], origin="sync", observed_at="2024-01-16T09:00:00Z")
    assert m.get_domain(1)["data"]["price_eur"] == to_eur(200, "USD", "2024-01-16") != 182.74
    result = CliRunner().invoke(cli, ["fx", "--db", str(tmp_path / "m.db")])
    assert result.exit_code == 0 and "no EUR price: 1 in XYZ" in result.output


def test_a_bad_ecb_file_is_one_line_and_exit_2(tmp_path, monkeypatch):
    from toolkit.signals import fx

    monkeypatch.setenv("EDT_ECB_FILE", str(tmp_path / "missing.zip"))
    monkeypatch.setattr(fx, "_last", [-1e9, None])
    result = CliRunner().invoke(cli, ["demo", "--db", str(tmp_path / "m.db")])
    assert result.exit_code == 2 and "missing.zip: no such ECB history file" in result.output
    assert not (tmp_path / "m.db").exists()


# -- spam words ----------------------------------------------------------------------------------


def test_spam_words_are_matched_on_the_names_words_not_substrings():
    built_in = load_dictionary()
    assert built_in.match("bestcasinoshop") == ["casino"]
    assert built_in.match("cheap-viagra-4u") == ["viagra"]
    assert built_in.match("essexcoach") == [] and built_in.match("bestcoachshop") == []  # no bare substring "sex"
    assert built_in.match("therapist") == []  # "the rapist" is not how it reads
    assert built_in.match("pokerandslots") == ["poker", "slots"]


def test_a_user_file_adds_terms_and_allow_lists_others(tmp_path):
    words = tmp_path / "spam.txt"
    words.write_text("# my list\ncoach\nnike   # brands I avoid\n!poker\nsex\n!essex\n", encoding="utf-8")
    mine = load_dictionary(words)
    assert mine.match("bestcoachshop") == ["coach"] and mine.match("nikeshoes24") == ["nike"]
    assert mine.match("pokerclub") == []  # a built-in term allow-listed
    assert mine.match("essexsexshop") == ["sex"] and mine.match("essexgarden") == []
    assert mine.fingerprint != load_dictionary().fingerprint


def test_a_dictionary_that_is_not_utf8_or_not_words_names_file_and_line(tmp_path, monkeypatch):
    latin = tmp_path / "latin1.txt"
    latin.write_bytes(b"casino\ncaf\xe9\n")
    with pytest.raises(
        SpamDictionaryError, match=r"latin1.txt, line 2: not UTF-8 \(byte 0xe9\); save the file as UTF-8"
    ):
        load_dictionary(latin)
    odd = tmp_path / "odd.txt"
    odd.write_text("casino\nfree $$$\n", encoding="utf-8")
    with pytest.raises(SpamDictionaryError, match="odd.txt, line 2: 'free \\$\\$\\$' is not a term"):
        load_dictionary(odd)
    db = tmp_path / "m.db"
    save_listings(Mirror(db, create=True).connection(), [listing(1, "pokerclub.com")], origin="sync")
    monkeypatch.setenv("EDT_SPAM_WORDS", str(latin))
    for args in (["spam", "reflag", "--db", str(db)], ["ingest", "godaddy", "--file", str(latin), "--db", str(db)]):
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 2, args
        assert result.output.strip().splitlines() == [
            f"edt: {latin}, line 2: not UTF-8 (byte 0xe9); save the file as UTF-8"
        ]
    assert Mirror(db).get_domain(1)["data"]["spam_terms"] == ["poker"]  # nothing lost, nothing changed


def test_changing_the_file_reflags_the_mirror_without_a_resync(tmp_path, monkeypatch):
    db = tmp_path / "m.db"
    m = Mirror(db, clock=fixed_clock, create=True)
    conn = m.connection()
    save_listings(
        conn,
        [listing(1, "bestcoachshop.com"), listing(2, "pokerclub.com"), listing(3, "garden.com")],
        origin="sync",
        observed_at=ts(NOW - timedelta(hours=1)),
    )
    assert m.search_domains({"exclude_spam": "1"})["meta"]["total"] == 2
    words = tmp_path / "spam.txt"
    words.write_text("coach\n!poker\n", encoding="utf-8")
    monkeypatch.setenv("EDT_SPAM_WORDS", str(words))
    result = CliRunner().invoke(cli, ["spam", "reflag", "--db", str(db)])
    assert result.exit_code == 0 and "2 changed, 1 flagged" in result.output
    assert [r["name"] for r in m.search_domains({"exclude_spam": "1", "sort": "name"})["data"]] == [
        "garden.com",
        "pokerclub.com",
    ]
    assert m.get_domain(1)["data"]["spam_terms"] == ["coach"]
    again = CliRunner().invoke(cli, ["spam", "reflag", "--db", str(db)])
    assert "nothing to do" in again.output
    # the file changes again: the next write re-flags every listing first, not only those it writes
    words.write_text("garden\n", encoding="utf-8")
    save_listings(conn, [listing(4, "newname.com")], origin="sync", observed_at=ts(NOW))
    assert {r["id"]: r["spam_terms"] for r in m.search_domains({"per_page": 10})["data"]} == {
        1: [],
        2: ["poker"],
        3: ["garden"],
        4: [],
    }
    assert stored_fingerprint(conn) == load_dictionary(words).fingerprint


def test_reflag_writes_only_the_rows_that_change(tmp_path):
    m = Mirror(tmp_path / "m.db", create=True)
    save_listings(
        m.connection(),
        [listing(i, f"name{i}casino.com" if i % 2 else f"name{i}.com") for i in range(1, 41)],
        origin="sync",
    )
    report = reflag(m.connection(), load_dictionary(), force=True)
    assert (report.checked, report.changed, report.flagged) == (40, 0, 20)


# -- metric history and inflation --------------------------------------------------------------


def obs(day: int, **metrics) -> tuple[str, dict]:
    return (f"2026-11-{day:02d}T07:00:00Z", metrics)


def test_a_sharp_rise_within_30_days_before_the_end_is_a_jump():
    jump = metric_jump([obs(1, trust_flow=8), obs(20, trust_flow=31)], "2026-11-25T18:00:00Z")
    assert (jump.metric, jump.before, jump.after, jump.rise) == ("trust_flow", 8, 31, 23)
    assert "trust flow rose from 8 to 31 (+23) between 2026-11-01 and 2026-11-20" in jump.reason()


def test_what_is_not_a_jump():
    end = "2026-11-25T18:00:00Z"
    assert metric_jump([obs(1, trust_flow=30), obs(20, trust_flow=38)], end) is None  # +8: below 10 points
    assert metric_jump([obs(1, trust_flow=30), obs(20, trust_flow=42)], end) is None  # +12 but x1.4
    assert metric_jump([obs(1, trust_flow=None), obs(20, trust_flow=40)], end) is None  # a first value
    assert metric_jump([obs(1, trust_flow=5), obs(27, trust_flow=40)], end) is None  # seen after the end
    early = [
        ("2026-09-01T07:00:00Z", {"trust_flow": 5}),
        ("2026-09-20T07:00:00Z", {"trust_flow": 40}),
        obs(20, trust_flow=40),
    ]  # risen two months before the end, then flat
    assert metric_jump(early, end) is None
    assert metric_jump([obs(20, trust_flow=5)], end) is None


def test_referring_domains_need_double_and_twenty_more_and_the_strongest_rise_is_named():
    end = "2026-11-25T18:00:00Z"
    assert metric_jump([obs(1, referring_domains=30), obs(20, referring_domains=55)], end) is None  # x1.8
    jump = metric_jump([obs(1, referring_domains=30, trust_flow=10), obs(20, referring_domains=95, trust_flow=21)], end)
    assert (jump.metric, jump.rise) == ("referring_domains", 65)  # 65/20 past its threshold beats 11/10


def test_the_writer_keeps_metric_history_and_flags_the_jump(tmp_path):
    m = Mirror(tmp_path / "m.db", clock=fixed_clock, create=True)
    conn = m.connection()
    end = ts(NOW + timedelta(days=3))
    base = listing(1, "inflated.com", auction_end_date=end, trust_flow=6, citation_flow=10, referring_domains=12)
    steady = listing(2, "steady.com", auction_end_date=end, trust_flow=20, citation_flow=25)
    save_listings(conn, [base, steady], origin="sync", observed_at=ts(NOW - timedelta(days=12)))
    save_listings(
        conn,
        [{**base, "trust_flow": 9}, {**steady, "trust_flow": 21}],
        origin="sync",
        observed_at=ts(NOW - timedelta(days=6)),
    )
    save_listings(
        conn,
        [{**base, "trust_flow": 28, "citation_flow": 30}, steady],
        origin="sync",
        observed_at=ts(NOW - timedelta(days=1)),
    )
    history = m.listing_history(1)
    assert history["trust_flow"].tolist() == [6, 9, 28] and history["citation_flow"].tolist() == [10, 10, 30]
    flagged = m.get_domain(1)["data"]
    assert flagged["metrics_jumped"] is True and flagged["metrics_jump"]["metric"] == "trust_flow"
    assert (flagged["metrics_jump"]["before"], flagged["metrics_jump"]["after"]) == (6, 28)
    assert m.get_domain(2)["data"]["metrics_jumped"] is False
    assert m.listing_history(2)["trust_flow"].tolist() == [20, 21, 20]  # every change, down as well as up
    save_listings(conn, [{**base, "trust_flow": 28, "citation_flow": 30}], origin="sync", observed_at=ts(NOW))
    assert m.get_domain(1)["data"]["metrics_jumped"] is True  # a re-sync keeps the flag
    assert [r["id"] for r in m.search_domains({"exclude_inflated": "1"})["data"]] == [2]


# -- archive signals ---------------------------------------------------------------------------------


def capture(timestamp: str, status: str = "200", digest: str = "D" * 32) -> Capture:
    when = datetime.strptime(timestamp, "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
    return Capture("com,x)/", timestamp, "http://x.com/", "text/html", status, digest, 100, when)


def test_a_redirect_heavy_cdx_answer():
    summary = summarize("dw.com", [parse_cdx_text(cdx("edgi_cassette_dw.com_2019-10_2020-03_page1.txt"))])
    signals = summary.archive
    assert signals["archive_redirect_share"] == 1.0  # 301 and 302 only (revisits have no status)
    assert (signals["archive_years"], signals["archive_continuity"], signals["archive_parked"]) == (1, 0, 0)
    nasa = summarize("nasa.gov", [parse_cdx_text(cdx("edgi_cassette_nasa.gov_prefix_2022-01_limit10.txt"))]).archive
    assert nasa["archive_redirect_share"] == 0.4 and nasa["archive_continuity"] == 100


def test_real_captures_over_two_years_are_continuous_and_not_parked():
    signals = summarize("archive.org", [parse_cdx_text(cdx("archive.org_limit5_showResumeKey.txt"))]).archive
    assert signals == {
        "archive_years": 2,
        "archive_longest_gap": 0,
        "archive_redirect_share": 0.0,
        "archive_parked": 0,
        "archive_parked_reason": None,
        "archive_continuity": 100,
    }


def test_a_parked_digest_run():
    parked = [
        capture(f"20{y:02d}{m:02d}01000000", digest="PARKEDPAGEDIGEST" + "X" * 16)
        for y in (18, 19)
        for m in (1, 4, 7, 10)
    ]
    parked += [capture("20180115000000", digest="REALSITE" + "Y" * 24)]
    parked += [capture(f"2020{m:02d}01000000", digest="PARKEDPAGEDIGEST" + "X" * 16) for m in (2, 3, 5)]
    signals = archive_signals(parked)
    assert signals.archive_parked == 1
    assert (
        signals.archive_parked_reason
        == "the same page (digest PARKEDPA) in 11 of 12 captures from 2018-01-01 to 2020-05-01"
    )
    assert signals.archive_continuity == round(100 * 3 / 3 * (1 - 11 / 12))
    lively = [capture(f"20{y:02d}0101000000", digest=f"PAGE{y}" + "Z" * 26) for y in range(10, 22)]
    assert archive_signals(lively).archive_parked == 0
    short = [capture(f"2020{m:02d}01000000") for m in range(1, 13)]  # one page, but for less than a year
    assert archive_signals(short).archive_parked == 0


def test_gaps_years_and_the_continuity_formula():
    years = [capture(f"{y}0601000000") for y in (2005, 2006, 2010)] + [capture("20100701000000", status="301")]
    signals = archive_signals(years)
    assert (signals.archive_years, signals.archive_longest_gap) == (3, 3)
    assert signals.archive_redirect_share == 0.25 and signals.archive_continuity == 50  # 3 content years of 6
    assert archive_signals([]).archive_continuity is None


def test_parking_nameservers():
    assert parking_service(["NS1.SEDOPARKING.COM.", "ns2.sedoparking.com"]) == "sedoparking.com"
    assert parking_service(["ns1.parkingcrew.net"]) == "parkingcrew.net"
    assert parking_service(["jack.ns.cloudflare.com"]) is None and parking_service(None) is None
    signals = archive_signals([capture("20200101000000")], nameservers=["ns1.bodis.com"])
    assert (signals.archive_parked, signals.archive_parked_reason) == (1, "nameservers at bodis.com")


def test_enrich_writes_the_signals_and_a_cdx_400_loses_nothing(tmp_path):
    m = Mirror(tmp_path / "m.db", clock=fixed_clock, create=True)
    save_listings(
        m.connection(),
        [listing(1, "dw.com"), listing(2, "refused.com", archive_continuity=77, archive_years=9)],
        origin="sync",
        observed_at=ts(NOW - timedelta(days=1)),
    )
    web = FakeWeb(
        {
            cdx_route("dw.com"): [ok(_json_from_text(cdx("edgi_cassette_dw.com_2019-10_2020-03_page1.txt")))],
            cdx_route("refused.com"): [httpx.Response(400, text="Bad Request")],
        }
    )
    report = enrich(m, rdap=False, transport=httpx.MockTransport(web), sleep=no_sleep)
    assert report.processed == 2 and report.errors == [("wayback", "refused.com", "CDX API: HTTP 400")]
    assert any("error: wayback refused.com: CDX API: HTTP 400" in line for line in report.lines())
    dw = m.get_domain(1)["data"]
    assert (dw["archive_redirect_share"], dw["archive_continuity"], dw["archive_parked"]) == (1.0, 0, False)
    kept = m.get_domain(2)["data"]
    assert (kept["archive_continuity"], kept["archive_years"], kept["name"]) == (77, 9, "refused.com")
    assert [r["id"] for r in m.search_domains({"continuity_min": "50"})["data"]] == [2]
    assert [r["id"] for r in m.search_domains({"exclude_parked": "1"})["data"]] == [1]  # 2's signal is unknown
    save_listings(m.connection(), [listing(1, "dw.com", price=10.0)], origin="sync", observed_at=ts(NOW))
    assert m.get_domain(1)["data"]["archive_redirect_share"] == 1.0  # a re-sync without signals keeps them


# -- the schema, the demo and the shells ----------------------------------------------------------


def test_v9_derives_the_signals_of_a_v8_mirror_in_place(tmp_path):
    path = tmp_path / "v8.db"
    m = Mirror(path, create=True)
    save_listings(
        m.connection(),
        [listing(1, "casinoroyale.com", source="godaddy", currency="USD", price=50.0)],
        origin="sync",
        observed_at="2024-01-15T10:00:00Z",
    )
    m.close()
    conn = sqlite3.connect(path)
    conn.execute(
        "UPDATE listings SET price_eur = NULL, effective_price_eur = NULL, spam_terms = NULL, spam_count = NULL, "
        "metrics_jumped = NULL"
    )
    conn.execute("DELETE FROM mirror_meta WHERE key IN ('spam_dictionary', 'schema_fingerprint')")
    conn.execute("PRAGMA user_version = 8")
    conn.commit()
    conn.close()
    upgraded = Mirror(path)
    assert upgraded.connection().execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION >= 9
    row = upgraded.get_domain(1)["data"]
    assert (row["price_eur"], row["spam_terms"], row["metrics_jumped"]) == (
        to_eur(50, "USD", "2024-01-15"),
        ["casino"],
        False,
    )


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Mirror:
    path = tmp_path_factory.mktemp("signals") / "demo.db"
    small_demo(path, 5, today=NOW.date())
    return Mirror(path, clock=fixed_clock)


def test_the_demo_fills_every_signal(demo):
    conn = demo.connection()
    spam, jumped, parked, archived, eur, priced = conn.execute(
        "SELECT sum(spam_count > 0), sum(metrics_jumped), sum(archive_parked), count(archive_continuity), "
        "count(effective_price_eur), sum(effective_price IS NOT NULL AND currency IS NOT NULL) FROM listings"
    ).fetchone()
    assert spam > 30 and jumped >= 5 and parked > 100 and archived > 1000 and eur == priced > 3000
    curves = conn.execute(
        "SELECT count(*) FROM (SELECT listing_id FROM listing_history WHERE trust_flow IS NOT NULL "
        "GROUP BY listing_id HAVING count(DISTINCT trust_flow) > 1)"
    ).fetchone()[0]
    assert curves > jumped  # organic drift as well as jumps
    jump = demo.search_domains({"sort": "-trust_flow", "per_page": 100, "exclude_inflated": "0"})
    assert all(r["metrics_jumped"] is False or r["metrics_jump"]["rise"] >= 10 for r in jump["data"])
    for name in NEW_FILTERS:  # every new filter narrows the demo
        value = {"price_eur_min": "500", "price_eur_max": "20", "archive_gap_max": "0", "continuity_min": "80"}.get(
            name, "1"
        )
        assert 0 < demo.search_domains({name: value})["meta"]["total"] < demo.search_domains({})["meta"]["total"], name


def test_every_new_filter_is_in_openapi_mcp_and_the_sidebar(demo):
    from toolkit.serve.mcp_server import build_server
    from toolkit.serve.openapi import build_openapi

    doc = build_openapi()
    documented = {p["name"] for p in doc["paths"]["/api/domains"]["get"]["parameters"] if "name" in p}
    assert set(NEW_FILTERS) <= documented
    assert {"price_eur", "-effective_price_eur"} <= set(DOMAIN_PARAMS["sort"].choices)
    from test_mcp import call, ok as mcp_ok

    filters = mcp_ok(call(build_server(demo, "enterprise"), "list_filters"))["filters"]
    named = {f["name"]: f for f in filters}
    assert set(NEW_FILTERS) <= set(named) and named["continuity_min"]["maximum"] == 100
    assert {p for p, param in DOMAIN_PARAMS.items() if param.clause is not None} == set(named)


def test_the_domain_page_shows_flags_with_reasons_and_the_metric_chart(demo, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from toolkit.ui.pages.domain_signals import signal_flags

    inflated = demo.search_domains({"per_page": 100, "sort": "-trust_flow"})["data"]
    row = (
        demo.connection()
        .execute("SELECT id FROM listings WHERE metrics_jumped = 1 AND spam_count = 0 LIMIT 1")
        .fetchone()
    )
    record = demo.get_domain(row[0])["data"]
    flags = dict(signal_flags(record))
    assert flags["Inflated metrics"] == record["metrics_jump"]["reason"] and inflated
    monkeypatch.setenv("EDT_DB", str(demo.path))
    at = AppTest.from_file(
        str(Path(__file__).resolve().parents[1] / "toolkit" / "ui" / "script" / "page_script.py"), default_timeout=60
    )
    at.query_params["view"] = "detail"
    at.query_params["id"] = str(record["id"])
    at.run()
    assert not at.exception
    assert any(record["metrics_jump"]["reason"] in w.value for w in at.warning)
    assert {m.label: m.value for m in at.metric}["In EUR"] == f"{record['effective_price_eur']:,.0f} EUR"
    charts = [json.loads(c.proto.spec) for c in at.get("echarts_chart")]
    metric_chart = next(c for c in charts if c["title"]["text"] == "Metric history")
    tf = [value for _, value in next(s for s in metric_chart["series"] if s["name"] == "Trust Flow")["data"]]
    assert tf == demo.listing_history(record["id"])["trust_flow"].dropna().tolist() and tf[-1] > tf[0]


def test_the_metric_chart_draws_each_metric_on_its_axis_and_nothing_from_nothing():
    import pandas as pd

    from toolkit.analysis.charts import metric_history

    history = pd.DataFrame(
        {
            "observed_at": ["2026-11-01T07:00:00Z", "2026-11-20T07:00:00Z"],
            "trust_flow": [8, 31],
            "citation_flow": [20, 22],
            "domain_authority": [None, None],
            "referring_domains": [30, 95],
            "backlinks_count": [400, 900],
        }
    )
    fig = metric_history(history, jump_at="2026-11-20T07:00:00Z").to_dict()
    axes = {t["name"]: (t["yaxis"], list(t["y"])) for t in fig["data"]}
    assert axes == {
        "Trust Flow": ("y", [8, 31]),
        "Citation Flow": ("y", [20, 22]),
        "Referring domains": ("y2", [30, 95]),
        "Backlinks": ("y2", [400, 900]),
    }  # no DA: never observed
    assert str(fig["layout"]["shapes"][0]["x0"]).startswith("2026-11-20")
    empty = metric_history(history.iloc[0:0]).to_dict()
    assert empty["data"] == [] and empty["layout"]["title"]["text"] == "Metric history"


def test_edt_spam_show_and_check(tmp_path):
    db = tmp_path / "m.db"
    save_listings(
        Mirror(db, create=True).connection(),
        [listing(1, "bestcasinoshop.com"), listing(2, "garden.com")],
        origin="sync",
    )
    shown = CliRunner().invoke(cli, ["spam", "show", "--db", str(db)])
    assert shown.exit_code == 0
    assert "built-in" in shown.output and "1 of 2 listings flagged; flags follow this dictionary" in shown.output
    assert "most matched: casino 1" in shown.output
    checked = CliRunner().invoke(cli, ["spam", "check", "bestcasinoshop.com", "therapist.de", "--db", str(db)])
    assert checked.output.splitlines() == [
        "bestcasinoshop.com: words best casino shop; spam: casino (in the mirror: casino)",
        "therapist.de: words therapist; no spam term",
    ]


def test_the_oracle_tests_meet_every_new_filter_with_rows_on_both_sides(synthetic_db):
    """The synthetic mirror the oracle and engine tests run on holds rows each new filter
    keeps and rows it drops."""
    m = Mirror(synthetic_db, clock=fixed_clock, engine="sqlite")
    everything = m.search_domains({"include_closed": "1"})["meta"]["total"]
    for name, value in (
        ("exclude_spam", "1"),
        ("exclude_inflated", "1"),
        ("exclude_parked", "1"),
        ("archive_gap_max", "1"),
        ("continuity_min", "50"),
        ("price_eur_max", "300"),
        ("price_eur_min", "300"),
    ):
        kept = m.search_domains({"include_closed": "1", name: value})["meta"]["total"]
        assert 0 < kept < everything, name
    jumped = m.connection().execute("SELECT count(*) FROM listings WHERE metrics_jumped = 1").fetchone()[0]
    assert jumped >= 5
