"""The query layer against a plain-Python reading of the contract, and every edge it names."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

from conftest import NOW, all_rows, oracle_domains, oracle_pending, refusal
from toolkit import ApiError, Mirror
from toolkit.query.params import DOMAIN_PARAMS, DOMAIN_SORTS

# Value pools per parameter: each draw is a valid value the contract accepts.
POOLS = {
    "source": ["dynadot", "SEDO", " godaddy ", "webexpire", "namepros", "regfree", "Regfree"],
    "tld": [".com", "com", ".CO.UK", ".fr,.de", "uk", ".com.au,.it,.io"],
    "type": ["auction", "closeout", "backorder", "AUCTION"],
    "has_bids": ["1", "0", "true", "false"],
    "has_backlinks": ["1", "true", "0"],
    "has_gmb": ["1", "0"],
    "has_edu_gov": ["1", "TRUE"],
    "score_min": ["0", "30", "70", "100"],
    "tf_min": ["0", "10", "35"],
    "cf_min": ["0", "20", "50"],
    "da_min": ["0", "25", "60"],
    "age_min": ["0", "5", "12", "20"],
    "rd_min": ["0", "1", "40"],
    "snapshots_min": ["0", "100", "2500"],
    "traffic_min": ["0", "100", "1000"],
    "price_min": ["0", "50", "199.5"],
    "price_max": ["10", "300", "1000"],
    "price_eur_min": ["0", "45", "180.5"],
    "price_eur_max": ["9", "250", "900"],
    "exclude_spam": ["1", "0", "true"],
    "exclude_inflated": ["1", "0"],
    "archive_gap_max": ["0", "1", "3"],
    "continuity_min": ["0", "40", "90"],
    "exclude_parked": ["1", "true", "0"],
    "categories": ["Health", "health", "Recreation/Travel", "News,Arts", "Business/Marketing", "HEALTH/fitness"],
    "contains": ["shop", "car,auto", "ai", "100%", "a_b", "SHOP", "e", "maison,travel,xyz"],
    "language": ["EN", "fr", "De"],
    "techs": ["WordPress", "wordpress", "Shopify,Stripe"],
    "use_cases": ["ecommerce", "saas,news"],
    "created_after": [(NOW - timedelta(days=d)).date().isoformat() for d in (1, 10, 30)],
    "created_before": [(NOW - timedelta(days=d)).date().isoformat() for d in (0, 20)],
    "ends_after": [(NOW + timedelta(days=d)).date().isoformat() for d in (0, 2)],
    "ends_before": [(NOW + timedelta(days=d)).date().isoformat() for d in (1, 5)],
    "ends_within": ["1", "6", "24", "720"],
    # the synthetic mirror first saw every listing 2 days before NOW: before, at (strictly after: none), offsets, a date
    "seen_after": ["2026-11-19T12:00:00Z", "2026-11-20T12:00:00Z", "2026-11-20T13:59:59+02:00", "2026-11-20"],
    "include_closed": ["1", "0"],
    "length_min": ["3", "8", "12"],
    "length_max": ["5", "9", "63"],
    "no_dashes": ["1", "0", "true"],
    "no_numbers": ["1", "0"],
    "not_contains": ["shop", "a,e", "xyz,car", "ai", "100%"],
    "tf_max": ["0", "10", "30"],
    "cf_max": ["5", "25", "60"],
    "da_max": ["15", "50"],
    "tf_cf_ratio_min": ["0.5", "1", "0.33", "1.2"],
    "tf_cf_ratio_max": ["0.5", "0.8", "1.25"],
    "age_max": ["0", "5", "15"],
    "value_min": ["0", "20", "150.5", "1000"],
    "value_max": ["5", "100", "400"],
    "deal_min": ["0.5", "1", "2", "3.7"],
    "sort": list(DOMAIN_SORTS) + ["-" + s for s in DOMAIN_SORTS],
    "per_page": ["1", "7", "100"],
    "limit": ["3", "25"],
    "page": ["1", "2", "5"],
}


def _normalise_expectations(params: dict) -> dict:
    # The oracle reads trimmed, case-folded values; the API accepts the raw ones.
    out = dict(params)
    if "tld" in out:
        out["tld"] = out["tld"].lower()
    if "type" in out:
        out["type"] = out["type"].lower()
    if "techs" in out:
        out["techs"] = out["techs"]
    return out


def test_pools_cover_every_filter():
    assert set(POOLS) | {"after_id", "include_historical_traffic"} == set(DOMAIN_PARAMS)


def _assert_the_oracle_agrees(mirror: Mirror, rows: list[dict], params: dict) -> None:
    envelope = mirror.search_domains(params, strict=False)  # as the replica asks: bounds that cross give an empty page
    ids, total = oracle_domains(rows, _normalise_expectations(params))
    assert [r["id"] for r in envelope["data"]] == ids, params
    assert envelope["meta"]["total"] == total, params


@pytest.mark.parametrize("seed", range(40))
def test_random_filter_combinations_match_the_oracle(mirror, seed):
    rows = all_rows(mirror, "listings")
    rnd = random.Random(seed)
    for _ in range(12):
        names = rnd.sample(sorted(POOLS), rnd.randint(1, 4))
        params = {name: rnd.choice(POOLS[name]) for name in names}
        _assert_the_oracle_agrees(mirror, rows, params)


def test_each_engine_answers_what_it_is_asked_to(mirror):
    mirror.search_domains({"tld": ".fr", "tf_min": "10", "sort": "-citation_flow"})
    assert mirror.answered_by() == mirror.engine
    mirror.search_domains({"contains": "ai,shop", "after_id": "30"})
    assert mirror.answered_by() == mirror.engine
    mirror.search_domains({"deal_min": "1.5", "value_max": "300", "sort": "-deal"})  # a ratio of two reals
    assert mirror.answered_by() == mirror.engine


def test_the_oracle_is_not_vacuous(mirror):
    rows = all_rows(mirror, "listings")
    totals = [oracle_domains(rows, {"tld": t})[1] for t in (".com", ".fr", ".co.uk")]
    assert all(t > 10 for t in totals)
    assert oracle_domains(rows, {"source": "regfree"})[1] > 10
    assert oracle_domains(rows, {"include_closed": "1"})[1] > oracle_domains(rows, {})[1]
    valued = oracle_domains(rows, {"value_min": "0"})[1]
    assert 10 < oracle_domains(rows, {"deal_min": "1"})[1] < valued < oracle_domains(rows, {})[1]
    # whole ratios sit exactly on a bound (a range's middle at the price itself): kept by deal_min=1
    assert any(r["value_mid"] == r["effective_price_eur"] for r in rows if r["value_mid"] is not None)


def test_default_order_is_score_descending_nulls_last_then_id(mirror):
    data = mirror.search_domains({"per_page": "100", "page": "1"})["data"]
    total = mirror.search_domains({})["meta"]["total"]
    last = mirror.search_domains({"per_page": "100", "page": str((total + 99) // 100)})["data"]
    scores = [r["score"] for r in data]
    assert scores == sorted(scores, reverse=True)
    assert last[-1]["score"] is None  # nulls at the very end
    assert len({r["score"] for r in data}) < len(data)  # there were ties to break
    for a, b in zip(data, data[1:]):
        if a["score"] == b["score"]:
            assert a["id"] < b["id"]


def test_regfree_rows_only_when_asked(mirror):
    everything = mirror.search_domains({"per_page": "100", "include_closed": "1"})
    assert all(r["source"] != "regfree" for r in everything["data"])
    regfree = mirror.search_domains({"source": " ReGfReE "})
    assert regfree["meta"]["total"] > 0
    assert {r["source"] for r in regfree["data"]} == {"regfree"}


def test_closed_and_ended_listings_are_not_live(mirror):
    rows = {r["id"]: r for r in all_rows(mirror, "listings")}
    live_ids = {r["id"] for r in mirror.export_rows({})}
    assert 30 not in live_ids and rows[30]["closed_at"]
    ended = [i for i, r in rows.items() if r["auction_end_date"] and r["auction_end_date"] < "2026-11-22T12:00:00Z"]
    assert ended and not live_ids & set(ended)
    with_closed = {r["id"] for r in mirror.export_rows({"include_closed": "1"})}
    assert 30 in with_closed and set(ended) - {i for i in ended if rows[i]["source"] == "regfree"} <= with_closed


def test_metric_filters_never_pass_nulls(mirror):
    everything = mirror.search_domains({})["meta"]["total"]
    enriched = mirror.search_domains({"tf_min": "0"})["meta"]["total"]
    assert 0 < enriched < everything
    page = mirror.search_domains({"tf_min": "0", "per_page": "100"})["data"]
    assert all(r["trust_flow"] is not None for r in page)


def test_categories_match_whole_segments(mirror):
    topics = {r["ttf_topic"] for r in mirror.export_rows({"categories": "Health"})}
    assert topics and all(t.lower() == "health" or t.lower().startswith("health/") for t in topics)
    assert "Healthcare/Misc" not in topics
    two = mirror.search_domains({"categories": "Recreation/Travel"})["meta"]["total"]
    assert two and mirror.search_domains({"categories": "recreation / travel/"})["meta"]["total"] == two


def test_contains_is_literal_and_uses_the_trigram_index(mirror):
    names = [r["name"] for r in mirror.export_rows({"contains": "a_b"})]
    assert names and all("a_b" in n for n in names)
    percent = [r["name"] for r in mirror.export_rows({"contains": "100%"})]
    assert percent and all("100%" in n for n in percent)
    plan = (
        mirror.connection()
        .execute(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM listings WHERE rowid IN "
            "(SELECT rowid FROM listings_fts WHERE listings_fts MATCH '\"shop\"')"
        )
        .fetchall()
    )
    assert any("VIRTUAL TABLE INDEX" in str(row) for row in plan)


def test_record_types_follow_the_schema(mirror):
    record = mirror.search_domains({"has_gmb": "1", "per_page": "1"})["data"][0]
    assert record["has_gmb"] is True and isinstance(record["is_spammy"], bool)
    assert isinstance(record["historical_tech"], (list, type(None)))
    assert record["tld"].startswith(".")
    assert record["created_at"].endswith("Z")
    assert "historical_traffic" not in record
    assert (
        "historical_traffic" in mirror.search_domains({"include_historical_traffic": "1", "per_page": "1"})["data"][0]
    )
    effective = [r for r in mirror.export_rows({"has_bids": "1"}) if r["max_bid"] is not None]
    assert effective and all(r["effective_price"] == r["max_bid"] for r in effective)


# -- 422, 403 and paging ----------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [
        {"tf_min": "abc"},
        {"tf_min": "101"},
        {"score_min": "-1"},
        {"cf_min": "2.5"},
        {"per_page": "0"},
        {"per_page": "101"},
        {"limit": "500"},
        {"page": "0"},
        {"type": "foo"},
        {"categories": "Nope"},
        {"categories": "Health,Nope/Sub"},
        {"has_bids": "maybe"},
        {"created_after": "yesterday"},
        {"ends_before": "2026-02-30"},
        {"source": "ebay"},
        {"price_min": "-5"},
        {"price_max": "cheap"},
        {"contains": "x" * 201},
        {"contains": ",,"},
        {"language": "toolong"},
        {"use_cases": "gambling"},
        {"sort": "random"},
        {"after_id": "-1"},
        {"age_min": "old"},
    ],
)
def test_malformed_values_are_422_naming_the_field(mirror, params):
    [field] = params
    refused = refusal(mirror.search_domains, params)
    assert refused.status == 422
    assert field in refused.body["errors"]
    assert field in refused.body["message"]


def test_unknown_names_raise_in_python_but_are_ignored_over_http(mirror):
    with pytest.raises(ApiError) as exc:
        mirror.search_domains({"tf_mni": "20"})
    assert exc.value.status == 422 and "tf_mni" in exc.value.body["errors"]
    loose = mirror.search_domains({"tf_mni": "20"}, strict=False)
    assert loose["meta"]["total"] == mirror.search_domains({})["meta"]["total"]


def test_empty_values_count_as_absent(mirror):
    assert (
        mirror.search_domains({"tld": "", "tf_min": " "})["meta"]["total"] == mirror.search_domains({})["meta"]["total"]
    )


@pytest.mark.parametrize(
    "plan, params, status, error",
    [
        ("free", {}, 403, "plan_required"),
        ("pro", {"source": "regfree"}, 403, "plan_required"),
        ("Pro", {"source": " REGFREE"}, 403, "plan_required"),
        ("authority", {"source": "regfree", "after_id": "0"}, 403, "cursor_not_available"),
        ("pro", {"source": "regfree", "after_id": "0"}, 403, "cursor_not_available"),
    ],
)
def test_plan_and_cursor_refusals(mirror, plan, params, status, error):
    with pytest.raises(ApiError) as exc:
        mirror.search_domains(params, plan=plan)
    assert exc.value.status == status
    assert exc.value.body["error"] == error


def test_plan_names_are_forgiving_and_messages_name_the_plan(mirror):
    assert mirror.search_domains({"source": "regfree"}, plan="Authority+")["meta"]["total"] > 0
    with pytest.raises(ApiError) as exc:
        mirror.search_domains({"source": "regfree"}, plan="pro")
    assert exc.value.body["required_plan"] == "authority" and "Authority plan" in exc.value.body["message"]
    for plan in ("pro", "authority"):
        with pytest.raises(ApiError) as exc:
            mirror.search_pending_delete({}, plan=plan)
        assert exc.value.body["required_plan"] == "authority_plus"
    with pytest.raises(ApiError) as exc:
        list(mirror.export_rows({}, plan="authority_plus"))
    assert exc.value.body["required_plan"] == "business"


def test_page_past_the_end_is_empty_with_correct_meta(mirror):
    total = mirror.search_domains({})["meta"]["total"]
    env = mirror.search_domains({"page": "999", "per_page": "10"})
    assert env["data"] == []
    assert env["meta"] == {
        "current_page": 999,
        "from": None,
        "last_page": -(-total // 10),
        "path": "/api/domains",
        "per_page": 10,
        "to": None,
        "total": total,
    }
    assert env["links"]["next"] is None and "page=998" in env["links"]["prev"]


def test_per_page_edges_and_the_limit_alias(mirror):
    one = mirror.search_domains({"per_page": "1", "page": "3"})
    assert len(one["data"]) == 1 and one["meta"]["from"] == 3 and one["meta"]["to"] == 3
    hundred = mirror.search_domains({"per_page": "100"})
    assert len(hundred["data"]) == 100 and hundred["meta"]["per_page"] == 100
    assert mirror.search_domains({"limit": "7"})["meta"]["per_page"] == 7
    assert mirror.search_domains({"limit": "7", "per_page": "9"})["meta"]["per_page"] == 9
    assert mirror.search_domains({})["meta"]["per_page"] == 50


def test_links_keep_every_filter(mirror):
    env = mirror.search_domains(
        {"tld": ".fr,.de", "tf_min": "5", "per_page": "2", "page": "2"}, url="http://h/api/domains"
    )
    for key in ("first", "last", "prev", "next"):
        assert env["links"][key].startswith("http://h/api/domains?")
        assert (
            "tld=.fr%2C.de" in env["links"][key]
            and "tf_min=5" in env["links"][key]
            and "per_page=2" in env["links"][key]
        )
    assert env["links"]["next"].endswith("page=3") and env["links"]["prev"].endswith("page=1")


def test_cursor_mode_walks_every_platform_row_once(mirror):
    rows = all_rows(mirror, "listings")
    seen, after, requests = [], 0, 0
    while True:
        env = mirror.search_domains({"after_id": str(after), "per_page": "100", "tf_min": "10"})
        requests += 1
        cursor = env["cursor"]
        assert cursor["after_id"] == after and cursor["order"] == "id asc"
        seen += [r["id"] for r in env["data"]]
        if not cursor["has_more"]:
            assert env["links"]["next"] is None
            break
        assert f"after_id={cursor['next_after_id']}" in env["links"]["next"]
        after = cursor["next_after_id"]
    expected, _ = oracle_domains(rows, {"tf_min": "10", "after_id": "0", "per_page": "100000"})
    assert seen == expected and requests > 1
    assert all(r["source"] != "regfree" for r in mirror.export_rows({"tf_min": "10"}))


def test_get_domain(mirror):
    rows = {r["id"]: r for r in all_rows(mirror, "listings")}
    platform_id = next(i for i, r in rows.items() if r["source"] != "regfree")
    assert mirror.get_domain(platform_id, plan="pro")["data"]["id"] == platform_id
    assert mirror.get_domain(30)["data"]["closed_at"] is not None  # closed ones too
    regfree_id = next(i for i, r in rows.items() if r["source"] == "regfree")
    with pytest.raises(ApiError) as exc:
        mirror.get_domain(regfree_id, plan="pro")
    assert exc.value.status == 403
    assert mirror.get_domain(regfree_id, plan="authority")["data"]["source"] == "regfree"
    for missing in (1, "abc", 10**12):
        with pytest.raises(ApiError) as exc:
            mirror.get_domain(missing)
        assert exc.value.status == 404 and exc.value.body == {"message": "Not found."}


def test_domains_df_has_the_same_rows_and_types(mirror):
    df = mirror.domains_df(tld=".com", tf_min=10)
    ids = [r["id"] for r in mirror.export_rows({"tld": ".com", "tf_min": "10"})]
    assert list(df["id"]) == ids and len(ids) > 5
    assert str(df["has_gmb"].dtype) == "boolean" and str(df["trust_flow"].dtype) == "Int64"
    with pytest.raises(ApiError):
        mirror.domains_df(tf_mni=3)


# -- free endpoint ------------------------------------------------------------------------


def test_free_endpoint_masks_names_and_omits_premium_metrics(mirror):
    env = mirror.free_domains({"limit": "8"})
    assert len(env["data"]) == 8 and env["meta"]["visible_names"] == 3 and env["meta"]["free_tier"] is True
    assert env["meta"]["total_available"] == mirror.search_domains({})["meta"]["total"]
    for i, record in enumerate(env["data"]):
        assert not {"trust_flow", "citation_flow", "ttf_topic", "has_gmb"} & set(record)
        if i < 3:
            assert "•" not in record["name"] and record["purchase_url"]
        else:
            assert record["name"] == "••••••••" + record["tld"] and record["purchase_url"] is None
    assert [r["score"] for r in env["data"]] == [r["score"] for r in mirror.search_domains({"per_page": "8"})["data"]]


@pytest.mark.parametrize(
    "endpoint, params, field",
    [
        ("free_domains", {"limit": "51"}, "limit"),
        ("free_domains", {"source": "regfree"}, "source"),
        ("free_domains", {"source": "sedo"}, "source"),
        ("free_domains", {"tf_min": "3"}, "tf_min"),
        ("search_pending_delete", {"status": "deleted"}, "status"),
        ("search_pending_delete", {"drops_within": "61"}, "drops_within"),
        ("search_pending_delete", {"per_page": "201"}, "per_page"),
        ("search_pending_delete", {"week_end": "last"}, "week_end"),
        ("search_pending_delete", {"sort": "score"}, "sort"),
        ("search_pending_delete", {"source": "zone"}, "source"),
        ("search_pending_delete", {"limit": "5"}, "limit"),
    ],
)
def test_free_and_pending_delete_refuse_what_they_do_not_offer(mirror, endpoint, params, field):
    refused = refusal(getattr(mirror, endpoint), params)
    assert refused.status == 422 and field in refused.body["errors"]
    assert mirror.free_domains({})["meta"]["count"] == 10


# -- pending-delete -----------------------------------------------------------------------

PENDING_POOLS = {
    "tld": ["fr", ".DE", "com,net", "co.uk", "uk", ".UK,au"],
    "status": ["pendingDelete", "redemptionPeriod,serverHold", "quarantine"],
    "source": ["oi-diff", "czds-daily"],
    "week_end": [
        "all",
        (NOW.date() - timedelta(days=NOW.weekday())).isoformat(),
        (NOW.date() - timedelta(days=NOW.weekday() + 7)).isoformat(),
    ],
    "drops_within": ["1", "7", "45", "60"],
    "contains": ["shop", "car,bio", "9"],
    "no_dashes": ["1", "0"],
    "no_numbers": ["1"],
    "include_past": ["1", "0"],
    "drop_date_from": [(NOW.date() + timedelta(days=d)).isoformat() for d in (-5, 3)],
    "drop_date_to": [(NOW.date() + timedelta(days=d)).isoformat() for d in (10, 30)],
    "sort": ["drop_date", "drop_date_desc", "domain"],
    "per_page": ["1", "50", "200"],
    "page": ["1", "2"],
}


@pytest.mark.parametrize("seed", range(15))
def test_pending_delete_matches_the_oracle(mirror, seed):
    rows = all_rows(mirror, "pending_delete")
    rnd = random.Random(seed)
    for _ in range(10):
        params = {n: rnd.choice(PENDING_POOLS[n]) for n in rnd.sample(sorted(PENDING_POOLS), rnd.randint(1, 4))}
        env = mirror.search_pending_delete(params)
        ids, total = oracle_pending(rows, params)
        assert [r["id"] for r in env["data"]] == ids, params
        assert env["meta"]["total"] == total, params


def test_pending_delete_record_and_lookup(mirror):
    env = mirror.search_pending_delete({"per_page": "200"})
    record = env["data"][0]
    assert not record["tld"].startswith(".") and isinstance(record["is_idn"], bool)
    assert record["estimated_drop_date"] >= NOW.date().isoformat()
    found = mirror.get_pending_delete(record["domain"].upper())
    assert found["data"]["domain"] == record["domain"]
    past = [
        r
        for r in all_rows(mirror, "pending_delete")
        if r["estimated_drop_date"] and r["estimated_drop_date"] < "2026-11-22"
    ]
    with pytest.raises(ApiError) as exc:
        mirror.get_pending_delete(past[0]["domain"])
    assert exc.value.status == 404


def test_a_fresh_mirror_answers_empty_pages(tmp_path):
    m = Mirror(tmp_path / "empty.db", create=True)
    env = m.search_domains({})
    assert env["data"] == [] and env["meta"]["total"] == 0 and env["meta"]["last_page"] == 1
    assert m.search_pending_delete({})["meta"]["total"] == 0
    assert m.is_empty()


def test_a_mirror_with_rows_is_not_empty(mirror):
    assert not mirror.is_empty()


@pytest.mark.parametrize("walk_limit, probe_limit", [(0, 0), (0, 5), (0, 10**6), (10**9, 0), (10**9, 10**6)])
def test_every_query_plan_gives_the_oracle_answer(mirror, monkeypatch, walk_limit, probe_limit):
    """The planner picks among index walks, a bounded probe, a one-pass count+sort and an
    id-only top-N by thresholds; on a small mirror force each branch and check them all."""
    import toolkit.query.sqlplan as q

    monkeypatch.setattr(q, "WALK_LIMIT", walk_limit)
    monkeypatch.setattr(q, "PROBE_LIMIT", probe_limit)
    rows = all_rows(mirror, "listings")
    rnd = random.Random(walk_limit + probe_limit)
    for _ in range(60):
        names = rnd.sample(sorted(set(POOLS) - {"limit"}), rnd.randint(1, 4))
        params = {name: rnd.choice(POOLS[name]) for name in names}
        _assert_the_oracle_agrees(mirror, rows, params)


def test_captions_describe_the_filters_in_force():
    from toolkit.query.params import caption, parse_params

    def say(params):
        return caption(DOMAIN_PARAMS, parse_params(DOMAIN_PARAMS, params, strict=True))

    assert say({}) == "All live listings"
    assert say({"tld": ".fr,.de", "tf_min": "20", "has_bids": "1", "price_max": "50"}) == (
        "French or German names with bids, Trust Flow 20+, price up to 50"
    )
    assert say({"tld": ".fr", "tf_min": "15"}) == "French names, Trust Flow 15+"  # a saved search, as the app says it
    assert say({"type": "auction", "has_bids": "1", "score_min": "40"}) == "Auctions with bids, score 40+"
    assert (
        say({"tld": ".com", "length_max": "8", "ends_within": "6"})
        == ".com names, length up to 8, ending within 6 hours"
    )
    # a flag switched off and a sort are not filters
    assert (
        say({"has_gmb": "0", "categories": "health", "sort": "-score", "language": "fr"})
        == "Names in Health, language FR"
    )


@pytest.mark.parametrize(
    "params",
    [
        {"length_min": "8"},
        {"length_max": "9"},
        {"no_dashes": "1"},
        {"no_numbers": "1"},
        {"not_contains": "a,e"},
        {"tf_max": "10"},
        {"cf_max": "25"},
        {"da_max": "15"},
        {"tf_cf_ratio_min": "1"},
        {"tf_cf_ratio_max": "0.5"},
        {"age_max": "5"},
    ],
)
def test_each_listing_extension_filter_narrows_without_emptying(mirror, params):
    """The oracle comparisons above are only worth something if each new filter keeps some
    listings and drops others on the synthetic mirror."""
    everything = mirror.search_domains({})["meta"]["total"]
    kept = mirror.search_domains(params)["meta"]["total"]
    assert 0 < kept < everything, (params, kept, everything)
    assert mirror.answered_by() == mirror.engine  # the columnar index holds every one of them


def test_a_pending_tld_matches_its_suffix_family_only(mirror):
    family = mirror.search_pending_delete({"tld": "uk", "include_past": "1", "per_page": "200"})
    assert family["meta"]["total"] > 0 and {r["tld"] for r in family["data"]} == {"co.uk"}
    exact = mirror.search_pending_delete({"tld": ".CO.UK", "include_past": "1"})["meta"]["total"]
    assert family["meta"]["total"] == exact
    # "k" is not a family of "uk": a suffix matches whole labels only
    assert mirror.search_pending_delete({"tld": "k", "include_past": "1"})["meta"]["total"] == 0


def test_edt_now_answers_as_of_that_moment(synthetic_db, monkeypatch):
    """EDT_NOW: what was live then, as a Mirror with that clock answers; a bad value names it."""
    monkeypatch.setenv("EDT_NOW", "2026-11-22T12:00:00Z")
    assert Mirror(synthetic_db).now() == datetime(2026, 11, 22, 12, tzinfo=timezone.utc)
    for moment in ("2026-11-20T00:00:00+00:00", "2026-11-25T12:00:00Z"):
        monkeypatch.setenv("EDT_NOW", moment)
        at = datetime.fromisoformat(moment.replace("Z", "+00:00"))
        assert Mirror(synthetic_db).search_domains({}) == Mirror(synthetic_db, clock=lambda: at).search_domains({})
    monkeypatch.setenv("EDT_NOW", "yesterday")
    with pytest.raises(ValueError, match=r"EDT_NOW: 'yesterday' is not an ISO 8601 moment"):
        Mirror(synthetic_db)


def test_typed_keyword_reads_yield_the_records_the_api_pages_through(mirror):
    """`Mirror.listings` / `Mirror.pending`: typed keywords in, records out, as sqlite-utils'
    `rows_where` yields rows; the same records and order as the API's pages."""
    rows = list(mirror.listings(tld=".fr", tf_min=20, sort="-trust_flow", limit=7))
    page = mirror.search_domains({"tld": ".fr", "tf_min": "20", "sort": "-trust_flow", "per_page": "7"})["data"]
    assert rows == page and len(rows) == 7
    wide = {"tld": ".fr,.de", "include_closed": "1", "has_bids": "1"}
    every = list(mirror.listings(tld=[".fr", ".de"], include_closed=True, has_bids=True))
    assert len(every) == mirror.search_domains({**wide, "per_page": "1"})["meta"]["total"] > 50
    assert [r["id"] for r in every[:50]] == [r["id"] for r in mirror.search_domains({**wide, "per_page": "50"})["data"]]
    assert all(r["bids_count"] and r["tld"] in (".fr", ".de") for r in every)
    with pytest.raises(ApiError) as refused:
        next(mirror.listings(tf_minn=3))
    assert refused.value.status == 422 and "tf_minn" in str(refused.value)
    assert list(mirror.pending(limit=5)) == mirror.search_pending_delete({"per_page": "5"})["data"]
    assert (
        list(mirror.pending(sort="domain", limit=3))
        == mirror.search_pending_delete({"sort": "domain", "per_page": "3"})["data"]
    )
