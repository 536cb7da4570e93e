"""The benchmark's engines agree with the query layer on a small synthetic mirror.

`synthetic_mirror` writes records shaped as the reference Domain and PendingDeleteDomain
schemas through the only writer (`save_listings`, `save_pending`), with what the suite's
filters meet: nulls in every metric, regfree rows, auctions ending in the past and the
future, closed listings, multi-label TLDs, mixed-case topics and tech labels. The same
function, with larger counts, builds a full-scale synthetic mirror for profiling:

    python tests/test_bench.py /tmp/synthetic_full.db 563000 164000 120000
"""

from __future__ import annotations

import random
import re
import sys
import time
from datetime import date, datetime, timedelta, timezone

NOW = datetime(2026, 11, 22, 12, 0, 0, tzinfo=timezone.utc)

_PLATFORM_TLDS = [
    (".com", 40),
    (".net", 7),
    (".org", 6),
    (".fr", 7),
    (".de", 8),
    (".co.uk", 4),
    (".uk", 2),
    (".io", 3),
    (".ai", 1),
    (".nl", 3),
    (".it", 3),
    (".es", 2),
    (".be", 2),
    (".info", 2),
    (".com.au", 1),
    (".ch", 1),
    (".pl", 1),
    (".eu", 1),
    (".co", 1),
    (".shop", 1),
]
_CCTLDS = [
    "fr",
    "de",
    "nl",
    "be",
    "it",
    "es",
    "pl",
    "se",
    "ch",
    "at",
    "dk",
    "fi",
    "no",
    "pt",
    "cz",
    "sk",
    "hu",
    "ro",
    "bg",
    "gr",
    "ie",
    "lt",
    "lv",
    "ee",
    "si",
    "hr",
    "co.uk",
    "com.au",
    "ca",
    "jp",
    "kr",
    "br",
    "mx",
]
_GTLDS = ["com", "net", "org", "info", "biz", "xyz", "online", "site", "shop", "store", "app", "dev"]
_SOURCE_WEIGHTS = {
    "dynadot": 12,
    "dropcatch": 14,
    "godaddy": 16,
    "namecheap": 8,
    "sedo": 7,
    "snapnames": 5,
    "catched": 4,
    "gname": 4,
    "ukdroplists": 3,
    "subreg": 2,
    "webexpire": 3,
    "parkio": 1,
    "bloomup": 2,
    "nicsell": 4,
    "namesilo": 3,
    "gnews-domains": 2,
    "backorders-domains": 2,
    "domainlore": 2,
    "rakkodomain": 2,
    "seodomains": 3,
    "nameshift": 1,
    "namepros": 2,
}
_WORDS = [
    "shop",
    "car",
    "auto",
    "ai",
    "health",
    "travel",
    "green",
    "bio",
    "maison",
    "cloud",
    "tech",
    "data",
    "home",
    "garden",
    "pet",
    "dog",
    "cat",
    "food",
    "wine",
    "beer",
    "coffee",
    "bike",
    "moto",
    "solar",
    "energy",
    "eco",
    "smart",
    "web",
    "net",
    "digital",
    "media",
    "news",
    "blog",
    "art",
    "design",
    "studio",
    "photo",
    "music",
    "game",
    "play",
    "sport",
    "fit",
    "yoga",
    "med",
    "care",
    "dental",
    "law",
    "legal",
    "tax",
    "money",
    "bank",
    "pay",
    "crypto",
    "coin",
    "trade",
    "invest",
    "home",
    "house",
    "immo",
    "build",
    "craft",
    "wood",
    "metal",
    "fashion",
    "style",
    "beauty",
    "hair",
    "skin",
    "baby",
    "kids",
    "school",
    "learn",
    "edu",
    "job",
    "work",
    "hotel",
    "trip",
    "tour",
    "voyage",
    "city",
    "paris",
    "berlin",
    "london",
    "local",
    "best",
    "top",
    "my",
    "the",
    "pro",
    "hub",
    "zone",
    "lab",
    "box",
    "go",
    "get",
    "buy",
    "deal",
    "market",
    "store",
    "mart",
    "plus",
    "club",
    "team",
    "group",
    "world",
    "global",
    "one",
    "first",
    "new",
    "blue",
    "red",
    "gold",
    "star",
    "sun",
    "sea",
    "sky",
    "mountain",
    "river",
    "farm",
    "fresh",
    "organic",
    "vegan",
    "chef",
    "cook",
    "pizza",
    "bar",
]
_TOPICS = [
    "Health",
    "Health/Fitness",
    "Health/Medicine",
    "Healthcare/Misc",
    "health/nutrition",
    "Recreation/Travel",
    "Recreation/Travel/Cruises",
    "Recreation/Autos",
    "Business/Marketing",
    "Business/Real Estate",
    "Computers/Internet",
    "Computers/Software",
    "Shopping/Clothing",
    "Arts/Music",
    "News/Media",
    "Sports/Cycling",
    "Society/Law",
    "Science/Biology",
    "Games/Video Games",
    "Home/Gardening",
    "Regional/Europe",
    "Reference",
]
_TECH_SETS = [
    ["WordPress", "PHP", "jQuery"],
    ["WordPress", "WooCommerce", "PHP"],
    ["Shopify"],
    ["Magento", "PHP"],
    ["React", "Node.js"],
    ["Joomla", "PHP"],
    ["wordpress"],
    [],
    ["Bootstrap", "jQuery"],
    ["Wix"],
]
_LANGUAGES = [("EN", 45), ("FR", 12), ("DE", 12), ("ES", 7), ("IT", 6), ("NL", 5), ("PL", 3), ("ja", 2), ("pt", 3)]


def _ts(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _use_cases(tech: list[str]) -> list[str]:
    out = []
    if {"WooCommerce", "Shopify", "Magento"} & set(tech):
        out.append("ecommerce")
    if {"WordPress", "Joomla"} & set(tech):
        out.append("media")
    if {"React", "Node.js"} & set(tech):
        out.append("saas")
    return out


def listing_records(n: int, *, regfree: int, now: datetime = NOW, seed: int = 1, id_start: int = 1):
    """`n` platform listings and `regfree` deleted-ccTLD rows, ids interleaved with gaps."""
    from toolkit.sources import source_by_slug

    rnd = random.Random(seed)
    tlds, tld_w = zip(*_PLATFORM_TLDS)
    slugs, slug_w = zip(*_SOURCE_WEIGHTS.items())
    langs, lang_w = zip(*_LANGUAGES)
    kinds = ["regfree"] * regfree + ["platform"] * n
    rnd.shuffle(kinds)
    next_id = id_start
    for i, kind in enumerate(kinds):
        next_id += rnd.choice((1, 1, 1, 2, 5))
        if kind == "regfree":
            source, tld = "regfree", "." + rnd.choice(_CCTLDS)
        else:
            source, tld = rnd.choices(slugs, slug_w)[0], rnd.choices(tlds, tld_w)[0]
        label = rnd.choice(_WORDS) + rnd.choice(("", "", "", "-")) + rnd.choice(_WORDS)
        if rnd.random() < 0.3:
            label += str(rnd.randint(1, 999))
        name = f"{label}{i % 97 if rnd.random() < 0.5 else ''}{tld}"
        typ = "auction" if source == "regfree" else rnd.choices(("auction", "closeout", "backorder"), (50, 35, 15))[0]
        end = bids = max_bid = None
        price = None if source == "regfree" else round(rnd.lognormvariate(3.5, 1.2), 2)
        if source != "regfree" and typ == "auction":
            end = _ts(now + timedelta(minutes=rnd.randint(-3 * 1440, 10 * 1440)))
            bids = rnd.choices((0, 1, 2, 5, 12, 40), (45, 15, 12, 12, 10, 6))[0]
            max_bid = round(price + rnd.lognormvariate(3, 1), 2) if bids else None
        elif source != "regfree" and rnd.random() < 0.2:
            end = _ts(now + timedelta(days=rnd.randint(-5, 30)))
        enriched = rnd.random() < (0.8 if source == "regfree" else 0.4)
        tf = int(min(100, rnd.expovariate(1 / 12))) if enriched else None
        first = None
        if rnd.random() < 0.65:
            first = (date(1996, 1, 1) + timedelta(days=rnd.randint(0, 365 * 29))).isoformat()
            if rnd.random() < 0.01:  # a birthday on today's date
                first = f"{now.year - rnd.randint(1, 25)}-{now.month:02d}-{now.day:02d}"
        tech = rnd.choice(_TECH_SETS) if rnd.random() < 0.25 else None
        traffic = int(rnd.lognormvariate(5, 2)) if enriched and rnd.random() < 0.5 else None
        gmb = rnd.random() < 0.03
        yield {
            "id": next_id,
            "name": name,
            "tld": tld,
            "source": source,
            "type": typ,
            "auction_type": rnd.choice(("Bid", "BuyNow", "Dropped")) if typ == "auction" else None,
            "price": price,
            "max_bid": max_bid,
            "currency": source_by_slug(source).currency,
            "bids_count": bids,
            "auction_end_date": end,
            "estibot_appraisal": round(rnd.lognormvariate(5, 1.5)) if rnd.random() < 0.3 else None,
            "score": rnd.randint(0, 100) if rnd.random() < 0.85 else None,
            "is_spammy": rnd.random() < 0.04,
            "wayback_snapshots": int(rnd.lognormvariate(4, 2)) if first else None,
            "wayback_first_date": first,
            "wayback_last_date": (now.date() - timedelta(days=rnd.randint(30, 3000))).isoformat() if first else None,
            "pagerank": rnd.randint(0, 6) if enriched else None,
            "domain_authority": int(min(100, rnd.expovariate(1 / 15))) if enriched else None,
            "backlinks_count": int(rnd.lognormvariate(5, 2.5)) if enriched else None,
            "referring_domains": rnd.choice((0, 0, int(rnd.lognormvariate(3, 1.8)))) if enriched else None,
            "trust_flow": tf,
            "citation_flow": min(100, tf + rnd.randint(-3, 25)) if enriched else None,
            "ttf_topic": rnd.choice(_TOPICS) if enriched and rnd.random() < 0.8 else None,
            "ref_domains_edu": rnd.choice((0, 0, 0, 1, 4)) if enriched else None,
            "ref_domains_gov": rnd.choice((0, 0, 0, 0, 2)) if enriched else None,
            "ref_domains_dofollow": int(rnd.lognormvariate(2, 1.5)) if enriched else None,
            "indexed_pages": rnd.randint(0, 500) if enriched and rnd.random() < 0.3 else None,
            "historical_tech": tech,
            "use_cases": _use_cases(tech) if tech is not None else None,
            "historical_traffic_etv": traffic,
            "historical_traffic_peak": int(traffic * rnd.uniform(1, 5)) if traffic is not None else None,
            "historical_traffic_spark": [rnd.randint(0, 900) for _ in range(6)] if traffic is not None else None,
            "historical_traffic": {"etv": traffic, "countries": {"us": traffic}} if traffic is not None else None,
            "language": rnd.choices(langs, lang_w)[0] if first and rnd.random() < 0.8 else None,
            "has_gmb": gmb,
            "gmb_name": label.title() if gmb else None,
            "whois_status": rnd.choice((["clientHold"], ["pendingDelete"], ["ok"])) if rnd.random() < 0.2 else None,
            "purchase_url": f"https://example.test/{source}/{name}",
            "purchase_platform": source,
            "created_at": _ts(now - timedelta(minutes=rnd.randint(0, 120 * 1440))),
            "updated_at": _ts(now - timedelta(minutes=rnd.randint(0, 3 * 1440))),
        }


def pending_records(n: int, *, now: datetime = NOW, seed: int = 2):
    rnd = random.Random(seed)
    statuses = ["pendingDelete", "redemptionPeriod", "serverHold", "clientHold", "transition", "quarantine"]
    tlds = _CCTLDS + _GTLDS
    for i in range(1, n + 1):
        tld = rnd.choice(tlds)
        label = rnd.choice(_WORDS) + rnd.choice(("", "", "-", "")) + rnd.choice(_WORDS)
        if rnd.random() < 0.25:
            label += str(rnd.randint(0, 99))
        label += str(i % 1000) if rnd.random() < 0.5 else ""
        drop = now.date() + timedelta(days=rnd.randint(-15, 50)) if rnd.random() < 0.88 else None
        week = now.date() - timedelta(days=now.weekday() + 1 + 7 * rnd.randint(0, 3))
        enriched = rnd.random() < 0.3
        yield {
            "id": i,
            "domain": f"{label}.{tld}",
            "tld": tld,
            "source": "czds-daily" if tld in _GTLDS else "oi-diff",
            "week_end": week.isoformat(),
            "first_disappeared_at": _ts(now - timedelta(days=rnd.randint(1, 30))),
            "whois_status": rnd.choices(statuses, (40, 30, 10, 10, 5, 5))[0],
            "dns_status": rnd.choice(("NXDOMAIN", "SERVFAIL", None)),
            "estimated_drop_date": drop.isoformat() if drop else None,
            "whois_checked_at": _ts(now - timedelta(hours=rnd.randint(1, 96))),
            "is_idn": False,
            "score": rnd.randint(0, 100) if enriched else None,
            "domain_authority": rnd.randint(0, 40) if enriched else None,
            "trust_flow": rnd.randint(0, 40) if enriched else None,
            "citation_flow": rnd.randint(0, 50) if enriched else None,
            "language": rnd.choice(("EN", "FR", "DE", None)),
            "created_at": _ts(now - timedelta(days=rnd.randint(1, 30))),
            "updated_at": _ts(now - timedelta(days=rnd.randint(0, 3))),
        }


def synthetic_mirror(path, listings: int, regfree: int, pending: int, *, now: datetime = NOW, bulk: bool = False):
    """Write a synthetic mirror at `path`; a few listings closed. Returns the path."""
    from contextlib import nullcontext

    from toolkit import Mirror
    from toolkit.store.schema import bulk_load
    from toolkit.store.writer import close_listings, save_listings, save_pending

    mirror = Mirror(path, clock=lambda: now, create=True)
    conn = mirror.connection()
    observed = _ts(now - timedelta(days=1))
    with bulk_load(conn) if bulk else nullcontext():
        save_listings(
            conn,
            listing_records(listings, regfree=regfree, now=now),
            origin="sync",
            observed_at=observed,
            keep_raw=not bulk,
            batch_size=5000,
        )
        save_pending(
            conn,
            pending_records(pending, now=now),
            origin="sync",
            observed_at=observed,
            keep_raw=not bulk,
            batch_size=5000,
        )
    ids = [row[0] for row in conn.execute("SELECT id FROM listings WHERE id % 37 = 0")]
    close_listings(conn, ids, closed_at=_ts(now - timedelta(hours=6)))
    mirror.close()
    return path


# -- the test --------------------------------------------------------------------------


def test_engines_agree_on_a_small_mirror(tmp_path):
    from toolkit.bench import build_suite, run_bench

    db = synthetic_mirror(tmp_path / "bench.db", listings=300, regfree=60, pending=120)
    timings = run_bench(db, repeat=1, now=NOW)
    assert len(build_suite(NOW.date(), max_id=1000)) >= 30
    assert len(timings) >= 30
    datasets = {t.dataset for t in timings}
    assert datasets == {"domains", "pending"}
    bad = [(t.name, t.mismatch) for t in timings if not t.agree]
    assert not bad, bad
    # The suite is not vacuous on this mirror: most queries return rows.
    assert sum(t.total > 0 for t in timings) >= 0.7 * len(timings)
    for t in timings:
        assert t.ql_ms >= 0 and t.duckdb_ms >= 0 and t.pandas_ms >= 0


def test_a_mismatch_is_reported(tmp_path, monkeypatch):
    """The cross-check is not vacuous: a wrong query layer answer is caught."""
    from toolkit import bench
    from toolkit.query import Mirror

    db = synthetic_mirror(tmp_path / "bench.db", listings=120, regfree=20, pending=40)
    real = Mirror.search_domains

    def off_by_one(self, params=None, plan=None, **kw):
        envelope = real(self, params, plan, **kw)
        if (params or {}).get("tld") == ".fr":
            envelope["meta"]["total"] += 1
        return envelope

    monkeypatch.setattr(Mirror, "search_domains", off_by_one)
    timings = bench.run_bench(db, repeat=1, now=NOW, only="tld=.fr")
    assert timings and not timings[0].agree and "total" in timings[0].mismatch
    code = bench.main(["--db", str(db), "--repeat", "1", "--only", "tld=.fr", "--now", NOW.isoformat()])
    assert code == 1


def test_main_prints_markdown(tmp_path, capsys):
    from toolkit import bench

    db = synthetic_mirror(tmp_path / "bench.db", listings=100, regfree=20, pending=30)
    code = bench.main(["--db", str(db), "--repeat", "1", "--markdown", "--only", "pending", "--now", NOW.isoformat()])
    out = capsys.readouterr().out
    assert code == 0
    assert "| query |" in out and "p95" in out and "ql / duckdb" in out


def test_random_requests_are_drawn_from_the_parameter_table_and_agree(tmp_path):
    """`--random N --seed S`: the same seed draws the same requests, every filter of the
    parameter table can be drawn, and the three engines agree on every one of them."""
    from toolkit import bench
    from toolkit.query.params import DOMAIN_PARAMS

    db = synthetic_mirror(tmp_path / "bench.db", listings=400, regfree=80, pending=20)
    frames = bench.load_frames(db, NOW)
    first = bench.random_suite(frames.listings, NOW.date(), 300, seed=3)
    again = bench.random_suite(frames.listings, NOW.date(), 300, seed=3)
    other = bench.random_suite(frames.listings, NOW.date(), 300, seed=4)
    assert [q.params for q in first] == [q.params for q in again]
    assert [q.params for q in first] != [q.params for q in other]
    drawn = {name for q in first for name in q.params}
    filters = {n for n, p in DOMAIN_PARAMS.items() if p.clause is not None} - {"seen_after"}
    assert filters <= drawn, filters - drawn
    assert all(1 <= len(set(q.params) & filters) <= 4 for q in first)
    report = bench.bench(db, repeat=1, now=NOW, random=40, seed=11)
    assert len(report.timings) == 40 and report.suite == "40 random requests, seed 11"
    assert report.answered_by == ["columnar"]
    bad = [(t.name, t.mismatch) for t in report.timings if not t.agree]
    assert not bad, bad
    assert sum(t.total > 0 for t in report.timings) >= 10  # not a suite of empty answers


def test_main_refuses_a_missing_database(tmp_path, capsys):
    from toolkit import bench

    assert bench.main(["--db", str(tmp_path / "nope.db")]) == 2
    assert "nope.db" in capsys.readouterr().err


if __name__ == "__main__":  # build a synthetic mirror for profiling
    out, n, r, p = sys.argv[1], *map(int, sys.argv[2:5])
    t0 = time.perf_counter()
    synthetic_mirror(out, n, r, p, now=datetime.now(timezone.utc).replace(microsecond=0), bulk=True)
    print(f"{out}: {n} listings, {r} regfree, {p} pending in {time.perf_counter() - t0:.0f} s")


def test_the_refresh_bench_refreshes_every_round_and_matches_a_whole_build(tmp_path, capsys):
    from toolkit.bench import refresh

    db = synthetic_mirror(tmp_path / "bench.db", listings=600, regfree=60, pending=10)
    code = refresh.main(["--db", str(db), "--rounds", "8", "--seed", "3", "--markdown"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "refreshes that fell back to a whole build: 0" in out
    assert "refreshed index identical to the whole build: yes" in out
    assert "| whole build (the peer) | 3 |" in out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "rounds" not in line and "peer" not in line]
    assert sum(int(line.split("|")[2]) for line in rows) == 8  # each round lands in its write's row


def test_the_refresh_bench_names_a_missing_mirror(tmp_path, capsys):
    from toolkit.bench import refresh

    assert refresh.main(["--db", str(tmp_path / "none.db")]) == 2
    assert "--db" in capsys.readouterr().err


def test_the_seen_bench_sees_every_write_through_both_readers(tmp_path, capsys):
    """The bench of another program's writes: every seeded write seen by `edt serve` and the
    app's state layer (real processes), each row of its table a lag that could be missing."""
    from conftest import small_demo

    from toolkit.bench import seen

    db = small_demo(tmp_path / "seen.db", seed=4)
    code = seen.main(["--db", str(db), "--writes", "5", "--seed", "2", "--markdown"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "5 writes (seed 2)" in out
    rows = {
        line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ") and "median" not in line
    }
    assert set(rows) == {"edt serve", "the app's state", "index current"}
    for line in rows.values():
        median, p95, top = (float(cell.strip().removesuffix(" ms")) for cell in line.split("|")[2:5])
        assert 0 <= median <= p95 <= top < 30_000
    assert seen.main(["--db", str(tmp_path / "none.db")]) == 2


def test_the_age_bench_ages_a_copy_and_measures_each_stage_and_the_archive(tmp_path, capsys):
    """The bench of age: a copy aged by a month of closings, each stage's figures, and the
    archive's; the mirror given is never written, and the engines agree at every stage."""
    import re

    from conftest import mirror_digest, small_demo

    from toolkit.bench import age

    db = small_demo(tmp_path / "fresh.db", seed=6)
    before = mirror_digest(db)
    code = age.main(
        [
            "--db",
            str(db),
            "--months",
            "0,1",
            "--per-day",
            "60",
            "--random",
            "6",
            "--repeat",
            "1",
            "--archive",
            "10d",
            "--pack-after",
            "5d",
            "--work",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    last = "1 months, archive 10d, pack 5d"
    rows = {line.split("  ")[0]: line.split("  ") for line in out.splitlines()[2:-1]}
    assert set(rows) == {"fresh", "1 months", last}
    fresh, aged, archived = (int(rows[k][2].replace(",", "")) for k in ("fresh", "1 months", last))
    assert aged - fresh >= 30 * 60  # a month of closings (and a day's more)
    assert archived < aged and float(rows[last][4]) >= 0
    summary = re.fullmatch(
        r"archive \d+ s, pack ([\d,]+) listings \d+ s; first include_closed request [\d.]+ s; "
        r"file [\d.]+x fresh",
        out.splitlines()[-1],
    )
    assert summary and int(summary[1].replace(",", "")) > 0
    assert all(r[-1] == "yes" for r in rows.values())
    assert re.search(r"\d+\.\d / \d+\.\d / \d+\.\d", rows["1 months"][9])
    assert mirror_digest(db) == before and not list(tmp_path.glob("edt-age-*"))
    assert age.main(["--db", str(tmp_path / "none.db")]) == 2


def test_the_index_bench_measures_each_index_against_its_use(tmp_path, capsys):
    """The bench of the indexes: one row per index of the listings and their history, each
    with its size, the seconds it adds to a day's writes and the requests whose SQLite plans
    read it; the mirror given is never written."""
    from conftest import mirror_digest, small_demo

    from toolkit.bench import indexes
    from toolkit.store.schema import HISTORY_INDEXES, LISTING_INDEXES

    db = small_demo(tmp_path / "fresh.db", seed=6)
    before = mirror_digest(db)
    code = indexes.main(
        ["--db", str(db), "--per-day", "40", "--random", "12", "--seed", "3", "--markdown", "--work", str(tmp_path)]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in out.splitlines()
        if line.startswith("| idx_")
    }
    assert set(rows) == set(LISTING_INDEXES) | set(HISTORY_INDEXES)
    asked = int(rows["idx_listings_closed"][2].split(" of ")[1])
    assert 0 < asked <= 12
    assert (
        rows["idx_listings_closed"][2] == f"{asked} of {asked}"
    )  # every request asks whether any listing closed since
    assert all(int(r[3]) <= int(r[2].split(" of ")[0]) for r in rows.values())
    assert all(r[1].endswith("%)") for r in rows.values())
    assert mirror_digest(db) == before and not list(tmp_path.glob("edt-indexes-*"))
    assert indexes.main(["--db", str(tmp_path / "none.db")]) == 2


def test_the_feeds_bench_checks_the_304_and_the_day_of_changes(capsys, tmp_path, monkeypatch):
    """A Namecheap-sized feed, small: day 1 all new, day 1 again answered 304 (nothing written),
    day 2's seeded changes updated, closed and added exactly."""
    from toolkit.bench import feed_ingest as feeds

    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("EDT_BUDGET_FILE", str(tmp_path / "budget.sqlite"))
    assert feeds.main(["--rows", "1500", "--seed", "4", "--markdown", "--work", str(tmp_path / "work")]) == 0
    out = capsys.readouterr().out
    assert "| edt sync --feeds: day 1, every row new | ok: 1,500 rows (1,500 new, 0 updated) |" in out
    assert "| edt sync --feeds: day 1 again (304) | not modified:" in out
    assert re.search(
        r"^\| peer: `sqlite-utils insert --csv`, fresh database \| exit 0 \| [0-9.]+ s \| 1\.00x \| \d+ MB \| - \|$",
        out,
        flags=re.M,
    )
    # Day 1 builds the columnar index whole, in two forked workers: their peak is stated beside the process's.
    assert re.search(r"^\| edt sync --feeds: day 1, every row new \| .* \| \d+ MB \| \d+ MB \|$", out, flags=re.M), out
    assert "| floor: `csv` + one `executemany`, plain table | exit 0 |" in out
    (tmp_path / "again").mkdir()
    counts = feeds.write_days(tmp_path / "again", 1500, 4)
    assert f"({counts['new']:,} new, {counts['changed']:,} updated), {counts['gone']:,} closed" in out
    day2 = (tmp_path / "again" / "day2.csv").read_text().splitlines()
    assert counts["changed"] > 0 and counts["gone"] > 0 and len(day2) - 1 == 1500 - counts["gone"] + counts["new"]
