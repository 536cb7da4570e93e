"""The query benchmark's suite: a fixed set of realistic `/api/domains` and `/api/pending-delete`
queries, or N `/api/domains` requests drawn at random from the parameter table with values
drawn from the mirror's own rows."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

__all__ = ["BenchQuery", "build_suite", "random_suite"]

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
