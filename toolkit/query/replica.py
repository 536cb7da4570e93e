"""The answers of the service's API, as the REST replica (`edt serve`), the MCP server and
`edt query` give them: a request's parameters parsed from the parameter tables, the plan's
rules (docs/reference/plans.md), the paged envelope with its links and cursor, the free
tier's masks and upsell (docs/reference/semantics.md). Errors come back as `ApiError` with
the status and body the API answers; nothing here speaks HTTP.

`Mirror.search_domains` and its siblings are these functions (the mirror their first
argument), so a notebook asks the same questions as a client of the API; a Python program
that wants rows rather than pages reads `Mirror.listings` and the DataFrames instead."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..names import ascii_name
from ..errors import cursor_not_available, invalid, not_found
from ..plans import normalize_plan, require
from ..sources import REGFREE
from . import sqlplan
from .envelope import envelope, page_offset, query_string
from .listing_search import stream
from .params import DOMAIN_PARAMS, FREE_PARAMS, PENDING_PARAMS, RESULT_PARAMS, Context, Param, parse_params
from .records import FREE_FIELDS, FREE_VISIBLE_NAMES, PENDING_SELECT, listing_record, pending_record

if TYPE_CHECKING:
    from .mirror import Mirror

Params = Mapping[str, Any] | None  # a request's raw parameters (query-string texts or Python values)

__all__ = [
    "plan_in_force",
    "allowed_plan",
    "parsed_request",
    "check_domain_plan",
    "search_domains",
    "get_domain",
    "export_rows",
    "free_domains",
    "search_results",
    "search_pending_delete",
    "export_pending_rows",
    "get_pending_delete",
    "pending_sql",
]


def plan_in_force(mirror: Mirror, plan: str | None) -> str:
    """The plan a call answers as: the one it names, else the mirror's (a 422 when unknown)."""
    try:
        return normalize_plan(plan or mirror.plan)
    except ValueError as exc:
        raise invalid("plan", str(exc)) from None


def allowed_plan(mirror: Mirror, plan: str | None, capability: str) -> str:
    """The plan a call answers as, which must allow `capability` (else the API's 403)."""
    plan = plan_in_force(mirror, plan)
    require(plan, capability)
    return plan


def parsed_request(
    mirror: Mirror, plan: str | None, capability: str, table: Mapping[str, Param], params: Params, *, strict: bool
) -> tuple[str, dict[str, Any]]:
    """The plan a call answers as (`allowed_plan`), then the request's values parsed from the
    parameter `table` (else a 422 naming the field): a refused plan is said first."""
    plan = allowed_plan(mirror, plan, capability)
    return plan, parse_params(table, params, strict=strict)


def check_domain_plan(values: Mapping[str, Any], plan: str, *, cursor: bool = False) -> None:
    """The regfree rows need their plan, and never come through the after_id cursor."""
    if values.get("source") == REGFREE:
        if cursor:
            raise cursor_not_available()
        require(plan, "regfree")


def search_domains(
    mirror: Mirror, params: Params = None, plan: str | None = None, *, url: str = "/api/domains", strict: bool = True
) -> dict[str, Any]:
    """One page of listings with `/api/domains` semantics, in its envelope (docs/reference/semantics.md)."""
    plan, values = parsed_request(mirror, plan, "domains", DOMAIN_PARAMS, params, strict=strict)
    per_page = values.get("per_page") or values.get("limit") or DOMAIN_PARAMS["per_page"].default
    page = values.get("page", 1)
    today = mirror.now().date()
    ht = bool(values.get("include_historical_traffic"))
    search = mirror.search
    if "after_id" in values:
        check_domain_plan(values, plan, cursor=True)
        after_id = values["after_id"]
        total, rows = search.cursor_page(values, after_id, per_page + 1)
        has_more = len(rows) > per_page
        data = [listing_record(r, today, historical_traffic=ht) for r in rows[:per_page]]
        answer = envelope(data, total=total, page=1, per_page=per_page, url=url, raw=params)
        next_after_id = data[-1]["id"] if data else None
        answer["links"]["next"] = f"{url}?{query_string(params, after_id=next_after_id)}" if has_more else None
        answer["cursor"] = {
            "after_id": after_id,
            "next_after_id": next_after_id,
            "has_more": has_more,
            "order": "id asc",
        }
        return answer
    check_domain_plan(values, plan)
    total, rows = search.total_and_page(values, per_page, page_offset(page, per_page))
    data = [listing_record(r, today, historical_traffic=ht) for r in rows]
    return envelope(data, total=total, page=page, per_page=per_page, url=url, raw=params)


def get_domain(mirror: Mirror, domain_id: int | str, plan: str | None = None) -> dict[str, Any]:
    """`{"data": record}` for one listing by id (closed ones too), or a 404."""
    plan = allowed_plan(mirror, plan, "domains")
    text = str(domain_id).strip()
    if not re.fullmatch(r"[0-9]{1,18}", text):  # ids are positive 64-bit integers
        raise not_found()
    with mirror.search.snapshot() as conn:
        found = mirror.search.rows_by_id(conn, [int(text)])
    if not found:
        raise not_found()
    record = listing_record(found[0], mirror.now().date(), historical_traffic=True)
    if record["source"] == REGFREE:
        require(plan, "regfree")
    return {"data": record}


_PAGING = ("page", "per_page", "limit", "after_id")


def export_rows(
    mirror: Mirror, params: Params = None, plan: str | None = None, *, strict: bool = True
) -> Iterator[dict[str, Any]]:
    """Every matching listing (the `/api/domains` filters, no paging), streamed (Business)."""
    if not strict:  # not parameters of the HTTP API's export: ignored there, as any unknown name
        params = {k: v for k, v in (params or {}).items() if k not in _PAGING}
    plan, values = parsed_request(mirror, plan, "export", DOMAIN_PARAMS, params, strict=strict)
    check_domain_plan(values, plan)
    paging = next((name for name in _PAGING if name in values), None)
    if paging:  # a page asked for would silently be every row
        raise invalid(
            paging, f"an export streams every matching listing: leave out {paging} (filters choose the rows)."
        )
    today = mirror.now().date()
    ht = bool(values.get("include_historical_traffic"))
    return mirror.search.every_match(values, lambda row: listing_record(row, today, historical_traffic=ht))


def free_domains(mirror: Mirror, params: Params = None, *, strict: bool = True) -> dict[str, Any]:
    """The free endpoint: no key, the first names shown, the rest masked, premium metrics omitted."""
    values = parse_params(FREE_PARAMS, params, strict=strict)
    limit = values.get("limit", FREE_PARAMS["limit"].default)
    # Every free filter is one of /api/domains' own (only the source list is shorter),
    # so the same SQL and plans serve; the free tier never reaches regfree rows.
    total, rows = mirror.search.total_and_page(values, limit, 0)
    today = mirror.now().date()
    data = []
    for index, row in enumerate(rows):
        record = listing_record(row, today)
        free = {name: record[name] for name in FREE_FIELDS}
        if index >= FREE_VISIBLE_NAMES:
            free["name"] = "••••••••" + (record["tld"] or "")
            free["purchase_url"] = None
        data.append(free)
    return {
        "data": data,
        "meta": {"count": len(data), "total_available": total, "visible_names": FREE_VISIBLE_NAMES, "free_tier": True},
        "note": f"Free tier: the first {FREE_VISIBLE_NAMES} names are shown; Trust Flow, Citation Flow, "
        "topics and Google Business data need a key.",
        "upsell": {
            "message": "Use /api/domains with a Pro key for every name, every metric and 20+ filters.",
            "signup_url": "https://catchdoms.com/register",
            "pro_url": "https://catchdoms.com/pricing",
        },
    }


def search_results(
    mirror: Mirror, params: Params = None, plan: str | None = None, *, url: str = "/api/results", strict: bool = True
) -> dict[str, Any]:
    """One page of `Mirror.results_df` as the API's envelope (`GET /api/results`, an
    extension): the listing filters of `/api/domains`, `ended_after`, `ended_before`, `sold`."""
    raw = dict(params or {})
    plan, values = parsed_request(mirror, plan, "results", RESULT_PARAMS, raw, strict=strict)
    listing = {k: v for k, v in raw.items() if k in values and k in DOMAIN_PARAMS and k not in ("per_page", "page")}
    frame = mirror.results_df(
        listing,
        plan,
        ended_after=values.get("ended_after"),
        ended_before=values.get("ended_before"),
        sold=True if values.get("sold") else None,
    )
    page, per_page = values.get("page", 1), values.get("per_page", 50)
    start = page_offset(page, per_page)
    data = json.loads(frame.iloc[start : start + per_page].to_json(orient="records"))
    shown = {k: v for k, v in raw.items() if k in values}
    return envelope(data, total=len(frame), page=page, per_page=per_page, url=url, raw=shown)


def search_pending_delete(
    mirror: Mirror,
    params: Params = None,
    plan: str | None = None,
    *,
    url: str = "/api/pending-delete",
    strict: bool = True,
) -> dict[str, Any]:
    """One page of the pending-delete inventory (Authority+), the reference's semantics."""
    plan, values = parsed_request(mirror, plan, "pending_delete", PENDING_PARAMS, params, strict=strict)
    where, args, order = pending_sql(mirror, values)
    per_page = values.get("per_page", PENDING_PARAMS["per_page"].default)
    page = values.get("page", 1)
    conn = mirror.connection()
    total = conn.execute(f"SELECT count(*) FROM pending_delete WHERE {where}", args).fetchone()[0]
    rows = conn.execute(
        f"SELECT {PENDING_SELECT} FROM pending_delete WHERE {where} ORDER BY {order} LIMIT ? OFFSET ?",
        [*args, per_page, page_offset(page, per_page)],
    ).fetchall()
    data = [pending_record(r) for r in rows]
    return envelope(data, total=total, page=page, per_page=per_page, url=url, raw=params)


def pending_sql(mirror: Mirror, values: Mapping[str, Any]) -> tuple[str, list[Any], str]:
    """(where, args, order) of a pending-delete query: the one place its SQL is built."""
    today = mirror.now().date()
    clauses = list(
        sqlplan.filter_clauses(PENDING_PARAMS, values, Context(today=today, table="pending_delete")).values()
    )
    week = values.get("week_end", "all")
    if week != "all":
        clauses.append(("week_end = ?", [week]))
    elif not values.get("include_past"):
        clauses.append(("estimated_drop_date IS NULL OR estimated_drop_date >= ?", [today.isoformat()]))
    where, args = sqlplan.where(clauses)
    order = {
        "drop_date": "(estimated_drop_date IS NULL), estimated_drop_date, id",
        "drop_date_desc": "(estimated_drop_date IS NOT NULL), estimated_drop_date DESC, id",
        "domain": "domain, id",
    }[values.get("sort", "drop_date")]
    return where, args, order


def export_pending_rows(
    mirror: Mirror, params: Params = None, plan: str | None = None, *, strict: bool = True
) -> Iterator[dict[str, Any]]:
    """Every matching pending-delete row (its filters, no paging), streamed (Authority+):
    the records `search_pending_delete` pages through, in its order."""
    _, values = parsed_request(mirror, plan, "pending_delete", PENDING_PARAMS, params, strict=strict)
    where, args, order = pending_sql(mirror, values)
    sql = f"SELECT {PENDING_SELECT} FROM pending_delete WHERE {where} ORDER BY {order}"
    return stream(mirror.path, sql, args, pending_record)


def _held_as(domain: str) -> str:
    """A name as the pending-delete rows hold it (an IDN as xn--); as given when it is no name."""
    try:
        return ascii_name(domain)
    except ValueError:
        return str(domain).strip()


def get_pending_delete(mirror: Mirror, domain: str, plan: str | None = None) -> dict[str, Any]:
    """The most recent snapshot row of a domain still in an actionable state, or a 404."""
    allowed_plan(mirror, plan, "pending_delete")
    today = mirror.now().date().isoformat()
    row = (
        mirror.connection()
        .execute(
            f"SELECT {PENDING_SELECT} FROM pending_delete WHERE domain = ? COLLATE NOCASE "
            "AND (estimated_drop_date IS NULL OR estimated_drop_date >= ?) ORDER BY week_end DESC, id DESC LIMIT 1",
            [_held_as(domain), today],
        )
        .fetchone()
    )
    if row is None:
        raise not_found()
    return {"data": pending_record(row)}
