"""The SQLite planner: a request's filters as SQL, and the cheapest way SQLite's indexes
answer its count and page.

It answers every request (the columnar index in `columnar.py` answers most of them faster,
and falls back to this). The indexes it leans on are declared in `store/schema.py`; the
docs/design.md ("How queries stay fast") tells the plan choices.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..sources import REGFREE
from ..store.fields import iso_timestamp
from ..store.schema import LISTING_COLUMNS, OPEN, SORT_COLUMNS, SORT_INDEXES
from .params import DOMAIN_PARAMS, Context, Param
from .records import LISTING_SELECT

__all__ = ["DomainSql", "domain_sql", "filter_clauses", "where", "order_by", "count", "count_and_page", "rows_by_id"]


@dataclass(frozen=True)
class DomainSql:
    where: str
    args: list[Any]
    order: str
    walk_index: str | None  # an index that yields rows in `order`, if one does
    covered: bool  # every condition can be checked inside that index (no table reads)
    fts: bool  # `contains` is answered by the trigram index (every term >= 3 characters)
    count_index: str | None  # the index that counts the matches without reading the table
    walk_where: str = "1"  # the conditions a walk of walk_index checks by itself
    walk_args: list[Any] | tuple[Any, ...] = ()
    # Only open listings can match (`closed_at IS NULL` is in `where`): the listing indexes,
    # which hold open listings only, serve; else none does (the table is read).
    open_only: bool = True


# A page walks its sort index when it should find its rows within this many index entries
# (estimated from the exact count); beyond, the ids are sorted from the covering index.
WALK_LIMIT = 20_000
# Before the count is known, a page may try a walk of at most this many index entries.
PROBE_LIMIT = 3_000
FILTERS_INDEX = "idx_listings_filters"


def where(clauses: list[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
    sql = " AND ".join(f"({c})" for c, _ in clauses) or "1"
    return sql, [a for _, args in clauses for a in args]


def filter_clauses(
    table: Mapping[str, Param], values: Mapping[str, Any], ctx: Context
) -> dict[str, tuple[str, list[Any]]]:
    """The SQL condition of each filter in force, by parameter name (a flag at 0 has none)."""
    clauses = {}
    for name, value in values.items():
        clause = table[name].clause
        if clause is not None and (built := clause(value, ctx)) is not None:
            clauses[name] = built
    return clauses


_NEVER_NULL = {"name", "created_at", "first_seen_at"}  # the writer always sets them


def order_by(sort: str | None) -> str:
    """ORDER BY for a `sort` value: nulls last, ties by id (default: score descending)."""
    sort = sort or "-score"
    descending = sort.startswith("-")
    column, reversed_ = SORT_COLUMNS[sort.lstrip("-")]
    if column == "id":
        return "id DESC" if descending else "id"
    if descending != reversed_:
        return f"{column} DESC, id"
    return f"{column}, id" if column in _NEVER_NULL else f"({column} IS NULL), {column}, id"


# The filters each index can check by itself (its leading column's filters; every index
# also carries source and live_until). A query whose filters all fall in one index's set
# is answered from that narrow index alone.
_INDEX_CHECKS: dict[str, set[str]] = {
    "idx_listings_source_score": {"score_min"},
    "idx_listings_tld_score": {"tld", "score_min"},
    "idx_listings_score": {"score_min"},
    "idx_listings_ending": {"ends_after", "ends_before", "ends_within"},
    "idx_listings_oldest": {"age_min"},
    "idx_listings_cheapest": {"price_min", "price_max"},
    "idx_listings_price": set(),
    "idx_listings_newest": {"created_after", "created_before"},
    "idx_listings_bids": {"has_bids"},
    "idx_listings_trust_flow": {"tf_min"},
    "idx_listings_referring": {"rd_min", "has_backlinks"},
    "idx_listings_authority": {"da_min"},
    "idx_listings_traffic": {"traffic_min"},
    "idx_listings_name": {"contains"},
    "idx_listings_gmb": {"has_gmb", "score_min"},
    "idx_listings_edu_gov": {"has_edu_gov", "score_min", "snapshots_min"},
    "idx_listings_tech": {"techs", "use_cases", "score_min"},
    "idx_listings_topic": {"categories"},
    "idx_listings_language": {"language", "age_min"},
}
# Partial indexes are used only when the query states their condition; these terms are
# implied by the filters (a null array holds nothing) and are added as planner hints.
_PARTIAL_HINTS = {
    "techs": "historical_tech IS NOT NULL OR use_cases IS NOT NULL",
    "use_cases": "historical_tech IS NOT NULL OR use_cases IS NOT NULL",
}


def _walk_index(order: str, values: Mapping[str, Any]) -> str | None:
    """The index that yields rows in `order` (the narrowest when several do)."""
    if order == "score DESC, id":
        if len(values.get("tld", ())) == 1:
            return "idx_listings_tld_score"
        if "source" in values:
            return "idx_listings_source_score"
        if values.get("has_gmb"):
            return "idx_listings_gmb"
        if values.get("has_edu_gov"):
            return "idx_listings_edu_gov"
        if "techs" in values or "use_cases" in values:
            return "idx_listings_tech"
    for name, columns in SORT_INDEXES.items():
        if columns.startswith(order + ","):
            return name
    return None


# An index that holds only some rows (a partial index) or seeks on one key serves only
# queries that state its filter.
_INDEX_NEEDS: dict[str, set[str]] = {
    "idx_listings_tld_score": {"tld"},
    "idx_listings_gmb": {"has_gmb"},
    "idx_listings_edu_gov": {"has_edu_gov"},
    "idx_listings_tech": {"techs", "use_cases"},
}


def _count_index(filters: set[str]) -> str:
    """The narrowest index that checks every filter by itself, else the covering one."""
    for name, checks in _INDEX_CHECKS.items():
        needs = _INDEX_NEEDS.get(name)
        if filters <= checks | {"type"} and (needs is None or filters & needs):
            return name
    return FILTERS_INDEX


def domain_sql(values: Mapping[str, Any], now: datetime, *, closed_after_now: bool = False) -> DomainSql:
    """The SQL of an `/api/domains` request (plan checks are the caller's). `closed_after_now`:
    some listing closed after `now` (a clock set in the past), so "live" may hold closed rows."""
    regfree = values.get("source") == REGFREE
    # A live row is open whenever no listing closed after `now`: then the condition every
    # listing index is declared with is stated, and they serve.
    open_only = not values.get("include_closed") and not closed_after_now
    base: list[tuple[str, list[Any]]] = [(OPEN, [])] if open_only else []
    if not values.get("include_closed"):
        base.append(("live_until > ?", [iso_timestamp(now)]))
    # Regfree is a separate database: only ever returned when asked for by name.
    base.append((f"source {'=' if regfree else '!='} '{REGFREE}'", []))
    named = filter_clauses(DOMAIN_PARAMS, values, Context(today=now.date(), table="listings", now=now))
    if "ends_before" in values and not values.get("include_closed"):
        # Implied by "live"; gives the end-date index a lower bound.
        named["ends_after_now"] = ("auction_end_date > ?", [iso_timestamp(now)])
    hints = sorted({_PARTIAL_HINTS[name] for name in values if name in _PARTIAL_HINTS})
    where_sql, args = where(base + list(named.values()) + [(hint, []) for hint in hints])
    order = order_by(values.get("sort"))
    walk_index = _walk_index(order, values) if open_only else None
    # Every index carries source; a filter the walk index cannot check means table reads.
    filters = set(named) - {"source", "ends_after_now"}
    if len(values.get("tld", ())) > 1:
        filters.add("tld+")  # several TLDs: no single seek
    checks = (_INDEX_CHECKS.get(walk_index, set()) if walk_index else set()) | {"source", "type"}
    covered = walk_index is not None and filters <= checks
    # What a walk of that index can check by itself (a partial index needs its condition).
    walk_where, walk_args = where(
        base
        + [c for n, c in named.items() if n in checks]
        + [(h, []) for h in hints if walk_index == "idx_listings_tech"]
    )
    fts = "contains" in values and all(len(t) >= 3 for t in values["contains"])
    count_index = None if fts or not open_only else _count_index(filters)
    return DomainSql(where_sql, args, order, walk_index, covered, fts, count_index, walk_where, walk_args, open_only)


def _covering_scan(sql: DomainSql) -> tuple[str, str]:
    """(hint, where) of a scan of the covering index; of the table when closed rows may match."""
    return (f"INDEXED BY {FILTERS_INDEX}" if sql.open_only else ""), sql.where


def count(conn: sqlite3.Connection, sql: DomainSql) -> int:
    # An index answers the count without reading the table; a trigram search is
    # better driven by its own index.
    hint, where_sql = f"INDEXED BY {sql.count_index}" if sql.count_index else "", sql.where
    if sql.count_index == FILTERS_INDEX:
        hint, where_sql = _covering_scan(sql)
    return conn.execute(f"SELECT count(*) FROM listings {hint} WHERE {where_sql}", sql.args).fetchone()[0]


def count_and_page(
    conn: sqlite3.Connection, sql: DomainSql, limit: int, offset: int, scope_rows: Callable[[], int]
) -> tuple[int, list[tuple]]:
    """The total and the page's rows (LISTING_SELECT); `scope_rows()` counts all listings."""
    if sql.count_index != FILTERS_INDEX:
        total = count(conn, sql)
        return total, _page_rows(conn, sql, total, limit, offset, scope_rows)
    if sql.walk_index and offset + limit <= PROBE_LIMIT:
        # Dense matches fill the page from the first entries of the sort index: try a
        # bounded walk, and pay for the count alone.
        probe = conn.execute(
            f"SELECT id FROM listings WHERE {sql.where} AND id IN (SELECT id FROM listings INDEXED BY "
            f"{sql.walk_index} WHERE {sql.walk_where} ORDER BY {sql.order} LIMIT {PROBE_LIMIT}) "
            f"ORDER BY {sql.order} LIMIT ? OFFSET ?",
            [*sql.args, *sql.walk_args, limit, offset],
        ).fetchall()
        if len(probe) == limit:
            return count(conn, sql), rows_by_id(conn, [r[0] for r in probe])
    # Only the wide covering index checks these filters: one pass over it gathers the
    # matches' ids and sort keys, then counts and orders just those.
    keys = sorted(
        {w for w in re.findall(r"[a-z_]+", sql.order) if w in LISTING_COLUMNS} - {"id"}
    )  # the order's columns
    hint, where_sql = _covering_scan(sql)
    matches = f"SELECT {', '.join(['id', *keys])} FROM listings {hint} WHERE {where_sql}"
    found = conn.execute(
        f"WITH m AS MATERIALIZED ({matches}) SELECT (SELECT count(*) FROM m), id FROM m "
        f"ORDER BY {sql.order} LIMIT ? OFFSET ?",
        [*sql.args, limit, offset],
    ).fetchall()
    if not found:  # a page past the end still reports the total
        return count(conn, sql), []
    return found[0][0], rows_by_id(conn, [r[1] for r in found])


def rows_by_id(
    conn: sqlite3.Connection, ids: list[int], elsewhere: Callable[[list[int]], Iterable[tuple]] | None = None
) -> list[tuple]:
    """The listings of these ids (LISTING_SELECT), in the order given; those the mirror no
    longer holds from `elsewhere` (the archive), when given (an id found nowhere is left out)."""
    if not ids:
        return []
    rows = conn.execute(f"SELECT {LISTING_SELECT} FROM listings WHERE id IN ({','.join('?' * len(ids))})", ids)
    by_id = {row[0]: row for row in rows}
    if elsewhere is None:
        return [by_id[i] for i in ids]
    missing = [i for i in ids if i not in by_id]
    if missing:
        by_id.update((row[0], row) for row in elsewhere(missing))
    return [by_id[i] for i in ids if i in by_id]


def _page_rows(
    conn: sqlite3.Connection, sql: DomainSql, total: int, limit: int, offset: int, scope_rows: Callable[[], int]
) -> list[tuple]:
    """The page's rows, by the cheapest of three plans, chosen with the exact count."""
    if offset >= total:
        return []
    if sql.fts and total <= WALK_LIMIT:
        plan = ""  # few matches: the trigram index drives, the matches are sorted
    elif sql.walk_index and (sql.covered or (offset + limit) * scope_rows() / total <= WALK_LIMIT):
        plan = f"INDEXED BY {sql.walk_index}"  # dense enough: walk the sort index, stop at the page
    else:
        hint, where_sql = _covering_scan(sql)
        ids = [
            r[0]
            for r in conn.execute(
                f"SELECT id FROM listings {hint} WHERE {where_sql} ORDER BY {sql.order} LIMIT ? OFFSET ?",
                [*sql.args, limit, offset],
            )
        ]
        return rows_by_id(conn, ids)
    return conn.execute(
        f"SELECT {LISTING_SELECT} FROM listings {plan} WHERE {sql.where} ORDER BY {sql.order} LIMIT ? OFFSET ?",
        [*sql.args, limit, offset],
    ).fetchall()
