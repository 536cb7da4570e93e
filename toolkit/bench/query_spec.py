"""A benchmark query as predicates, an order and a page, read from the documented semantics
(docs/reference/fields.md and semantics.md), independently of `toolkit.query.params`: what the
DuckDB and pandas engines answer."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from ..query.params import DOMAIN_SORTS, TOP_CATEGORIES
from .query_suite import BenchQuery

__all__ = ["Pred", "Spec", "domain_spec", "pending_spec", "query_spec"]

# -- a query as predicates, from the documented semantics --------------------------------
#
# Both reference engines read the same small description of a query: predicates over
# columns of the loaded frame, an order, and a page. Written from docs/reference/semantics.md, not from
# `toolkit.query.params`, so that the query layer is checked against an independent reading (only
# the vocabulary is shared: the top categories and the sort fields' names).

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
_SORTS = {name: (name, False) for name in DOMAIN_SORTS}  # the names the API takes
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
    f"{name}_{end}": (op, column)
    for name, column in (("price", "@effective_price"), ("price_eur", "effective_price_eur"), ("value", "value_mid"))
    for end, op in (("min", "ge"), ("max", "le"))
}
_REAL_BOUNDS["deal_min"] = ("ge", "@deal")
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
        tops = {c.lower() for c in TOP_CATEGORIES}
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
