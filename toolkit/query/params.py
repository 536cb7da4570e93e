"""Every query parameter, defined once: type, range, SQL, caption.

Filters as data, as datasette's `filters.py`: the validation, the SQL builder, the
OpenAPI document, the app's sidebar and the MCP schema all read these tables, so a rule
lives in exactly one place (docs/reference/parameters.md is written from them).

A `Param` parses one raw value (a query-string text, or a Python value) into a typed
value or raises the API's 422 naming the field; its `clause` turns that value into
a parameterised SQL condition. Parameters without a clause (paging, sort, output
switches) are read by `query` itself.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from ..errors import invalid
from ..names import normalize_tld
from ..sources import SOURCES
from ..store.fields import iso_timestamp
from ..store.schema import DEAL_RATIO, SORT_COLUMNS
from .conditions import (
    Among,
    ArrayHoldsAny,
    Clause,
    Compare,
    Condition,
    Contains,
    ContainsNone,
    Flag,
    SuffixFamily,
    TextTest,
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
    "caption",
]

TOP_CATEGORIES = (
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


@dataclass(frozen=True)
class Context:
    """What a clause may depend on besides its value: the moment of the query."""

    today: date
    table: str  # listings or pending_delete
    now: datetime | None = None  # the moment itself (UTC), for filters counted in hours


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # int number flag choice list date week text
    caption: str  # short label for the UI
    description: str  # one sentence for OpenAPI and MCP
    group: str  # sidebar group: source, names, seo, archive, price, dates, paging, output
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] | None = None
    max_length: int | None = None
    default: Any = None
    extension: bool = False  # not in the reference API
    step: float | None = None  # the app's number input step (default 1)
    clause: Condition | Callable[[Any, Context], Clause | None] | None = field(default=None, compare=False, repr=False)
    normalize: Callable[[str], str] | None = field(default=None, compare=False, repr=False)

    # -- parsing ---------------------------------------------------------------------
    def parse(self, raw: Any) -> Any:
        """The typed value of `raw`, or the API's 422 naming this parameter."""
        parser = getattr(self, f"_parse_{self.kind}")
        return parser(raw)

    def _fail(self, what: str, raw: Any, hint: str = "") -> Exception:
        """The 422 naming this parameter; `hint` ("did you mean ...? ") comes first."""
        if hint:
            return invalid(self.name, f"{self.name}={str(raw)[:60]}: {hint}{self.name} {what}.")
        return invalid(self.name, f"{self.name} {what} (got {str(raw)[:60]!r}).")

    def _range_text(self) -> str:
        if self.minimum is not None and self.maximum is not None:
            return f"from {self.minimum:g} to {self.maximum:g}"
        if self.minimum is not None:
            return f"of at least {self.minimum:g}"
        return ""

    def _check_range(self, value: float, raw: Any, noun: str) -> None:
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            raise self._fail(f"must be {noun} {self._range_text()}", raw)

    def _parse_int(self, raw: Any) -> int:
        if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
            raise self._fail(f"must be a whole number {self._range_text()}", raw)
        text = str(int(raw)) if isinstance(raw, (int, float)) else str(raw).strip()
        if not re.fullmatch(r"[+-]?\d{1,12}", text):
            raise self._fail(f"must be a whole number {self._range_text()}", raw)
        value = int(text)
        self._check_range(value, raw, "a whole number")
        return value

    def _parse_number(self, raw: Any) -> float:
        try:
            value = float(raw) if not isinstance(raw, bool) else math.nan
        except (TypeError, ValueError):
            value = math.nan
        if not math.isfinite(value):
            raise self._fail(f"must be a number {self._range_text()}", raw)
        self._check_range(value, raw, "a number")
        return value

    def _parse_flag(self, raw: Any) -> bool:
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("1", "true"):
            return True
        if text in ("0", "false"):
            return False
        raise self._fail("must be 1 or true to apply, 0 or false not to", raw)

    def _parse_choice(self, raw: Any) -> str:
        text = "".join(str(raw).split()).lower()
        for choice in self.choices or ():
            if choice.lower() == text:
                return choice
        raise self._fail(f"must be one of {', '.join(self.choices or ())}", raw, self._close_choices(text))

    def _close_choices(self, text: str) -> str:
        """ "did you mean -trust_flow? " for a near miss of a choice (a typo, a missing underscore)."""
        folded = {c.lower().replace("_", ""): c for c in self.choices or ()}
        close = [folded[c] for c in difflib.get_close_matches(text.replace("_", ""), folded, n=3, cutoff=0.75)]
        close = [c for c in close if c.startswith("-") == text.startswith("-")] or close  # the order asked for first
        return f"did you mean {' or '.join(close)}? " if close else ""

    def _parse_date(self, raw: Any) -> str:
        text = raw.isoformat() if isinstance(raw, date) else str(raw).strip()
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                raise ValueError
            return date.fromisoformat(text).isoformat()
        except ValueError:
            raise self._fail("must be a date as YYYY-MM-DD", raw) from None

    def _parse_week(self, raw: Any) -> str:
        text = str(raw).strip()
        if text.lower() == "all":
            return "all"
        try:
            return self._parse_date(text)
        except Exception:
            raise self._fail("must be 'all' or a date as YYYY-MM-DD", raw) from None

    def _parse_text(self, raw: Any) -> str:
        text = str(raw).strip()
        if self.max_length is not None and len(text) > self.max_length:
            raise self._fail(f"must be at most {self.max_length} characters", raw)
        if self.normalize:
            text = self.normalize(text)
        if self.choices is not None and text not in self.choices:
            raise self._fail(f"must be one of {', '.join(self.choices)}", raw, self._close_choices(text.lower()))
        return text

    def _parse_list(self, raw: Any) -> tuple[str, ...]:
        text = ",".join(map(str, raw)) if isinstance(raw, (list, tuple, set)) else str(raw)
        if self.max_length is not None and len(text) > self.max_length:
            raise self._fail(f"must be at most {self.max_length} characters in all", raw)
        items = [item.strip() for item in text.split(",")]
        items = [item for item in items if item]
        if not items:
            raise self._fail("needs at least one value (a comma-separated list)", raw)
        if self.normalize:
            items = [self.normalize(item) for item in items]
        if self.choices is not None:
            folded = {c.lower(): c for c in self.choices}
            unknown = [item for item in items if item.lower() not in folded]
            if unknown:
                raise self._fail(f"takes values among {', '.join(self.choices)}; unknown: {', '.join(unknown)}", raw)
            items = [folded[item.lower()] for item in items]
        return tuple(dict.fromkeys(items))


# -- conditions: SQL and columnar mask of each filter (toolkit/query/conditions.py) ----------


def _ge(column: str) -> Compare:
    return Compare(column, ">=")


def _gt(column: str) -> Compare:
    return Compare(column, ">")


def _lt(column: str) -> Compare:
    return Compare(column, "<")


def _le(column: str) -> Compare:
    return Compare(column, "<=")


def _eq(column: str) -> Compare:
    return Compare(column, "=")


def _in(column: str) -> Among:
    return Among(column)


_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _nocase(text: str) -> str:
    """SQLite's NOCASE collation: ASCII letters folded, nothing else."""
    return text.translate(_ASCII_FOLD)


def _categories_sql(values: tuple[str, ...], ctx: Context) -> Clause:
    # Whole path segments: `Health` matches `Health` and `Health/...`, never `Healthcare`.
    parts, args = [], []
    for value in values:
        parts.append(
            "(ttf_topic = ? COLLATE NOCASE OR (ttf_topic >= ? COLLATE NOCASE AND ttf_topic < ? COLLATE NOCASE))"
        )
        args += [value, value + "/", value + "0"]  # '0' sorts right after '/'
    return "(" + " OR ".join(parts) + ")", args


def _categories_test(values: tuple[str, ...]) -> Callable[[str], bool]:
    bounds = [(_nocase(v), _nocase(v + "/"), _nocase(v + "0")) for v in values]

    def test(topic: str) -> bool:
        folded = _nocase(topic)
        return any(folded == exact or low <= folded < high for exact, low, high in bounds)

    return test


_categories = TextTest("ttf_topic", _categories_sql, _categories_test)


def _latest_first_snapshot(years: int, ctx: Context) -> str:
    # age >= N  <=>  first snapshot on or before today's month and day N years ago.
    today = ctx.today
    return f"{today.year - years:04d}-{today.month:02d}-{today.day:02d}"


_age_min = Compare("wayback_first_date", "<=", _latest_first_snapshot)
# age <= N  <=>  not age >= N + 1  <=>  first snapshot after that day N + 1 years ago.
_age_max = Compare("wayback_first_date", ">", lambda years, ctx: _latest_first_snapshot(years + 1, ctx))
# TF/CF in hundredths, as SQLite computes it for both engines: whole-number division, so
# `floor(100 TF / CF) >= 100 r` is exactly `TF / CF >= r` for a ratio of two decimals;
# a CF of 0 (or below, which no source should send) has no ratio: NULL, which never passes.
_TF_CF_PERCENT = "iif(citation_flow > 0, 100 * trust_flow / citation_flow, NULL)"


def _hundredths(ratio: float, ctx: Context) -> float:
    return round(ratio * 100, 6)


def _drops_within(days: int, ctx: Context) -> Clause:
    return "estimated_drop_date >= ? AND estimated_drop_date <= ?", [
        ctx.today.isoformat(),
        (ctx.today + timedelta(days=days)).isoformat(),
    ]


def _hours_ahead(hours: int, ctx: Context) -> tuple[str | None, str | None]:
    """(now, now + hours) as stored timestamps: what `ends_within` keeps between."""
    return iso_timestamp(ctx.now), iso_timestamp(ctx.now + timedelta(hours=hours))


def _category(text: str) -> str:
    top, _, rest = text.partition("/")
    for name in TOP_CATEGORIES:
        if name.lower() == top.strip().lower():
            return name + ("/" + rest.strip() if rest.strip() else "")
    raise ValueError(text)


def _parse_categories(param: Param, raw: Any) -> tuple[str, ...]:
    items = Param._parse_list(param, raw)
    try:
        return tuple(_category(item) for item in items)
    except ValueError as exc:
        raise param._fail(
            f"takes top categories ({', '.join(TOP_CATEGORIES)}) or paths such as Recreation/Travel; unknown: {exc}",
            raw,
        ) from None


class _CategoriesParam(Param):
    def parse(self, raw: Any) -> Any:
        return _parse_categories(self, raw)


class _TimestampParam(Param):
    """A text parameter holding an ISO 8601 timestamp, normalised to the stored form
    (UTC `YYYY-MM-DDTHH:MM:SSZ`, naive means UTC) so it compares with stored timestamps as
    text. Fractions of a second are dropped: the writer stamps whole seconds, and a fraction
    would sort after them (`.` < `Z`), so `> 07:00:00.5Z` is `> 07:00:00Z` for every stored row."""

    def parse(self, raw: Any) -> Any:
        try:
            value = iso_timestamp(raw if isinstance(raw, datetime) else str(raw).strip())
        except (ValueError, OverflowError):  # e.g. an offset that moves year 9999 past the calendar
            value = None
        if value is None:
            raise self._fail("must be an ISO 8601 timestamp such as 2026-11-22T07:00:00Z", raw)
        return value[:19] + "Z"


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
        clause=_eq("source"),
    ),
    Param(
        "tld",
        "list",
        "TLDs",
        "Comma-separated TLDs, with or without the leading dot (.com,.co.uk).",
        "source",
        normalize=normalize_tld,
        clause=_in("tld"),
    ),
    Param(
        "type",
        "choice",
        "Type",
        "Listing type.",
        "source",
        choices=("auction", "closeout", "backorder"),
        clause=_eq("type"),
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
    Param("score_min", "int", "Min score", "Minimum quality score (0-100).", "seo", 0, 100, clause=_ge("score")),
    Param(
        "da_min",
        "int",
        "Min Domain Authority",
        "Minimum Domain Authority (0-100); enriched rows only.",
        "seo",
        0,
        100,
        clause=_ge("domain_authority"),
    ),
    Param(
        "rd_min",
        "int",
        "Min referring domains",
        "Minimum referring domains; enriched rows only.",
        "seo",
        0,
        clause=_ge("referring_domains"),
    ),
    Param(
        "age_min",
        "int",
        "Min age (years)",
        "Minimum whole years since the first web-archive snapshot.",
        "archive",
        0,
        clause=_age_min,
    ),
    Param(
        "snapshots_min",
        "int",
        "Min snapshots",
        "Minimum web-archive snapshot count.",
        "archive",
        0,
        clause=_ge("wayback_snapshots"),
    ),
    Param(
        "language",
        "text",
        "Language",
        "Detected content language code (EN, FR, DE, ...), any case.",
        "archive",
        max_length=5,
        normalize=str.upper,
        clause=_eq("language"),
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
    Param(
        "price_min",
        "number",
        "Min price",
        "Minimum effective price (current bid, else price), native currency.",
        "price",
        0,
        clause=_ge("effective_price"),
    ),
    Param(
        "price_max",
        "number",
        "Max price",
        "Maximum effective price (current bid, else price), native currency.",
        "price",
        0,
        clause=_le("effective_price"),
    ),
    Param(
        "price_eur_min",
        "number",
        "Min price (EUR)",
        "Minimum effective price in EUR (ECB rate of the day it was seen); rows without a EUR price never match.",
        "price",
        0,
        extension=True,
        clause=_ge("effective_price_eur"),
    ),
    Param(
        "price_eur_max",
        "number",
        "Max price (EUR)",
        "Maximum effective price in EUR (ECB rate of the day it was seen); rows without a EUR price never match.",
        "price",
        0,
        extension=True,
        clause=_le("effective_price_eur"),
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
        clause=_ge("trust_flow"),
    ),
    Param(
        "cf_min",
        "int",
        "Min Citation Flow",
        "Minimum Citation Flow (0-100); enriched rows only.",
        "seo",
        0,
        100,
        clause=_ge("citation_flow"),
    ),
    Param(
        "traffic_min",
        "int",
        "Min monthly traffic",
        "Minimum estimated monthly organic traffic; enriched rows only.",
        "seo",
        0,
        clause=_ge("historical_traffic_etv"),
    ),
    _CategoriesParam(
        "categories",
        "list",
        "Categories",
        "Comma-separated topics: a top category (Health) or a path (Recreation/Travel), any case.",
        "names",
        clause=_categories,
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
        clause=_le("archive_longest_gap"),
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
        clause=_ge("archive_continuity"),
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
    Param(
        "length_min",
        "int",
        "Min length",
        "Minimum length of the label left of the public suffix.",
        "names",
        1,
        63,
        extension=True,
        clause=_ge("length"),
    ),
    Param(
        "length_max",
        "int",
        "Max length",
        "Maximum length of the label left of the public suffix.",
        "names",
        1,
        63,
        extension=True,
        clause=_le("length"),
    ),
    Param(
        "no_dashes",
        "flag",
        "No hyphens",
        "Exclude names whose label has a hyphen.",
        "names",
        extension=True,
        clause=Flag("hyphens", "=", 0),
    ),
    Param(
        "no_numbers",
        "flag",
        "No digits",
        "Exclude names whose label has a digit.",
        "names",
        extension=True,
        clause=Flag("digits", "=", 0),
    ),
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
        clause=_le("trust_flow"),
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
        clause=_le("citation_flow"),
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
        clause=_le("domain_authority"),
    ),
    Param(
        "tf_cf_ratio_min",
        "number",
        "Min TF/CF ratio",
        "Minimum Trust Flow / Citation Flow, two decimals "
        "(0.5: TF at least half of CF); enriched rows with CF > 0 only.",
        "seo",
        0,
        100,
        extension=True,
        step=0.05,
        clause=Compare(_TF_CF_PERCENT, ">=", _hundredths),
    ),
    Param(
        "tf_cf_ratio_max",
        "number",
        "Max TF/CF ratio",
        "Maximum Trust Flow / Citation Flow, cut to two "
        "decimals (0.505 counts as 0.50); enriched rows with CF > 0 only.",
        "seo",
        0,
        100,
        extension=True,
        step=0.05,
        clause=Compare(_TF_CF_PERCENT, "<=", _hundredths),
    ),
    Param(
        "age_max",
        "int",
        "Max age (years)",
        "Maximum whole years since the first web-archive snapshot.",
        "archive",
        0,
        extension=True,
        clause=_age_max,
    ),
    # The price range `edt appraise` learns from the sales the mirror knows (value_mid: its middle, EUR), and
    # the live estimate of an auction with bids (live_mid), which the deal ratio reads first.
    Param(
        "value_min",
        "number",
        "Min value (EUR)",
        "Minimum middle of the listing's price range in EUR (value_mid, "
        "from edt appraise); listings without a range never match.",
        "price",
        0,
        extension=True,
        clause=_ge("value_mid"),
    ),
    Param(
        "value_max",
        "number",
        "Max value (EUR)",
        "Maximum middle of the listing's price range in EUR (value_mid, "
        "from edt appraise); listings without a range never match.",
        "price",
        0,
        extension=True,
        clause=_le("value_mid"),
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
        clause=_ge(DEAL_RATIO),
    ),
    Param(
        "created_after",
        "date",
        "Added on or after",
        "Listings added on or after this date (YYYY-MM-DD).",
        "dates",
        clause=_ge("created_at"),
    ),
    Param(
        "created_before",
        "date",
        "Added before",
        "Listings added before this date (YYYY-MM-DD).",
        "dates",
        clause=_lt("created_at"),
    ),
    Param(
        "ends_after",
        "date",
        "Ends on or after",
        "Auctions ending on or after this date (YYYY-MM-DD).",
        "dates",
        clause=_ge("auction_end_date"),
    ),
    Param(
        "ends_before",
        "date",
        "Ends before",
        "Auctions ending before this date (YYYY-MM-DD).",
        "dates",
        clause=_lt("auction_end_date"),
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
        clause=Within("auction_end_date", _hours_ahead),
    ),
    _TimestampParam(
        "seen_after",
        "text",
        "First seen after",
        "Listings first seen by this mirror after this UTC timestamp (ISO 8601, e.g. 2026-11-22T07:00:00Z).",
        "dates",
        extension=True,
        clause=_gt("first_seen_at"),
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

DOMAIN_PARAMS: dict[str, Param] = {p.name: p for p in _SHARED_DOMAIN_FILTERS + _DOMAIN_ONLY_FILTERS}

# /api/results (an extension): the listing filters choose the listings, closed or not; these the results.
_NOT_RESULT_FILTERS = ("sort", "after_id", "per_page", "limit", "page", "include_closed", "include_historical_traffic")
RESULT_PARAMS: dict[str, Param] = {
    **{name: p for name, p in DOMAIN_PARAMS.items() if name not in _NOT_RESULT_FILTERS},
    **{
        p.name: p
        for p in (
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
        )
    },
}

_free_source = Param(
    "source", "choice", "Source", "One free-tier platform slug.", "source", choices=_FREE_SLUGS, clause=_eq("source")
)
FREE_PARAMS: dict[str, Param] = {
    **{p.name: p for p in _SHARED_DOMAIN_FILTERS},
    "source": _free_source,
    "limit": Param("limit", "int", "Limit", "Number of results (1-50).", "paging", 1, 50, default=10),
}

PENDING_PARAMS: dict[str, Param] = {
    p.name: p
    for p in (
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
            clause=_in("whois_status"),
        ),
        Param(
            "source",
            "choice",
            "Pipeline",
            "oi-diff (ccTLDs, weekly) or czds-daily (gTLDs).",
            "source",
            choices=PENDING_SOURCES,
            clause=_eq("source"),
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
            clause=_drops_within,
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
        Param(
            "no_dashes",
            "flag",
            "No hyphens",
            "Exclude names whose label has a hyphen.",
            "names",
            clause=Flag("hyphens", "=", 0),
        ),
        Param(
            "no_numbers",
            "flag",
            "No digits",
            "Exclude names whose label has a digit.",
            "names",
            clause=Flag("digits", "=", 0),
        ),
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
            clause=_ge("estimated_drop_date"),
        ),
        Param(
            "drop_date_to",
            "date",
            "Drops to",
            "Estimated drop date on or before (YYYY-MM-DD).",
            "dates",
            extension=True,
            clause=_le("estimated_drop_date"),
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
}


def parse_params(table: Mapping[str, Param], raw: Mapping[str, Any] | None, *, strict: bool) -> dict[str, Any]:
    """Typed values of the parameters present in `raw` (empty values count as absent).

    With `strict`, an unknown name is a 422 (the Python API: a typo is never silently
    ignored), and so is a lower bound above its upper bound (tf_min=30 with tf_max=10: no row
    can match); without, unknown names are dropped and contradictions answer an empty page
    (the HTTP API, as the live service)."""
    values: dict[str, Any] = {}
    for name, value in (raw or {}).items():
        param = table.get(name)
        if param is None:
            if strict:
                raise invalid(name, unknown_message(table, name))
            continue
        if isinstance(value, (list, tuple)):
            value = merge_repeated(param, value)
        if value is None or (isinstance(value, str) and not value.strip()):
            continue
        values[name] = param.parse(value)
    if strict:
        for low, reason in _contradicted(table, values):
            raise invalid(low.name, f"{reason}, so no row can match; lower {low.name} or raise the other.")
    return values


def unknown_message(
    known: Iterable[str], name: str, *, what: str = "parameter", of: str = "", sort: bool = True
) -> str:
    """The 422's words for an unknown name (a query parameter, a tool's argument): the
    closest known names first (a typo such as tf_mn is "did you mean tf_min, ...?"), then
    every name known. One text for the CLI, the Python API, the HTTP API and the MCP tools."""
    names = sorted(known) if sort else list(known)
    close = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    hint = f"did you mean {', '.join(close[:-1])} or {close[-1]}? " if len(close) > 1 else ""
    hint = hint or (f"did you mean {close[0]}? " if close else "")
    return f"unknown {what} {name!r}{f' for {of}' if of else ''}: {hint}use one of {', '.join(names) or 'none'}."


# Filters that bound one value from both sides: every X_min with its X_max, and the date
# pairs, the upper one exclusive when its clause is `<` (created_before, ends_before).
_DATE_BOUNDS = (("created_after", "created_before"), ("ends_after", "ends_before"), ("drop_date_from", "drop_date_to"))


def bound_pairs(table: Mapping[str, Param]) -> list[tuple[Param, Param, bool]]:
    """(lower, upper, upper is exclusive) of each pair of filters in `table` that bound one value."""
    pairs = [
        (table[name], table[name[:-4] + "_max"], False)
        for name in table
        if name.endswith("_min") and name[:-4] + "_max" in table
    ]
    for low, high in _DATE_BOUNDS:
        if low in table and high in table:
            clause = table[high].clause
            pairs.append((table[low], table[high], isinstance(clause, Compare) and clause.op == "<"))
    return pairs


def contradictions(table: Mapping[str, Param], values: Mapping[str, Any]) -> list[str]:
    """Why parsed `values` can match no row whatever the data: a lower bound above its upper
    bound (tf_min=30 with tf_max=10, created_after on or after created_before)."""
    return [reason for _, reason in _contradicted(table, values)]


def _contradicted(table: Mapping[str, Param], values: Mapping[str, Any]) -> list[tuple[Param, str]]:
    reasons = []
    for low, high, exclusive in bound_pairs(table):
        if low.name not in values or high.name not in values:
            continue
        lo, hi = values[low.name], values[high.name]
        shown = [
            f"{p.name}={v:g}" if isinstance(v, (int, float)) else f"{p.name}={v}" for p, v in ((low, lo), (high, hi))
        ]
        if exclusive and lo >= hi:
            reasons.append((low, f"{shown[0]} is not before {shown[1]} (which leaves its own day out)"))
        elif lo > hi:
            reasons.append((low, f"{shown[0]} is {'after' if low.kind == 'date' else 'above'} {shown[1]}"))
    return reasons


def takes_several(param: Param) -> bool:
    """Whether the parameter takes a comma list (tld, source, topic, ...)."""
    return param.kind == "list" or isinstance(param, _CategoriesParam)


def gather(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """Name/value pairs (a query string, KEY=VALUE arguments) as a mapping; a repeated name
    becomes a list, which `parse_params` merges or refuses (`merge_repeated`)."""
    params: dict[str, Any] = {}
    for key, value in pairs:
        if key in params:
            previous = params[key]
            params[key] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            params[key] = value
    return params


def merge_repeated(param: Param, values: list[Any] | tuple[Any, ...]) -> Any:
    """A parameter given more than once (`tld=.fr&tld=.de`, `edt query tld=.fr tld=.de`, or a
    list in a tool call): a list filter gets the values merged as its comma list (`.fr,.de`);
    any other parameter must be given once (the same value repeated is accepted), else 422.
    One rule for the CLI, the HTTP API and the MCP tools."""
    given = [v for v in values if v is not None and str(v).strip()]
    if takes_several(param):
        return ",".join(str(v).strip() for v in given) or None
    distinct = list(dict.fromkeys(str(v).strip() for v in given))
    if len(distinct) > 1:
        raise invalid(
            param.name,
            f"{param.name} was given {len(given)} times ({', '.join(distinct)}); it takes one "
            "value (only list filters such as tld or source merge repeats into a comma list).",
        )
    return given[0] if given else None


# Words a filter reads as in a sentence, where its caption does not (captions are widget labels).
_FLAG_WORDS = {
    "has_bids": "with bids",
    "has_backlinks": "with backlinks",
    "has_gmb": "with a Google Business Profile",
    "has_edu_gov": "with EDU or GOV links",
    "include_closed": "closed ones too",
}
_LIST_WORDS = {
    "contains": "containing",
    "not_contains": "without",
    "categories": "in",
    "techs": "built with",
    "use_cases": "for",
    "status": "status",
}
_PROPER = ("Trust", "Citation", "Domain", "TF/CF", "EUR", "EDU", "GOV")
_ATTACHED = ("with ", "containing ", "in ", "for ", "built with ")


def _lower(text: str) -> str:
    return text if text.startswith(_PROPER) else text[:1].lower() + text[1:]


def _number(value: Any) -> str:
    return f"{value:,g}" if isinstance(value, float) else f"{value:,}" if isinstance(value, int) else str(value)


def caption(table: Mapping[str, Param], values: Mapping[str, Any]) -> str:
    """A search as a sentence (parsed `values`): `French names, Trust Flow 15+`, `Auctions with
    bids, score 40+`, `.com names, max length 8 ...`: what the app and `edt watch list` say
    a saved search is."""
    from ..sources import source_by_slug
    from ..store.labels import TYPE_WORDS, status_words, tld_words

    noun = TYPE_WORDS[values["type"]][1] if values.get("type") in TYPE_WORDS else "names"
    tlds = values.get("tld") if table is not None and "tld" in values else ()
    head = f"{' or '.join(dict.fromkeys(tld_words(t) for t in tlds))} {noun}" if tlds else noun
    if "source" in values and table.get("source") is not None and table["source"].clause is not None:
        found = source_by_slug(values["source"])
        head += f" on {found.name if found else values['source']}"
    parts = []
    for name, value in values.items():
        param = table[name]
        if param.clause is None or name in ("tld", "type", "source"):
            continue
        words = param.caption.split(" (")[0]
        if param.kind == "flag":
            if value:
                parts.append(_FLAG_WORDS.get(name) or _lower(words.replace("Exclude ", "without ")))
        elif name in ("ends_within", "drops_within"):
            verb, unit = ("ending", "hour") if name == "ends_within" else ("dropping", "day")
            parts.append(f"{verb} within {value} {unit}{'s' if value != 1 else ''}")
        elif name == "seen_after":
            parts.append(f"first seen after {value[:10]} {value[11:16]} UTC")
        elif name == "status":
            parts.append(" or ".join(status_words(v) for v in value))
        elif param.kind == "list":
            parts.append(f"{_LIST_WORDS.get(name) or _lower(words)} {' or '.join(value)}")
        elif name.endswith("_min"):
            parts.append(f"{_lower(words.removeprefix('Min '))} {_number(value)}+")
        elif name.endswith("_max"):
            parts.append(f"{_lower(words.removeprefix('Max '))} up to {_number(value)}")
        else:
            parts.append(f"{_lower(words)} {_number(value)}")
    if not parts and head == "names":
        return "All live listings"
    attached = [p for p in parts if p.startswith(_ATTACHED)]  # "auctions with bids", not "auctions, with bids"
    rest = [p for p in parts if not p.startswith(_ATTACHED)]
    sentence = ", ".join([" ".join([head, *attached]), *rest])
    return sentence[:1].upper() + sentence[1:]
