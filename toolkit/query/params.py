"""Every query parameter, defined once: type, range, SQL, caption (the tables).

Filters as data, as datasette's `filters.py`: the validation, the SQL builder, the
OpenAPI document, the app's sidebar and the MCP schema all read these tables, so a rule
lives in exactly one place (docs/reference/parameters.md is written from them).

A `Param` parses one raw value (a query-string text, or a Python value) into a typed
value or raises the API's 422 naming the field; its `clause` turns that value into
a parameterised SQL condition. Parameters without a clause (paging, sort, output
switches) are read by `query` itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..names import normalize_tld
from ..sources import SOURCES
from ..store.schema import DEAL_RATIO, SORT_COLUMNS
from .captions import caption
from .param_type import (
    TF_CF_PERCENT,
    TOP_CATEGORIES,
    CategoriesParam,
    Context,
    Param,
    TimestampParam,
    age_max,
    age_min,
    among,
    categories_test,
    drops_within,
    eq,
    ge,
    gt,
    hours_ahead,
    hundredths,
    le,
    lt,
)
from .request_values import (
    bound_pairs,
    contradictions,
    gather,
    merge_repeated,
    parse_params,
    takes_several,
    unknown_message,
)
from .conditions import (
    ArrayHoldsAny,
    Clause,
    Compare,
    Contains,
    ContainsNone,
    Flag,
    SuffixFamily,
    Within,
)

__all__ = [
    "Param",
    "Clause",
    "Context",
    "DOMAIN_PARAMS",
    "RESULT_PARAMS",
    "PENDING_PARAMS",
    "FREE_PARAMS",
    "TOP_CATEGORIES",
    "USE_CASES",
    "PENDING_STATUSES",
    "PENDING_SOURCES",
    "DOMAIN_SORTS",
    "PENDING_SORTS",
    "parse_params",
    "unknown_message",
    "bound_pairs",
    "contradictions",
    "gather",
    "merge_repeated",
    "takes_several",
    "caption",
]

USE_CASES = ("ecommerce", "local-biz", "news", "saas", "forum", "media", "developer")
PENDING_STATUSES = ("pendingDelete", "redemptionPeriod", "serverHold", "clientHold", "transition", "quarantine")
PENDING_SOURCES = (
    "oi-diff",
    "czds-daily",
    "bardate",
    "droplist",
    "zonediff",
)  # the service's two, then edt ingest's feeds
DOMAIN_SORTS = tuple(SORT_COLUMNS)
PENDING_SORTS = ("drop_date", "drop_date_desc", "domain")


def _by_name(*params: Param) -> dict[str, Param]:
    return {p.name: p for p in params}


def _min_max(
    name: str,
    kind: str,
    caption: str,
    about: str | tuple[str, str],
    group: str,
    minimum: float,
    maximum: float | None = None,
    *,
    column: str,
    extension: bool = False,
    step: float | None = None,
    arg: Callable[[Any, Context], Any] | None = None,
) -> tuple[Param, ...]:
    """`<name>_min` and `<name>_max`, the bounds of one column (`arg` turns the value into the
    compared one): captions Min and Max `caption`, descriptions Minimum and Maximum `about`
    (one text, or the two)."""
    low, high = (about, about) if isinstance(about, str) else about
    return tuple(
        Param(
            f"{name}_{end}",
            kind,
            f"{short} {caption}",
            f"{word} {text}",
            group,
            minimum,
            maximum,
            extension=extension,
            step=step,
            clause=Compare(column, op, arg),
        )
        for end, short, word, text, op in (("min", "Min", "Minimum", low, ">="), ("max", "Max", "Maximum", high, "<="))
    )


# The label's shape: filters of /api/pending-delete, extensions of /api/domains.
_NO_DASHES = Param(
    "no_dashes",
    "flag",
    "No hyphens",
    "Exclude names whose label has a hyphen.",
    "names",
    clause=Flag("hyphens", "=", 0),
)
_NO_NUMBERS = Param(
    "no_numbers", "flag", "No digits", "Exclude names whose label has a digit.", "names", clause=Flag("digits", "=", 0)
)

_SOURCE_SLUGS = tuple(s.slug for s in SOURCES)
_FREE_SLUGS = tuple(s.slug for s in SOURCES if s.free_tier)

_SHARED_DOMAIN_FILTERS: tuple[Param, ...] = (
    Param(
        "source",
        "choice",
        "Source",
        "One platform slug, or regfree for the deleted-ccTLD database (Authority).",
        "source",
        choices=_SOURCE_SLUGS,
        clause=eq("source"),
    ),
    Param(
        "tld",
        "list",
        "TLDs",
        "Comma-separated TLDs, with or without the leading dot (.com,.co.uk).",
        "source",
        normalize=normalize_tld,
        clause=among("tld"),
    ),
    Param(
        "type",
        "choice",
        "Type",
        "Listing type.",
        "source",
        choices=("auction", "closeout", "backorder"),
        clause=eq("type"),
    ),
    Param(
        "has_bids",
        "flag",
        "Has bids",
        "Only listings with at least one bid.",
        "price",
        clause=Flag("bids_count", ">", 0),
    ),
    Param(
        "has_backlinks",
        "flag",
        "Has backlinks",
        "Only enriched listings with referring domains.",
        "seo",
        clause=Flag("referring_domains", ">", 0),
    ),
    Param("score_min", "int", "Min score", "Minimum quality score (0-100).", "seo", 0, 100, clause=ge("score")),
    Param(
        "da_min",
        "int",
        "Min Domain Authority",
        "Minimum Domain Authority (0-100); enriched rows only.",
        "seo",
        0,
        100,
        clause=ge("domain_authority"),
    ),
    Param(
        "rd_min",
        "int",
        "Min referring domains",
        "Minimum referring domains; enriched rows only.",
        "seo",
        0,
        clause=ge("referring_domains"),
    ),
    Param(
        "age_min",
        "int",
        "Min age (years)",
        "Minimum whole years since the first web-archive snapshot.",
        "archive",
        0,
        clause=age_min,
    ),
    Param(
        "snapshots_min",
        "int",
        "Min snapshots",
        "Minimum web-archive snapshot count.",
        "archive",
        0,
        clause=ge("wayback_snapshots"),
    ),
    Param(
        "language",
        "text",
        "Language",
        "Detected content language code (EN, FR, DE, ...), any case.",
        "archive",
        max_length=5,
        normalize=str.upper,
        clause=eq("language"),
    ),
    Param(
        "contains",
        "list",
        "Name contains",
        "Comma-separated terms; names containing any of them (case-insensitive).",
        "names",
        max_length=200,
        clause=Contains("name"),
    ),
    *_min_max(
        "price",
        "number",
        "price",
        "effective price (current bid, else price), native currency.",
        "price",
        0,
        column="effective_price",
    ),
    *_min_max(
        "price_eur",
        "number",
        "price (EUR)",
        "effective price in EUR (ECB rate of the day it was seen); rows without a EUR price never match.",
        "price",
        0,
        column="effective_price_eur",
        extension=True,
    ),
    Param(
        "exclude_spam",
        "flag",
        "Exclude spam words",
        "Leave out names whose words match the spam dictionary (built-in list plus your own file).",
        "names",
        extension=True,
        clause=Flag("spam_count", "=", 0),
    ),
)

_DOMAIN_ONLY_FILTERS: tuple[Param, ...] = (
    Param(
        "has_gmb",
        "flag",
        "Has Google Business",
        "Only domains with a Google Business Profile listing.",
        "seo",
        clause=Flag("has_gmb", "=", 1),
    ),
    Param(
        "has_edu_gov",
        "flag",
        "Has EDU/GOV links",
        "Only enriched domains with EDU or GOV referring domains.",
        "seo",
        clause=Flag("ref_domains_edu + ref_domains_gov", ">", 0),
    ),
    Param(
        "tf_min",
        "int",
        "Min Trust Flow",
        "Minimum Trust Flow (0-100); enriched rows only.",
        "seo",
        0,
        100,
        clause=ge("trust_flow"),
    ),
    Param(
        "cf_min",
        "int",
        "Min Citation Flow",
        "Minimum Citation Flow (0-100); enriched rows only.",
        "seo",
        0,
        100,
        clause=ge("citation_flow"),
    ),
    Param(
        "traffic_min",
        "int",
        "Min monthly traffic",
        "Minimum estimated monthly organic traffic; enriched rows only.",
        "seo",
        0,
        clause=ge("historical_traffic_etv"),
    ),
    CategoriesParam(
        "categories",
        "list",
        "Categories",
        "Comma-separated topics: a top category (Health) or a path (Recreation/Travel), any case.",
        "names",
        clause=categories_test,
    ),
    Param(
        "techs",
        "list",
        "Historical tech",
        "Comma-separated tech labels (case-sensitive); any of them.",
        "archive",
        max_length=500,
        clause=ArrayHoldsAny("historical_tech"),
    ),
    Param(
        "use_cases",
        "list",
        "Use cases",
        "Comma-separated buyer-intent categories; any of them.",
        "archive",
        max_length=200,
        choices=USE_CASES,
        clause=ArrayHoldsAny("use_cases"),
    ),
    Param(
        "exclude_inflated",
        "flag",
        "Exclude inflated metrics",
        "Leave out listings whose TF, CF, DA, referring domains or backlinks rose sharply within 30 days before "
        "the auction end.",
        "seo",
        extension=True,
        clause=Flag("metrics_jumped", "=", 0),
    ),
    Param(
        "archive_gap_max",
        "int",
        "Max archive gap (years)",
        "Longest run of years without a web-archive capture, at most this; archive-enriched rows only.",
        "archive",
        0,
        extension=True,
        clause=le("archive_longest_gap"),
    ),
    Param(
        "continuity_min",
        "int",
        "Min archive continuity",
        "Minimum archive continuity score (0-100: years archived over the span, less redirects and parked pages); "
        "archive-enriched rows only.",
        "archive",
        0,
        100,
        extension=True,
        clause=ge("archive_continuity"),
    ),
    Param(
        "exclude_parked",
        "flag",
        "Exclude parked",
        "Only archive-enriched domains without a parked-page signal (one page across many captures, or parking "
        "nameservers).",
        "archive",
        extension=True,
        clause=Flag("archive_parked", "=", 0),
    ),
    # Extensions that list-readers expect (ExpiredDomains.net's filters), on plain columns
    # the columnar index holds: the label's shape, excluded words, metric maxima, TF/CF.
    *_min_max(
        "length",
        "int",
        "length",
        "length of the label left of the public suffix.",
        "names",
        1,
        63,
        column="length",
        extension=True,
    ),
    replace(_NO_DASHES, extension=True),
    replace(_NO_NUMBERS, extension=True),
    Param(
        "not_contains",
        "list",
        "Name excludes",
        "Comma-separated terms; names containing none of them (case-insensitive).",
        "names",
        max_length=200,
        extension=True,
        clause=ContainsNone("name"),
    ),
    Param(
        "tf_max",
        "int",
        "Max Trust Flow",
        "Maximum Trust Flow (0-100); enriched rows only.",
        "seo",
        0,
        100,
        extension=True,
        clause=le("trust_flow"),
    ),
    Param(
        "cf_max",
        "int",
        "Max Citation Flow",
        "Maximum Citation Flow (0-100); enriched rows only.",
        "seo",
        0,
        100,
        extension=True,
        clause=le("citation_flow"),
    ),
    Param(
        "da_max",
        "int",
        "Max Domain Authority",
        "Maximum Domain Authority (0-100); enriched rows only.",
        "seo",
        0,
        100,
        extension=True,
        clause=le("domain_authority"),
    ),
    *_min_max(
        "tf_cf_ratio",
        "number",
        "TF/CF ratio",
        (
            "Trust Flow / Citation Flow, two decimals (0.5: TF at least half of CF); enriched rows with CF > 0 only.",
            "Trust Flow / Citation Flow, cut to two decimals (0.505 counts as 0.50); enriched rows with CF > 0 only.",
        ),
        "seo",
        0,
        100,
        column=TF_CF_PERCENT,
        extension=True,
        step=0.05,
        arg=hundredths,
    ),
    Param(
        "age_max",
        "int",
        "Max age (years)",
        "Maximum whole years since the first web-archive snapshot.",
        "archive",
        0,
        extension=True,
        clause=age_max,
    ),
    # The price range `edt appraise` learns from the sales the mirror knows (value_mid: its middle, EUR), and
    # the live estimate of an auction with bids (live_mid), which the deal ratio reads first.
    *_min_max(
        "value",
        "number",
        "value (EUR)",
        "middle of the listing's price range in EUR (value_mid, from edt appraise); listings without a range "
        "never match.",
        "price",
        0,
        column="value_mid",
        extension=True,
    ),
    Param(
        "deal_min",
        "number",
        "Min value / price",
        "Minimum ratio of the value to the effective price in EUR "
        "(2: priced at half its value or less): the live estimate's middle for an auction with bids, else the "
        "range's; listings with one and a EUR price above 0 only.",
        "price",
        0,
        extension=True,
        step=0.25,
        clause=ge(DEAL_RATIO),
    ),
    Param(
        "created_after",
        "date",
        "Added on or after",
        "Listings added on or after this date (YYYY-MM-DD).",
        "dates",
        clause=ge("created_at"),
    ),
    Param(
        "created_before",
        "date",
        "Added before",
        "Listings added before this date (YYYY-MM-DD).",
        "dates",
        clause=lt("created_at"),
    ),
    Param(
        "ends_after",
        "date",
        "Ends on or after",
        "Auctions ending on or after this date (YYYY-MM-DD).",
        "dates",
        clause=ge("auction_end_date"),
    ),
    Param(
        "ends_before",
        "date",
        "Ends before",
        "Auctions ending before this date (YYYY-MM-DD).",
        "dates",
        clause=lt("auction_end_date"),
    ),
    Param(
        "ends_within",
        "int",
        "Ends within (hours)",
        "Auctions ending within the next N hours (1-720), none already ended.",
        "dates",
        1,
        720,
        extension=True,
        clause=Within("auction_end_date", hours_ahead),
    ),
    TimestampParam(
        "seen_after",
        "text",
        "First seen after",
        "Listings first seen by this mirror after this UTC timestamp (ISO 8601, e.g. 2026-11-22T07:00:00Z).",
        "dates",
        extension=True,
        clause=gt("first_seen_at"),
    ),
    Param(
        "include_closed",
        "flag",
        "Include closed",
        "Also return listings that are no longer live.",
        "output",
        extension=True,
    ),
    Param(
        "include_historical_traffic",
        "flag",
        "Historical traffic",
        "Include the full historical_traffic object.",
        "output",
    ),
    Param(
        "sort",
        "text",
        "Sort",
        "A sort field, '-' prefix for descending; nulls last, ties by id.",
        "paging",
        extension=True,
        choices=DOMAIN_SORTS + tuple("-" + s for s in DOMAIN_SORTS),
    ),
    Param(
        "after_id",
        "int",
        "After id",
        "Keyset cursor: rows with id > after_id by id ascending (never regfree).",
        "paging",
        0,
    ),
    Param("per_page", "int", "Per page", "Results per page (1-100).", "paging", 1, 100, default=50),
    Param("limit", "int", "Limit", "Alias of per_page, used when per_page is absent.", "paging", 1, 100),
    Param("page", "int", "Page", "Page number.", "paging", 1, default=1),
)

DOMAIN_PARAMS: dict[str, Param] = _by_name(*_SHARED_DOMAIN_FILTERS, *_DOMAIN_ONLY_FILTERS)

# /api/results (an extension): the listing filters choose the listings, closed or not; these the results.
_NOT_RESULT_FILTERS = ("sort", "after_id", "per_page", "limit", "page", "include_closed", "include_historical_traffic")
RESULT_PARAMS: dict[str, Param] = {
    **{name: p for name, p in DOMAIN_PARAMS.items() if name not in _NOT_RESULT_FILTERS},
    **_by_name(
        Param(
            "ended_after",
            "date",
            "Ended on or after",
            "Auctions that ended on or after this date (YYYY-MM-DD).",
            "dates",
            extension=True,
        ),
        Param(
            "ended_before",
            "date",
            "Ended before",
            "Auctions that ended before this date (YYYY-MM-DD).",
            "dates",
            extension=True,
        ),
        Param("sold", "flag", "Sold only", "Only the auctions that ended with bids.", "output", extension=True),
        Param("per_page", "int", "Per page", "Results per page (1-100).", "paging", 1, 100, default=50),
        Param("page", "int", "Page", "Page number.", "paging", 1, default=1),
    ),
}

_free_source = Param(
    "source", "choice", "Source", "One free-tier platform slug.", "source", choices=_FREE_SLUGS, clause=eq("source")
)
FREE_PARAMS: dict[str, Param] = {
    **_by_name(*_SHARED_DOMAIN_FILTERS),
    "source": _free_source,
    "limit": Param("limit", "int", "Limit", "Number of results (1-50).", "paging", 1, 50, default=10),
}

PENDING_PARAMS: dict[str, Param] = _by_name(
    Param(
        "tld",
        "list",
        "TLDs",
        "Comma-separated TLDs, with or without the leading dot; a suffix also "
        "matches the suffixes under it (uk: .uk, .co.uk, .org.uk, ...).",
        "source",
        normalize=lambda t: normalize_tld(t, dot=False),
        clause=SuffixFamily("tld"),
    ),
    Param(
        "status",
        "list",
        "Status",
        "Comma-separated WHOIS statuses.",
        "source",
        choices=PENDING_STATUSES,
        clause=among("whois_status"),
    ),
    Param(
        "source",
        "choice",
        "Pipeline",
        "oi-diff (ccTLDs, weekly) or czds-daily (gTLDs).",
        "source",
        choices=PENDING_SOURCES,
        clause=eq("source"),
    ),
    Param(
        "week_end",
        "week",
        "Snapshot week",
        "Snapshot week (YYYY-MM-DD) or 'all'; explicit weeks include past drops.",
        "dates",
        default="all",
    ),
    Param(
        "drops_within",
        "int",
        "Drops within (days)",
        "Estimated drop within N days from today (never past).",
        "dates",
        1,
        60,
        clause=drops_within,
    ),
    Param(
        "contains",
        "list",
        "Name contains",
        "Substring of the domain name; comma-separated terms, any of them.",
        "names",
        max_length=200,
        clause=Contains("domain"),
    ),
    _NO_DASHES,
    _NO_NUMBERS,
    Param(
        "include_past",
        "flag",
        "Include past drops",
        "With week_end=all, also rows whose drop date passed.",
        "dates",
    ),
    Param(
        "drop_date_from",
        "date",
        "Drops from",
        "Estimated drop date on or after (YYYY-MM-DD).",
        "dates",
        extension=True,
        clause=ge("estimated_drop_date"),
    ),
    Param(
        "drop_date_to",
        "date",
        "Drops to",
        "Estimated drop date on or before (YYYY-MM-DD).",
        "dates",
        extension=True,
        clause=le("estimated_drop_date"),
    ),
    Param(
        "sort",
        "choice",
        "Sort",
        "drop_date (soonest first), drop_date_desc or domain.",
        "paging",
        choices=PENDING_SORTS,
        default="drop_date",
    ),
    Param("per_page", "int", "Per page", "Results per page (1-200).", "paging", 1, 200, default=50),
    Param("page", "int", "Page", "Page number.", "paging", 1, default=1),
)
