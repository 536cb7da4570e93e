"""`Mirror.chart_counts`: the charts' counts over every matching listing, the same from the
columnar index and from SQLite, and the same as counting `domains_df` by hand."""

from __future__ import annotations

import bisect
import random
import sqlite3
from collections import Counter
from datetime import timedelta

import numpy as np
import pytest
from conftest import NOW, fixed_clock, listing_records, ts
from test_query import POOLS

from toolkit import ApiError, Mirror
from toolkit.query.aggregates import SNAPSHOT_EDGES, _snapshot_bin_sql, snapshot_bin_label
from toolkit.store.writer import save_listings

FILTERS = sorted(set(POOLS) - {"page", "per_page", "limit", "sort", "after_id"})


def _counts(mirror: Mirror, params: dict):
    try:
        return mirror.chart_counts(params)
    except ApiError as exc:
        return {"status": exc.status, "body": exc.body}


def test_random_filter_sets_count_alike_on_both_engines(engines):
    columnar, sqlite = engines
    rnd = random.Random(19)
    answered = 0
    for _ in range(120):
        names = rnd.sample(FILTERS, rnd.randint(1, 4))
        params = {name: rnd.choice(POOLS[name]) for name in names}
        if rnd.random() < 0.3:  # paging and sort never change the counts
            params.update(sort=rnd.choice(POOLS["sort"]), page=rnd.choice(POOLS["page"]))
        got, expected = _counts(columnar, params), _counts(sqlite, params)
        assert got == expected, params
        assert sqlite.answered_by() == "sqlite"
        if not isinstance(got, dict):
            assert columnar.answered_by() == "columnar", params
            answered += 1
            assert got.total == columnar.search_domains({**params, "per_page": 1})["meta"]["total"], params
    assert answered > 80


def _by_hand(mirror: Mirror, params: dict) -> dict:
    """The counts from `domains_df`, written plainly (zone, bins and topics from the contract)."""
    df = mirror.domains_df(
        params,
        columns=[
            "trust_flow",
            "citation_flow",
            "ttf_topic",
            "source",
            "age",
            "wayback_first_date",
            "wayback_snapshots",
            "language",
        ],
    )
    tf_cf, by_topic, by_source = Counter(), {}, {}
    joint, ages, years, languages = Counter(), Counter(), Counter(), Counter()
    for row in df.astype(object).where(df.notna(), None).to_dict("records"):
        tf, cf = row["trust_flow"], row["citation_flow"]
        if tf is not None and cf is not None and 0 <= tf <= 100 and 0 <= cf <= 100:  # a CF of -1 is left out
            tf_cf[(tf, cf)] += 1
            zone = 0 if cf >= 2 * tf + 10 else 1
            topic = row["ttf_topic"].split("/")[0] if row["ttf_topic"] else None
            for table, key in ((by_topic, topic), (by_source, row["source"])):
                pair = table.setdefault(key, [0, 0])
                pair[zone] += 1
        if row["age"] is not None:
            ages[row["age"]] += 1
            years[int(row["wayback_first_date"][:4])] += 1
            if row["wayback_snapshots"] is not None:
                joint[(row["age"], bisect.bisect_right(SNAPSHOT_EDGES, row["wayback_snapshots"]))] += 1
        languages[row["language"]] += 1
    return {
        "total": len(df),
        "tf_cf": dict(tf_cf),
        "zone_by_topic": {k: tuple(v) for k, v in by_topic.items()},
        "zone_by_source": {k: tuple(v) for k, v in by_source.items()},
        "ages": dict(ages),
        "first_years": dict(years),
        "snapshots_by_age": dict(joint),
        "languages": dict(languages),
    }


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"tld": ".com,.fr"},
        {"categories": "Health,Recreation"},
        {"language": "fr", "include_closed": "1"},
        {"source": "regfree"},
        {"tf_min": "10", "cf_max": "40"},
    ],
)
def test_the_counts_are_those_of_the_matching_rows_counted_by_hand(engines, params):
    for mirror in engines:
        counts = mirror.chart_counts(params)
        expected = _by_hand(mirror, params)
        assert {k: getattr(counts, k) for k in expected} == expected, (mirror.engine, params)
        assert counts.without_tf_cf == expected["total"] - sum(expected["tf_cf"].values())
    assert counts.total > 0 and (counts.tf_cf or params.get("source") == "regfree")


def test_no_match_gives_empty_counts(engines):
    for mirror in engines:
        counts = mirror.chart_counts({"contains": "zzqqzzqq"})
        assert counts.total == 0 and counts.without_tf_cf == 0 and counts.without_first_date == 0
        assert counts.tf_cf == counts.ages == counts.first_years == counts.snapshots_by_age == {}
        assert counts.zone_by_topic == counts.zone_by_source == counts.languages == {}
        assert counts.tf_cf_grid().sum() == 0


def _tiny(tmp_path, records: list[dict]) -> tuple[Mirror, Mirror]:
    path = tmp_path / "tiny.db"
    writer = Mirror(path, clock=fixed_clock, create=True)
    save_listings(writer.connection(), records, origin="sync", observed_at=ts(NOW - timedelta(days=1)))
    writer.close()
    return Mirror(path, clock=fixed_clock, engine="columnar"), Mirror(path, clock=fixed_clock, engine="sqlite")


def _live(records: list[dict]) -> list[dict]:
    return [
        {
            **r,
            "source": "dynadot" if r["source"] == "regfree" else r["source"],
            "type": "closeout",
            "auction_end_date": None,
        }
        for r in records
    ]


def test_rows_without_metrics_are_counted_as_such(tmp_path):
    blank = {
        "trust_flow": None,
        "citation_flow": None,
        "wayback_first_date": None,
        "wayback_snapshots": None,
        "language": None,
        "ttf_topic": None,
    }
    records = [{**r, **blank} for r in _live(listing_records(40, seed=3))]
    for mirror in _tiny(tmp_path, records):
        counts = mirror.chart_counts()
        assert mirror.answered_by() == mirror.engine
        assert counts.total == 40 and counts.without_tf_cf == 40 and counts.without_first_date == 40
        assert counts.tf_cf == counts.ages == counts.snapshots_by_age == counts.zone_by_source == {}
        assert counts.languages == {None: 40}


def test_ages_follow_the_birthday_rule(tmp_path):
    """Today is 2026-11-22: a first snapshot on 2016-11-22 is 10 years old, on 2016-11-23 only
    9 (its birthday is tomorrow)."""
    firsts = ["2016-11-22", "2016-11-23", "2016-11-21", "2016-02-29", "2025-11-23", "2026-11-22"]
    records = [
        {**r, "wayback_first_date": first, "wayback_snapshots": snapshots}
        for r, first, snapshots in zip(_live(listing_records(6, seed=4)), firsts, [0, 1, 4, 5, 99_999, None])
    ]
    for mirror in _tiny(tmp_path, records):
        counts = mirror.chart_counts()
        assert counts.ages == {10: 3, 9: 1, 0: 2}, mirror.engine
        assert counts.first_years == {2016: 4, 2025: 1, 2026: 1}
        assert counts.snapshots_by_age == {(10, 0): 1, (9, 1): 1, (10, 2): 1, (10, 3): 1, (0, 15): 1}
        ages = mirror.domains_df(columns=["age"])["age"].tolist()
        assert Counter(ages) == Counter(counts.ages)


def test_a_zone_is_cf_at_least_twice_tf_plus_ten(tmp_path):
    pairs = [(10, 30), (10, 29), (0, 10), (0, 9), (45, 100), (46, 100), (100, 100), (None, 50), (50, None)]
    records = [
        {**r, "trust_flow": tf, "citation_flow": cf, "ttf_topic": "Health/Fitness", "source": "sedo"}
        for r, (tf, cf) in zip(_live(listing_records(len(pairs), seed=5)), pairs)
    ]
    for mirror in _tiny(tmp_path, records):
        counts = mirror.chart_counts()
        assert counts.zone_by_topic == {"Health": (3, 4)} and counts.zone_by_source == {"sedo": (3, 4)}
        assert counts.without_tf_cf == 2 and counts.tf_cf_grid()[10, 30] == 1 and counts.tf_cf_grid().sum() == 7


def test_snapshot_bins_are_the_same_in_sql_and_numpy():
    values = [0, 1, 2, 3, 4, 5, 9, 10, 19, 20, 99, 100, 999, 1000, 4999, 5000, 99_999, 100_000, 3_000_000]
    conn = sqlite3.connect(":memory:")
    sql = [conn.execute(f"SELECT {_snapshot_bin_sql('?1')}", [v]).fetchone()[0] for v in values]
    assert sql == np.searchsorted(SNAPSHOT_EDGES, values, side="right").tolist()
    assert [snapshot_bin_label(k) for k in (0, 1, 2, 3, len(SNAPSHOT_EDGES))] == ["0", "1", "2–4", "5–9", "100,000+"]


def test_plan_rules_and_bad_input_are_the_apis(engines):
    columnar, _ = engines
    with pytest.raises(ApiError) as refused:
        columnar.chart_counts({"source": "regfree"}, plan="pro")
    assert refused.value.status == 403
    with pytest.raises(ApiError) as bad:
        columnar.chart_counts({"tf_min": "abc"})
    assert bad.value.status == 422 and bad.value.field == "tf_min"
