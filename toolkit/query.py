"""The query layer: validate -> SQL -> envelope, over the SQLite mirror.

`Mirror` is the public Python API every shell uses (CLI, HTTP replica, MCP, app,
notebooks). It knows nothing of HTTP: plan rules and errors come back as `ApiError`
with the status and body the REST API answers (contract sections 3-7).
"""

from __future__ import annotations

import math
import os
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from .config import load_settings
from .errors import cursor_not_available, invalid, not_found
from .params import (
    DOMAIN_PARAMS,
    FREE_PARAMS,
    PENDING_PARAMS,
    Context,
    Param,
    parse_params,
)
from .plans import normalize_plan, require
from .sources import REGFREE
from .store.fields import LISTING_EXTRA_FIELDS, LISTING_FIELDS, PENDING_EXTRA_FIELDS, PENDING_FIELDS, from_db, iso_timestamp
from .store.access import opens_read_only
from .store.schema import SCHEMA_VERSION, SORT_COLUMNS, SORT_INDEXES, connect, ensure_schema
from .store.writer import age_in_years

__all__ = ["Mirror", "LISTING_OUTPUT", "PENDING_OUTPUT", "FREE_FIELDS", "FREE_VISIBLE_NAMES"]

# What a listing record carries: the reference fields plus the toolkit's own (not `raw`,
# which lives in `raw_records`, nor the internal `live_until`).
LISTING_OUTPUT: dict[str, str] = {
    **LISTING_FIELDS,
    **{k: v for k, v in LISTING_EXTRA_FIELDS.items() if k != "live_until"},
}
PENDING_OUTPUT: dict[str, str] = {**PENDING_FIELDS, **PENDING_EXTRA_FIELDS}
FREE_FIELDS = (
    "name", "tld", "source", "type", "price", "max_bid", "currency", "bids_count", "auction_end_date", "score", "age",
    "domain_authority", "backlinks_count", "referring_domains", "language", "purchase_url",
)  # fmt: skip
FREE_VISIBLE_NAMES = 3
_LISTING_SELECT = ", ".join(LISTING_OUTPUT)


def _columns(asked: Iterable[str] | None, known: Mapping[str, str]) -> list[str]:
    """The output fields asked for, checked (a wrong name is a bad argument, not SQL)."""
    if asked is None:
        return list(known)
    chosen = list(dict.fromkeys(asked))
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise ValueError(f"columns: unknown field {', '.join(unknown)}; choose from {', '.join(known)}")
    return chosen
_PENDING_SELECT = ", ".join(PENDING_OUTPUT)


@dataclass(frozen=True)
class _Sql:
    where: str
    args: list[Any]
    order: str
    walk_index: str | None  # an index that yields rows in `order`, if one does
    covered: bool  # every condition can be checked inside that index (no table reads)
    fts: bool  # `contains` is answered by the trigram index (every term >= 3 characters)
    count_index: str | None  # the index that counts the matches without reading the table
    walk_where: str = "1"  # the conditions a walk of walk_index checks by itself
    walk_args: list[Any] = ()


# A page walks its sort index when it should find its rows within this many index entries
# (estimated from the exact count); beyond, the ids are sorted from the covering index.
WALK_LIMIT = 20_000
# Before the count is known, a page may try a walk of at most this many index entries.
PROBE_LIMIT = 3_000
_FILTERS_INDEX = "idx_listings_filters"


def _where(clauses: list[tuple[str, list[Any]]]) -> tuple[str, list[Any]]:
    sql = " AND ".join(f"({c})" for c, _ in clauses) or "1"
    return sql, [a for _, args in clauses for a in args]


def _filter_clauses(table: Mapping[str, Param], values: Mapping[str, Any], ctx: Context) -> dict[str, tuple[str, list[Any]]]:
    """The SQL condition of each filter in force, by parameter name (a flag at 0 has none)."""
    clauses = {}
    for name, value in values.items():
        clause = table[name].clause
        if clause is not None and (built := clause(value, ctx)) is not None:
            clauses[name] = built
    return clauses


def _query_string(raw: Mapping[str, Any] | None, **overrides: Any) -> str:
    pairs = []
    for key, value in (raw or {}).items():
        if key in overrides or value is None:
            continue
        if isinstance(value, (list, tuple, set)):
            value = ",".join(map(str, value))
        elif isinstance(value, bool):
            value = int(value)
        pairs.append((key, str(value)))
    pairs += [(k, str(v)) for k, v in overrides.items() if v is not None]
    return urlencode(pairs)


def _envelope(data: list, *, total: int, page: int, per_page: int, url: str, raw: Mapping[str, Any] | None) -> dict:
    last_page = max(1, math.ceil(total / per_page))
    offset = (page - 1) * per_page

    def link(n: int) -> str:
        return f"{url}?{_query_string(raw, page=n)}"

    return {
        "data": data,
        "links": {
            "first": link(1),
            "last": link(last_page),
            "prev": link(page - 1) if page > 1 else None,
            "next": link(page + 1) if page < last_page else None,
        },
        "meta": {
            "current_page": page,
            "from": offset + 1 if data else None,
            "last_page": last_page,
            "path": url,
            "per_page": per_page,
            "to": offset + len(data) if data else None,
            "total": total,
        },
    }


_NEVER_NULL = {"name", "created_at", "first_seen_at"}  # the writer always sets them


def _order_by(sort: str | None) -> str:
    """ORDER BY for a contract sort: nulls last, ties by id (default: score descending)."""
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
    "idx_listings_ending": {"ends_after", "ends_before"},
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
    return _FILTERS_INDEX


class Mirror:
    """The local mirror: opens (and creates or upgrades) a SQLite database.

    `plan` is the plan answers are given as when a call names none: `EDT_PLAN`, else the
    top plan (it is your own mirror). `clock` returns the current UTC time (tests freeze it).
    Connections are per thread; a `readonly` mirror never writes and never takes a lock.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        plan: str | None = None,
        readonly: bool = False,
        clock: Callable[[], datetime] | None = None,
    ):
        settings = load_settings(db=os.fspath(path) if path is not None else None, plan=plan)
        self.path = settings.db
        self.plan = settings.plan
        readonly = self.readonly = opens_read_only(self.path, readonly)  # a read-only place opens read-only, said once
        self._clock = clock or (lambda: datetime.now(timezone.utc))
        self._local = threading.local()
        if readonly:
            if not Path(self.path).is_file():
                raise FileNotFoundError(f"{self.path}: no mirror there; run `edt demo` or `edt sync` first")
            version = self.connection().execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.path}: schema version {version}, this toolkit reads {SCHEMA_VERSION}; "
                    "open it once read-write (any edt command, e.g. `edt status`) to upgrade it"
                )
        else:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            ensure_schema(self.connection())

    # -- plumbing ------------------------------------------------------------------------
    def connection(self) -> sqlite3.Connection:
        """This thread's connection to the mirror."""
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = connect(self.path, readonly=self.readonly)
            self._local.conn = conn
        return conn

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None

    def __enter__(self) -> "Mirror":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> datetime:
        now = self._clock()
        return now if now.tzinfo else now.replace(tzinfo=timezone.utc)

    def generation(self) -> int:
        """Changes with every committed write: a cache key for readers."""
        row = self.connection().execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()
        return int(row[0]) if row else 0

    def _plan(self, plan: str | None) -> str:
        try:
            return normalize_plan(plan or self.plan)
        except ValueError as exc:
            raise invalid("plan", str(exc)) from None

    # -- records -------------------------------------------------------------------------
    def _listing_record(self, row: tuple, today: date, *, historical_traffic: bool = False) -> dict[str, Any]:
        record = {name: from_db(kind, value) for (name, kind), value in zip(LISTING_OUTPUT.items(), row)}
        record["age"] = age_in_years(record["wayback_first_date"], today)
        if not historical_traffic:
            del record["historical_traffic"]
        return record

    @staticmethod
    def _pending_record(row: tuple) -> dict[str, Any]:
        return {name: from_db(kind, value) for (name, kind), value in zip(PENDING_OUTPUT.items(), row)}

    # -- /api/domains --------------------------------------------------------------------
    def _domain_sql(self, values: Mapping[str, Any], plan: str, *, cursor: bool = False) -> _Sql:
        regfree = values.get("source") == REGFREE
        if regfree and cursor:
            raise cursor_not_available()
        if regfree:
            require(plan, "regfree")
        now = self.now()
        base: list[tuple[str, list[Any]]] = []
        if not values.get("include_closed"):
            base.append(("live_until > ?", [iso_timestamp(now)]))
        # Regfree is a separate database: only ever returned when asked for by name.
        base.append((f"source {'=' if regfree else '!='} '{REGFREE}'", []))
        named = _filter_clauses(DOMAIN_PARAMS, values, Context(today=now.date(), table="listings"))
        if "ends_before" in values and not values.get("include_closed"):
            # Implied by "live"; gives the end-date index a lower bound.
            named["ends_after_now"] = ("auction_end_date > ?", [iso_timestamp(now)])
        hints = sorted({_PARTIAL_HINTS[name] for name in values if name in _PARTIAL_HINTS})
        where, args = _where(base + list(named.values()) + [(hint, []) for hint in hints])
        order = _order_by(values.get("sort"))
        walk_index = _walk_index(order, values)
        # Every index carries source; a filter the walk index cannot check means table reads.
        filters = set(named) - {"source", "ends_after_now"}
        if len(values.get("tld", ())) > 1:
            filters.add("tld+")  # several TLDs: no single seek
        checks = _INDEX_CHECKS.get(walk_index, set()) | {"source", "type"}
        covered = walk_index is not None and filters <= checks
        # What a walk of that index can check by itself (a partial index needs its condition).
        walk_where, walk_args = _where(
            base + [c for n, c in named.items() if n in checks] + [(h, []) for h in hints if walk_index == "idx_listings_tech"]
        )
        fts = "contains" in values and all(len(t) >= 3 for t in values["contains"])
        count_index = None if fts else _count_index(filters)
        return _Sql(where, args, order, walk_index, covered, fts, count_index, walk_where, walk_args)

    def _count(self, conn: sqlite3.Connection, sql: _Sql) -> int:
        # An index answers the count without reading the table; a trigram search is
        # better driven by its own index.
        hint = f"INDEXED BY {sql.count_index}" if sql.count_index else ""
        return conn.execute(f"SELECT count(*) FROM listings {hint} WHERE {sql.where}", sql.args).fetchone()[0]

    def _count_and_page(self, conn: sqlite3.Connection, sql: _Sql, limit: int, offset: int) -> tuple[int, list[tuple]]:
        """The total and the page's rows."""
        if sql.count_index != _FILTERS_INDEX:
            total = self._count(conn, sql)
            return total, self._page_rows(conn, sql, total, limit, offset)
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
                return self._count(conn, sql), self._rows_by_id(conn, [r[0] for r in probe])
        # Only the wide covering index checks these filters: one pass over it gathers the
        # matches' ids and sort keys, then counts and orders just those.
        key = sql.order.split(",")[-2].replace(" DESC", "").strip() if "," in sql.order else "id"
        matches = f"SELECT id{', ' + key if key != 'id' else ''} FROM listings INDEXED BY {_FILTERS_INDEX} WHERE {sql.where}"
        found = conn.execute(
            f"WITH m AS MATERIALIZED ({matches}) SELECT (SELECT count(*) FROM m), id FROM m "
            f"ORDER BY {sql.order} LIMIT ? OFFSET ?",
            [*sql.args, limit, offset],
        ).fetchall()
        if not found:  # a page past the end still reports the total
            return self._count(conn, sql), []
        return found[0][0], self._rows_by_id(conn, [r[1] for r in found])

    @staticmethod
    def _rows_by_id(conn: sqlite3.Connection, ids: list[int]) -> list[tuple]:
        rows = conn.execute(f"SELECT {_LISTING_SELECT} FROM listings WHERE id IN ({','.join('?' * len(ids))})", ids)
        by_id = {row[0]: row for row in rows}
        return [by_id[i] for i in ids]

    def _page_rows(self, conn: sqlite3.Connection, sql: _Sql, total: int, limit: int, offset: int) -> list[tuple]:
        """The page's rows, by the cheapest of three plans, chosen with the exact count."""
        if offset >= total:
            return []
        if sql.fts and total <= WALK_LIMIT:
            plan = ""  # few matches: the trigram index drives, the matches are sorted
        elif sql.walk_index and (sql.covered or (offset + limit) * self._scope_rows(conn) / total <= WALK_LIMIT):
            plan = f"INDEXED BY {sql.walk_index}"  # dense enough: walk the sort index, stop at the page
        else:
            ids = [
                r[0]
                for r in conn.execute(
                    f"SELECT id FROM listings INDEXED BY {_FILTERS_INDEX} WHERE {sql.where} "
                    f"ORDER BY {sql.order} LIMIT ? OFFSET ?",
                    [*sql.args, limit, offset],
                )
            ]
            return self._rows_by_id(conn, ids) if ids else []
        return conn.execute(
            f"SELECT {_LISTING_SELECT} FROM listings {plan} WHERE {sql.where} ORDER BY {sql.order} LIMIT ? OFFSET ?",
            [*sql.args, limit, offset],
        ).fetchall()

    def _scope_rows(self, conn: sqlite3.Connection) -> int:
        cached = getattr(self._local, "scope", None)
        generation = self.generation()
        if cached is None or cached[0] != generation:
            cached = (generation, conn.execute("SELECT count(*) FROM listings").fetchone()[0] or 1)
            self._local.scope = cached
        return cached[1]

    def search_domains(
        self,
        params: Mapping[str, Any] | None = None,
        plan: str | None = None,
        *,
        url: str = "/api/domains",
        strict: bool = True,
    ) -> dict[str, Any]:
        """One page of listings with `/api/domains` semantics: the envelope of contract section 4."""
        plan = self._plan(plan)
        require(plan, "domains")
        values = parse_params(DOMAIN_PARAMS, params, strict=strict)
        cursor_mode = "after_id" in values
        sql = self._domain_sql(values, plan, cursor=cursor_mode)
        per_page = values.get("per_page") or values.get("limit") or DOMAIN_PARAMS["per_page"].default
        page = values.get("page", 1)
        conn = self.connection()
        today = self.now().date()
        ht = bool(values.get("include_historical_traffic"))
        if cursor_mode:
            total = self._count(conn, sql)
            after_id = values["after_id"]
            rows = conn.execute(
                f"SELECT {_LISTING_SELECT} FROM listings WHERE {sql.where} AND id > ? ORDER BY id LIMIT ?",
                [*sql.args, after_id, per_page + 1],
            ).fetchall()
            has_more = len(rows) > per_page
            data = [self._listing_record(r, today, historical_traffic=ht) for r in rows[:per_page]]
            envelope = _envelope(data, total=total, page=1, per_page=per_page, url=url, raw=params)
            next_after_id = data[-1]["id"] if data else None
            envelope["links"]["next"] = (
                f"{url}?{_query_string(params, after_id=next_after_id)}" if has_more else None
            )
            envelope["cursor"] = {
                "after_id": after_id,
                "next_after_id": next_after_id,
                "has_more": has_more,
                "order": "id asc",
            }
            return envelope
        total, rows = self._count_and_page(conn, sql, per_page, (page - 1) * per_page)
        data = [self._listing_record(r, today, historical_traffic=ht) for r in rows]
        return _envelope(data, total=total, page=page, per_page=per_page, url=url, raw=params)

    def get_domain(self, domain_id: int | str, plan: str | None = None) -> dict[str, Any]:
        """`{"data": record}` for one listing by id (closed ones too), or a 404."""
        plan = self._plan(plan)
        require(plan, "domains")
        text = str(domain_id).strip()
        if not re.fullmatch(r"[0-9]{1,18}", text):  # ids are positive 64-bit integers
            raise not_found()
        key = int(text)
        row = self.connection().execute(f"SELECT {_LISTING_SELECT} FROM listings WHERE id = ?", [key]).fetchone()
        if row is None:
            raise not_found()
        record = self._listing_record(row, self.now().date(), historical_traffic=True)
        if record["source"] == REGFREE:
            require(plan, "regfree")
        return {"data": record}

    def export_rows(
        self, params: Mapping[str, Any] | None = None, plan: str | None = None, *, strict: bool = True
    ) -> Iterator[dict[str, Any]]:
        """Every matching listing (the `/api/domains` filters, no paging), streamed (Business)."""
        plan = self._plan(plan)
        require(plan, "export")
        values = parse_params(DOMAIN_PARAMS, params, strict=strict)
        return self._iter_listings(values, plan)

    def _iter_listings(self, values: Mapping[str, Any], plan: str) -> Iterator[dict[str, Any]]:
        sql = self._domain_sql(values, plan)
        today = self.now().date()
        ht = bool(values.get("include_historical_traffic"))
        # A connection of its own, so a slow consumer never holds this thread's connection;
        # a sort with no index spills to disk there, so memory stays flat for any export.
        conn = connect(self.path, readonly=True)
        conn.execute("PRAGMA temp_store=FILE")

        def rows() -> Iterator[dict[str, Any]]:
            try:
                cursor = conn.execute(
                    f"SELECT {_LISTING_SELECT} FROM listings WHERE {sql.where} ORDER BY {sql.order}", sql.args
                )
                while batch := cursor.fetchmany(1000):
                    for row in batch:
                        yield self._listing_record(row, today, historical_traffic=ht)
            finally:
                conn.close()

        return rows()

    def domains_df(self, params: Mapping[str, Any] | None = None, plan: str | None = None, *,
                   columns: Iterable[str] | None = None, sample: int | None = None, **filters: Any):  # fmt: skip
        """Every matching listing as a pandas DataFrame (the `/api/domains` filters, no paging).

        `columns` picks fields (default all; `age` needs `wayback_first_date`, which is added).
        `sample=N` keeps about N rows when more match: every k-th by id, the same rows each
        time (charts over a broad filter need the shape, not all 500,000 points)."""
        import json

        import pandas as pd

        plan = self._plan(plan)
        require(plan, "domains")
        values = parse_params(DOMAIN_PARAMS, {**(params or {}), **filters}, strict=True)
        sql = self._domain_sql(values, plan)
        chosen = _columns(columns, LISTING_OUTPUT)
        if "age" in chosen and "wayback_first_date" not in chosen:
            chosen.append("wayback_first_date")
        where, args = sql.where, list(sql.args)
        if sample:
            total = self.search_domains({**(params or {}), **filters, "per_page": 1}, plan)["meta"]["total"]
            step = -(-total // sample)
            if step > 1:
                where, args = f"({where}) AND id % ? = 0", [*args, step]
        frame = pd.read_sql_query(
            f"SELECT {', '.join(chosen)} FROM listings WHERE {where} ORDER BY {sql.order}", self.connection(), params=args
        )
        today = self.now().date()
        for name, kind in LISTING_OUTPUT.items():
            if name not in frame.columns:
                continue
            if kind == "bool":
                frame[name] = frame[name].astype("boolean")
            elif kind in ("array", "object"):
                frame[name] = frame[name].map(lambda v: json.loads(v) if isinstance(v, str) else None)
            elif kind == "int":
                frame[name] = frame[name].astype("Int64")
        if "age" in frame.columns:
            first = frame["wayback_first_date"].astype("string")
            birthday_ahead = (first.str.slice(5) > f"{today.month:02d}-{today.day:02d}").astype("Int64")
            frame["age"] = (today.year - first.str.slice(0, 4).astype("Int64") - birthday_ahead).astype("Int64")
        if not values.get("include_historical_traffic") and "historical_traffic" in frame.columns and columns is None:
            frame = frame.drop(columns=["historical_traffic"])
        return frame

    # -- /api/free/domains ---------------------------------------------------------------
    def free_domains(
        self, params: Mapping[str, Any] | None = None, *, strict: bool = True
    ) -> dict[str, Any]:
        """The free endpoint: no key, the first names shown, the rest masked, premium metrics omitted."""
        values = parse_params(FREE_PARAMS, params, strict=strict)
        limit = values.get("limit", FREE_PARAMS["limit"].default)
        # Every free filter is one of /api/domains' own (only the source list is shorter),
        # so the same SQL and plans serve; the free tier never reaches regfree rows.
        sql = self._domain_sql(values, "enterprise")
        total, rows = self._count_and_page(self.connection(), sql, limit, 0)
        now = self.now()
        data = []
        for index, row in enumerate(rows):
            record = self._listing_record(row, now.date())
            free = {name: record[name] for name in FREE_FIELDS}
            if index >= FREE_VISIBLE_NAMES:
                free["name"] = "••••••••" + (record["tld"] or "")
                free["purchase_url"] = None
            data.append(free)
        return {
            "data": data,
            "meta": {
                "count": len(data),
                "total_available": total,
                "visible_names": FREE_VISIBLE_NAMES,
                "free_tier": True,
            },
            "note": f"Free tier: the first {FREE_VISIBLE_NAMES} names are shown; Trust Flow, Citation Flow, "
            "topics and Google Business data need a key.",
            "upsell": {
                "message": "Use /api/domains with a Pro key for every name, every metric and 20+ filters.",
                "signup_url": "https://catchdoms.com/register",
                "pro_url": "https://catchdoms.com/pricing",
            },
        }

    # -- /api/pending-delete -------------------------------------------------------------
    def search_pending_delete(
        self,
        params: Mapping[str, Any] | None = None,
        plan: str | None = None,
        *,
        url: str = "/api/pending-delete",
        strict: bool = True,
    ) -> dict[str, Any]:
        """One page of the pending-delete inventory (Authority+), the reference's semantics."""
        plan = self._plan(plan)
        require(plan, "pending_delete")
        values = parse_params(PENDING_PARAMS, params, strict=strict)
        where, args, order = self._pending_sql(values)
        per_page = values.get("per_page", PENDING_PARAMS["per_page"].default)
        page = values.get("page", 1)
        conn = self.connection()
        total = conn.execute(f"SELECT count(*) FROM pending_delete WHERE {where}", args).fetchone()[0]
        rows = conn.execute(
            f"SELECT {_PENDING_SELECT} FROM pending_delete WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
            [*args, per_page, (page - 1) * per_page],
        ).fetchall()
        data = [self._pending_record(r) for r in rows]
        return _envelope(data, total=total, page=page, per_page=per_page, url=url, raw=params)

    def _pending_sql(self, values: Mapping[str, Any]) -> tuple[str, list[Any], str]:
        """(where, args, order) of a pending-delete query: the one place its SQL is built."""
        today = self.now().date()
        clauses = list(_filter_clauses(PENDING_PARAMS, values, Context(today=today, table="pending_delete")).values())
        week = values.get("week_end", "all")
        if week != "all":
            clauses.append(("week_end = ?", [week]))
        elif not values.get("include_past"):
            clauses.append(("estimated_drop_date IS NULL OR estimated_drop_date >= ?", [today.isoformat()]))
        where, args = _where(clauses)
        order = {
            "drop_date": "(estimated_drop_date IS NULL), estimated_drop_date, id",
            "drop_date_desc": "(estimated_drop_date IS NOT NULL), estimated_drop_date DESC, id",
            "domain": "domain, id",
        }[values.get("sort", "drop_date")]
        return where, args, order

    def pending_df(self, params: Mapping[str, Any] | None = None, plan: str | None = None, *,
                   columns: Iterable[str] | None = None, **filters: Any):  # fmt: skip
        """Every matching pending-delete row (the /api/pending-delete filters, no paging) as a
        DataFrame; `columns` picks fields (default all)."""
        import pandas as pd

        plan = self._plan(plan)
        require(plan, "pending_delete")
        values = parse_params(PENDING_PARAMS, {**(params or {}), **filters}, strict=True)
        where, args, order = self._pending_sql(values)
        chosen = _columns(columns, PENDING_OUTPUT)
        return pd.read_sql_query(f"SELECT {', '.join(chosen)} FROM pending_delete WHERE {where} ORDER BY {order}",
                                 self.connection(), params=args)  # fmt: skip

    def day_counts(self, params: Mapping[str, Any] | None = None, plan: str | None = None, *,
                   pending: bool = False) -> dict[date, int]:  # fmt: skip
        """Matching rows per day: auction end dates of listings (the /api/domains filters), or
        estimated drop dates of pending-delete rows (its filters) with `pending=True`."""
        plan = self._plan(plan)
        if pending:
            require(plan, "pending_delete")
            where, args, _ = self._pending_sql(parse_params(PENDING_PARAMS, params, strict=True))
            table, column = "pending_delete", "estimated_drop_date"
        else:
            require(plan, "domains")
            sql = self._domain_sql(parse_params(DOMAIN_PARAMS, params, strict=True), plan)
            where, args, table, column = sql.where, sql.args, "listings", "auction_end_date"
        rows = self.connection().execute(
            f"SELECT substr({column}, 1, 10), count(*) FROM {table} WHERE ({where}) AND {column} IS NOT NULL GROUP BY 1",
            list(args),
        )
        return {date.fromisoformat(day): n for day, n in rows}

    def live_counts(self) -> dict[str, Any]:
        """Live listings counted per source, TLD (platforms and regfree apart), language and
        topic: what a filter picker or an assistant's `list_filters` shows beside each value."""
        conn = self.connection()
        now = iso_timestamp(self.now())
        live = "FROM listings WHERE live_until > ?"

        def pairs(sql: str, *args: Any) -> list[tuple[Any, int]]:
            return conn.execute(sql, [now, *args]).fetchall()

        by_tld = f"SELECT tld, count(*) {live} AND source {{}} ? GROUP BY tld ORDER BY 2 DESC, 1"
        return {
            "sources": dict(pairs(f"SELECT source, count(*) {live} GROUP BY source")),
            "tlds": pairs(by_tld.format("!="), REGFREE),
            "regfree_tlds": pairs(by_tld.format("="), REGFREE),
            "languages": pairs(f"SELECT language, count(*) {live} AND source != ? AND language IS NOT NULL "
                               "GROUP BY language ORDER BY 2 DESC, 1", REGFREE),  # fmt: skip
            "topics": pairs(f"SELECT ttf_topic, count(*) {live} AND source != ? AND ttf_topic IS NOT NULL "
                            "GROUP BY ttf_topic", REGFREE),  # fmt: skip
        }

    def listings_named(self, name: str) -> list[tuple[int, str, bool]]:
        """(id, source, live) of every listing of this exact name: live first, platforms before
        regfree, most recently seen first (a name can be listed on several platforms)."""
        rows = self.connection().execute(
            "SELECT id, source, live_until > ? AS live FROM listings WHERE name = ? "
            "ORDER BY live DESC, source = ?, last_seen_at DESC, id DESC LIMIT 20",
            [iso_timestamp(self.now()), str(name).strip().lower().rstrip("."), REGFREE],
        ).fetchall()
        return [(r[0], r[1], bool(r[2])) for r in rows]

    def listing_history(self, listing_id: int | str, plan: str | None = None):
        """A listing's price and bid history (`listing_history`), oldest first, as a DataFrame."""
        import pandas as pd

        self.get_domain(listing_id, plan)  # 404 / 403 as the API
        return pd.read_sql_query(
            "SELECT observed_at, price, max_bid, bids_count, effective_price, auction_end_date FROM listing_history "
            "WHERE listing_id = ? ORDER BY observed_at, id",
            self.connection(),
            params=[int(listing_id)],
        )

    def get_pending_delete(self, domain: str, plan: str | None = None) -> dict[str, Any]:
        """The most recent snapshot row of a domain still in an actionable state, or a 404."""
        plan = self._plan(plan)
        require(plan, "pending_delete")
        today = self.now().date().isoformat()
        row = self.connection().execute(
            f"SELECT {_PENDING_SELECT} FROM pending_delete WHERE domain = ? COLLATE NOCASE "
            "AND (estimated_drop_date IS NULL OR estimated_drop_date >= ?) ORDER BY week_end DESC, id DESC LIMIT 1",
            [str(domain).strip(), today],
        ).fetchone()
        if row is None:
            raise not_found()
        return {"data": self._pending_record(row)}

    # -- about the mirror ----------------------------------------------------------------
    def status(self) -> dict[str, Any]:
        """Row counts per dataset, demo or synced, the last sync of each job and each
        dataset's freshness against the service's schedule (contract section 8)."""
        conn = self.connection()
        now = iso_timestamp(self.now())
        count = lambda sql, *a: conn.execute(sql, a).fetchone()[0]  # noqa: E731
        datasets = {
            "listings": {
                "rows": count("SELECT count(*) FROM listings WHERE source != ?", REGFREE),
                "live": count("SELECT count(*) FROM listings WHERE source != ? AND live_until > ?", REGFREE, now),
            },
            "regfree": {"rows": count("SELECT count(*) FROM listings WHERE source = ?", REGFREE)},
            "pending_delete": {"rows": count("SELECT count(*) FROM pending_delete")},
            "listing_history": {"rows": count("SELECT count(*) FROM listing_history")},
        }
        origins = dict(conn.execute("SELECT origin, count(*) FROM listings GROUP BY origin").fetchall())
        for origin, n in conn.execute("SELECT origin, count(*) FROM pending_delete GROUP BY origin"):
            origins[origin] = origins.get(origin, 0) + n
        runs = {}
        for job, started, finished, status, rows_seen in conn.execute(
            "SELECT job, started_at, finished_at, status, rows_seen FROM sync_runs "
            "WHERE id IN (SELECT max(id) FROM sync_runs GROUP BY job)"
        ):
            runs[job] = {"started_at": started, "finished_at": finished, "status": status, "rows_seen": rows_seen}
        meta = dict(conn.execute("SELECT key, value FROM mirror_meta").fetchall())
        from .sync import freshness  # the jobs' schedules live with the sync

        return {"path": self.path, "datasets": datasets, "origins": origins, "last_sync": runs, "meta": meta,
                "freshness": freshness(conn, self.now())}  # fmt: skip


