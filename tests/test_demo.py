"""The demo source: volumes, shapes, determinism, schema validity, and the load rules.

Everything runs on the `small` scale, generated once per module and loaded once into a
temporary mirror; full-scale volumes are checked on the catalogue (no records needed).
"""

from __future__ import annotations

import collections
import json
import re
import statistics
from datetime import date, datetime, timedelta, timezone

import pytest

import toolkit.demo.loader as loader
import toolkit.demo.worker as worker
from conftest import REFERENCE, mirror_digest, small_demo
from toolkit import Mirror
from toolkit.demo import DemoRefused, SCALES, clear_demo, generate_listings, generate_pending, load_demo
from toolkit.demo.catalog import PENDING_TLDS, PLATFORMS, REGFREE_TLDS
from toolkit.demo.clock import anchor_of
from toolkit.demo.plan import allocate, platform_counts
from toolkit.enrich.score import quality_score
from toolkit.ingest.lifecycle import predict_drop_date
from toolkit.names import split_domain
from toolkit.query.params import PENDING_STATUSES, TOP_CATEGORIES, USE_CASES
from toolkit.sources import PLATFORM_SLUGS, source_by_slug
from toolkit.store.fields import LISTING_FIELDS, PENDING_FIELDS
from toolkit.store.writer import save_listings

TODAY = date(2026, 11, 22)
NOW = datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc)
ANCHOR = anchor_of(TODAY)
SCHEMAS = REFERENCE / "json-schema"
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
SEO_FIELDS = (
    "trust_flow",
    "citation_flow",
    "domain_authority",
    "referring_domains",
    "backlinks_count",
    "score",
    "ttf_topic",
    "ref_domains_edu",
    "ref_domains_gov",
    "wayback_snapshots",
    "wayback_first_date",
)


def clock() -> datetime:
    return NOW


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def listings() -> list[dict]:
    return list(generate_listings("small", 42, TODAY))


@pytest.fixture(scope="module")
def pending() -> list[dict]:
    return list(generate_pending("small", 42, TODAY))


@pytest.fixture(scope="module")
def platform(listings) -> list[dict]:
    return [r for r in listings if r["source"] != "regfree"]


@pytest.fixture(scope="module")
def regfree(listings) -> list[dict]:
    return [r for r in listings if r["source"] == "regfree"]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """A mirror holding the small demo: (path, counts returned by load_demo)."""
    path = tmp_path_factory.mktemp("demo") / "demo.db"
    mirror = Mirror(path, clock=clock, create=True)
    stages = []
    counts = load_demo(mirror.connection(), scale="small", seed=42, today=TODAY, progress=lambda s, n: stages.append(s))
    mirror.close()
    assert stages[-1] == "done" and "listings" in stages and "pending_delete" in stages
    return path, counts


@pytest.fixture()
def mirror(loaded):
    m = Mirror(loaded[0], clock=clock)
    yield m
    m.close()


# -- volumes and spreads ------------------------------------------------------------------


def test_full_scale_volumes_follow_the_seed():
    counts = platform_counts("full")
    assert tuple(counts) == PLATFORM_SLUGS and len(counts) == 22
    assert 560_000 <= sum(counts.values()) <= 566_000
    assert min(counts.values()) == 11 and 185_000 <= max(counts.values()) <= 190_000
    regfree = allocate([w for _, w in REGFREE_TLDS], SCALES["full"].regfree)
    assert len(regfree) == 83 and 163_000 <= sum(regfree) <= 165_000
    pending = allocate([w for _, w in PENDING_TLDS], SCALES["full"].pending)
    assert len(pending) == 125 and 119_000 <= sum(pending) <= 121_000


def test_small_scale_counts_per_source(platform, regfree, pending, loaded):
    per_source = collections.Counter(r["source"] for r in platform)
    assert set(per_source) == set(PLATFORM_SLUGS)
    assert per_source == platform_counts("small")
    full_total = sum(p.full for p in PLATFORMS)
    for p in PLATFORMS:  # the full-scale share, scaled down (at least 2 rows each)
        assert per_source[p.slug] == max(2, round(p.full * 5_000 / full_total))
    assert 4_950 <= len(platform) <= 5_100
    assert 1_480 <= len(regfree) <= 1_560
    assert 980 <= len(pending) <= 1_040
    _, counts = loaded
    assert counts["listings"] == len(platform) and counts["regfree"] == len(regfree)
    assert counts["pending_delete"] == len(pending)
    assert counts["history"] > len(platform) + len(regfree)  # one row per new listing, plus bid trajectories


def test_regfree_spread_and_shape(regfree):
    by_tld = collections.Counter(r["tld"] for r in regfree)
    assert len(by_tld) == 83
    leaders = [tld for tld, _ in by_tld.most_common(10)]
    assert leaders == [".id", ".fr", ".it", ".co", ".in", ".de", ".co.uk", ".nl", ".com.au", ".dk"]
    for r in regfree:
        assert r["type"] == "closeout" and r["auction_type"] is None
        assert r["currency"] is None and r["price"] is None and r["max_bid"] is None and r["effective_price"] is None
        assert r["purchase_url"] is None and r["auction_end_date"] is None and r["bids_count"] is None


def test_pending_spread_sources_and_statuses(pending):
    tlds = collections.Counter(p["tld"] for p in pending)
    assert len(tlds) == 125
    assert tlds.most_common(1)[0][0] == "com"
    statuses = collections.Counter(p["whois_status"] for p in pending)
    assert set(statuses) == set(PENDING_STATUSES)
    assert statuses.most_common(1)[0][1] < 0.6 * len(pending)  # a mix, not one status
    for p in pending:
        assert not p["tld"].startswith(".")
        assert p["domain"].endswith("." + p["tld"]) and split_domain(p["domain"])[1] == "." + p["tld"]
        gtld = len(p["tld"].rpartition(".")[2]) > 2
        assert p["source"] == ("czds-daily" if gtld else "oi-diff")
        assert date.fromisoformat(p["week_end"]).weekday() == 0
        assert p["sld_length"] == len(p["domain"]) - len(p["tld"]) - 1
        assert p["is_idn"] == p["domain"].startswith("xn--")
    assert any(p["is_idn"] for p in pending)


def test_pending_drop_dates_follow_the_registry_timelines(pending):
    ahead = []
    for p in pending:
        expected, _ = predict_drop_date(p["tld"], p["whois_status"], ts(p["first_disappeared_at"]))
        assert p["estimated_drop_date"] == (expected.isoformat() if expected else None)
        if p["estimated_drop_date"]:
            ahead.append((date.fromisoformat(p["estimated_drop_date"]) - TODAY).days)
    n = len(pending)
    assert sum(5 <= a <= 45 for a in ahead) > 0.5 * n  # mostly 5-45 days ahead
    assert 0 < sum(a < 0 for a in ahead) < 0.1 * n  # some already past
    assert 0.05 * n < n - len(ahead) < 0.4 * n  # some timelines not computable
    metrics = [p for p in pending if p["trust_flow"] is not None]
    assert 0 < len(metrics) < 0.2 * n  # pending rows are mostly not SEO-enriched


# -- record shapes --------------------------------------------------------------------------


def test_every_field_key_is_present_with_canonical_times(listings, pending):
    from toolkit.signals.wayback_content import ARCHIVE_FIELDS

    for r in listings:  # the reference fields, then the archive signals `edt enrich` would add
        assert tuple(r) == tuple(LISTING_FIELDS) + ARCHIVE_FIELDS
        for key, kind in LISTING_FIELDS.items():
            value = r[key]
            if value is None:
                continue
            if kind == "datetime":
                assert TIMESTAMP.match(value), (key, value)
            elif kind == "date":
                assert DAY.match(value), (key, value)
    for p in pending:
        # the reference fields, then the toolkit's drop window (an extension field)
        assert tuple(p) == (*PENDING_FIELDS, "drop_window_start", "drop_window_end")
        for key, kind in PENDING_FIELDS.items():
            if p[key] is not None and kind == "datetime":
                assert TIMESTAMP.match(p[key]), (key, p[key])
        if p["estimated_drop_date"] is None:
            assert p["drop_window_start"] is p["drop_window_end"] is None
        else:  # a daily sighting: the window is two days (one at a weekly release), its last the estimate
            assert p["drop_window_start"] <= p["drop_window_end"] == p["estimated_drop_date"], p


def test_ids_unique_and_in_created_order(listings, pending):
    ids = [r["id"] for r in listings]
    assert len(set(ids)) == len(ids) and ids == sorted(ids)
    created = [r["created_at"] for r in listings]
    assert created == sorted(created)
    assert all(ts(c) < ANCHOR for c in created)
    pids = [p["id"] for p in pending]
    assert len(set(pids)) == len(pids) and pids == sorted(pids)


def test_names_unique_pronounceable_and_in_the_tld(listings, pending):
    names = [r["name"] for r in listings]
    assert len(set(names)) == len(names)
    assert len({p["domain"] for p in pending}) == len(pending)
    labels = []
    for r in listings:
        label, suffix = split_domain(r["name"])
        assert suffix == r["tld"], r["name"]
        assert re.fullmatch(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?", label), r["name"]
        labels.append(label)
    hyphens = sum("-" in x for x in labels) / len(labels)
    digits = sum(any(c.isdigit() for c in x) for x in labels) / len(labels)
    assert 0.01 < hyphens < 0.15 and 0.01 < digits < 0.1
    # Made of words and syllables: runs of five consonants are rare.
    assert sum(bool(re.search(r"[bcdfghjklmnpqrstvwxz]{5}", x)) for x in labels) < 0.02 * len(labels)


def test_platform_currency_links_and_kinds(platform):
    by_source = collections.defaultdict(list)
    for r in platform:
        source = source_by_slug(r["source"])
        assert r["currency"] == source.currency
        assert r["purchase_url"] == source.purchase_url.format(name=r["name"])
        assert r["purchase_platform"] == source.name
        by_source[r["source"]].append(r)
    kinds = {slug: {(r["type"], r["auction_type"]) for r in rows} for slug, rows in by_source.items()}
    assert {a for _, a in kinds["dropcatch"]} == {"Dropped", "PreRelease", "PrivateSeller"}
    assert kinds["godaddy"] == {("auction", "Bid"), ("closeout", "BuyNow")}
    assert kinds["dynadot"] == {("closeout", None)}
    for slug in ("namepros", "seodomains", "nameshift", "rakkodomain"):
        assert {t for t, _ in kinds[slug]} == {"closeout"}
    assert ("backorder", None) in kinds["ukdroplists"]
    assert all(r["auction_end_date"] is None for r in by_source["dynadot"])

    def share(slug: str, tlds: set[str]) -> float:
        return sum(r["tld"] in tlds for r in by_source[slug]) / len(by_source[slug])

    assert share("webexpire", {".fr"}) > 0.8 and share("bloomup", {".fr"}) > 0.7
    assert share("ukdroplists", {".uk", ".co.uk", ".org.uk", ".me.uk"}) == 1.0
    assert share("domainlore", {".uk", ".co.uk", ".org.uk"}) == 1.0
    assert share("nicsell", {".de", ".fr", ".nl", ".eu", ".at", ".ch", ".be", ".it"}) == 1.0
    assert share("rakkodomain", {".jp", ".com", ".co.jp", ".net", ".org", ".info"}) == 1.0
    assert share("subreg", {".cz", ".sk", ".eu"}) > 0.8
    assert share("dropcatch", {".com"}) > 0.6
    yen = [r["price"] for r in by_source["rakkodomain"]]
    assert min(yen) >= 980 and all(float(p).is_integer() for p in yen)  # believable yen amounts
    assert all(p >= 1 for r in platform if (p := r["price"]) is not None)


def test_auctions_end_soon_with_heavy_tailed_bids(platform):
    auctions = [r for r in platform if r["type"] == "auction"]
    days = [(ts(r["auction_end_date"]) - ANCHOR).total_seconds() / 86_400 for r in auctions]
    assert sum(0 <= d <= 10 for d in days) > 0.85 * len(days)
    assert 0 < sum(d < 0 for d in days) < 0.1 * len(days)  # a few already ended (not live)
    bids = [r["bids_count"] for r in auctions]
    assert sum(b == 0 for b in bids) > 0.5 * len(bids) and max(bids) >= 20
    for r in platform:
        if r["bids_count"]:
            assert r["max_bid"] > r["price"] and r["effective_price"] == r["max_bid"]
        else:
            assert r["max_bid"] is None and r["effective_price"] == r["price"]
    closeouts = [r for r in platform if r["type"] == "closeout" and r["source"] != "godaddy"]
    assert all(r["auction_end_date"] is None for r in closeouts)


def test_null_share_and_metric_shapes(platform, listings):
    not_enriched = [r for r in platform if r["trust_flow"] is None]
    assert 0.25 <= len(not_enriched) / len(platform) <= 0.40
    for r in not_enriched:
        assert all(r[f] is None for f in SEO_FIELDS) and r["has_gmb"] is False
    enriched = [r for r in listings if r["trust_flow"] is not None]
    assert sum(r["trust_flow"] <= r["citation_flow"] for r in enriched) > 0.85 * len(enriched)
    assert sum(r["trust_flow"] <= r["citation_flow"] for r in enriched) < len(enriched)
    rds = [r["referring_domains"] for r in enriched]
    assert max(rds) > 50 * statistics.median(rds)  # heavy tail
    assert all(r["backlinks_count"] >= r["referring_domains"] for r in enriched)
    assert all(0 <= r[f] <= 100 for r in enriched for f in ("trust_flow", "citation_flow", "domain_authority"))
    assert sum(r["ref_domains_edu"] == 0 for r in enriched) > 0.8 * len(enriched)
    assert sum(r["ref_domains_gov"] == 0 for r in enriched) > 0.8 * len(enriched)
    for r in enriched:
        assert r["score"] == quality_score(**r)
        assert 0 <= r["score"] <= 100


def test_archive_history_and_age(listings):
    dated = [r for r in listings if r["wayback_first_date"]]
    years = [int(r["wayback_first_date"][:4]) for r in dated]
    assert min(years) <= 2000 and max(years) >= TODAY.year - 1 and min(years) >= 1996
    for r in dated:
        first = date.fromisoformat(r["wayback_first_date"])
        assert first <= date.fromisoformat(r["wayback_last_date"]) <= TODAY
        assert r["age"] == TODAY.year - first.year - ((TODAY.month, TODAY.day) < (first.month, first.day))
        assert r["wayback_snapshots"] >= 1
    old = [r["wayback_snapshots"] for r in dated if r["age"] >= 15]
    young = [r["wayback_snapshots"] for r in dated if r["age"] < 5]
    assert statistics.median(old) > 2 * statistics.median(young)  # snapshots grow with age
    assert all(r["age"] is None and r["wayback_snapshots"] is None for r in listings if not r["wayback_first_date"])


def test_languages_topics_tech_and_business_profiles(listings):
    def languages(tld: str) -> collections.Counter:
        return collections.Counter(r["language"] for r in listings if r["tld"] == tld and r["language"])

    for tld, code, least in ((".fr", "FR", 0.8), (".de", "DE", 0.8), (".it", "IT", 0.8), (".com", "EN", 0.7)):
        found = languages(tld)
        assert found[code] > least * sum(found.values()), (tld, found)
    assert all(r["language"] == r["language"].upper() for r in listings if r["language"])
    assert any(r["language"] is None for r in listings if r["trust_flow"] is not None)
    topics = [r["ttf_topic"] for r in listings if r["ttf_topic"]]
    assert all(t.split("/")[0] in TOP_CATEGORIES and "/" in t for t in topics if t not in ("World", "Regional"))
    assert len({t.split("/")[0] for t in topics}) >= 14
    techs = [r for r in listings if r["historical_tech"] is not None]
    assert 0.1 * len(listings) < len(techs) < 0.6 * len(listings)
    assert any(r["historical_tech"] == [] for r in techs)
    seen = collections.Counter(t for r in techs for t in r["historical_tech"])
    assert {"WordPress", "Shopify", "Stripe", "jQuery", "Google Analytics"} <= set(seen)
    for r in listings:
        if r["historical_tech"] is None:
            assert r["use_cases"] is None
        else:
            assert set(r["use_cases"]) <= set(USE_CASES)
    gmb = [r for r in listings if r["has_gmb"]]
    assert 0 < len(gmb) < 0.1 * len(listings)
    assert all(r["gmb_name"] and r["gmb_category"] and r["gmb_address"] for r in gmb)
    assert all(r["gmb_name"] is None for r in listings if not r["has_gmb"])
    spammy = [r for r in listings if r["is_spammy"]]
    assert 0 < len(spammy) < 0.06 * len(listings)
    assert all(r["trust_flow"] <= 5 and r["citation_flow"] >= 25 for r in spammy)
    traffic = [r for r in listings if r["historical_traffic_etv"] is not None]
    assert traffic and all(r["historical_traffic_peak"] >= r["historical_traffic_etv"] for r in traffic)
    assert all(len(r["historical_traffic_spark"]) == 12 for r in traffic)
    seo = [r for r in listings if r["source"] == "seodomains"]
    assert all(r["seo_domains_category"] in TOP_CATEGORIES for r in seo)
    assert all(r["seo_domains_category"] is None for r in listings if r["source"] != "seodomains")


# -- determinism ------------------------------------------------------------------------------


def test_same_seed_and_day_give_the_same_records(listings, pending):
    assert list(generate_listings("small", 42, TODAY)) == listings
    assert list(generate_pending("small", 42, TODAY)) == pending


def test_another_seed_or_day_gives_other_records(listings):
    other = list(generate_listings("small", 43, TODAY))
    assert [r["name"] for r in other[:200]] != [r["name"] for r in listings[:200]]
    later_day = TODAY + timedelta(days=40)
    later = list(generate_listings("small", 42, later_day))
    assert [r["name"] for r in later] != [r["name"] for r in listings]
    anchor = anchor_of(later_day)
    assert all(ts(r["created_at"]) < anchor for r in later)
    assert ts(later[-1]["created_at"]) > anchor - timedelta(days=1)  # dates move with `today`
    ends = [ts(r["auction_end_date"]) for r in later if r["type"] == "auction"]
    assert sum(anchor <= e <= anchor + timedelta(days=10) for e in ends) > 0.85 * len(ends)


def test_unknown_scale_is_refused():
    with pytest.raises(ValueError, match="small"):
        next(generate_listings("huge", 42, TODAY))


# -- the loaded mirror -----------------------------------------------------------------------


def _format_checker():
    from jsonschema import FormatChecker

    checker = FormatChecker()

    @checker.checks("date-time", raises=ValueError)
    def is_datetime(value: object) -> bool:  # jsonschema checks date-time only with an extra package
        if not isinstance(value, str):
            return True
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})", value):
            raise ValueError(f"not an RFC 3339 date-time: {value!r}")
        datetime.fromisoformat(value.replace("Z", "+00:00"))
        return True

    return checker


def test_every_record_from_the_mirror_validates_against_the_reference(mirror, listings, pending):
    import jsonschema

    checker = _format_checker()
    domain = jsonschema.Draft202012Validator(
        json.loads((SCHEMAS / "catchdoms-domain-schema.json").read_text()), format_checker=checker
    )
    pending_schema = jsonschema.Draft202012Validator(
        json.loads((SCHEMAS / "catchdoms-pending-delete-domain-schema.json").read_text()), format_checker=checker
    )
    seen = 0
    for source in (None, "regfree"):
        page = 1
        while True:
            params = {"per_page": 100, "page": page, "include_closed": 1, "sort": "id"}
            if source:
                params["source"] = source
            envelope = mirror.search_domains(params, plan="enterprise")
            for record in envelope["data"]:
                errors = sorted(domain.iter_errors(record), key=str)
                assert not errors, (record["id"], [e.message for e in errors[:3]])
                seen += 1
            if envelope["links"]["next"] is None:
                break
            page += 1
    assert seen == len(listings)
    for record in listings[:: max(1, len(listings) // 50)]:
        one = mirror.get_domain(record["id"], plan="enterprise")["data"]
        assert not list(domain.iter_errors(one))
        assert one["name"] == record["name"] and one["score"] == record["score"]
    for record in pending:
        assert not list(pending_schema.iter_errors(record))
    page = mirror.search_pending_delete({"include_past": 1, "per_page": 200}, plan="enterprise")
    assert page["meta"]["total"] == len(pending)
    for record in page["data"]:
        assert not list(pending_schema.iter_errors(record))


def test_the_mirror_holds_what_was_generated(mirror, listings, pending):
    conn = mirror.connection()
    assert conn.execute("SELECT count(*) FROM listings WHERE origin = 'demo'").fetchone()[0] == len(listings)
    assert conn.execute("SELECT count(*) FROM pending_delete WHERE origin = 'demo'").fetchone()[0] == len(pending)
    assert conn.execute("SELECT count(*) FROM raw_records").fetchone()[0] == 0  # keep_raw=False
    meta = dict(conn.execute("SELECT key, value FROM mirror_meta"))
    assert meta["demo_scale"] == "small" and meta["demo_seed"] == "42" and TIMESTAMP.match(meta["demo_generated_at"])
    live = mirror.search_domains({"per_page": 1}, plan="enterprise")["meta"]["total"]
    ended = sum(
        1 for r in listings if r["source"] != "regfree" and r["auction_end_date"] and ts(r["auction_end_date"]) <= NOW
    )
    assert live == sum(r["source"] != "regfree" for r in listings) - ended


def test_bid_trajectories_are_in_listing_history(mirror):
    conn = mirror.connection()
    rows = conn.execute(
        "SELECT listing_id, observed_at, bids_count, max_bid FROM listing_history "
        "WHERE listing_id IN (SELECT listing_id FROM listing_history GROUP BY listing_id "
        "HAVING count(DISTINCT bids_count) > 1) ORDER BY listing_id, observed_at"  # metric-only histories: test_signals
    ).fetchall()
    trajectories = collections.defaultdict(list)
    for listing_id, observed, bids, top in rows:
        trajectories[listing_id].append((observed, bids, top))
    assert len(trajectories) > 30
    for listing_id, states in trajectories.items():
        bids = [b for _, b, _ in states]
        assert bids == sorted(bids) and bids[0] < bids[-1], listing_id
        first, last, created = conn.execute(
            "SELECT first_seen_at, last_seen_at, created_at FROM listings WHERE id = ?", [listing_id]
        ).fetchone()
        assert created < first < last == ANCHOR.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_load_refuses_real_data_unless_forced_and_clear_keeps_it(tmp_path):
    m = Mirror(tmp_path / "mixed.db", clock=clock, create=True)
    conn = m.connection()
    real = {
        "id": 7,
        "name": "realdomain.com",
        "tld": ".com",
        "source": "sedo",
        "type": "auction",
        "price": 69.0,
        "currency": "EUR",
        "bids_count": 0,
        "created_at": "2026-11-20T08:00:00Z",
    }
    save_listings(conn, [real], origin="sync", observed_at="2026-11-21T08:00:00Z")
    with pytest.raises(DemoRefused, match="force"):
        load_demo(conn, scale="small", seed=1, today=TODAY)
    assert conn.execute("SELECT count(*) FROM listings").fetchone()[0] == 1
    counts = load_demo(conn, scale="small", seed=1, today=TODAY, force=True)
    total = conn.execute("SELECT count(*) FROM listings").fetchone()[0]
    assert total == counts["listings"] + counts["regfree"] + 1
    again = load_demo(conn, scale="small", seed=1, today=TODAY, force=True)  # replaces, never duplicates
    assert again == counts
    assert conn.execute("SELECT count(*) FROM listings").fetchone()[0] == total
    removed = clear_demo(conn)
    assert removed["listings"] == counts["listings"] and removed["regfree"] == counts["regfree"]
    assert removed["pending_delete"] == counts["pending_delete"] and removed["history"] == counts["history"]
    assert conn.execute("SELECT id, origin FROM listings").fetchall() == [(7, "sync")]
    assert conn.execute("SELECT count(*) FROM pending_delete").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM listing_history WHERE listing_id = 7").fetchone()[0] == 1
    assert conn.execute("SELECT count(*) FROM listing_history").fetchone()[0] == 1
    assert not conn.execute("SELECT 1 FROM mirror_meta WHERE key LIKE 'demo_%'").fetchall()
    assert m.search_domains({"contains": "realdomain"}, plan="enterprise")["meta"]["total"] == 1  # FTS intact
    m.close()


def test_a_forced_demo_never_writes_over_synced_rows_numbered_as_its_own(tmp_path):
    """The demo numbers its listings as the service does: beside a synced mirror it would
    write over them (and `--clear` then delete them); it is refused, force or not."""
    m = Mirror(tmp_path / "synced.db", clock=clock, create=True)
    conn = m.connection()
    real = {"id": 38_400_517, "name": "kaorny.com", "tld": ".com", "source": "sedo", "type": "auction", "price": 9.0}
    save_listings(conn, [{**real, "currency": "EUR", "created_at": "2026-11-20T08:00:00Z"}], origin="sync")
    for force in (False, True):
        with pytest.raises(DemoRefused, match="would write over them. Load it into another file"):
            load_demo(conn, scale="small", seed=1, today=TODAY, force=force)
    assert conn.execute("SELECT id, name, origin FROM listings").fetchall() == [(38_400_517, "kaorny.com", "sync")]
    m.close()
    from click.testing import CliRunner

    from toolkit.cli import cli

    said = CliRunner().invoke(cli, ["demo", "--force", "--db", str(tmp_path / "synced.db")])
    assert said.exit_code == 2 and "Load it into another file (--db demo.db)" in said.output
    assert "pass --force" not in said.output  # --force is refused too: never offered as the way


def test_clear_demo_on_a_demo_only_mirror_empties_it(tmp_path):
    m = Mirror(tmp_path / "only.db", clock=clock, create=True)
    conn = m.connection()
    counts = load_demo(conn, scale="small", seed=5, today=TODAY)
    removed = clear_demo(conn)
    assert {k: removed[k] for k in counts} == counts
    for table in ("listings", "pending_delete", "listing_history"):
        assert conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0
    m.close()


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_the_worker_process_path_writes_the_same_mirror(loaded, tmp_path, monkeypatch, method):
    import multiprocessing

    assert method in multiprocessing.get_all_start_methods(), f"no {method} start method here"
    monkeypatch.setattr(worker, "WORKER_MIN_RECORDS", 0)
    monkeypatch.setattr(worker, "_start_method", lambda: method)
    m = Mirror(tmp_path / "worker.db", clock=clock, create=True)
    counts = load_demo(m.connection(), scale="small", seed=42, today=TODAY)
    assert counts == loaded[1]
    reference = Mirror(loaded[0], clock=clock)
    for table, order in (("listings", "id"), ("pending_delete", "id"), ("listing_history", "listing_id, observed_at")):
        query = f"SELECT * FROM {table} ORDER BY {order}"
        if table == "listing_history":
            query = f"SELECT listing_id, observed_at, price, max_bid, bids_count FROM {table} ORDER BY {order}"
        assert m.connection().execute(query).fetchall() == reference.connection().execute(query).fetchall(), table
    reference.close()
    m.close()


def test_a_failing_generator_process_fails_the_load_and_leaves_the_mirror_as_it_was(tmp_path, monkeypatch):
    import multiprocessing

    assert "fork" in multiprocessing.get_all_start_methods(), "needs fork to inject the failure into the worker"
    path = small_demo(tmp_path / "broken.db", seed=3, today=TODAY)
    before = mirror_digest(path)
    monkeypatch.setattr(worker, "WORKER_MIN_RECORDS", 0)
    monkeypatch.setattr(worker, "_start_method", lambda: "fork")

    def broken(*args, **kwargs):
        raise ZeroDivisionError("injected")

    monkeypatch.setattr(worker, "pending_chunks", broken)  # fails after every listing was written
    m = Mirror(path, clock=clock)
    with pytest.raises(RuntimeError, match="injected"):
        load_demo(m.connection(), scale="small", seed=42, today=TODAY)
    conn = m.connection()
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert mirror_digest(path) == before  # the seed-3 demo, whole: rows, indexes, triggers, FTS
    assert m.search_domains({"per_page": 1}, plan="enterprise")["meta"]["total"] > 0
    m.close()


@pytest.mark.parametrize(
    ("clock", "day"),
    [
        (datetime(2026, 11, 24, 0, 10, tzinfo=timezone.utc), date(2026, 11, 23)),  # before the 07:00 fetch: yesterday
        (datetime(2026, 11, 24, 6, 59, tzinfo=timezone.utc), date(2026, 11, 23)),
        (datetime(2026, 11, 24, 7, 0, tzinfo=timezone.utc), date(2026, 11, 24)),
        (datetime(2026, 11, 24, 23, 59, tzinfo=timezone.utc), date(2026, 11, 24)),
    ],
)
def test_without_a_day_the_demo_never_stamps_a_row_after_the_clock(clock, day):
    """A demo loaded at 00:10 UTC once stamped its rows 07:00 that day, in the future: a saved
    search then counted every match as new since it was saved."""
    assert loader.demo_today(None, now=clock) == loader.demo_day(clock) == day
    assert anchor_of(loader.demo_day(clock)) <= clock
    assert loader.demo_today(date(2026, 1, 5), now=clock) == date(2026, 1, 5)  # a day given is kept
