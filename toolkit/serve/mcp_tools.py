"""The MCP server's tools: the live service's five (`search_domains`,
`search_pending_delete_domains`, `get_domain`, `list_filters`, `get_stats`) and the toolkit's
extension `search_auction_results`, each described, validated and answered over one `Mirror`
(`Tools`, `tool_specs`). `mcp_server.py` serves them.

Tool parameters are described from `DOMAIN_PARAMS` / `PENDING_PARAMS` / `FREE_PARAMS` (the same
definitions the OpenAPI document reads) and validated by them, so a bad value gets the REST
API's 422 message. An `ApiError` becomes a tool error (`isError`) whose text is the API's
message and whose structured content is the API's body plus its `status`. A tool never
crashes the session; a damaged mirror's file is a 503 tool error saying so.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from datetime import date, timedelta
from typing import Any

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, create_model

from ..errors import ApiError, invalid, not_found
from ..query.params import (
    DOMAIN_PARAMS,
    FREE_PARAMS,
    PENDING_PARAMS,
    RESULT_PARAMS,
    PENDING_SORTS,
    PENDING_SOURCES,
    PENDING_STATUSES,
    TOP_CATEGORIES,
    USE_CASES,
    Param,
    unknown_message,
)
from ..plans import PLAN_LABELS, REQUIREMENTS, plan_allows, require
from ..query import FREE_VISIBLE_NAMES, Mirror
from ..sources import REGFREE, SOURCES
from ..store.damage import DAMAGED_MESSAGE, damage_in, damage_words, damaged_line
from .openapi import build_openapi, param_schema

__all__ = [
    "Tools",
    "tool_specs",
    "TOOL_NAMES",
    "EXTENSION_TOOLS",
    "COMPACT_FIELDS",
    "MAX_RESULT_WINDOW",
    "GET_DOMAIN_ALIASES",
    "TOO_MANY",
]

log = logging.getLogger("toolkit.mcp")

TOOL_NAMES = ("search_domains", "search_pending_delete_domains", "get_domain", "list_filters", "get_stats")
# The toolkit's own tools, listed after the card's on the keyed endpoint (not on the free one).
EXTENSION_TOOLS = ("search_auction_results",)
# get_domain's argument names in the live service's published configs and docs.
GET_DOMAIN_ALIASES = {"domain_id": "id", "domain_name": "name"}
# The live server's rule for search_domains: page x limit <= 2,000 (narrow the filters instead).
MAX_RESULT_WINDOW = 2_000
# `fields=compact`: what a shortlist needs (price, timing, quality, SEO metrics, where to buy).
COMPACT_FIELDS = tuple(
    "id name tld source type price max_bid effective_price currency bids_count auction_end_date "
    "score age trust_flow citation_flow domain_authority referring_domains backlinks_count "
    "wayback_snapshots historical_traffic_etv language ttf_topic purchase_url".split()
)

# Messages of the REST replica's own errors (toolkit.serve.server), for the same situations.
TOO_MANY = {"message": "Too Many Attempts."}
_BUSY = {"error": "busy", "message": "The mirror is busy (a long write is in progress); retry in a minute."}
_BAD_REQUEST = {"message": "The request could not be processed: check the arguments."}
_DAMAGED = {"error": "damaged", "message": DAMAGED_MESSAGE}

# Parameters of /api/domains that are not search_domains arguments: paging is page x limit
# here (`per_page` is `limit`; the after_id cursor is the REST API's bulk mode).
_DOMAIN_SKIP = {"per_page", "limit", "page", "after_id"}
_PENDING_SKIP = {"per_page", "page"}
_RESULT_SKIP = {"per_page", "page"}
_FREE_SKIP = {"limit"}


# -- parameter schemas, from the definitions -------------------------------------------------


def _renamed(param: Param, name: str, description: str | None = None) -> Param:
    """The same rule under the tool's name for it (its 422 then names the tool's argument)."""
    return dataclasses.replace(param, name=name, description=description or param.description)


def _describe(param: Param) -> str:
    text = param.description
    if param.kind == "flag":
        text += " true applies the filter; false or absent does not."
    elif param.kind == "list" and param.choices:
        text += f" Values: {', '.join(param.choices)}."
    if param.name == "categories":
        text += f" Top categories: {', '.join(TOP_CATEGORIES)}."
    if param.kind == "list":
        text += " A JSON array of strings is accepted too."
    return text


def _alias_note(aliases: Mapping[str, str]) -> str:
    names = " and ".join(f"{alias} for {name}" for alias, name in aliases.items())
    return f"The live service's argument names are accepted too ({names})."


# The sorts the live server's card names briefly ("TF, RD, DA, traffic, snapshots"), for the fields they sort by.
SORT_ALIASES = {
    "tf": "trust_flow",
    "cf": "citation_flow",
    "rd": "referring_domains",
    "da": "domain_authority",
    "traffic": "historical_traffic_etv",
    "snapshots": "wayback_snapshots",
}


def _sort_named(sort: str) -> str:
    """`-TF` -> `-trust_flow`: a short name of the card as its field; anything else as given."""
    bare = sort.strip()
    sign = "-" if bare.startswith("-") else ""
    field = SORT_ALIASES.get(bare.lstrip("-").strip().lower())
    return sign + field if field else sort


def _schema(param: Param, aliases: Mapping[str, str] | None = None) -> dict[str, Any]:
    """JSON schema of one tool argument: the OpenAPI document's schema of the parameter,
    with its description (both from the one definition in `query/params.py`); an argument that
    has an alias says so (the schema lists the canonical name only)."""
    schema = param_schema(param)
    if param.kind == "list":
        schema = {"anyOf": [schema, {"type": "array", "items": {"type": "string"}}]}
    elif param.kind == "text" and param.name == "seen_after":
        schema["format"] = "date-time"
    schema["description"] = _describe(param)
    alias = next((a for a, name in (aliases or {}).items() if name == param.name), None)
    if alias:
        schema["description"] += f" Alias: {alias}."
    return schema


class _Arguments(ArgModelBase):
    """Tool arguments, checked by the parameter definitions (so a bad value gets the API's
    message). Unknown names are kept, for the tool to refuse them by name: an assistant's
    typo is never silently ignored (as the Python API: docs/reference/semantics.md)."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        return {**super().model_dump_one_level(), **(self.__pydantic_extra__ or {})}


@dataclasses.dataclass(frozen=True)
class _Spec:
    name: str
    title: str
    description: str
    properties: dict[str, dict[str, Any]]
    output: dict[str, Any]
    run: Callable[..., dict[str, Any]]
    aliases: Mapping[str, str] = dataclasses.field(default_factory=dict)  # another name -> the argument

    def check(self, arguments: dict[str, Any]) -> dict[str, Any]:
        arguments = dict(arguments)
        for alias, name in self.aliases.items():
            if alias in arguments:
                if name in arguments:
                    raise invalid(name, f"give {name} or its alias {alias}, not both.")
                arguments[name] = arguments.pop(alias)
        unknown = sorted(set(arguments) - set(self.properties))
        if unknown:
            raise invalid(
                unknown[0], unknown_message(self.properties, unknown[0], what="argument", of=self.name, sort=False)
            )
        return arguments

    def tool(self, wrap: Callable[[str, Callable[[], dict[str, Any]]], CallToolResult]) -> Tool:
        fields: dict[str, Any] = {name: (Any, None) for name in self.properties}  # each optional, any value
        model = create_model(f"{self.name}_arguments", __base__=_Arguments, **fields)
        # Aliases are properties too: a client that checks its arguments against the schema sends them.
        aliased = {a: {**self.properties[n], "description": f"The same as {n}."} for a, n in self.aliases.items()}
        schema = {"type": "object", "properties": {**self.properties, **aliased}, "additionalProperties": False}

        def call(**arguments: Any) -> CallToolResult:
            given = {k: v for k, v in arguments.items() if v is not None}
            return wrap(self.name, lambda: self.run(**self.check(given)))

        return Tool(
            fn=call,
            name=self.name,
            title=self.title,
            description=self.description,
            parameters=schema,
            fn_metadata=FuncMetadata(arg_model=model, output_schema=self.output),
            is_async=False,
            context_kwarg=None,  # no tool takes the request's context
            annotations=ToolAnnotations(
                title=self.title,
                read_only_hint=True,
                destructive_hint=False,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        )


# -- output schemas, from the OpenAPI document's record schemas ---------------------------------


def _output_schemas() -> dict[str, dict[str, Any]]:
    components = build_openapi()["components"]["schemas"]

    def record(name: str, *, loose: bool = False) -> dict[str, Any]:
        schema = dict(components[name])
        if loose:  # fields=compact returns a subset of the fields
            schema.pop("required", None)
        return schema

    meta = components["PaginationMeta"]
    page = lambda item: {  # noqa: E731
        "type": "object",
        "required": ["data", "meta"],
        "properties": {"data": {"type": "array", "items": item}, "meta": meta},
    }
    free = dict(components["FreePage"])
    free["properties"] = {**free["properties"], "data": {"type": "array", "items": record("FreeDomain")}}
    counts = {"type": "array", "items": {"type": "object"}}
    return {
        "domains": page(record("Domain", loose=True)),
        "free": free,
        "pending": page(record("PendingDeleteDomain")),
        "results": page(record("AuctionResult")),
        "domain": {
            "type": "object",
            "required": ["data"],
            "properties": {"data": record("Domain"), "also_listed": {"type": "array", "items": {"type": "object"}}},
        },
        "filters": {
            "type": "object",
            "required": ["plan", "sources", "tlds", "languages", "categories"],
            "properties": {
                "plan": {"type": "string"},
                "sources": counts,
                "tlds": counts,
                "regfree_tlds": counts,
                "languages": counts,
                "categories": counts,
                "types": {"type": "array", "items": {"type": "string"}},
                "use_cases": {"type": "array", "items": {"type": "string"}},
                "sorts": {"type": "array", "items": {"type": "string"}},
                "pending_delete": {"type": "object"},
            },
        },
        "stats": {
            "type": "object",
            "required": ["as_of", "listings", "by_source", "regfree", "pending_delete", "freshness"],
            "properties": {
                "as_of": {"type": "string", "format": "date-time"},
                "listings": {"type": "object"},
                "by_source": {"type": "object", "additionalProperties": {"type": "integer"}},
                "regfree": {"type": "object"},
                "pending_delete": {"type": "object"},
                "freshness": {"type": "array", "items": {"type": "object"}},
                "last_sync": {"type": "object"},
                "origins": {"type": "object"},
                "demo": {"type": "boolean"},
            },
        },
    }


# -- results ---------------------------------------------------------------------------------------


def _ok(payload: dict[str, Any]) -> CallToolResult:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=payload)


def _failure(status: int, body: Mapping[str, Any]) -> CallToolResult:
    """A tool error with the API's message as its text, its body and status as data."""
    message = str(body.get("message", "Error."))
    errors = body.get("errors") or {}
    field = next(iter(errors), None)
    if field and field not in message:
        message = f"{field}: {message}"
    return CallToolResult(
        content=[TextContent(type="text", text=message)], structured_content={"status": status, **body}, is_error=True
    )


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


# -- the tools ---------------------------------------------------------------------------------------


class Tools:
    """The five tools over one Mirror, answering as one plan."""

    def __init__(self, mirror: Mirror, plan: str, free: bool, before_call: Callable[[str], None] | None):
        self.mirror = mirror
        self.plan = plan
        self.free = free
        self.before_call = before_call
        self.p = _tool_params()
        self._cache: dict[str, tuple[Any, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def wrap(self, name: str, call: Callable[[], dict[str, Any]]) -> CallToolResult:
        try:
            if self.before_call is not None:
                self.before_call(name)
            return _ok(call())
        except ApiError as exc:
            return _failure(exc.status, exc.body)
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                return _failure(503, _BUSY)
            if damage_in(exc) is not None:
                return self._damaged(name, exc)
            log.exception("MCP tool %s failed", name)
            return _failure(400, _BAD_REQUEST)
        except Exception as exc:  # a bug or an input nobody foresaw: logged, an error result, never a crash
            if damage_in(exc) is not None:
                return self._damaged(name, exc)
            log.exception("MCP tool %s failed", name)
            return _failure(400, _BAD_REQUEST)

    def _damaged(self, name: str, exc: BaseException) -> CallToolResult:
        """A damaged mirror: a 503 tool error saying so (no path), one warning line naming the file."""
        log.warning("%s (MCP tool %s: 503)", damaged_line(self.mirror.path, damage_words(damage_in(exc) or exc)), name)
        return _failure(503, _DAMAGED)

    # -- search_domains --------------------------------------------------------------------------
    def search_domains(
        self, *, page: Any = None, limit: Any = None, fields: Any = None, added_on: Any = None, **filters: Any
    ) -> dict[str, Any]:
        params = dict(filters)
        if self.free:  # the free endpoint: its own filters, limit 1-50, masked names
            if limit is not None:
                params["limit"] = limit
            return self.mirror.free_domains(params, strict=True)
        require(self.plan, "domains")  # the plan first, as the API answers
        if isinstance(params.get("sort"), str):
            params["sort"] = _sort_named(params["sort"])
        if added_on is not None:
            if "created_after" in params or "created_before" in params:
                raise invalid("added_on", "added_on cannot be combined with created_after or created_before.")
            day = self.p["added_on"].parse(added_on)
            following = (date.fromisoformat(day) + timedelta(days=1)).isoformat()
            params.update(created_after=day, created_before=following)
        compact = fields is not None and self.p["fields"].parse(fields) == "compact"
        number = self.p["page"].parse(page) if page is not None else 1
        size = self.p["limit"].parse(limit) if limit is not None else self.p["limit"].default
        if number * size > MAX_RESULT_WINDOW:
            raise invalid(
                "page",
                f"page × limit must be at most {MAX_RESULT_WINDOW:,} (got page {number} × limit {size} = "
                f"{number * size:,}): narrow the filters or change the sort instead of paging deeper.",
            )
        envelope = self.mirror.search_domains({**params, "page": number, "per_page": size}, self.plan)
        data = envelope["data"]
        if compact:
            data = [{k: row[k] for k in COMPACT_FIELDS if k in row} for row in data]
        return {"data": data, "meta": envelope["meta"]}

    # -- search_pending_delete_domains ----------------------------------------------------------
    def search_pending(self, *, limit: Any = None, **filters: Any) -> dict[str, Any]:
        params = dict(filters)
        require(self.plan, "pending_delete")  # the plan first, as the API answers
        if limit is not None:
            params["per_page"] = self.p["pending_limit"].parse(limit)
        envelope = self.mirror.search_pending_delete(params, self.plan)
        return {"data": envelope["data"], "meta": envelope["meta"]}

    # -- search_auction_results (an extension) --------------------------------------------------
    def search_results(self, *, page: Any = None, limit: Any = None, **filters: Any) -> dict[str, Any]:
        params = dict(filters)
        if page is not None:
            params["page"] = page
        if limit is not None:
            params["per_page"] = self.p["results_limit"].parse(limit)
        envelope = self.mirror.search_results(params, self.plan)
        return {"data": envelope["data"], "meta": envelope["meta"]}

    # -- get_domain ----------------------------------------------------------------------------------
    def get_domain(self, *, id: Any = None, name: Any = None) -> dict[str, Any]:  # noqa: A002 - the card's name
        require(self.plan, "domains")  # the plan first, as the API answers
        if (id is None) == (name is None):
            raise invalid("id", "Give either id (a listing id) or name (a full domain name such as example.com).")
        if id is not None:
            return self.mirror.get_domain(self.p["id"].parse(id), self.plan)
        wanted = str(name).strip().lower().rstrip(".")
        if not wanted or len(wanted) > 253:
            raise invalid("name", f"name must be a full domain name such as example.com (got {str(name)[:60]!r}).")
        # Every listing of that name (live first, platform before regfree, newest first); the
        # first this plan may see is the answer (only regfree ones: the API's 403 below Authority).
        rows = self.mirror.listings_named(wanted)
        if not rows:
            raise not_found()
        visible = [r for r in rows if r[1] != REGFREE or plan_allows(self.plan, "regfree")]
        chosen = (visible or rows)[0]
        answer = self.mirror.get_domain(chosen[0], self.plan)  # the plan rules (regfree) and the record
        others = [{"id": r[0], "source": r[1], "live": bool(r[2])} for r in visible if r[0] != chosen[0]]
        if others:
            answer["also_listed"] = others
        return answer

    # -- list_filters ----------------------------------------------------------------------------------
    def list_filters(self) -> dict[str, Any]:
        counts = self._counts()
        free_slugs = {s.slug for s in SOURCES if s.free_tier}

        def available(slug: str) -> bool:
            if self.free:
                return slug in free_slugs
            return plan_allows(self.plan, "regfree" if slug == REGFREE else "domains")

        sources = [
            {
                "slug": s.slug,
                "name": s.name,
                "currency": s.currency,
                "live": counts["sources"].get(s.slug, 0),
                "available": available(s.slug),
            }
            for s in SOURCES
        ]
        return {
            "plan": self.plan,
            "sources": sources,
            "tlds": counts["tlds"],
            "regfree_tlds": counts["regfree_tlds"],
            "languages": counts["languages"],
            "categories": counts["categories"],
            "types": list(DOMAIN_PARAMS["type"].choices or ()),
            "use_cases": list(USE_CASES),
            "sorts": list(DOMAIN_PARAMS["sort"].choices or ()),
            # every filter search_domains takes, from the parameter table (extensions included)
            "filters": [
                {
                    "name": p.name,
                    "kind": p.kind,
                    "caption": p.caption,
                    "description": p.description,
                    **({"minimum": p.minimum} if p.minimum is not None else {}),
                    **({"maximum": p.maximum} if p.maximum is not None else {}),
                    "extension": p.extension,
                }
                for p in DOMAIN_PARAMS.values()
                if p.clause is not None
            ],
            "pending_delete": {
                "available": plan_allows(self.plan, "pending_delete"),
                "statuses": list(PENDING_STATUSES),
                "sources": list(PENDING_SOURCES),
                "sorts": list(PENDING_SORTS),
            },
        }

    def _counts(self) -> dict[str, Any]:
        """Live listings per source, TLD, language and top category (cached for a minute)."""
        key = f"{self.mirror.generation()}:{int(time.monotonic() // 60)}"
        with self._lock:
            cached = self._cache.get("counts")
            if cached and cached[0] == key:
                return cached[1]
        raw = self.mirror.live_counts()  # the query layer counts; this module only shapes
        sources = raw["sources"]
        tlds = [{"tld": t, "count": n} for t, n in raw["tlds"]]
        regfree_tlds = [{"tld": t, "count": n} for t, n in raw["regfree_tlds"]]
        languages = [{"language": lang, "count": n} for lang, n in raw["languages"]]
        tops = {c.lower(): c for c in TOP_CATEGORIES}
        categories: dict[str, int] = {}
        for topic, n in raw["topics"]:
            top = tops.get(str(topic).split("/", 1)[0].strip().lower())
            if top:
                categories[top] = categories.get(top, 0) + n
        result = {
            "sources": sources,
            "tlds": tlds,
            "regfree_tlds": regfree_tlds,
            "languages": languages,
            "categories": [
                {"category": c, "count": n} for c, n in sorted(categories.items(), key=lambda i: (-i[1], i[0]))
            ],
        }
        with self._lock:
            self._cache["counts"] = (key, result)
        return result

    # -- get_stats ----------------------------------------------------------------------------------------
    def get_stats(self) -> dict[str, Any]:
        status = self.mirror.status()
        counts = self._counts()["sources"]
        today = self.mirror.now().date().isoformat()
        # Counts through the query layer (its liveness rules), as the top plan: totals, not rows.
        new_today = self.mirror.search_domains({"created_after": today, "per_page": 1}, "enterprise")["meta"]["total"]
        actionable = self.mirror.search_pending_delete({"per_page": 1}, "enterprise")["meta"]["total"]
        datasets = status["datasets"]
        return {
            "as_of": self.mirror.now().strftime("%Y-%m-%dT%H:%M:%SZ"),
            "listings": {**datasets["listings"], "new_today": new_today},
            "by_source": {s: n for s, n in sorted(counts.items(), key=lambda i: (-i[1], i[0])) if s != REGFREE},
            "regfree": {"live": counts.get(REGFREE, 0), "rows": datasets["regfree"]["rows"]},
            "pending_delete": {"rows": datasets["pending_delete"]["rows"], "actionable": actionable},
            "freshness": status["freshness"],
            "last_sync": status["last_sync"],
            "origins": status["origins"],
            "demo": "demo" in status["origins"],
        }


def _tool_params() -> dict[str, Param]:
    """The tools' own arguments, as parameter definitions (read from the API's when they are
    the API's under another name), so schema and validation come from one place."""
    per_page = DOMAIN_PARAMS["per_page"]
    return {
        "added_on": _renamed(
            DOMAIN_PARAMS["created_after"], "added_on", "Listings added on this day (YYYY-MM-DD, UTC)."
        ),
        "page": _renamed(
            DOMAIN_PARAMS["page"], "page", f"Page number; page × limit must be at most {MAX_RESULT_WINDOW:,}."
        ),
        "limit": dataclasses.replace(
            _renamed(DOMAIN_PARAMS["limit"], "limit", per_page.description), default=per_page.default
        ),
        "fields": Param(
            "fields",
            "choice",
            "Fields",
            f"compact: {len(COMPACT_FIELDS)} fields a shortlist needs (name, price, timing, score, SEO metrics, "
            "purchase_url); full (default): every field of the record.",
            "output",
            choices=("full", "compact"),
            default="full",
        ),
        "pending_limit": dataclasses.replace(
            _renamed(PENDING_PARAMS["per_page"], "limit"), default=PENDING_PARAMS["per_page"].default
        ),
        "results_limit": dataclasses.replace(
            _renamed(RESULT_PARAMS["per_page"], "limit"), default=RESULT_PARAMS["per_page"].default
        ),
        "id": Param("id", "int", "Id", "The listing id (as in search results).", "paging", 1),
        "name": Param(
            "name", "text", "Name", "A full domain name such as example.com (any case).", "names", max_length=253
        ),
    }


def _plan_note(capability: str) -> str:
    """The label of the lowest plan a capability needs (Authority, Authority+)."""
    return PLAN_LABELS[REQUIREMENTS[capability]]


def tool_specs(tools: Tools) -> list[_Spec]:
    outputs = _output_schemas()
    p = tools.p
    if tools.free:
        search_props = {n: _schema(param) for n, param in FREE_PARAMS.items() if n not in _FREE_SKIP}
        search_props["limit"] = _schema(FREE_PARAMS["limit"])
        search_text = (
            "Free tier: the top expired and auction domains by score, with 10+ filters (source, TLD, type, score, "
            f"age, backlinks, DA, language, keywords, price). At most {FREE_PARAMS['limit'].maximum:g} results; the "
            f"first {FREE_VISIBLE_NAMES} names are shown, the rest masked; Trust Flow, Citation Flow, topics and "
            "Google Business data need a key (the keyed endpoint)."
        )
        search_output = outputs["free"]
    else:
        search_props = {n: _schema(param) for n, param in DOMAIN_PARAMS.items() if n not in _DOMAIN_SKIP}
        search_props.update({name: _schema(p[name]) for name in ("added_on", "page", "limit", "fields")})
        sort = search_props["sort"]
        sort["enum"] = [*sort["enum"], *(f"{sign}{a}" for sign in ("", "-") for a in SORT_ALIASES)]
        sort["description"] += f" The live card's short names are taken too: {', '.join(SORT_ALIASES)}."
        search_text = (
            "Search expired, auction and closeout domains of this mirror with 30 filters (source, TLD, type, score, "
            "age, backlinks, DA/TF/CF, language, keywords, categories, tech stack, traffic, price, "
            "created_after/added_on, auction end), an explicit sort (score, traffic, snapshots, TF, RD, DA, age, "
            f"created_at, price, ...; '-' prefix for descending), pagination (page × limit ≤ {MAX_RESULT_WINDOW:,}) "
            "and a compact response shape (fields=compact). Live listings only unless include_closed. "
            "Returns {data: [records], meta: {total, current_page, last_page, per_page, ...}}. "
            f"The regfree database of deleted ccTLD domains (source=regfree) needs the {_plan_note('regfree')} plan."
        )
        search_output = outputs["domains"]
    pending_props = {n: _schema(param) for n, param in PENDING_PARAMS.items() if n not in _PENDING_SKIP}
    pending_props["page"] = _schema(PENDING_PARAMS["page"])
    pending_props["limit"] = _schema(p["pending_limit"])
    specs = [
        _Spec("search_domains", "Search domains", search_text, search_props, search_output, tools.search_domains),
        _Spec(
            "search_pending_delete_domains",
            "Search pending-delete domains",
            f"{_plan_note('pending_delete')} — search actionable pending-delete ccTLD and gTLD inventory by TLD, "
            "status, source, drop window and snapshot week. Soonest drop first by default; past drops only with "
            "include_past or an explicit week_end. Returns {data: [records], meta: {...}}.",
            pending_props,
            outputs["pending"],
            tools.search_pending,
        ),
        _Spec(
            "get_domain",
            "Get a domain",
            "Get every detail of one listing by its id or its full domain name (give one of id or name). By name, "
            "the live listing is preferred; other listings of the same name are listed in also_listed. "
            + _alias_note(GET_DOMAIN_ALIASES),
            {name: _schema(p[name], GET_DOMAIN_ALIASES) for name in ("id", "name")},
            outputs["domain"],
            tools.get_domain,
            GET_DOMAIN_ALIASES,
        ),
        _Spec(
            "list_filters",
            "List filter options",
            "Available filter options with counts of live listings: sources (with availability for this plan), "
            "TLDs, regfree TLDs, languages, top categories; and the accepted types, use cases, sorts and "
            "pending-delete statuses.",
            {},
            outputs["filters"],
            tools.list_filters,
        ),
        _Spec(
            "get_stats",
            "Mirror statistics",
            "Statistics of this mirror: live and total listings, new today, live domains by source, regfree and "
            "pending-delete totals, and the freshness of each dataset against the service's refresh schedule.",
            {},
            outputs["stats"],
            tools.get_stats,
        ),
    ]
    if tools.free:
        return specs
    results_props = {n: _schema(param) for n, param in RESULT_PARAMS.items() if n not in _RESULT_SKIP}
    results_props["page"] = _schema(RESULT_PARAMS["page"])
    results_props["limit"] = _schema(p["results_limit"])
    return [
        *specs,
        _Spec(
            "search_auction_results",
            "Search auction results",
            "Toolkit extension (not on the live service): what the auctions this mirror saw end came to, newest end "
            "first: the final price (the last bid before the end, native currency and EUR), bids, sold or not, and "
            "where the name went next (closeout, another platform, the drop). Takes search_domains' filters to choose "
            "the listings (closed ones included), ended_after / ended_before / sold for the results; for comparable "
            "sales of a name, filter by its TLD and words (contains). Returns {data: [results], meta: {...}}.",
            results_props,
            outputs["results"],
            tools.search_results,
        ),
    ]
