"""The price range (toolkit/analysis/appraise.py) on the demo's 30-day time-lapse: its
coverage measured on the held-out last week, and its promises on any listing."""

from __future__ import annotations

import json
import math
import shutil
from datetime import date
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit import Mirror
from toolkit.analysis.appraise import MIN_RESULTS, Backtest, _features, appraise, backtest, train
from toolkit.store.schema import connect


TODAY = date(2026, 11, 27)  # the time-lapse's last day: the same mirror whatever day the tests run
NOW = "2026-11-27T09:00:00Z"


@pytest.fixture(scope="module", autouse=True)
def on_the_lapse_s_last_day():
    """Every Mirror of this module reads as of the time-lapse's last day (`EDT_NOW`)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("EDT_NOW", NOW)
        yield


@pytest.fixture(scope="module")
def lapse(tmp_path_factory, on_the_lapse_s_last_day):
    """The demo's 30 days of scheduled syncs (small scale, seed 42): the auctions it saw end."""
    from toolkit.demo import load_demo

    db = tmp_path_factory.mktemp("lapse") / "mirror.db"
    conn = connect(str(db))
    load_demo(conn, scale="small", days=30, today=TODAY)
    conn.close()
    return db


@pytest.fixture(scope="module")
def appraised_by_edt(lapse, tmp_path_factory) -> tuple[Path, dict, str, Backtest]:
    """The time-lapse appraised once by `edt appraise` (with its backtest): the mirror, the
    summary it kept (`value_model`), what it printed and the backtest it made."""
    from click.testing import CliRunner

    import toolkit.analysis.appraise as appraisal
    from toolkit.analysis.range_notes import value_model
    from toolkit.cli import cli

    made = []

    def kept(*args, **kwargs):
        made.append(backtest(*args, **kwargs))
        return made[-1]

    db = tmp_path_factory.mktemp("appraised") / "mirror.db"
    shutil.copy(lapse, db)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(appraisal, "backtest", kept)
        shown = CliRunner().invoke(cli, ["appraise", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert len(made) == 1
    with Mirror(db) as mirror:
        return db, value_model(mirror), shown.output, made[0]


@pytest.fixture(scope="module")
def appraised(appraised_by_edt) -> tuple[Path, dict]:
    """The appraised time-lapse and the summary of its appraisal."""
    return appraised_by_edt[:2]


def appraised_copy(appraised: tuple[Path, dict], folder: Path) -> Path:
    """A copy of the appraised mirror with its price model beside it."""
    db = folder / "copy.db"
    for suffix in ("", ".value-model"):
        shutil.copyfile(f"{appraised[0]}{suffix}", f"{db}{suffix}")
    return db


@pytest.fixture(scope="module")
def model(appraised):
    """The model `appraise` learnt from the time-lapse and kept beside it (what `train` gives)."""
    from toolkit.analysis.appraise import _load_model

    with Mirror(appraised[0]) as mirror:
        return _load_model(mirror)


@pytest.fixture(scope="module")
def lapse_backtest(appraised_by_edt):
    """The backtest of the time-lapse's last week: the one `edt appraise` made before its
    training (the library's `backtest`, on a copy of the same mirror; kept, not made again)."""
    assert appraised_by_edt[3].scored
    return appraised_by_edt[3]


def test_the_80_percent_range_holds_four_prices_in_five_on_the_held_out_week(lapse, lapse_backtest):
    report = lapse_backtest
    with Mirror(lapse) as mirror:
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
rows = st.fixed_dictionaries(
    {
        "name": st.builds(
            lambda n, t: f"{n}.{t}", names, st.sampled_from(["com", "net", "fr", "de", "co.uk", "shop", "zz"])
        ),
        "tld": st.none(),
        "source": st.sampled_from(["dynadot", "godaddy", "namecheap", "sedo", "nosuchplatform"]),
        "trust_flow": metric,
        "citation_flow": metric,
        "referring_domains": st.one_of(st.none(), st.integers(0, 10_000)),
        "backlinks_count": st.one_of(st.none(), st.integers(0, 10**6)),
        "wayback_snapshots": st.one_of(st.none(), st.integers(0, 5_000)),
        "wayback_first_date": st.one_of(st.none(), st.dates().map(lambda d: d.isoformat())),
        "estibot_eur": st.one_of(st.none(), st.floats(0, 1e5)),
        "first_price_eur": st.one_of(st.none(), st.floats(0, 1e5)),
    }
)


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


def test_every_live_listing_gets_a_range_or_its_reason(appraised, tmp_path):
    copy, summary = appraised_copy(appraised, tmp_path), appraised[1]
    with Mirror(copy) as mirror:
        stored = (
            mirror.connection()
            .execute(
                "SELECT source, value_low, value_high, value_reason FROM listings WHERE valued_at = ?",
                [summary["valued_at"]],
            )
            .fetchall()
        )
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


def test_a_second_appraisal_leaves_the_names_not_for_sale_as_they_were(lapse, model, tmp_path):
    """A deleted ccTLD name is not for sale whatever the model: marked once, not rewritten by
    each appraisal (a quarter of a full mirror); the reasons still count it. (Both appraisals
    write with the module's model: which model does not matter here, and a training is 15 s.)"""
    import shutil
    from datetime import datetime, timezone

    from toolkit.analysis.appraise import NOT_FOR_SALE, unvalued_reasons

    copy = tmp_path / "copy.db"
    shutil.copy(lapse, copy)
    first, second = (datetime(2026, 11, 27, hour, tzinfo=timezone.utc) for hour in (9, 10))
    stamps = {}
    for moment in (first, second):
        with Mirror(copy, clock=lambda moment=moment: moment) as mirror:
            stamps[moment] = appraise(mirror, model=model, measure=False)["valued_at"]
    with Mirror(copy, clock=lambda: second) as mirror:
        stored = mirror.connection().execute(
            "SELECT source = 'regfree', valued_at, count(*) FROM listings WHERE closed_at IS NULL AND live_until > ? "
            "GROUP BY 1, 2",
            [stamps[second]],
        )
        by_kind = {(bool(regfree), at): n for regfree, at, n in stored}
        reasons = dict(unvalued_reasons(mirror))
    regfree = by_kind[(True, stamps[first])]
    assert regfree > 100 and (True, stamps[second]) not in by_kind
    assert by_kind[(False, stamps[second])] > 1000 and (False, stamps[first]) not in by_kind
    assert reasons[NOT_FOR_SALE] == regfree


def test_too_few_results_give_no_range_and_say_why(tmp_path):
    from conftest import small_demo

    db = small_demo(tmp_path / "m.db", 5)  # one load, no auction seen to end
    with Mirror(db) as mirror:
        assert train(mirror) is None
        summary = appraise(mirror)
        reasons = {
            r
            for (r,) in mirror.connection().execute(
                "SELECT DISTINCT value_reason FROM listings WHERE closed_at IS NULL AND live_until > ?",
                [summary["valued_at"]],
            )
        }
        sold = mirror.results_df(sold=True)["final_price_eur"].notna().sum()
    assert summary["valued"] == 0 and summary["backtest"] is None and sold < MIN_RESULTS
    assert reasons == {f"too few sales to learn from ({sold:,} of the {MIN_RESULTS:,} needed)"}


def test_edt_appraise_and_its_backtest(lapse, appraised_by_edt, lapse_backtest, tmp_path):
    """`edt appraise` (the module's appraisal) and `edt appraise --backtest` on the time-lapse."""
    import shutil

    from click.testing import CliRunner

    from toolkit.cli import cli

    copy = tmp_path / "copy.db"
    shutil.copy(lapse, copy)
    measured = CliRunner().invoke(cli, ["appraise", "--db", str(copy), "--backtest"])  # (its --json: the shapes' test)
    assert measured.exit_code == 0, measured.output
    said = measured.output.splitlines()
    assert said[0] == lapse_backtest.summary() and 0.75 <= lapse_backtest.coverage <= 0.85  # the library's backtest
    assert {"By final price:", "By TLD:", "By origin:", "Beside it, on the same sales:"} <= set(said)
    for peer in ["this model", "one range for every name", "venue x TLD x length lookup"]:
        row = next(line for line in said if line.strip().startswith(peer))
        figures = (
            lapse_backtest.to_dict()
            if peer == "this model"
            else next(p for p in lapse_backtest.peers if p["peer"] == peer)
        )
        assert f"in range {figures['coverage']:.0%}  median error {figures['median_abs_eur']:,.0f} EUR" in row, row
    shown = appraised_by_edt[2]
    assert shown.startswith("Price ranges for ")
    assert "80% range, right " in shown and "no range for " in shown
    assert CliRunner().invoke(cli, ["appraise", "--db", str(copy), "--until", "2026-11-01"]).exit_code == 2
    bad = CliRunner().invoke(cli, ["appraise", "--db", str(copy), "--backtest", "--until", "soon"])
    assert bad.exit_code == 2 and "--until: 'soon' is not a date" in bad.output


def test_the_ranges_are_retrained_after_a_sync_once_enough_new_results_arrived(lapse, tmp_path, monkeypatch):
    import shutil

    import toolkit.analysis.appraise as appraisal
    from toolkit.analysis.appraise import RETRAIN_AFTER, appraise_if_due
    from toolkit.analysis.range_notes import value_model

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
        trainings: list[Mirror] = []  # the training itself was run above: here, only whether it is due
        monkeypatch.setattr(appraisal, "appraise", lambda m: trainings.append(m) or {**first, "trained_on": sold})
        for trained_on, due in (
            (int(sold / (1 + RETRAIN_AFTER)) + 1, False),
            (int(sold / (1 + RETRAIN_AFTER)) - 1, True),
        ):
            with conn:
                conn.execute(
                    "UPDATE mirror_meta SET value = ? WHERE key = 'value_model'",
                    [json.dumps({**stored, "trained_on": trained_on})],
                )
            assert (appraise_if_due(mirror, said.append) is not None) is due
            assert len(trainings) == int(due)


def test_a_listing_synced_between_two_trainings_is_valued_with_the_kept_model(appraised, tmp_path):
    from toolkit.analysis.appraise import appraise_if_due, model_path
    from toolkit.analysis.range_notes import value_model
    from toolkit.store.writer import save_listings

    copy = appraised_copy(appraised, tmp_path)
    said: list[str] = []
    with Mirror(copy) as mirror:
        trained_on = appraised[1]["trained_on"]
        assert model_path(mirror).is_file() and value_model(mirror)["trained_on"] == trained_on
        conn = mirror.connection()
        template = dict(
            zip(
                [d[0] for d in conn.execute("SELECT * FROM listings LIMIT 0").description],
                conn.execute(
                    "SELECT * FROM listings WHERE value_mid IS NOT NULL AND source != 'regfree' LIMIT 1"
                ).fetchone(),
            )
        )
        fresh = {**template, "id": 10**9, "name": "freshsynced.com", "historical_tech": None, "use_cases": None}
        with conn:
            save_listings(conn, [fresh], origin="sync", observed_at=template["last_seen_at"])
        assert conn.execute("SELECT valued_at FROM listings WHERE id = ?", [10**9]).fetchone()[0] is None
        assert appraise_if_due(mirror, said.append) is None  # nothing new sold: no retraining
        low, mid, high = conn.execute(
            "SELECT value_low, value_mid, value_high FROM listings WHERE id = ?", [10**9]
        ).fetchone()
        kept = conn.execute("SELECT value_mid FROM listings WHERE id = ?", [template["id"]]).fetchone()[0]
    assert low <= mid <= high and kept == template["value_mid"]  # the others keep theirs
    assert said == [f"appraise: ranges for 1 new listing, with the model learnt from {trained_on:,} sales"]


# -- every shape of mirror a user has -----------------------------------------------------------

WORDS = ["kettle", "harbor", "shop", "cloud", "pixel", "river", "stone", "market", "garden", "solar", "nova", "tiger"]
FEED_FIELDS = ("name", "source", "type", "currency", "price", "max_bid", "bids_count", "auction_end_date")


def closed_auctions(conn, count: int, *, sources: tuple[str, ...], metrics: bool, seed: int = 3) -> None:
    """`count` auctions ending every 6 hours from 2026-07-01, each seen twice (a first
    sighting at its floor price, a last one an hour before its end with the final bid), with
    only the feed's columns, or the API's metrics too; then their results derived."""
    import random
    from datetime import datetime, timedelta, timezone

    from toolkit.store.results import derive_results
    from toolkit.store.writer import save_listings

    rnd = random.Random(seed)
    start = datetime(2026, 7, 1, tzinfo=timezone.utc)
    for i in range(count):
        label = rnd.choice(WORDS) + rnd.choice(WORDS + ["", "", "hq", "24"])
        end = start + timedelta(hours=6 * i)
        price = round(10 * (20 / len(label)) ** 1.5 * rnd.lognormvariate(0, 0.5) * (3 if "24" not in label else 1), 2)
        record = {
            "id": 10_000 + i,
            "name": f"{label}{i}.{rnd.choice(['com', 'net', 'io'])}",
            "source": rnd.choice(sources),
            "type": "auction",
            "currency": "USD",
            "price": 5.0,
            "max_bid": None,
            "bids_count": 0,
            "auction_end_date": end.strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        if metrics:
            record.update(
                trust_flow=rnd.randint(0, 40),
                citation_flow=rnd.randint(0, 40),
                referring_domains=rnd.randint(0, 500),
                backlinks_count=rnd.randint(0, 9000),
                wayback_snapshots=rnd.randint(0, 300),
                wayback_first_date="2011-03-04",
                estibot_appraisal=rnd.randint(50, 5000),
            )
        first = (end - timedelta(days=3)).strftime("%Y-%m-%dT%H:%M:%SZ")
        last = (end - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
        save_listings(conn, [record], origin="sync", observed_at=first)
        save_listings(
            conn, [{**record, "max_bid": price, "bids_count": rnd.randint(1, 30)}], origin="sync", observed_at=last
        )
    with conn:
        derive_results(conn, now="2026-11-20T00:00:00Z")


def sales_file(path, count: int, *, seed: int = 5, days: int = 1200) -> None:
    """A NameBio-style export (Domain, Price, Date, Venue) of `count` sales over `days` days from 2017."""
    import random
    from datetime import date, timedelta

    rnd = random.Random(seed)
    lines = ["Domain,Price,Date,Venue"]
    for i in range(count):
        label = rnd.choice(WORDS) + rnd.choice(WORDS + ["", "x", "24"])
        day = date(2017, 1, 1) + timedelta(days=i * days // count)
        price = int(100 + 4000 / len(label) * rnd.lognormvariate(0, 0.6))
        lines.append(
            f"{label}{i}.{rnd.choice(['com', 'net', 'io'])},{price},{day},{rnd.choice(['GoDaddy', 'NameJet', 'Sedo'])}"
        )
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("shape", ["feeds", "api", "reported"])
def test_every_mirror_shape_trains_and_names_the_features_it_left_out(shape, tmp_path):
    from click.testing import CliRunner

    from toolkit.cli import cli

    db = tmp_path / "m.db"
    with Mirror(db, create=True) as mirror:
        conn = mirror.connection()
        if shape == "reported":
            sales_file(tmp_path / "sales.csv", 600)
            assert (
                CliRunner().invoke(cli, ["ingest", "sales", str(tmp_path / "sales.csv"), "--db", str(db)]).exit_code
                == 0
            )
        else:
            closed_auctions(
                conn,
                400,
                sources=("godaddy", "namecheap") if shape == "feeds" else ("dynadot", "sedo"),
                metrics=shape == "api",
            )
    until = "2019-06-01" if shape == "reported" else "2026-09-20"
    # (the backtest's printout is read in test_edt_appraise_and_its_backtest; here its figures)
    run = CliRunner().invoke(cli, ["appraise", "--db", str(db), "--backtest", "--until", until, "--json"])
    assert run.exit_code == 0, run.output
    measured = json.loads(run.output)
    appraised = CliRunner().invoke(cli, ["appraise", "--db", str(db)])
    assert appraised.exit_code == 0 and appraised.output.startswith("Price ranges for "), appraised.output
    left_out = measured["left_out"]
    if shape == "api":
        assert "trust_flow" not in left_out and "estibot_eur" not in left_out
        assert measured["others"] and measured["others"][0]["appraisal"].startswith("Estibot")
    else:  # neither the free feeds nor a sales file carry link metrics: left out, and said so
        assert left_out["trust_flow"] == left_out["wayback_snapshots"] == "missing on every sale learnt from"
        assert "left out trust_flow" in appraised.output
    assert [o["origin"] for o in measured["by_origin"]] == (
        ["reported (sales.csv)"] if shape == "reported" else ["auctions the mirror saw end"]
    )
    assert {p["peer"] for p in measured["peers"]} == {"one range for every name", "venue x TLD x length lookup"}
    assert all(p["sales"] == measured["scored"] and 0 <= p["coverage"] <= 1 for p in measured["peers"])


def test_a_backtest_of_a_few_days_of_sales_learns_from_the_first_four_fifths(tmp_path):
    """A week before the last sale leaves nothing to learn from in a file of four days: the
    backtest splits at the latest fifth instead; too few sales say how many the model needs,
    and a mirror without a sale says so."""
    from click.testing import CliRunner

    from toolkit.cli import cli

    empty = tmp_path / "empty.db"
    Mirror(empty, create=True).close()
    run = CliRunner().invoke(cli, ["appraise", "--db", str(empty), "--backtest"])
    assert run.exit_code == 0 and run.output.startswith("no sale to learn from yet: "), run.output
    for count, learns in ((400, True), (150, False)):
        db, sales = tmp_path / f"{count}.db", tmp_path / f"{count}.csv"
        sales_file(sales, count, days=4)
        assert CliRunner().invoke(cli, ["ingest", "sales", str(sales), "--db", str(db)]).exit_code == 0
        run = CliRunner().invoke(cli, ["appraise", "--db", str(db), "--backtest"])
        assert run.exit_code == 0, run.output
        measured = json.loads(CliRunner().invoke(cli, ["appraise", "--db", str(db), "--backtest", "--json"]).output)
        if learns:
            assert measured["until"] == "2017-01-04"  # the day of the 320th of 400 sales, 100 a day
            assert (measured["trained_on"], measured["scored"]) == (300, 100)
            assert run.output.startswith("80% range right ") and "venue x TLD x length lookup" in run.output
        else:
            assert measured["trained_on"] == 0 and measured["scored"] == 0
            assert run.output.startswith(
                "0 sales before 2016-12-28 to learn from; the model needs 200: pass a later day as --until"
            ), run.output


def test_the_model_leaves_out_a_feature_the_same_on_every_sale(tmp_path):
    db = tmp_path / "m.db"
    with Mirror(db, create=True) as mirror:
        closed_auctions(mirror.connection(), 300, sources=("godaddy",), metrics=False)
        model = train(mirror)
    assert model.left_out["source"] == "the same on every sale learnt from"
    assert "source" not in model.features and "length" in model.features


# -- the live estimate ------------------------------------------------------------------------


def test_the_live_estimate_holds_its_band_a_day_before_the_end_and_halves_the_error(lapse_backtest):
    """On the demo's 30 days: the auctions of the held-out week seen with 5 bids or more 24
    hours before their end, read off the module's backtest. (Seed 42 to 27 Nov 2026 here, 80%;
    other seeds and days, from 77% to 86%: docs/benchmarks.md.)"""
    live = lapse_backtest.live
    assert live["auctions"] > 100
    assert 0.78 <= live["coverage"] <= 0.85, live
    assert live["median_abs_eur"] <= live["range_median_abs_eur"] / 2, live


bidding = st.fixed_dictionaries(
    {
        "bid_eur": st.floats(0.01, 1e6),
        "bids": st.integers(1, 500),
        "hours_left": st.floats(0, 24 * 30),
        "hours_listed": st.floats(0, 24 * 60),
        "source": st.sampled_from(["dynadot", "godaddy", "namecheap", "other"]),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(bidding, min_size=1, max_size=20))
def test_the_live_estimate_is_ordered_finite_and_never_below_the_bid(model, rows):
    from toolkit.analysis.live import predict

    frame = pd.DataFrame(rows)
    values = predict(model.live, frame)
    for (low, mid, high), bid in zip(values, frame["bid_eur"]):
        assert all(math.isfinite(v) for v in (low, mid, high))
        assert round(bid, 2) <= low <= mid <= high


def test_auctions_with_bids_get_a_live_estimate_and_the_deal_reads_it(appraised, tmp_path):
    from toolkit.store.writer import save_listings

    copy, summary = appraised_copy(appraised, tmp_path), appraised[1]
    with Mirror(copy) as mirror:
        conn = mirror.connection()
        rows = conn.execute(
            "SELECT id, type, bids_count, effective_price_eur, value_mid, live_low, live_mid, live_high "
            "FROM listings WHERE closed_at IS NULL AND live_until > ? AND effective_price_eur > 0",
            [summary["valued_at"]],
        ).fetchall()
        with_bids = [r for r in rows if r[1] == "auction" and r[2]]
        assert summary["live"] == len([r for r in with_bids if r[6] is not None]) > 50
        for _, kind, bids, eur, value_mid, low, mid, high in rows:
            if kind == "auction" and bids and mid is not None:
                assert round(eur, 2) <= low <= mid <= high  # never below the bid shown
            else:
                assert low is mid is high is None  # a closeout's deal stays its value against its price
        deals = mirror.search_domains({"sort": "-deal", "per_page": "100", "deal_min": "0"})["data"]
        for record in deals:
            mid = record["live_mid"] if record["live_mid"] is not None else record["value_mid"]
            assert record["live_mid"] is None or (record["type"] == "auction" and record["bids_count"])
            assert mid / record["effective_price_eur"] >= 0
        ratios = [
            (r["live_mid"] if r["live_mid"] is not None else r["value_mid"]) / r["effective_price_eur"] for r in deals
        ]
        assert ratios == sorted(ratios, reverse=True)
        # a sync that sees a new bid drops the estimate read from the old one, and the next
        # valuation (the kept model) estimates it again above the new bid
        listing_id, _, bids, eur, *_ = with_bids[0]
        template = dict(
            zip(
                [d[0] for d in conn.execute("SELECT * FROM listings LIMIT 0").description],
                conn.execute("SELECT * FROM listings WHERE id = ?", [listing_id]).fetchone(),
            )
        )
        raised = {
            **template,
            "max_bid": template["max_bid"] * 3,
            "bids_count": bids + 2,
            "historical_tech": None,
            "use_cases": None,
        }
        with conn:
            save_listings(conn, [raised], origin="sync", observed_at=template["last_seen_at"])
        assert conn.execute("SELECT live_mid FROM listings WHERE id = ?", [listing_id]).fetchone()[0] is None
        from toolkit.analysis.appraise import value_new

        assert value_new(mirror) >= 1
        low, now_eur = conn.execute(
            "SELECT live_low, effective_price_eur FROM listings WHERE id = ?", [listing_id]
        ).fetchone()
    assert low >= round(now_eur, 2) > round(eur, 2)


def test_a_model_kept_by_an_older_toolkit_waits_for_the_next_training(model, tmp_path):
    import copy
    import pickle

    from toolkit.analysis.appraise import _load_model, model_path, value_new

    with Mirror(tmp_path / "m.db", create=True) as mirror:
        model_path(mirror).write_bytes(pickle.dumps(model))
        assert _load_model(mirror) is not None
        older = copy.copy(model)
        for name in ("features", "words", "live"):  # what a model of schema v16 did not have
            older.__dict__.pop(name)
        model_path(mirror).write_bytes(pickle.dumps(older))
        assert _load_model(mirror) is None and value_new(mirror) == 0


def test_packing_and_archiving_change_nothing_the_model_learns_or_scores(lapse, lapse_backtest, tmp_path):
    """The sales' listings and their bidding are read where `edt archive` put them (packed in
    the mirror, in the Parquet archive): the same backtest, to the last figure."""
    import shutil

    from click.testing import CliRunner

    from toolkit.cli import cli

    copy = tmp_path / "put-away.db"
    shutil.copy(lapse, copy)
    done = CliRunner().invoke(cli, ["archive", "--db", str(copy), "--closed-before", "10d", "--pack-after", "3d"])
    assert done.exit_code == 0 and "archived " in done.output and "packed " in done.output, done.output
    with Mirror(copy) as put_away:
        before, after = lapse_backtest, backtest(put_away)
    assert (after.scored, after.coverage, after.median_abs_eur) == (
        before.scored,
        before.coverage,
        before.median_abs_eur,
    )
    assert after.live == before.live and after.live["auctions"] > 100
