"""What a filter asks of a row, in the two forms the query layer answers with.

A parameter in `params.py` names one condition. Called with a parsed value, the condition
gives its SQL (`(sql, args)`, or None when it asks nothing, as a flag at 0). Its `mask`
gives the same answer as a boolean array over the columnar index (`query/columnar.py`),
through the few primitives the index offers: `compare`, `among`, `where_text`,
`fts_match` and `name_contains`. Both forms are written side by side here, so they cannot
drift apart unnoticed, and the tests compare them on random filter sets.

A condition without a mask (or a mask that raises `Unsupported`) sends the query to the
SQLite planner, which answers everything.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

__all__ = [
    "Clause",
    "Condition",
    "Unsupported",
    "Compare",
    "Within",
    "Among",
    "Flag",
    "TextTest",
    "Contains",
    "ContainsNone",
    "SuffixFamily",
    "ArrayHoldsAny",
    "fts_phrase",
]

Clause = tuple[str, list[Any]]


class Unsupported(Exception):
    """The columnar index cannot answer this condition; the SQLite planner will."""


class Columns(Protocol):  # what `query/columnar.py` offers a mask (for readers of this file)
    def compare(self, column: str, op: str, value: Any) -> Any: ...
    def among(self, column: str, values: tuple[str, ...]) -> Any: ...
    def where_text(self, column: str, test: Callable[[str], bool]) -> Any: ...
    def fts_match(self, table: str, match: str) -> Any: ...
    def name_contains(self, term: str) -> Any: ...
    @property
    def fts_complete(self) -> bool: ...


class Condition:
    """SQL and mask of one filter. `columns` are the expressions the mask reads."""

    columns: tuple[str, ...] = ()

    def __call__(self, value: Any, ctx: Any) -> Clause | None:
        raise NotImplementedError

    def mask(self, value: Any, ctx: Any, cols: Columns) -> Any:
        raise Unsupported(type(self).__name__)


class Compare(Condition):
    """`column op value`, where `arg` may turn the parameter's value into the compared one
    (age in years -> the latest first-snapshot date)."""

    def __init__(self, column: str, op: str, arg: Callable[[Any, Any], Any] | None = None):
        self.column, self.op, self.arg = column, op, arg
        self.columns = (column,)

    def _value(self, value: Any, ctx: Any) -> Any:
        return self.arg(value, ctx) if self.arg else value

    def __call__(self, value: Any, ctx: Any) -> Clause:
        return f"{self.column} {self.op} ?", [self._value(value, ctx)]

    def mask(self, value: Any, ctx: Any, cols: Columns) -> Any:
        return cols.compare(self.column, self.op, self._value(value, ctx))


class Within(Condition):
    """`low < column <= high`, the bounds from the parameter's value (`bounds(value, ctx)`):
    an auction ending within the next N hours, never one already ended."""

    def __init__(self, column: str, bounds: Callable[[Any, Any], tuple[Any, Any]]):
        self.column, self.bounds = column, bounds
        self.columns = (column,)

    def __call__(self, value: Any, ctx: Any) -> Clause:
        low, high = self.bounds(value, ctx)
        return f"{self.column} > ? AND {self.column} <= ?", [low, high]

    def mask(self, value: Any, ctx: Any, cols: Columns) -> Any:
        low, high = self.bounds(value, ctx)
        return cols.compare(self.column, ">", low) & cols.compare(self.column, "<=", high)


class Among(Condition):
    """`column IN (values)`."""

    def __init__(self, column: str):
        self.column = column
        self.columns = (column,)

    def __call__(self, values: tuple[str, ...], ctx: Any) -> Clause:
        return f"{self.column} IN ({','.join('?' * len(values))})", list(values)

    def mask(self, values: tuple[str, ...], ctx: Any, cols: Columns) -> Any:
        return cols.among(self.column, tuple(values))


class Flag(Condition):
    """A flag: 1 applies `column op constant`, 0 applies nothing. The constant is written into
    the SQL (not bound), so SQLite can use a partial index declared with the same text."""

    def __init__(self, column: str, op: str, constant: int):
        self.column, self.op, self.constant = column, op, constant
        self.columns = (column,)

    def __call__(self, value: Any, ctx: Any) -> Clause | None:
        return (f"{self.column} {self.op} {self.constant}", []) if value else None

    def mask(self, value: Any, ctx: Any, cols: Columns) -> Any:
        return cols.compare(self.column, self.op, self.constant) if value else None


class TextTest(Condition):
    """A condition on a text column with few distinct values: SQL from `sql`, the mask from
    `test(value)(text)` applied to each distinct text once."""

    def __init__(self, column: str, sql: Callable[[Any, Any], Clause], test: Callable[[Any], Callable[[str], bool]]):
        self.column, self.sql, self.test = column, sql, test
        self.columns = (column,)

    def __call__(self, value: Any, ctx: Any) -> Clause:
        return self.sql(value, ctx)

    def mask(self, value: Any, ctx: Any, cols: Columns) -> Any:
        return cols.where_text(self.column, self.test(value))


class ArrayHoldsAny(TextTest):
    """The stored array holds any of the values. The writer stores arrays as compact JSON,
    where an element v appears as the exact text json.dumps(v) (quotes inside an element are
    escaped, so no other element can contain it): a substring test is exact, and much
    cheaper than json_each over every row."""

    def __init__(self, column: str):
        def sql(values: tuple[str, ...], ctx: Any) -> Clause:
            tests = " OR ".join(f"instr({column}, ?) > 0" for _ in values)
            return f"({tests})", [json.dumps(v, ensure_ascii=False) for v in values]

        def test(values: tuple[str, ...]) -> Callable[[str], bool]:
            needles = [json.dumps(v, ensure_ascii=False) for v in values]
            return lambda text: any(n in text for n in needles)

        super().__init__(column, sql, test)


def fts_phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


class Contains(Condition):
    """Any term as a case-insensitive substring. Terms of three characters or more use the
    trigram index; shorter ones (which a trigram index cannot answer) compare directly."""

    def __init__(self, column: str):
        self.column = column
        self.columns = (column,)

    @staticmethod
    def _terms(terms: tuple[str, ...]) -> tuple[list[str], list[str]]:
        folded = list(dict.fromkeys(t.lower() for t in terms))
        return [t for t in folded if len(t) >= 3], [t for t in folded if len(t) < 3]

    def __call__(self, terms: tuple[str, ...], ctx: Any) -> Clause:
        long_terms, short_terms = self._terms(terms)
        parts, args = [], []
        if long_terms:
            parts.append(f"{ctx.table}.rowid IN (SELECT rowid FROM {ctx.table}_fts WHERE {ctx.table}_fts MATCH ?)")
            args.append(" OR ".join(fts_phrase(t) for t in long_terms))
        for term in short_terms:
            parts.append(f"instr({self.column}, ?) > 0")
            args.append(term)
        return "(" + " OR ".join(parts) + ")", args

    def mask(self, terms: tuple[str, ...], ctx: Any, cols: Columns) -> Any:
        if self.column != "name":
            raise Unsupported("contains on " + self.column)
        long_terms, short_terms = self._terms(terms)
        found = None
        if not cols.fts_complete:  # names outside SQLite (archived, packed): every term compared here
            long_terms, short_terms = [], long_terms + short_terms
        if long_terms:
            found = cols.fts_match(ctx.table, " OR ".join(fts_phrase(t) for t in long_terms))
        for term in short_terms:
            hit = cols.name_contains(term)
            found = hit if found is None else found | hit
        return found


class ContainsNone(Contains):
    """No term as a case-insensitive substring (excluded words): the negation of `Contains`.
    A NULL name cannot occur (names are required), so NOT is exact on both sides."""

    def __call__(self, terms: tuple[str, ...], ctx: Any) -> Clause:
        sql, args = super().__call__(terms, ctx)
        return f"NOT {sql}", args

    def mask(self, terms: tuple[str, ...], ctx: Any, cols: Columns) -> Any:
        return ~super().mask(terms, ctx, cols)


_SPELLED_OUT = 100  # suffixes a family test writes out, one term each


class SuffixFamily(Condition):
    """A suffix and every suffix under it: `uk` is `uk`, `co.uk`, `org.uk`, ... (stored
    without a leading dot, as the pending-delete table keeps them). Compared with `substr`,
    so no value can act as a pattern."""

    def __init__(self, column: str):
        self.column = column
        self.columns = (column,)

    def __call__(self, values: tuple[str, ...], ctx: Any) -> Clause:
        column = self.column
        if len(values) > _SPELLED_OUT:  # one JSON array: within SQLite's expression depth (1,000), a little slower
            listed = json.dumps(list(values))
            return (
                f"({column} IN (SELECT value FROM json_each(?)) OR EXISTS (SELECT 1 FROM json_each(?) AS f "
                f"WHERE substr({column}, -length(f.value) - 1) = '.' || f.value))",
                [listed, listed],
            )
        parts, args = [f"{column} IN ({','.join('?' * len(values))})"], list[Any](values)
        for value in values:
            parts.append(f"substr({column}, -?) = ?")
            args += [len(value) + 1, "." + value]
        return "(" + " OR ".join(parts) + ")", args

    def mask(self, values: tuple[str, ...], ctx: Any, cols: Columns) -> Any:
        family = set(values)
        return cols.where_text(self.column, lambda t: t in family or any(t.endswith("." + v) for v in family))
