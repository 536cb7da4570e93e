"""The quality score: bounds, None when not enriched, monotonic in the good metrics."""

from __future__ import annotations

import random

import pytest

from toolkit.enrich import quality_score
from toolkit.enrich.score import WEIGHTS

BASE = dict(
    trust_flow=15,
    citation_flow=25,
    domain_authority=20,
    referring_domains=40,
    backlinks_count=900,
    ref_domains_edu=0,
    ref_domains_gov=0,
    age=9,
    wayback_snapshots=120,
    is_spammy=False,
)
EMPTY = {key: None for key in BASE} | {"is_spammy": False}


def random_inputs(rnd: random.Random) -> dict:
    cf = rnd.randint(0, 100)
    rd = int(rnd.paretovariate(0.8)) - 1
    return dict(
        trust_flow=rnd.randint(0, 100),
        citation_flow=cf,
        domain_authority=rnd.randint(0, 100),
        referring_domains=rd,
        backlinks_count=rd * rnd.randint(1, 50),
        ref_domains_edu=rnd.choice([0, 0, 1, 5]),
        ref_domains_gov=rnd.choice([0, 0, 0, 2]),
        age=rnd.choice([None, *range(0, 31)]),
        wayback_snapshots=rnd.choice([None, 0, 5, 80, 3000]),
        is_spammy=rnd.random() < 0.1,
    )


def test_none_when_not_enriched():
    assert quality_score(**EMPTY) is None
    assert quality_score(**EMPTY | {"age": 20, "wayback_snapshots": 500}) is None  # archive data alone is not enough
    assert quality_score(**EMPTY | {"trust_flow": 0}) == 0


def test_within_0_and_100():
    rnd = random.Random(1)
    for _ in range(5_000):
        score = quality_score(**random_inputs(rnd))
        assert isinstance(score, int) and 0 <= score <= 100
    best = dict(
        trust_flow=100,
        citation_flow=100,
        domain_authority=100,
        referring_domains=10**6,
        backlinks_count=10**8,
        ref_domains_edu=500,
        ref_domains_gov=500,
        age=30,
        wayback_snapshots=10**5,
        is_spammy=False,
    )
    assert quality_score(**best) == 100
    assert quality_score(**EMPTY | {"trust_flow": 0, "citation_flow": 0}) == 0


@pytest.mark.parametrize(
    "field",
    [
        "trust_flow",
        "domain_authority",
        "referring_domains",
        "backlinks_count",
        "ref_domains_edu",
        "ref_domains_gov",
        "age",
        "wayback_snapshots",
    ],
)
def test_never_decreases_as_a_good_metric_rises(field):
    rnd = random.Random(field)
    for _ in range(300):
        inputs = random_inputs(rnd)
        previous = -1
        steps = (
            range(0, 101) if field in ("trust_flow", "domain_authority", "age") else (0, 1, 3, 10, 50, 400, 5000, 10**6)
        )
        for value in steps:
            score = quality_score(**inputs | {field: value})
            assert score >= previous, (field, value, inputs)
            previous = score


def test_monotonic_in_trust_flow_at_a_fixed_citation_flow():
    scores = [quality_score(**BASE | {"trust_flow": tf, "citation_flow": 40}) for tf in range(0, 60)]
    assert scores == sorted(scores) and scores[-1] > scores[0]


def test_manipulated_and_spammy_profiles_score_low():
    honest = quality_score(**BASE | {"trust_flow": 30, "citation_flow": 35})
    manipulated = quality_score(**BASE | {"trust_flow": 2, "citation_flow": 35})
    assert manipulated < honest
    assert quality_score(**BASE | {"is_spammy": True, "trust_flow": 60, "domain_authority": 80}) <= 15


def test_extra_fields_are_ignored_so_a_record_can_be_passed():
    record = BASE | {"name": "example.com", "score": None, "language": "EN"}
    assert quality_score(**record) == quality_score(**BASE)


def test_documented_formula_weights():
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    doc = quality_score.__doc__
    for weight in WEIGHTS.values():
        assert f"{weight:.2f}" in doc
