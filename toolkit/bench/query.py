"""Benchmark: the query layer against DuckDB and pandas over the same rows.

    python -m toolkit.bench [--db PATH] [--repeat N] [--markdown] [--random N --seed S]

A fixed suite of realistic `/api/domains` and `/api/pending-delete` queries (or, with
`--random N`, N `/api/domains` requests drawn at random from the parameter table, with
values drawn from the mirror's own rows) is answered three ways in one run:

1. the query layer: `Mirror.search_domains` / `Mirror.search_pending_delete` (its
   columnar index, rebuilt before timing if stale, or SQLite with `--engine sqlite`);
2. DuckDB: the mirror's rows, loaded once (before any timing) from SQLite through pandas
   and Arrow into an in-memory DuckDB database, queried with SQL written here from the
   documented semantics (docs/reference/fields.md and semantics.md), independently of `toolkit.query.params`;
3. pandas: the same rows as a DataFrame, vectorised boolean masks, `sort_values` with
   nulls last and `id` as the tie-breaker, then the page slice.

Every engine returns the total and the page rows (every output column). The three must
agree on the total and on the ordered page ids of every query (and the rows on a few
fields, `age` included); a disagreement is printed as a MISMATCH line and the exit status
is 1. So the benchmark is also a cross-check of the query layer against the documented semantics.

Each query runs once to warm up, then `--repeat` times per engine; its latency is the
median. Per engine the report gives p50 and p95 over the suite's queries (linear
interpolation), the slowest query, the ratios query layer / DuckDB and query layer /
pandas, and whether the targets hold: query-layer p50 <= 0.5x DuckDB p50, p95 <= DuckDB
p95, and every query-layer query under 50 ms. `--strict` makes a missed target exit 1.

All engines share one UTC "now" (the query layer gets it through `Mirror(clock=...)`).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import platform
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

__all__ = [
    "BenchQuery",
    "QueryTiming",
    "BenchReport",
    "build_suite",
    "random_suite",
    "run_bench",
    "bench",
    "main",
    "TARGET_MAX_MS",
]

TARGET_MAX_MS = 50.0  # every query-layer query under this, on the machine at hand
TARGET_P50_RATIO = 0.5  # query-layer p50 at most this times DuckDB's
TARGET_P95_RATIO = 1.0
PLAN = "enterprise"


# -- the suite ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchQuery:
    name: str
    dataset: str  # "domains" (/api/domains) or "pending" (/api/pending-delete)
    params: Mapping[str, Any]


def build_suite(today: date, *, max_id: int = 1_000_000) -> list[BenchQuery]:
    """The fixed suite; dates are relative to `today`, the cursor to the largest listing id."""

    def day(offset: int) -> str:
        return (today + timedelta(days=offset)).isoformat()

    def d(name: str, **params: Any) -> BenchQuery:
        return BenchQuery(name, "domains", params)

    def p(name: str, **params: Any) -> BenchQuery:
        return BenchQuery("pending: " + name, "pending", params)

    return [
        # single filters
        d("default first page"),
        d("tld=.fr", tld=".fr"),
        d("source=dynadot", source="dynadot"),
        d("score>=70", score_min=70),
        d("has_gmb", has_gmb=1),
        d("contains=shop", contains="shop"),
        d("contains=car,auto", contains="car,auto"),
        d("contains=ai (short term)", contains="ai"),
        d("categories=Health", categories="Health"),
        d("techs=WordPress", techs="WordPress"),
        d("use_cases=ecommerce", use_cases="ecommerce"),
        d("added in the last 7 days", created_after=day(-7)),
        d("ending before tomorrow", ends_before=day(1)),
        # combinations
        d(".com,.net with tf>=20", tld=".com,.net", tf_min=20),
        d("auctions with bids, ending soonest", type="auction", has_bids=1, sort="auction_end_date"),
        d("price<=50, cheapest first", price_max=50, sort="price"),
        d("language=FR, age>=10", language="FR", age_min=10),
        d("tf>=30 cf>=30 rd>=50", tf_min=30, cf_min=30, rd_min=50),
        d("has_backlinks by referring domains", has_backlinks=1, sort="-referring_domains"),
        d("regfree .fr", source="regfree", tld=".fr"),
        d("regfree tf>=15 by trust flow", source="regfree", tf_min=15, sort="-trust_flow"),
        d("sedo 100-1000 by -effective_price", source="sedo", price_min=100, price_max=1000, sort="-effective_price"),
        d(".co.uk closeouts <= 50", tld=".co.uk", type="closeout", price_max=50),
        d("categories=Recreation/Travel,Sports", categories="Recreation/Travel,Sports"),
        d("da>=20 by domain authority", da_min=20, sort="-domain_authority"),
        d("traffic>=1000 by traffic", traffic_min=1000, sort="-historical_traffic_etv"),
        d("edu/gov links, snapshots>=100", has_edu_gov=1, snapshots_min=100),
        d("contains=bio,eco incl. closed", contains="bio,eco", include_closed=1),
        # sorts and deep pages
        d("oldest first (-age)", sort="-age"),
        d("newest listings (-created_at)", sort="-created_at"),
        d(".de by name, page 3", tld=".de", sort="name", page=3),
        d("deep page 200 x 100", page=200, per_page=100),
        d(".com page 2000 x 50", tld=".com", page=2000, per_page=50),
        d("cursor after_id", after_id=max_id // 2, per_page=100),
        # pending-delete
        p("default"),
        p("tld=fr,de", tld="fr,de"),
        p("pendingDelete dropping within 7 days", status="pendingDelete", drops_within=7),
        p("contains=shop", contains="shop"),
        p("by domain, page 50", sort="domain", page=50),
        p("no dashes, no digits, .com", no_dashes=1, no_numbers=1, tld="com"),
        p("drop date window", drop_date_from=day(3), drop_date_to=day(10)),
        p("czds-daily latest drops first", source="czds-daily", sort="drop_date_desc", per_page=100),
        p("include past, 200 per page", include_past=1, per_page=200, page=2),
    ]


def random_suite(listings: Any, today: date, count: int, seed: int) -> list[BenchQuery]:
    """`count` `/api/domains` requests drawn from the parameter table: 1-4 filters, each with
    a valid value drawn from the mirror's own rows (`listings`, a DataFrame), any sort,
    pages 1-50 and now and then the keyset cursor. The same seed draws the same requests."""
    import random

    from ..query.params import DOMAIN_PARAMS, DOMAIN_SORTS, TOP_CATEGORIES, USE_CASES

    rnd = random.Random(seed)
    frame = listings[listings["source"] != "regfree"]

    def pick(column: str) -> Any:
        values = frame[column].dropna()
        return values.iloc[rnd.randrange(len(values))] if len(values) else None

    def quantile(column: str) -> int:
        values = frame[column].dropna()
        return int(values.quantile(rnd.choice((0.25, 0.5, 0.75, 0.9, 0.99)))) if len(values) else 0

    def substring() -> str:
        name = str(pick("sld") or "shop")
        size = rnd.choice((2, 3, 3, 4, 5))
        start = rnd.randrange(max(1, len(name) - size + 1))
        return name[start : start + size]

    def tech() -> str:
        labels = pick("historical_tech")
        labels = json.loads(labels) if isinstance(labels, str) else labels
        return rnd.choice(list(labels)) if labels is not None and len(labels) else "WordPress"

    draw: dict[str, Callable[[], Any]] = {
        "source": lambda: rnd.choice(["regfree"] + sorted(frame["source"].unique())),
        "tld": lambda: ",".join(sorted({str(pick("tld")) for _ in range(rnd.randint(1, 3))})),
        "type": lambda: rnd.choice(("auction", "closeout", "backorder")),
        "has_bids": lambda: 1,
        "has_backlinks": lambda: 1,
        "has_gmb": lambda: 1,
        "has_edu_gov": lambda: 1,
        "score_min": lambda: quantile("score"),
        "da_min": lambda: quantile("domain_authority"),
        "rd_min": lambda: quantile("referring_domains"),
        "age_min": lambda: rnd.randint(1, 20),
        "snapshots_min": lambda: quantile("wayback_snapshots"),
        "language": lambda: str(pick("language") or "EN"),
        "contains": lambda: ",".join(substring() for _ in range(rnd.randint(1, 2))),
        "price_min": lambda: round(rnd.choice((1, 5, 10, 50, 100, 500)) * rnd.uniform(0.5, 2), 2),
        "price_max": lambda: round(rnd.choice((10, 50, 100, 500, 2000)) * rnd.uniform(0.5, 2), 2),
        "tf_min": lambda: quantile("trust_flow"),
        "cf_min": lambda: quantile("citation_flow"),
        "traffic_min": lambda: quantile("historical_traffic_etv"),
        "categories": lambda: ",".join(rnd.sample(TOP_CATEGORIES, rnd.randint(1, 2))),
        "techs": lambda: ",".join(sorted({tech() for _ in range(rnd.randint(1, 2))})),
        "use_cases": lambda: ",".join(rnd.sample(USE_CASES, rnd.randint(1, 2))),
        "created_after": lambda: (today - timedelta(days=rnd.randint(0, 40))).isoformat(),
        "created_before": lambda: (today - timedelta(days=rnd.randint(0, 40))).isoformat(),
        "ends_after": lambda: (today + timedelta(days=rnd.randint(0, 10))).isoformat(),
        "ends_before": lambda: (today + timedelta(days=rnd.randint(1, 14))).isoformat(),
        "ends_within": lambda: rnd.choice((1, 6, 24, 72, 168)),
        "include_closed": lambda: 1,
        "price_eur_min": lambda: round(rnd.choice((1, 5, 10, 50, 100, 500)) * rnd.uniform(0.5, 2), 2),
        "price_eur_max": lambda: round(rnd.choice((10, 50, 100, 500, 2000)) * rnd.uniform(0.5, 2), 2),
        "exclude_spam": lambda: 1,
        "exclude_inflated": lambda: 1,
        "exclude_parked": lambda: 1,
        "archive_gap_max": lambda: rnd.choice((0, 1, 2, 5)),
        "continuity_min": lambda: quantile("archive_continuity"),
        "length_min": lambda: rnd.randint(3, 12),
        "length_max": lambda: rnd.randint(4, 20),
        "no_dashes": lambda: 1,
        "no_numbers": lambda: 1,
        "not_contains": substring,
        "tf_max": lambda: quantile("trust_flow"),
        "cf_max": lambda: quantile("citation_flow"),
        "da_max": lambda: quantile("domain_authority"),
        "age_max": lambda: rnd.randint(1, 20),
        "tf_cf_ratio_min": lambda: rnd.choice((0.3, 0.5, 0.75, 1, 1.2)),
        "tf_cf_ratio_max": lambda: rnd.choice((0.5, 0.8, 1, 1.5)),
        "value_min": lambda: quantile("value_mid"),
        "value_max": lambda: quantile("value_mid"),
        "deal_min": lambda: rnd.choice((0.5, 1, 1.5, 2, 3)),
    }
    filters = sorted(name for name, param in DOMAIN_PARAMS.items() if param.clause is not None and name in draw)
    missing = {n for n, p in DOMAIN_PARAMS.items() if p.clause is not None} - set(draw) - {"seen_after"}
    if missing:
        raise ValueError(f"random_suite draws no value for {sorted(missing)}")
    suite = []
    max_id = int(listings["id"].max()) if len(listings) else 0
    for i in range(count):
        params: dict[str, Any] = {name: draw[name]() for name in rnd.sample(filters, rnd.randint(1, 4))}
        if rnd.random() < 0.1 and params.get("source") != "regfree":
            params["after_id"] = rnd.randrange(max_id + 1)
        else:
            params["sort"] = rnd.choice([s for s in DOMAIN_SORTS] + ["-" + s for s in DOMAIN_SORTS])
            params["page"] = rnd.choice((1, 1, 1, 2, 3, 5, 10, 20, 50))
        params["per_page"] = rnd.choice((10, 20, 50, 50, 100))
        label = "&".join(f"{k}={v}" for k, v in params.items())
        suite.append(BenchQuery(f"r{i + 1}: {label}", "domains", params))
    return suite


# -- a query as predicates, from the documented semantics --------------------------------
#
# Both reference engines read the same small description of a query: predicates over
# columns of the loaded frame, an order, and a page. Written from docs/reference/semantics.md, not from
# `toolkit.query.params`, so that the query layer is checked against an independent reading.

_TOP_CATEGORIES = (
    "Business",
    "Health",
    "Computers",
    "Shopping",
    "Recreation",
    "Society",
    "Sports",
    "News",
    "Science",
    "Arts",
    "Reference",
    "Regional",
    "Games",
    "Home",
    "World",
    "Adult",
)
_STATUSES = ("pendingDelete", "redemptionPeriod", "serverHold", "clientHold", "transition", "quarantine")
_MINIMUMS = {
    "score_min": "score",
    "tf_min": "trust_flow",
    "cf_min": "citation_flow",
    "da_min": "domain_authority",
    "age_min": "age",
    "rd_min": "referring_domains",
    "snapshots_min": "wayback_snapshots",
    "traffic_min": "historical_traffic_etv",
}
# Sortable fields -> (frame column, whether the column's order is the reverse of the field's).
# `age` sorts by the exact first-snapshot date (older = greater age), as the query layer's
# tests read docs/reference/fields.md; `effective_price` is max_bid when present, else price.
_SORTS = {
    name: (name, False)
    for name in (
        "id",
        "name",
        "score",
        "price",
        "max_bid",
        "bids_count",
        "auction_end_date",
        "trust_flow",
        "citation_flow",
        "domain_authority",
        "referring_domains",
        "backlinks_count",
        "wayback_snapshots",
        "historical_traffic_etv",
        "created_at",
        "first_seen_at",
        "price_eur",
        "effective_price_eur",
        "value_mid",
        "live_mid",
    )
}
_SORTS["age"] = ("wayback_first_date", True)
_SORTS["effective_price"] = ("@effective_price", False)
_SORTS["deal"] = ("@deal", False)
_DOMAIN_KEYS = {
    "source",
    "tld",
    "type",
    "has_bids",
    "has_backlinks",
    "has_gmb",
    "has_edu_gov",
    "price_min",
    "price_max",
    "categories",
    "contains",
    "language",
    "techs",
    "use_cases",
    "created_after",
    "created_before",
    "ends_after",
    "ends_before",
    "ends_within",
    "after_id",
    "per_page",
    "limit",
    "page",
    "sort",
    "include_closed",
    "price_eur_min",
    "price_eur_max",
    "exclude_spam",
    "exclude_inflated",
    "exclude_parked",
    "archive_gap_max",
    "continuity_min",
    "length_min",
    "length_max",
    "no_dashes",
    "no_numbers",
    "not_contains",
    "tf_max",
    "cf_max",
    "da_max",
    "age_max",
    "tf_cf_ratio_min",
    "tf_cf_ratio_max",
    "value_min",
    "value_max",
    "deal_min",
    *_MINIMUMS,
}
# Bounds on real numbers, (op, column): the effective price (native, EUR) and the price range
# (docs/guides/results.md: its middle, and the middle over the EUR price).
_REAL_BOUNDS = {
    "price_min": ("ge", "@effective_price"),
    "price_max": ("le", "@effective_price"),
    "price_eur_min": ("ge", "effective_price_eur"),
    "price_eur_max": ("le", "effective_price_eur"),
    "value_min": ("ge", "value_mid"),
    "value_max": ("le", "value_mid"),
    "deal_min": ("ge", "@deal"),
}
_MAXIMUMS = {"tf_max": "trust_flow", "cf_max": "citation_flow", "da_max": "domain_authority", "age_max": "age"}
_PENDING_KEYS = {
    "tld",
    "status",
    "source",
    "week_end",
    "drops_within",
    "contains",
    "no_dashes",
    "no_numbers",
    "include_past",
    "drop_date_from",
    "drop_date_to",
    "sort",
    "per_page",
    "page",
}

Pred = tuple  # (op, column, *values)


@dataclass
class Spec:
    table: str  # listings | pending_delete
    preds: list[Pred]
    order: list[tuple[str, bool, bool]]  # (column, ascending, nulls_last), then id ascending
    limit: int
    offset: int = 0
    after_id: int | None = None  # keyset mode: id > after_id by id, total without it


def _flag(value: Any) -> bool:
    text = str(value).strip().lower()
    if text not in ("1", "true", "0", "false"):
        raise ValueError(f"not a flag: {value!r}")
    return text in ("1", "true")


def _terms(value: Any) -> list[str]:
    return [t.strip() for t in str(value).split(",") if t.strip()]


def _day(value: Any) -> datetime:
    return datetime.combine(date.fromisoformat(str(value).strip()), datetime.min.time())


def domain_spec(params: Mapping[str, Any], now: datetime) -> Spec:
    """`/api/domains` params -> predicates, per docs/reference/fields.md and semantics.md."""
    unknown = set(params) - _DOMAIN_KEYS
    if unknown:
        raise ValueError(f"the benchmark engines do not translate {sorted(unknown)}")
    p = {k: v for k, v in params.items() if v is not None and str(v).strip() != ""}
    preds: list[Pred] = []
    if not _flag(p.get("include_closed", 0)):
        preds.append(("live", None, now.replace(tzinfo=None)))
    source = str(p.get("source", "")).strip().lower()
    # Regfree rows only when asked for by name; every other query returns platform rows.
    preds.append(("eq" if source == "regfree" else "ne", "source", "regfree"))
    if source and source != "regfree":
        preds.append(("eq", "source", source))
    if "tld" in p:
        preds.append(("in", "tld", ["." + t.lower().lstrip(".") for t in _terms(p["tld"])]))
    if "type" in p:
        preds.append(("eq", "type", str(p["type"]).strip().lower()))
    if _flag(p.get("has_bids", 0)):
        preds.append(("gt", "bids_count", 0))
    if _flag(p.get("has_backlinks", 0)):
        preds.append(("gt", "referring_domains", 0))
    if _flag(p.get("has_gmb", 0)):
        preds.append(("true", "has_gmb"))
    if _flag(p.get("has_edu_gov", 0)):
        preds.append(("sum_gt0", "ref_domains_edu", "ref_domains_gov"))
    for param, column in _MINIMUMS.items():
        if param in p:
            preds.append(("ge", column, int(p[param])))
    for param, column in _MAXIMUMS.items():
        if param in p:
            preds.append(("le", column, int(p[param])))
    # The label's shape, read from `sld` itself (not the stored counts the query layer uses).
    if "length_min" in p:
        preds.append(("length_ge", "sld", int(p["length_min"])))
    if "length_max" in p:
        preds.append(("length_le", "sld", int(p["length_max"])))
    if _flag(p.get("no_dashes", 0)):
        preds.append(("lacks", "sld", "-"))
    if _flag(p.get("no_numbers", 0)):
        preds.append(("no_digit", "sld"))
    if "not_contains" in p:
        preds.append(("contains_none", "name", [t.lower() for t in _terms(p["not_contains"])]))
    # TF / CF in two decimals: r = k / 100, so TF / CF >= r is 100 TF >= k CF (CF > 0), and the
    # ratio cut to two decimals is <= r when 100 TF < (k + 1) CF.
    if "tf_cf_ratio_min" in p:
        preds.append(("ratio_ge", "trust_flow", "citation_flow", round(float(p["tf_cf_ratio_min"]) * 100)))
    if "tf_cf_ratio_max" in p:
        preds.append(("ratio_lt", "trust_flow", "citation_flow", round(float(p["tf_cf_ratio_max"]) * 100) + 1))
    for param, (op, column) in _REAL_BOUNDS.items():
        if param in p:
            preds.append((op, column, float(p[param])))
    # The signals (docs/guides/signals.md): spam words, metric jumps, archive.
    for param, column in (
        ("exclude_spam", "spam_count"),
        ("exclude_inflated", "metrics_jumped"),
        ("exclude_parked", "archive_parked"),
    ):
        if _flag(p.get(param, 0)):
            preds.append(("eq", column, 0))
    if "archive_gap_max" in p:
        preds.append(("le", "archive_longest_gap", int(p["archive_gap_max"])))
    if "continuity_min" in p:
        preds.append(("ge", "archive_continuity", int(p["continuity_min"])))
    if "categories" in p:
        tops = {c.lower() for c in _TOP_CATEGORIES}
        cats = [c.lower() for c in _terms(p["categories"])]
        if any(c.split("/")[0].strip() not in tops for c in cats):
            raise ValueError(f"unknown category in {p['categories']!r}")
        preds.append(("segment_any", "ttf_topic", cats))
    if "contains" in p:
        preds.append(("contains_any", "name", [t.lower() for t in _terms(p["contains"])]))
    if "language" in p:
        preds.append(("eq", "language", str(p["language"]).strip().upper()))
    if "techs" in p:
        preds.append(("array_any", "historical_tech", _terms(p["techs"])))
    if "use_cases" in p:
        preds.append(("array_any", "use_cases", [t.lower() for t in _terms(p["use_cases"])]))
    for param, op, column in (
        ("created_after", "ge", "_created_ts"),
        ("created_before", "lt", "_created_ts"),
        ("ends_after", "ge", "_ends_ts"),
        ("ends_before", "lt", "_ends_ts"),
    ):
        if param in p:
            preds.append((op, column, _day(p[param])))
    if "ends_within" in p:  # ending in the next N hours, none already ended
        moment = now.replace(tzinfo=None)
        preds += [("gt", "_ends_ts", moment), ("le", "_ends_ts", moment + timedelta(hours=int(p["ends_within"])))]
    per_page = int(p.get("per_page") or p.get("limit") or 50)
    page = int(p.get("page", 1))
    if "after_id" in p:
        return Spec("listings", preds, [], per_page, 0, int(p["after_id"]))
    sort = str(p.get("sort", "-score")).strip()
    column, reverse = _SORTS[sort.lstrip("-")]
    ascending = sort.startswith("-") == reverse
    return Spec("listings", preds, [(column, ascending, True)], per_page, (page - 1) * per_page)


def pending_spec(params: Mapping[str, Any], now: datetime) -> Spec:
    """`/api/pending-delete` params -> predicates, per docs/reference/semantics.md and the reference."""
    unknown = set(params) - _PENDING_KEYS
    if unknown:
        raise ValueError(f"the benchmark engines do not translate {sorted(unknown)}")
    p = {k: v for k, v in params.items() if v is not None and str(v).strip() != ""}
    today = now.date()
    preds: list[Pred] = []
    week = str(p.get("week_end", "all")).strip()
    if week.lower() != "all":
        preds.append(("eq", "week_end", date.fromisoformat(week).isoformat()))
    elif not _flag(p.get("include_past", 0)):  # upcoming drops only (undated rows stay)
        preds.append(("null_or_ge", "estimated_drop_date", today.isoformat()))
    if "tld" in p:  # a suffix and the suffixes under it: uk is uk, co.uk, org.uk, ...
        preds.append(("suffix_in", "tld", [t.lower().lstrip(".") for t in _terms(p["tld"])]))
    if "status" in p:
        folded = {s.lower(): s for s in _STATUSES}
        preds.append(("in", "whois_status", [folded[s.lower()] for s in _terms(p["status"])]))
    if "source" in p:
        preds.append(("eq", "source", str(p["source"]).strip().lower()))
    if "drops_within" in p:
        end = today + timedelta(days=int(p["drops_within"]))
        preds.append(("between", "estimated_drop_date", today.isoformat(), end.isoformat()))
    if "contains" in p:
        preds.append(("contains_any", "domain", [t.lower() for t in _terms(p["contains"])]))
    if _flag(p.get("no_dashes", 0)):
        preds.append(("lacks", "sld", "-"))
    if _flag(p.get("no_numbers", 0)):
        preds.append(("no_digit", "sld"))
    if "drop_date_from" in p:
        preds.append(("ge", "estimated_drop_date", date.fromisoformat(str(p["drop_date_from"])).isoformat()))
    if "drop_date_to" in p:
        preds.append(("le", "estimated_drop_date", date.fromisoformat(str(p["drop_date_to"])).isoformat()))
    order = {
        "drop_date": [("estimated_drop_date", True, True)],  # soonest first, undated last
        "drop_date_desc": [("estimated_drop_date", False, False)],  # the reference: undated first
        "domain": [("domain", True, True)],
    }[str(p.get("sort", "drop_date")).strip().lower()]
    per_page = int(p.get("per_page", 50))
    page = int(p.get("page", 1))
    return Spec("pending_delete", preds, order, per_page, (page - 1) * per_page)


def query_spec(query: BenchQuery, now: datetime) -> Spec:
    return (domain_spec if query.dataset == "domains" else pending_spec)(query.params, now)


# -- loading the rows once ---------------------------------------------------------------

# Listings' array columns (JSON text in SQLite) and their DuckDB list types.
_ARRAY_COLUMNS = {
    "historical_tech": "VARCHAR[]",
    "use_cases": "VARCHAR[]",
    "whois_status": "VARCHAR[]",
    "whois_nameservers": "VARCHAR[]",
    "historical_traffic_spark": "BIGINT[]",
}


@dataclass
class Frames:
    listings: Any  # pandas DataFrame: every stored column, `age` as of today, parsed timestamps
    pending: Any
    listing_columns: list[str]  # the output columns of a listing record
    pending_columns: list[str]
    load_seconds: float


def load_frames(db_path: str | os.PathLike[str], now: datetime, where: str = "1") -> Frames:
    """Every listing (`where` it holds) and pending-delete row of the mirror as DataFrames (all
    columns; the raw records live in another table). Adds `age` as of `now` and parsed timestamps."""
    import pandas as pd

    from ..query import LISTING_EXPORT, PENDING_OUTPUT

    started = time.perf_counter()
    conn = sqlite3.connect(f"file:{os.fspath(db_path)}?mode=ro", uri=True)
    try:
        listings = pd.read_sql_query(f"SELECT * FROM listings WHERE {where}", conn)
        pending = pd.read_sql_query("SELECT * FROM pending_delete", conn)
    finally:
        conn.close()
    today = now.date()

    def stamp(column: Any) -> Any:
        return pd.to_datetime(column, utc=True, format="ISO8601").dt.tz_localize(None)

    listings["_ends_ts"] = stamp(listings["auction_end_date"])
    listings["_created_ts"] = stamp(listings["created_at"])
    # age: whole years from the first snapshot to today (docs/reference/fields.md).
    first = pd.to_datetime(listings["wayback_first_date"], format="%Y-%m-%d")
    ahead = (first.dt.month > today.month) | ((first.dt.month == today.month) & (first.dt.day > today.day))
    listings["age"] = (today.year - first.dt.year - ahead.astype("int64")).where(first.notna())
    for frame in (listings, pending):  # all-null columns come back as objects: make them numbers
        for column in frame.columns:
            values = frame[column]
            if values.dtype == object and values.map(lambda v: v is None or isinstance(v, (int, float))).all():
                frame[column] = pd.to_numeric(values)
    # `deal`, a field every record carries and no column holds: as the query layer writes it
    eur = listings["effective_price_eur"]
    listings["deal"] = (listings["live_mid"].fillna(listings["value_mid"]) / eur).where(eur > 0).round(3)
    listing_columns = list(LISTING_EXPORT)
    return Frames(listings, pending, listing_columns, list(PENDING_OUTPUT), time.perf_counter() - started)


# -- the engines -------------------------------------------------------------------------

Result = tuple[int, list[dict[str, Any]]]


class QueryLayerEngine:
    name = "query layer"

    def __init__(self, db_path: str | os.PathLike[str], now: datetime, engine: str = "columnar"):
        from ..query import Mirror

        self.mirror = Mirror(db_path, readonly=True, plan=PLAN, clock=lambda: now, engine=engine)
        self.answered_by: set[str] = set()

    def run(self, query: BenchQuery) -> Result:
        if query.dataset == "domains":
            envelope = self.mirror.search_domains(query.params, plan=PLAN, strict=False)
            self.answered_by.add(self.mirror.answered_by() or "sqlite")
        else:
            envelope = self.mirror.search_pending_delete(query.params, plan=PLAN)
        return envelope["meta"]["total"], envelope["data"]

    def trace(self, query: BenchQuery) -> list[str]:
        """The SQL statements the query layer runs for `query` (for EXPLAIN QUERY PLAN)."""
        conn = self.mirror.connection()
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        try:
            self.run(query)
        finally:
            conn.set_trace_callback(None)
        return [s for s in statements if s.lstrip().upper().startswith("SELECT")]

    def close(self) -> None:
        self.mirror.close()


def _q(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


class DuckDBEngine:
    """The rows in an in-memory DuckDB database; SQL per query, parameters bound."""

    name = "duckdb"

    def __init__(self, frames: Frames, now: datetime, *, storage: str = "native", threads: int | None = None):
        import duckdb
        import pyarrow as pa

        self.now = now
        self.frames = frames
        self.con = duckdb.connect(config={"threads": threads} if threads else {})
        self._arrow: dict[str, Any] = {}
        for table, frame in (("listings", frames.listings), ("pending_delete", frames.pending)):
            self.con.register(f"{table}_arrow", pa.Table.from_pandas(frame, preserve_index=False))
            arrays = [f"CAST({_q(c)}::JSON AS {t}) AS {_q(c)}" for c, t in _ARRAY_COLUMNS.items()]
            replace = f" REPLACE ({', '.join(arrays)})" if table == "listings" else ""
            # Arrays become DuckDB lists. Native tables are DuckDB's own columnar storage
            # (zone maps, statistics): its best case; `arrow` scans registered Arrow tables.
            self.con.execute(f"CREATE TABLE {table} AS SELECT *{replace} FROM {table}_arrow")
            self.con.unregister(f"{table}_arrow")
            if storage == "arrow":
                self._arrow[table] = self.con.sql(f"SELECT * FROM {table}").to_arrow_table()
                self.con.execute(f"DROP TABLE {table}")
                self.con.register(table, self._arrow[table])
        self.storage = storage
        self._select = {
            "listings": ", ".join(map(_q, frames.listing_columns)),
            "pending_delete": ", ".join(map(_q, frames.pending_columns)),
        }

    @staticmethod
    def _column(name: str) -> str:
        if name == "@effective_price":
            return 'coalesce("max_bid", "price")'
        if name == "@deal":
            return (
                'CASE WHEN "effective_price_eur" > 0 THEN coalesce("live_mid", "value_mid") / "effective_price_eur" END'
            )
        return _q(name)

    def _predicate(self, pred: Pred, args: list[Any]) -> str:
        op, column = pred[0], pred[1]
        col = self._column(column) if column else ""
        values = pred[2:]
        if op == "live":
            args.append(values[0])
            return '("closed_at" IS NULL AND ("_ends_ts" IS NULL OR "_ends_ts" > ?))'
        simple = {"eq": "=", "ne": "<>", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}
        if op in simple:
            args.append(values[0])
            return f"{col} {simple[op]} ?"
        if op == "in":
            args.extend(values[0])
            return f"{col} IN ({', '.join('?' * len(values[0]))})"
        if op == "true":
            return f"{col} <> 0"
        if op == "sum_gt0":
            return f"({col} + {self._column(values[0])}) > 0"
        if op in ("contains_any", "contains_none"):
            args.extend(values[0])
            found = "(" + " OR ".join(f"contains(lower({col}), ?)" for _ in values[0]) + ")"
            return found if op == "contains_any" else f"NOT {found}"
        if op == "segment_any":
            parts = []
            for value in values[0]:
                parts.append(f"(lower({col}) = ? OR starts_with(lower({col}), ?))")
                args += [value, value + "/"]
            return "(" + " OR ".join(parts) + ")"
        if op == "array_any":
            args.append(list(values[0]))
            return f"list_has_any({col}, ?::VARCHAR[])"
        if op == "null_or_ge":
            args.append(values[0])
            return f"({col} IS NULL OR {col} >= ?)"
        if op == "between":
            args += [values[0], values[1]]
            return f"{col} BETWEEN ? AND ?"
        if op == "lacks":
            args.append(values[0])
            return f"NOT contains({col}, ?)"
        if op == "no_digit":
            return f"NOT regexp_matches({col}, '[0-9]')"
        if op in ("length_ge", "length_le"):
            args.append(values[0])
            return f"length({col}) {'>=' if op == 'length_ge' else '<='} ?"
        if op in ("ratio_ge", "ratio_lt"):
            args.append(values[1])
            other = self._column(values[0])
            return f"({other} > 0 AND 100 * {col} {'>=' if op == 'ratio_ge' else '<'} ? * {other})"
        if op == "suffix_in":
            args.extend(values[0])
            ends = " OR ".join(f"ends_with({col}, ?)" for _ in values[0])
            args.extend("." + v for v in values[0])
            return f"({col} IN ({', '.join('?' * len(values[0]))}) OR {ends})"
        raise ValueError(f"unknown predicate {op}")

    def sql(self, spec: Spec) -> tuple[str, list[Any], str, list[Any]]:
        args: list[Any] = []
        where = " AND ".join(self._predicate(p, args) for p in spec.preds) or "TRUE"
        count_sql = f"SELECT count(*) FROM {spec.table} WHERE {where}"
        # The page: ids first, then the wide rows of those ids only (late materialisation:
        # a top-N or a deep OFFSET over 60-odd columns is several times slower in DuckDB).
        select = self._select[spec.table]
        if spec.after_id is not None:
            ids = f'SELECT "id" FROM {spec.table} WHERE {where} AND "id" > ? ORDER BY "id" LIMIT ?'
            page_sql = f'SELECT {select} FROM {spec.table} WHERE "id" IN ({ids}) ORDER BY "id"'
            return count_sql, args, page_sql, [*args, spec.after_id, spec.limit]
        order = ", ".join(
            f"{self._column(c)} {'ASC' if asc else 'DESC'} NULLS {'LAST' if last else 'FIRST'}"
            for c, asc, last in spec.order
        )
        ids = f'SELECT "id" FROM {spec.table} WHERE {where} ORDER BY {order}, "id" LIMIT ? OFFSET ?'
        page_sql = f'SELECT {select} FROM {spec.table} WHERE "id" IN ({ids}) ORDER BY {order}, "id"'
        return count_sql, args, page_sql, [*args, spec.limit, spec.offset]

    def run(self, query: BenchQuery) -> Result:
        count_sql, count_args, page_sql, page_args = self.sql(query_spec(query, self.now))
        total = self.con.execute(count_sql, count_args).fetchall()[0][0]
        cursor = self.con.execute(page_sql, page_args)
        names = [d[0] for d in cursor.description]
        return total, [dict(zip(names, row)) for row in cursor.fetchall()]

    def close(self) -> None:
        self.con.close()


class PandasEngine:
    """Vectorised boolean masks over the DataFrame, then sort_values and the page slice."""

    name = "pandas"

    def __init__(self, frames: Frames, now: datetime):
        self.now = now
        self.frames = frames

    @staticmethod
    def _column(df: Any, name: str) -> Any:
        if name == "@effective_price":
            return df["max_bid"].fillna(df["price"])
        if name == "@deal":
            eur = df["effective_price_eur"]
            return (df["live_mid"].fillna(df["value_mid"]) / eur).where(eur > 0)
        return df[name]

    def _mask(self, df: Any, pred: Pred) -> Any:
        import numpy as np

        op, name = pred[0], pred[1]
        values = pred[2:]
        if op == "live":
            ends = df["_ends_ts"]
            return (df["closed_at"].isna() & (ends.isna() | (ends > values[0]))).to_numpy()
        s = self._column(df, name)
        if op == "eq":
            return (s == values[0]).to_numpy(dtype=bool, na_value=False)
        if op == "ne":
            return (s.notna() & (s != values[0])).to_numpy(dtype=bool, na_value=False)
        if op in ("gt", "ge", "lt", "le"):
            compare = {"gt": s.gt, "ge": s.ge, "lt": s.lt, "le": s.le}[op]
            return compare(values[0]).to_numpy(dtype=bool, na_value=False)
        if op == "in":
            return s.isin(values[0]).to_numpy()
        if op == "true":
            return (s.fillna(0) != 0).to_numpy()
        if op == "sum_gt0":
            return (s + df[values[0]]).gt(0).to_numpy(dtype=bool, na_value=False)
        if op in ("contains_any", "contains_none"):
            lower = s.str.lower()
            mask = np.zeros(len(df), dtype=bool)
            for term in values[0]:
                mask |= lower.str.contains(term, regex=False, na=False).to_numpy(dtype=bool)
            return mask if op == "contains_any" else ~mask
        if op == "segment_any":
            lower = s.str.lower()
            mask = np.zeros(len(df), dtype=bool)
            for value in values[0]:
                hit = (lower == value) | lower.str.startswith(value + "/", na=False)
                mask |= hit.to_numpy(dtype=bool, na_value=False)
            return mask
        if op == "array_any":
            # The stored JSON text holds an element exactly when it holds its JSON string.
            mask = np.zeros(len(df), dtype=bool)
            for value in values[0]:
                needle = json.dumps(value, ensure_ascii=False)
                mask |= s.str.contains(needle, regex=False, na=False).to_numpy(dtype=bool)
            return mask
        if op == "null_or_ge":
            return (s.isna() | (s >= values[0])).to_numpy(dtype=bool, na_value=False)
        if op == "between":
            return ((s >= values[0]) & (s <= values[1])).to_numpy(dtype=bool, na_value=False)
        if op == "lacks":
            return (~s.str.contains(values[0], regex=False, na=False)).to_numpy(dtype=bool)
        if op == "no_digit":
            return (~s.str.contains(r"[0-9]", regex=True, na=False)).to_numpy(dtype=bool)
        if op in ("length_ge", "length_le"):
            lengths = s.str.len()
            return (lengths >= values[0] if op == "length_ge" else lengths <= values[0]).to_numpy(
                dtype=bool, na_value=False
            )
        if op in ("ratio_ge", "ratio_lt"):
            other = df[values[0]]
            scaled = 100 * s
            hit = scaled >= values[1] * other if op == "ratio_ge" else scaled < values[1] * other
            return (other.gt(0) & hit).to_numpy(dtype=bool, na_value=False)
        if op == "suffix_in":
            wanted = set(values[0])
            return (
                s.map(
                    lambda t: isinstance(t, str) and (t in wanted or any(t.endswith("." + v) for v in wanted)),
                    na_action="ignore",
                )
                .fillna(False)
                .to_numpy(dtype=bool)
            )
        raise ValueError(f"unknown predicate {op}")

    def run(self, query: BenchQuery) -> Result:
        import numpy as np
        import pandas as pd

        spec = query_spec(query, self.now)
        df = self.frames.listings if spec.table == "listings" else self.frames.pending
        columns = self.frames.listing_columns if spec.table == "listings" else self.frames.pending_columns
        mask = np.ones(len(df), dtype=bool)
        for pred in spec.preds:
            mask &= self._mask(df, pred)
        positions = np.flatnonzero(mask)  # rows matched, by position; only sort keys are copied
        total = len(positions)
        ids = df["id"].iloc[positions]
        if spec.after_id is not None:
            page = ids[ids > spec.after_id].sort_values(kind="stable").index[: spec.limit]
        else:
            keys = {f"k{i}": self._column(df, name).iloc[positions] for i, (name, _, _) in enumerate(spec.order)}
            keys["id"] = ids
            ordered = pd.DataFrame(keys).sort_values(
                list(keys),
                ascending=[asc for _, asc, _ in spec.order] + [True],
                na_position="last" if all(last for *_, last in spec.order) else "first",
                kind="stable",
            )
            page = ordered.index[spec.offset : spec.offset + spec.limit]
        rows = df.loc[page, columns].to_dict("records")
        if spec.table == "listings":
            for row in rows:
                for column in _ARRAY_COLUMNS:
                    if isinstance(row[column], str):
                        row[column] = json.loads(row[column])
        return total, rows

    def close(self) -> None:
        pass


# -- the run ---------------------------------------------------------------------------

# Fields compared row by row besides the id (the derived ones are where engines differ).
_CHECK_FIELDS = {
    "domains": ("name", "tld", "source", "age", "score"),
    "pending": ("domain", "tld", "estimated_drop_date"),
}


@dataclass
class QueryTiming:
    name: str
    dataset: str
    params: dict[str, Any]
    total: int  # the query layer's total
    rows: int  # rows on the page
    ql_ms: float  # median latency per engine
    duckdb_ms: float
    pandas_ms: float
    agree: bool = True
    mismatch: str | None = None
    samples: dict[str, list[float]] = field(default_factory=dict, repr=False)


@dataclass
class BenchReport:
    db: str
    now: datetime
    repeat: int
    timings: list[QueryTiming]
    counts: dict[str, int]
    machine: dict[str, str]
    load_seconds: float
    duckdb_storage: str
    plans: dict[str, list[tuple[str, list[str]]]] = field(default_factory=dict)
    suite: str = "the fixed suite"
    answered_by: list[str] = field(default_factory=list)  # the query layer's engines that answered


def _norm(value: Any) -> Any:
    if value is None:
        return None
    if isinstance(value, float):
        if value != value:  # NaN
            return None
        return int(value) if value.is_integer() else round(value, 6)
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        return _norm(value.item())
    return value


def compare(dataset: str, results: Mapping[str, Result]) -> str | None:
    """None when every engine agrees with the query layer; else what differs."""
    names = list(results)
    base_name = names[0]
    base_total, base_rows = results[base_name]
    base_ids = [int(r["id"]) for r in base_rows]
    problems = []
    for name in names[1:]:
        total, rows = results[name]
        ids = [int(r["id"]) for r in rows]
        if int(total) != int(base_total):
            problems.append(f"total {base_name}={base_total} {name}={total}")
        if ids != base_ids:
            first = next((i for i, (a, b) in enumerate(zip(base_ids, ids)) if a != b), min(len(ids), len(base_ids)))
            problems.append(
                f"page ids differ from position {first} ({base_name} {base_ids[first : first + 3]} "
                f"vs {name} {ids[first : first + 3]}; {len(base_ids)} vs {len(ids)} rows)"
            )
            continue
        for a, b in zip(base_rows, rows):
            diff = [f for f in _CHECK_FIELDS[dataset] if _norm(a.get(f)) != _norm(b.get(f))]
            if diff:
                problems.append(
                    f"row {a['id']}: " + ", ".join(f"{f} {base_name}={a.get(f)!r} {name}={b.get(f)!r}" for f in diff)
                )
                break
    return "; ".join(problems) or None


def _time(fn: Callable[[], Result], repeat: int) -> tuple[Result, list[float]]:
    result = fn()  # warm-up; its answer is the one checked
    samples = []
    gc.collect(1)  # the warm-up's garbage; a full collection scans every object of the process (70 ms under pytest)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            started = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - started) * 1000)
    finally:
        if enabled:
            gc.enable()
    return result, samples


def _machine() -> dict[str, str]:
    import duckdb
    import pandas as pd
    import pyarrow as pa

    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu,
        "nproc": str(usable),
        "os": platform.platform(terse=True),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "duckdb": duckdb.__version__,
        "pandas": pd.__version__,
        "pyarrow": pa.__version__,
    }


def _counts(frames: Frames, now: datetime) -> dict[str, int]:
    listings = frames.listings
    regfree = listings["source"] == "regfree"
    ends = listings["_ends_ts"]
    live = listings["closed_at"].isna() & (ends.isna() | (ends > now.replace(tzinfo=None)))
    pending = frames.pending
    upcoming = pending["estimated_drop_date"].isna() | (pending["estimated_drop_date"] >= now.date().isoformat())
    return {
        "listings": int((~regfree).sum()),
        "listings live": int((~regfree & live).sum()),
        "regfree": int(regfree.sum()),
        "regfree live": int((regfree & live).sum()),
        "pending_delete": len(pending),
        "pending_delete upcoming": int(upcoming.sum()),
    }


def bench(
    db_path: str | os.PathLike[str],
    repeat: int = 5,
    *,
    now: datetime | None = None,
    only: str | None = None,
    duckdb_storage: str = "native",
    explain: int = 0,
    progress: Callable[[str], None] | None = None,
    random: int = 0,
    seed: int = 0,
    engine: str = "columnar",
    live_only: bool = False,
) -> BenchReport:
    """Run the suite on the mirror at `db_path` (or `random` requests drawn with `seed`);
    the full report. `engine` is the query layer's (`columnar` or `sqlite`). `live_only`:
    requests for live listings only (no `include_closed`), the peers loaded with the open
    listings alone (what such a request can match: the answers are the same), so an aged
    mirror's closed rows cost the peers no memory."""
    if not Path(db_path).is_file():
        raise FileNotFoundError(f"{db_path}: no mirror there; build one with `edt demo --scale full` first")
    now = (now or datetime.now(timezone.utc)).astimezone(timezone.utc).replace(microsecond=0)
    say = progress or (lambda message: None)
    say(f"loading {db_path} into pandas and DuckDB ...")
    frames = load_frames(db_path, now, "closed_at IS NULL" if live_only else "1")
    max_id = int(frames.listings["id"].max()) if len(frames.listings) else 0
    if random:
        suite = random_suite(frames.listings, now.date(), random, seed)
    else:
        suite = build_suite(now.date(), max_id=max_id)
    suite = [q for q in suite if not only or only.lower() in q.name.lower()]
    if live_only:
        suite = [
            BenchQuery(
                re.sub(r"&?include_closed=1", "", q.name),
                q.dataset,
                {k: v for k, v in q.params.items() if k != "include_closed"},
            )
            for q in suite
            if q.dataset == "domains"
        ]
    started = time.perf_counter()
    query_layer = QueryLayerEngine(db_path, now, engine)
    if engine == "columnar":
        say("building the query layer's columnar index if it is stale ...")
        query_layer.mirror.search_domains({"per_page": 1}, plan=PLAN)
    engines = [
        query_layer,
        DuckDBEngine(frames, now, storage=duckdb_storage),
        PandasEngine(frames, now),
    ]
    load_seconds = frames.load_seconds + time.perf_counter() - started
    timings = []
    try:
        for index, query in enumerate(suite, 1):
            say(f"[{index}/{len(suite)}] {query.name}")
            results, samples = {}, {}
            for engine in engines:
                results[engine.name], samples[engine.name] = _time(lambda e=engine: e.run(query), repeat)
            mismatch = compare(query.dataset, results)
            total, rows = results[engines[0].name]
            timings.append(
                QueryTiming(
                    name=query.name,
                    dataset=query.dataset,
                    params=dict(query.params),
                    total=total,
                    rows=len(rows),
                    ql_ms=statistics.median(samples["query layer"]),
                    duckdb_ms=statistics.median(samples["duckdb"]),
                    pandas_ms=statistics.median(samples["pandas"]),
                    agree=mismatch is None,
                    mismatch=mismatch,
                    samples=samples,
                )
            )
        plans = {}
        if explain:
            ql = engines[0]
            for timing in sorted(timings, key=lambda t: -t.ql_ms)[:explain]:
                query = next(q for q in suite if q.name == timing.name)
                conn = ql.mirror.connection()
                plans[timing.name] = [
                    (sql, [row[-1] for row in conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()])
                    for sql in ql.trace(query)
                ]
        counts = _counts(frames, now)
        answered_by = sorted(query_layer.answered_by)
    finally:
        for engine in engines:
            engine.close()
    return BenchReport(
        db=os.fspath(db_path),
        now=now,
        repeat=repeat,
        timings=timings,
        counts=counts,
        machine=_machine(),
        load_seconds=load_seconds,
        duckdb_storage=duckdb_storage,
        plans=plans,
        suite=f"{random} random requests, seed {seed}" if random else "the fixed suite",
        answered_by=answered_by,
    )


def run_bench(db_path: str | os.PathLike[str], repeat: int = 5, **options: Any) -> list[QueryTiming]:
    """The suite's timings on the mirror at `db_path` (see `bench` for the options)."""
    return bench(db_path, repeat, **options).timings


# -- the report --------------------------------------------------------------------------


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0-100), linear interpolation between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass
class Summary:
    rows: list[tuple[str, float, float, float, str]]  # engine, p50, p95, max, slowest query
    ratio_duckdb: tuple[float, float]  # p50, p95 query layer / DuckDB
    ratio_pandas: tuple[float, float]
    targets: list[tuple[str, bool, str]]  # description, met, detail


def summarize(timings: list[QueryTiming]) -> Summary:
    rows = []
    stats = {}
    for label, attr in (("query layer", "ql_ms"), ("duckdb", "duckdb_ms"), ("pandas", "pandas_ms")):
        values = [getattr(t, attr) for t in timings]
        slowest = max(timings, key=lambda t: getattr(t, attr))
        p50, p95 = percentile(values, 50), percentile(values, 95)
        stats[label] = (p50, p95, max(values))
        rows.append((label, p50, p95, max(values), slowest.name))
    ql, duck, pdx = stats["query layer"], stats["duckdb"], stats["pandas"]
    over = [t for t in timings if t.ql_ms >= TARGET_MAX_MS]
    targets = [
        (
            f"query-layer p50 <= {TARGET_P50_RATIO:g} x DuckDB p50",
            ql[0] <= TARGET_P50_RATIO * duck[0],
            f"{ql[0]:.2f} ms vs {TARGET_P50_RATIO:g} x {duck[0]:.2f} ms",
        ),
        (
            f"query-layer p95 <= {TARGET_P95_RATIO:g} x DuckDB p95",
            ql[1] <= TARGET_P95_RATIO * duck[1],
            f"{ql[1]:.2f} ms vs {TARGET_P95_RATIO:g} x {duck[1]:.2f} ms",
        ),
        (
            f"every query-layer query < {TARGET_MAX_MS:g} ms",
            not over,
            f"slowest {ql[2]:.2f} ms" + (f"; over: {', '.join(t.name for t in over)}" if over else ""),
        ),
    ]
    return Summary(rows, (ql[0] / duck[0], ql[1] / duck[1]), (ql[0] / pdx[0], ql[1] / pdx[1]), targets)


def _table(headers: list[str], rows: list[list[str]], *, markdown: bool, right: set[int]) -> str:
    if markdown:
        align = ["---:" if i in right else "---" for i in range(len(headers))]
        lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(align) + " |"]
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def format_report(report: BenchReport, *, markdown: bool = False) -> str:
    out = []
    h = (lambda text: f"### {text}") if markdown else (lambda text: f"== {text}")
    m = report.machine
    out.append(h("Machine"))
    out.append(
        f"{m['cpu']}, nproc {m['nproc']}, {m['os']}; Python {m['python']}, SQLite {m['sqlite']}, "
        f"DuckDB {m['duckdb']} ({report.duckdb_storage} tables), pandas {m['pandas']}, pyarrow {m['pyarrow']}"
    )
    counts = ", ".join(f"{k} {v:,}" for k, v in report.counts.items())
    out.append(f"\nSuite: {report.suite}; the query layer answered with {', '.join(report.answered_by) or '-'}.")
    out.append(
        f"\nMirror {report.db}: {counts}. Now {report.now:%Y-%m-%dT%H:%M:%SZ}; rows loaded into pandas "
        f"and DuckDB in {report.load_seconds:.1f} s (not timed). Each query: 1 warm-up, then the median "
        f"of {report.repeat} runs per engine."
    )
    out.append("")
    out.append(h("Per query (median ms)"))
    rows = []
    for i, t in enumerate(report.timings, 1):
        rows.append(
            [
                str(i),
                t.name,
                f"{t.total:,}",
                f"{t.ql_ms:.2f}",
                f"{t.duckdb_ms:.2f}",
                f"{t.pandas_ms:.2f}",
                f"{t.ql_ms / t.duckdb_ms:.2f}" if t.duckdb_ms else "-",
                "ok" if t.agree else "MISMATCH",
            ]
        )
    headers = ["#", "query", "total", "query layer", "duckdb", "pandas", "ql / duckdb", "check"]
    out.append(_table(headers, rows, markdown=markdown, right={0, 2, 3, 4, 5, 6}))
    if report.timings:
        s = summarize(report.timings)
        out.append("")
        out.append(h(f"Summary over {len(report.timings)} queries (ms)"))
        srows = [[e, f"{p50:.2f}", f"{p95:.2f}", f"{mx:.2f}", slow] for e, p50, p95, mx, slow in s.rows]
        out.append(_table(["engine", "p50", "p95", "max", "slowest query"], srows, markdown=markdown, right={1, 2, 3}))
        out.append("")
        ratios = [
            ["ql / duckdb", f"{s.ratio_duckdb[0]:.2f}", f"{s.ratio_duckdb[1]:.2f}"],
            ["ql / pandas", f"{s.ratio_pandas[0]:.2f}", f"{s.ratio_pandas[1]:.2f}"],
        ]
        out.append(_table(["ratio", "p50", "p95"], ratios, markdown=markdown, right={1, 2}))
        out.append("")
        out.append(h("Targets"))
        for text, met, detail in s.targets:
            out.append(f"{'- ' if markdown else ''}{'PASS' if met else 'FAIL'}  {text}: {detail}")
    bad = [t for t in report.timings if not t.agree]
    out.append("")
    out.append(h("Cross-check"))
    if bad:
        for t in bad:
            out.append(f"MISMATCH {t.name} {json.dumps(t.params)}: {t.mismatch}")
    else:
        out.append(f"all {len(report.timings)} queries: the three engines agree on the total and the ordered page ids")
    for name, statements in report.plans.items():
        out.append("")
        out.append(h(f"Query plans: {name}"))
        for sql, plan in statements:
            out.append(("    " if markdown else "  ") + sql)
            out.extend(("    " if markdown else "  ") + "  " + step for step in plan)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    from ..config import load_settings

    parser = argparse.ArgumentParser(prog="python -m toolkit.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", help="the mirror (default: EDT_DB or data/mirror.db)")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per engine and query, after a warm-up")
    parser.add_argument(
        "--markdown", action="store_true", help="print the tables as Markdown (as docs/benchmarks.md shows them)"
    )
    parser.add_argument("--only", help="run only the queries whose name contains this text")
    parser.add_argument(
        "--duckdb-storage",
        choices=("native", "arrow"),
        default="native",
        help="DuckDB over its own tables (default) or over registered Arrow tables",
    )
    parser.add_argument(
        "--explain",
        type=int,
        default=0,
        metavar="N",
        help="print SQLite's plans for the query layer's N slowest queries",
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--now", help="the UTC moment queries run at (ISO 8601; default: now)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument(
        "--random",
        type=int,
        default=0,
        metavar="N",
        help="N random /api/domains requests drawn from the parameter table instead of the suite",
    )
    parser.add_argument("--seed", type=int, default=0, help="the random requests' seed (same seed, same requests)")
    parser.add_argument(
        "--engine",
        choices=("columnar", "sqlite"),
        default="columnar",
        help="the query layer's engine (default: its columnar index)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    if args.repeat < 1:
        print("--repeat must be at least 1", file=sys.stderr)
        return 2
    now = None
    if args.now:
        try:
            now = datetime.fromisoformat(args.now.replace("Z", "+00:00"))
        except ValueError:
            print(f"--now: not an ISO 8601 moment: {args.now!r}", file=sys.stderr)
            return 2
        now = now if now.tzinfo else now.replace(tzinfo=timezone.utc)
    db = args.db or load_settings().db
    if not Path(db).is_file():
        print(f"{db}: no mirror there; build one with `edt demo --scale full` first", file=sys.stderr)
        return 2
    progress = None if args.quiet else (lambda message: print(message, file=sys.stderr, flush=True))
    if args.random < 0:
        print("--random must be a positive number of requests", file=sys.stderr)
        return 2
    report = bench(
        db,
        args.repeat,
        now=now,
        only=args.only,
        duckdb_storage=args.duckdb_storage,
        explain=args.explain,
        progress=progress,
        random=args.random,
        seed=args.seed,
        engine=args.engine,
    )
    print(format_report(report, markdown=args.markdown))
    if any(not t.agree for t in report.timings):
        return 1
    if args.strict and report.timings and not all(met for _, met, _ in summarize(report.timings).targets):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
