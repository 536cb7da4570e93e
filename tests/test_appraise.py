"""The price range (toolkit/analysis/appraise.py) on the demo's 30-day time-lapse: its
coverage measured on the held-out last week, and its promises on any listing."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit import Mirror
from toolkit.analysis.appraise import MIN_RESULTS, _features, appraise, backtest, train
from toolkit.store.schema import connect


@pytest.fixture(scope="module")
def lapse(tmp_path_factory):
    """The demo's 30 days of scheduled syncs (small scale): the auctions it saw end."""
    from toolkit.demo import load_demo

    db = tmp_path_factory.mktemp("lapse") / "mirror.db"
    conn = connect(str(db))
    load_demo(conn, scale="small", days=30)
    conn.close()
    return db


@pytest.fixture(scope="module")
def model(lapse):
    with Mirror(lapse) as mirror:
        return train(mirror)


def test_the_80_percent_range_holds_four_prices_in_five_on_the_held_out_week(lapse):
    with Mirror(lapse) as mirror:
        report = backtest(mirror)
        last = mirror.connection().execute("SELECT max(ended_at) FROM auction_results WHERE sold = 1").fetchone()[0]
    assert report.until < last[:10] and report.scored > 500 and report.trained_on > 2_000
    assert 0.75 <= report.coverage <= 0.85, report.summary()
    assert report.median_abs_eur > 0 and 0 < report.median_abs_pct < 1
    assert sum(b["auctions"] for b in report.by_band) == report.scored
    assert report.by_tld[0]["tld"] == "com" and report.by_tld[0]["auctions"] >= report.by_tld[-1]["auctions"]
    estibot = [o for o in report.others if o["appraisal"].startswith("Estibot")]
    assert estibot and estibot[0]["auctions"] > 0  # beside ours, on the auctions it appraised


names = st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True)
metric = st.one_of(st.none(), st.integers(0, 100))
rows = st.fixed_dictionaries({
    "name": st.builds(lambda n, t: f"{n}.{t}", names, st.sampled_from(["com", "net", "fr", "de", "co.uk", "shop", "zz"])),
    "tld": st.none(),
    "source": st.sampled_from(["dynadot", "godaddy", "namecheap", "sedo", "nosuchplatform"]),
    "trust_flow": metric, "citation_flow": metric,
    "referring_domains": st.one_of(st.none(), st.integers(0, 10_000)),
    "backlinks_count": st.one_of(st.none(), st.integers(0, 10**6)),
    "wayback_snapshots": st.one_of(st.none(), st.integers(0, 5_000)),
    "wayback_first_date": st.one_of(st.none(), st.dates().map(lambda d: d.isoformat())),
    "estibot_eur": st.one_of(st.none(), st.floats(0, 1e5)),
    "first_price_eur": st.one_of(st.none(), st.floats(0, 1e5)),
})  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(rows, min_size=1, max_size=20))
def test_a_range_is_ordered_and_a_listing_it_cannot_judge_gets_the_reason(model, records):
    frame = pd.DataFrame(records)
    features = _features(frame, pd.Timestamp("2026-11-25").date())
    values, reasons = model.predict(features)
    for (low, mid, high), reason, family in zip(values, reasons, features["family"]):
        assert low <= mid <= high and low >= 0 and all(math.isfinite(v) for v in (low, mid, high))
        known = family in model.categories["family"]
        assert (reason is None) == known
        if not known:
            assert family in reason


def test_every_live_listing_gets_a_range_or_its_reason(lapse, tmp_path):
    import shutil

    copy = tmp_path / "copy.db"
    shutil.copy(lapse, copy)
    with Mirror(copy) as mirror:
        summary = appraise(mirror)
        stored = mirror.connection().execute(
            "SELECT source, value_low, value_high, value_reason FROM listings WHERE valued_at = ?", [summary["valued_at"]]
        ).fetchall()
        live = mirror.search_domains({"per_page": "1"})["meta"]["total"]
        regfree = mirror.search_domains({"source": "regfree", "per_page": "1"})["meta"]["total"]
    assert summary["listings"] == len(stored) == live + regfree
    assert summary["backtest"]["auctions"] > 500 and 0.75 <= summary["backtest"]["coverage"] <= 0.85
    for source, low, high, reason in stored:
        assert (low is None) == (reason is not None)
        if source == "regfree":
            assert reason == "a deleted ccTLD name: not for sale"
        elif low is not None:
            assert low <= high
    assert summary["valued"] > 0.9 * live


def test_too_few_results_give_no_range_and_say_why(tmp_path):
    from conftest import small_demo

    db = small_demo(tmp_path / "m.db", 5)  # one load, no auction seen to end
    with Mirror(db) as mirror:
        assert train(mirror) is None
        summary = appraise(mirror)
        reasons = {r for (r,) in mirror.connection().execute("SELECT DISTINCT value_reason FROM listings WHERE "
                                                             "closed_at IS NULL AND live_until > ?", [summary["valued_at"]])}
        sold = mirror.results_df(sold=True)["final_price_eur"].notna().sum()
    assert summary["valued"] == 0 and summary["backtest"] is None and sold < MIN_RESULTS
    assert reasons == {f"too few sold results to learn from ({sold:,} of the {MIN_RESULTS:,} needed)"}


def test_edt_appraise_and_its_backtest(lapse, tmp_path):
    import shutil

    from click.testing import CliRunner

    from toolkit.cli import cli

    copy = tmp_path / "copy.db"
    shutil.copy(lapse, copy)
    measured = CliRunner().invoke(cli, ["appraise", "--db", str(copy), "--backtest", "--json"])
    assert measured.exit_code == 0, measured.output
    report = json.loads(measured.output)
    assert 0.75 <= report["coverage"] <= 0.85 and report["by_band"] and report["by_tld"]
    shown = CliRunner().invoke(cli, ["appraise", "--db", str(copy)])
    assert shown.exit_code == 0 and shown.output.startswith("Price ranges for ")
    assert "80% range, right " in shown.output and "no range for " in shown.output
    assert CliRunner().invoke(cli, ["appraise", "--db", str(copy), "--until", "2026-11-01"]).exit_code == 2
    bad = CliRunner().invoke(cli, ["appraise", "--db", str(copy), "--backtest", "--until", "soon"])
    assert bad.exit_code == 2 and "--until: 'soon' is not a date" in bad.output


def test_the_ranges_are_retrained_after_a_sync_once_enough_new_results_arrived(lapse, tmp_path):
    import shutil

    from toolkit.analysis.appraise import RETRAIN_AFTER, appraise_if_due, value_model

    copy = tmp_path / "copy.db"
    shutil.copy(lapse, copy)
    said: list[str] = []
    with Mirror(copy) as mirror:
        first = appraise_if_due(mirror, said.append)  # never trained: due
        assert first is not None and said[0].startswith(f"appraise: ranges for {first['valued']:,} listings")
        assert appraise_if_due(mirror, said.append) is None and len(said) == 1  # nothing new since
        sold = first["trained_on"]
        conn = mirror.connection()
        stored = value_model(mirror)
        for trained_on, due in ((int(sold / (1 + RETRAIN_AFTER)) + 1, False), (int(sold / (1 + RETRAIN_AFTER)) - 1, True)):
            with conn:
                conn.execute("UPDATE mirror_meta SET value = ? WHERE key = 'value_model'",
                             [json.dumps({**stored, "trained_on": trained_on})])  # fmt: skip
            assert (appraise_if_due(mirror, said.append) is not None) is due


def test_a_listing_synced_between_two_trainings_is_valued_with_the_kept_model(lapse, tmp_path):
    import shutil

    from toolkit.analysis.appraise import appraise_if_due, model_path, value_model
    from toolkit.store.writer import save_listings

    copy = tmp_path / "copy.db"
    shutil.copy(lapse, copy)
    said: list[str] = []
    with Mirror(copy) as mirror:
        trained_on = appraise(mirror, measure=False)["trained_on"]
        assert model_path(mirror).is_file() and value_model(mirror)["trained_on"] == trained_on
        conn = mirror.connection()
        template = dict(zip([d[0] for d in conn.execute("SELECT * FROM listings LIMIT 0").description],
                            conn.execute("SELECT * FROM listings WHERE value_mid IS NOT NULL AND source != 'regfree' "
                                         "LIMIT 1").fetchone()))  # fmt: skip
        fresh = {**template, "id": 10**9, "name": "freshsynced.com", "historical_tech": None, "use_cases": None}
        with conn:
            save_listings(conn, [fresh], origin="sync", observed_at=template["last_seen_at"])
        assert conn.execute("SELECT valued_at FROM listings WHERE id = ?", [10**9]).fetchone()[0] is None
        assert appraise_if_due(mirror, said.append) is None  # nothing new sold: no retraining
        low, mid, high = conn.execute("SELECT value_low, value_mid, value_high FROM listings WHERE id = ?",
                                      [10**9]).fetchone()  # fmt: skip
        kept = conn.execute("SELECT value_mid FROM listings WHERE id = ?", [template["id"]]).fetchone()[0]
    assert low <= mid <= high and kept == template["value_mid"]  # the others keep theirs
    assert said == [f"appraise: ranges for 1 new listing, with the model learnt from {trained_on:,} sold auctions"]
