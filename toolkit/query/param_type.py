"""What a request parameter is (`Param`: its kind, range and choices, how a raw value parses
into a typed one or a 422 naming it, and its condition), what a condition may depend on
(`Context`), and the conditions the parameter tables share (comparisons, the category paths,
ages, hours and days ahead). The tables themselves are in `params.py`."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from ..errors import invalid
from ..store.fields import iso_timestamp
from .conditions import Among, Clause, Compare, Condition, TextTest

__all__ = [
    "Param",
    "Context",
    "CategoriesParam",
    "TimestampParam",
    "TOP_CATEGORIES",
    "TF_CF_PERCENT",
    "ge",
    "gt",
    "lt",
    "le",
    "eq",
    "among",
    "categories_test",
    "age_min",
    "age_max",
    "hundredths",
    "drops_within",
    "hours_ahead",
]

TOP_CATEGORIES = tuple(
    "Business Health Computers Shopping Recreation Society Sports News Science Arts Reference Regional Games Home "
    "World Adult".split()
)


_MAX_DIGITS = 18
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


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
        if not re.fullmatch(r"[+-]?[0-9]+", text):  # ASCII digits only: int() also reads ١٢ and 1_000
            raise self._fail(f"must be a whole number {self._range_text()}", raw)
        if len(text.lstrip("+-")) > _MAX_DIGITS:  # beyond SQLite's integers (ids reach 16 digits)
            raise self._fail(f"must be a whole number {self._range_text()} of at most {_MAX_DIGITS} digits", raw)
        value = int(text)
        self._check_range(value, raw, "a whole number")
        return value

    def _parse_number(self, raw: Any) -> float:
        try:
            if isinstance(raw, bool) or (isinstance(raw, str) and not _NUMBER.fullmatch(raw.strip())):
                value = math.nan  # float() also reads ١٢, 1_000 and nan
            else:
                value = float(raw)
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
        import difflib  # only for a misspelt value: not on every start

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


def ge(column: str) -> Compare:
    return Compare(column, ">=")


def gt(column: str) -> Compare:
    return Compare(column, ">")


def lt(column: str) -> Compare:
    return Compare(column, "<")


def le(column: str) -> Compare:
    return Compare(column, "<=")


def eq(column: str) -> Compare:
    return Compare(column, "=")


def among(column: str) -> Among:
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


categories_test = TextTest("ttf_topic", _categories_sql, _categories_test)


def _latest_first_snapshot(years: int, ctx: Context) -> str:
    # age >= N  <=>  first snapshot on or before today's month and day N years ago.
    today = ctx.today
    return f"{today.year - years:04d}-{today.month:02d}-{today.day:02d}"


age_min = Compare("wayback_first_date", "<=", _latest_first_snapshot)
# age <= N  <=>  not age >= N + 1  <=>  first snapshot after that day N + 1 years ago.
age_max = Compare("wayback_first_date", ">", lambda years, ctx: _latest_first_snapshot(years + 1, ctx))
# TF/CF in hundredths, as SQLite computes it for both engines: whole-number division, so
# `floor(100 TF / CF) >= 100 r` is exactly `TF / CF >= r` for a ratio of two decimals;
# a CF of 0 (or below, which no source should send) has no ratio: NULL, which never passes.
TF_CF_PERCENT = "iif(citation_flow > 0, 100 * trust_flow / citation_flow, NULL)"


def hundredths(ratio: float, ctx: Context) -> float:
    return round(ratio * 100, 6)


def drops_within(days: int, ctx: Context) -> Clause:
    return "estimated_drop_date >= ? AND estimated_drop_date <= ?", [
        ctx.today.isoformat(),
        (ctx.today + timedelta(days=days)).isoformat(),
    ]


def hours_ahead(hours: int, ctx: Context) -> tuple[str | None, str | None]:
    """(now, now + hours) as stored timestamps: what `ends_within` keeps between."""
    assert ctx.now is not None, "ends_within needs the moment of the query"
    return iso_timestamp(ctx.now), iso_timestamp(ctx.now + timedelta(hours=hours))


def _category(text: str) -> str:
    top, _, rest = text.partition("/")
    rest = "/".join(part.strip() for part in rest.split("/") if part.strip())  # Recreation/Travel/ is Recreation/Travel
    for name in TOP_CATEGORIES:
        if name.lower() == top.strip().lower():
            return name + ("/" + rest if rest else "")
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


class CategoriesParam(Param):
    def parse(self, raw: Any) -> Any:
        return _parse_categories(self, raw)


class TimestampParam(Param):
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
