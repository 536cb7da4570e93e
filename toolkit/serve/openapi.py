"""The replica's OpenAPI 3.1 document, generated from the definitions the query layer uses.

Parameters come from `query/params.py` (`DOMAIN_PARAMS`, `PENDING_PARAMS`, `FREE_PARAMS`): name,
type, range, choices, default, description and the extension flag, so the document cannot
drift from the validation. Record schemas come from `store/fields.py` (the field kinds a
test holds equal to the reference JSON schemas) and the query layer's output columns.
Operation ids are the live service's (`listDomains`, `getDomain`,
`listPendingDeleteDomains`, `getPendingDeleteDomain`, `freeDomains`) plus `exportDomains`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ..query.params import (
    DOMAIN_PARAMS,
    FREE_PARAMS,
    PENDING_PARAMS,
    PENDING_SOURCES,
    PENDING_STATUSES,
    RESULT_PARAMS,
    Param,
)
from ..plans import PLAN_LABELS, REQUIREMENTS
from ..query import FREE_FIELDS, FREE_VISIBLE_NAMES, LISTING_OUTPUT, PENDING_OUTPUT
from ..sources import SOURCES
from ..store.fields import LISTING_DERIVED_FIELDS, LISTING_EXTRA_FIELDS, PENDING_EXTRA_FIELDS
from ..store.labels import INTERNAL_FIELDS, LISTING_LABELS, PENDING_LABELS

__all__ = [
    "EXPORT_FORMAT",
    "EXPORT_PARAMS",
    "EXPORT_MEDIA_TYPES",
    "REFERENCE_VERSION",
    "build_openapi",
    "param_schema",
]

REFERENCE_VERSION = "1.1.1"  # the live service's OpenAPI this replica follows

# /api/export: the /api/domains filters without paging (every matching row), plus the format.
EXPORT_FORMAT = Param(
    "format",
    "choice",
    "Format",
    "ndjson: one JSON record a line (default); csv: a header row, arrays and objects as JSON text.",
    "output",
    choices=("ndjson", "csv"),
    default="ndjson",
    extension=True,
)
_PAGING = ("after_id", "per_page", "limit", "page")
EXPORT_PARAMS: dict[str, Param] = {
    **{name: p for name, p in DOMAIN_PARAMS.items() if name not in _PAGING},
    "format": EXPORT_FORMAT,
}
EXPORT_MEDIA_TYPES = {"ndjson": "application/x-ndjson", "csv": "text/csv"}

_KIND_SCHEMA: dict[str, dict[str, Any]] = {
    "int": {"type": "integer"},
    "num": {"type": "number"},
    "str": {"type": "string"},
    "bool": {"type": "boolean"},
    "date": {"type": "string", "format": "date"},
    "datetime": {"type": "string", "format": "date-time"},
    "array": {"type": "array", "items": {"type": "string"}},
    "object": {"type": "object"},
}
_ARRAY_ITEMS = {"historical_traffic_spark": {"type": "integer"}}
# Fields the reference schemas declare without null.
_DOMAIN_NOT_NULL = {"id", "name", "tld", "source", "type", "is_spammy", "has_gmb", "created_at", "updated_at"}
_PENDING_NOT_NULL = {"id", "domain", "tld", "source", "whois_status", "is_idn"}
_FREE_NOT_NULL = {"name", "tld", "source"}
_RESULT_NOT_NULL = {"listing_id", "name", "ended_at", "sold", "derived_at"}


def _result_fields() -> dict[str, str]:
    from ..store.schema import RESULT_COLUMNS

    kinds = {int: "int", float: "num", str: "str"}
    return {name: "bool" if name == "sold" else kinds[kind] for name, kind in RESULT_COLUMNS.items()}


_ENUMS = {
    "Domain": {"source": [s.slug for s in SOURCES], "type": list(DOMAIN_PARAMS["type"].choices or ())},
    "PendingDeleteDomain": {"source": list(PENDING_SOURCES), "whois_status": list(PENDING_STATUSES)},
}
# The toolkit's own fields, described with the field reference's words (store/labels.py).
_EXTRA_DESCRIPTIONS = {
    name: f"Toolkit: {labels[name].meaning}"
    for extra, labels in (
        ({**LISTING_EXTRA_FIELDS, **LISTING_DERIVED_FIELDS}, LISTING_LABELS),
        (PENDING_EXTRA_FIELDS, PENDING_LABELS),
    )
    for name in extra
    if name not in INTERNAL_FIELDS
}


def _field_schema(name: str, kind: str, *, nullable: bool, enum: list[str] | None = None) -> dict[str, Any]:
    schema = copy.deepcopy(_KIND_SCHEMA[kind])
    if kind == "array" and name in _ARRAY_ITEMS:
        schema["items"] = dict(_ARRAY_ITEMS[name])
    if enum:
        schema["enum"] = list(enum)
    if nullable:
        schema["type"] = [schema["type"], "null"]
        if enum:
            schema["enum"].append(None)
    if name in _EXTRA_DESCRIPTIONS:
        schema["description"] = _EXTRA_DESCRIPTIONS[name]
    return schema


def _record_schema(title: str, fields: Mapping[str, str], not_null: set[str], description: str) -> dict[str, Any]:
    enums = _ENUMS.get(title, {})
    return {
        "type": "object",
        "description": description,
        "required": [name for name in fields if name in not_null],
        "properties": {
            name: _field_schema(name, kind, nullable=name not in not_null, enum=enums.get(name))
            for name, kind in fields.items()
        },
    }


def param_schema(param: Param) -> dict[str, Any]:
    """The JSON schema of one query parameter, from its definition."""
    kind = param.kind
    if kind in ("int", "number"):
        schema: dict[str, Any] = {"type": "integer" if kind == "int" else "number"}
        if param.minimum is not None:
            schema["minimum"] = int(param.minimum) if kind == "int" else param.minimum
        if param.maximum is not None:
            schema["maximum"] = int(param.maximum) if kind == "int" else param.maximum
    elif kind == "flag":
        schema = {"type": "boolean"}
    elif kind == "choice":
        schema = {"type": "string", "enum": list(param.choices or ())}
    elif kind == "date":
        schema = {"type": "string", "format": "date"}
    elif kind == "week":
        schema = {"type": "string", "examples": ["all", "2026-11-16"]}
    elif kind == "text" and param.choices:
        schema = {"type": "string", "enum": list(param.choices)}
    else:  # text, list
        schema = {"type": "string"}
        if param.max_length is not None:
            schema["maxLength"] = param.max_length
    if param.default is not None:
        schema["default"] = param.default
    return schema


def _parameter(param: Param) -> dict[str, Any]:
    description = param.description
    if param.kind == "flag":
        description += " Accepts 1/true (apply) or 0/false."
    elif param.kind == "list" and param.choices:
        description += f" Values: {', '.join(param.choices)}."
    out: dict[str, Any] = {"name": param.name, "in": "query", "description": description, "schema": param_schema(param)}
    if param.extension:
        out["x-extension"] = True  # not in the live service's API
    return out


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


_RATE_HEADERS = {
    "X-RateLimit-Limit": {"$ref": "#/components/headers/X-RateLimit-Limit"},
    "X-RateLimit-Remaining": {"$ref": "#/components/headers/X-RateLimit-Remaining"},
}
_CORS_HEADER = {"Access-Control-Allow-Origin": {"$ref": "#/components/headers/Access-Control-Allow-Origin"}}


def _json(description: str, schema: dict[str, Any], headers: Mapping[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"description": description, "content": {"application/json": {"schema": schema}}}
    if headers:
        out["headers"] = dict(headers)
    return out


_KEYED_ERRORS = (400, 401, 403, 422, 429, 503)


def _answers(description: str, schema: dict[str, Any], errors: tuple[int, ...] = _KEYED_ERRORS) -> dict[str, Any]:
    """A keyed operation's responses: `schema` with the rate headers, else the `errors`."""
    return {"200": _json(description, schema, _RATE_HEADERS), **_errors(*errors)}


def _one_row(description: str, schema: str) -> dict[str, Any]:
    """The responses of a lookup by id or name: `{"data": <schema>}`, or an error (a 404 when none)."""
    data = {"type": "object", "required": ["data"], "properties": {"data": _ref(schema)}}
    return _answers(description, data, (400, 401, 403, 404, 429, 503))


def _operation(
    operation_id: str,
    summary: str,
    description: str,
    tag: str,
    parameters: Mapping[str, Param] | list[dict[str, Any]],
    responses: dict[str, Any],
    *,
    extension: bool = False,
    security: list[Any] | None = None,
) -> dict[str, Any]:
    """A GET operation; `parameters`, a parameter table or the path's own."""
    operation: dict[str, Any] = {"operationId": operation_id, "summary": summary, "description": description}
    operation["tags"] = [tag]
    if security is not None:
        operation["security"] = security
    if extension:
        operation["x-extension"] = True
    operation["parameters"] = (
        [_parameter(p) for p in parameters.values()] if isinstance(parameters, Mapping) else parameters
    )
    operation["responses"] = responses
    return operation


def _errors(*statuses: int, keyed: bool = True, extra_headers: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The error responses of an operation (docs/reference/errors.md)."""
    rate = {**_RATE_HEADERS, **(extra_headers or {})}
    table = {
        400: ("The request could not be processed.", _ref("Message"), extra_headers),
        401: ("Missing or unknown API key.", _ref("Message"), None),
        403: (
            "Plan too low (plan_required) or keyset cursor with regfree (cursor_not_available).",
            _ref("AccessError"),
            rate,
        ),
        404: ("Not found.", _ref("Message"), rate),
        422: (
            "A malformed parameter; errors names the field.",
            _ref("ValidationError"),
            rate if keyed else extra_headers,
        ),
        429: (
            "Too many requests: wait Retry-After seconds.",
            _ref("Message"),
            {**rate, "Retry-After": {"$ref": "#/components/headers/Retry-After"}},
        ),
        503: (
            "The mirror is busy (a long write); retry after Retry-After seconds.",
            _ref("BusyError"),
            {"Retry-After": {"$ref": "#/components/headers/Retry-After"}, **(extra_headers or {})},
        ),
    }
    out = {}
    for status in statuses:
        description, schema, headers = table[status]
        out[str(status)] = _json(description, schema, headers)
    return out


def _plan_note(capability: str) -> str:
    return f"Requires a {PLAN_LABELS[REQUIREMENTS[capability]]} key or higher."


def _build() -> dict[str, Any]:
    from .. import __version__

    list_domains = _operation(
        "listDomains",
        "Search expired and auction domains",
        "One page of live listings matching every filter (AND), sorted by score descending then id. "
        f"{_plan_note('domains')} source=regfree needs {PLAN_LABELS[REQUIREMENTS['regfree']]}. Unknown parameters "
        "are ignored; a malformed value is a 422 naming the field. With after_id: keyset mode and a cursor object.",
        "Domains",
        DOMAIN_PARAMS,
        _answers("A page of listings.", _ref("DomainPage")),
    )
    get_domain = _operation(
        "getDomain",
        "Get a single domain by id",
        f"One listing, closed ones included. {_plan_note('domains')} A regfree row needs "
        f"{PLAN_LABELS[REQUIREMENTS['regfree']]}. A non-integer id is a 404.",
        "Domains",
        [{"name": "id", "in": "path", "required": True, "description": "Domain id.", "schema": {"type": "integer"}}],
        _one_row("The listing.", "Domain"),
    )
    list_pending = _operation(
        "listPendingDeleteDomains",
        "List pending-delete domains",
        "Weekly inventory of domains about to drop. Default view (week_end=all): upcoming drops only, "
        f"soonest first. {_plan_note('pending_delete')}",
        "Pending-Delete",
        PENDING_PARAMS,
        _answers("A page of pending-delete domains.", _ref("PendingDeletePage")),
    )
    get_pending = _operation(
        "getPendingDeleteDomain",
        "Look up one pending-delete domain",
        "Case-insensitive lookup by domain name: the most recent snapshot row still in an actionable "
        f"state, else 404. {_plan_note('pending_delete')}",
        "Pending-Delete",
        [
            {
                "name": "domain",
                "in": "path",
                "required": True,
                "description": "Full domain name.",
                "schema": {"type": "string", "examples": ["example.fr"]},
            }
        ],
        _one_row("The pending-delete row.", "PendingDeleteDomain"),
    )
    free_domains = _operation(
        "freeDomains",
        "Free domain search (no key)",
        f"No key, CORS open, 3 requests a minute per client address. The first {FREE_VISIBLE_NAMES} "
        "names are shown, the rest masked (purchase_url null); Trust Flow, Citation Flow, topics and Google Business "
        "data are omitted.",
        "Free",
        FREE_PARAMS,
        {
            "200": _json("Masked free-tier results.", _ref("FreePage"), {**_RATE_HEADERS, **_CORS_HEADER}),
            "400": _json("The request could not be processed.", _ref("Message"), _CORS_HEADER),
            "422": _json("A malformed parameter; errors names the field.", _ref("ValidationError"), _CORS_HEADER),
            "429": _json(
                "Too many requests from this address: wait Retry-After seconds.",
                _ref("Message"),
                {**_RATE_HEADERS, **_CORS_HEADER, "Retry-After": {"$ref": "#/components/headers/Retry-After"}},
            ),
            "503": _json(
                "The mirror is busy; retry after Retry-After seconds.",
                _ref("BusyError"),
                {"Retry-After": {"$ref": "#/components/headers/Retry-After"}, **_CORS_HEADER},
            ),
        },
        security=[],
    )
    export = _operation(
        "exportDomains",
        "Export every matching listing",
        "Every listing matching the /api/domains filters (no paging), streamed as NDJSON or CSV in the "
        f"/api/domains order. {_plan_note('export')}",
        "Domains",
        EXPORT_PARAMS,
        {
            "200": {
                "description": "The rows, streamed.",
                "headers": dict(_RATE_HEADERS),
                "content": {
                    EXPORT_MEDIA_TYPES["ndjson"]: {"schema": {"type": "string"}},
                    EXPORT_MEDIA_TYPES["csv"]: {"schema": {"type": "string"}},
                },
            },
            **_errors(*_KEYED_ERRORS),
        },
        extension=True,
    )
    list_results = _operation(
        "listAuctionResults",
        "Auction results: what ended auctions sold for",
        "The result of every auction the mirror saw end, newest end first: the last bid before the end "
        "(native and EUR), bids, sold, and where the name went next. The /api/domains filters choose the listings, "
        f"closed ones included. {_plan_note('domains')}",
        "Domains",
        RESULT_PARAMS,
        _answers("A page of results.", _ref("AuctionResultPage")),
        extension=True,
    )
    integer_header = {"schema": {"type": "integer"}, "required": True}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Expired Domains Toolkit: local replica API",
            "version": __version__,
            "description": "The local mirror served as the live service's REST API (CatchDoms API "
            f"{REFERENCE_VERSION}). Keys are `Authorization: Bearer <KEY>`; every keyed response carries "
            "X-RateLimit-Limit and X-RateLimit-Remaining. Parameters marked x-extension are the toolkit's own.",
            "x-reference-version": REFERENCE_VERSION,
        },
        "servers": [{"url": "/"}],
        "security": [{"BearerAuth": []}],
        "tags": [{"name": "Domains"}, {"name": "Pending-Delete"}, {"name": "Free"}],
        "paths": {
            "/api/domains": {"get": list_domains},
            "/api/domains/{id}": {"get": get_domain},
            "/api/pending-delete": {"get": list_pending},
            "/api/pending-delete/{domain}": {"get": get_pending},
            "/api/free/domains": {"get": free_domains},
            "/api/export": {"get": export},
            "/api/results": {"get": list_results},
        },
        "components": {
            "securitySchemes": {
                "BearerAuth": {"type": "http", "scheme": "bearer", "description": "An API key given to `edt serve`."}
            },
            "headers": {
                "X-RateLimit-Limit": {
                    "description": "Requests allowed per minute for this key (or address).",
                    **integer_header,
                },
                "X-RateLimit-Remaining": {
                    "description": "Requests left in the current 60-second window.",
                    **integer_header,
                },
                "Retry-After": {"description": "Seconds to wait before retrying.", **integer_header},
                "Access-Control-Allow-Origin": {
                    "description": "CORS: any origin.",
                    "schema": {"type": "string"},
                    "required": True,
                },
            },
            "schemas": _schemas(),
        },
    }


def _page(item: str, **extra: Any) -> dict[str, Any]:
    """A page of `item` records: data, links and meta (and `extra` properties)."""
    return {
        "type": "object",
        "required": ["data", "links", "meta"],
        "properties": {
            "data": {"type": "array", "items": _ref(item)},
            "links": _ref("PaginationLinks"),
            "meta": _ref("PaginationMeta"),
            **extra,
        },
    }


def _schemas() -> dict[str, Any]:
    nullable_int = {"type": ["integer", "null"]}
    free_fields = {name: LISTING_OUTPUT[name] for name in FREE_FIELDS}
    return {
        "Domain": _record_schema(
            "Domain",
            LISTING_OUTPUT,
            _DOMAIN_NOT_NULL,
            "A listing: the reference Domain fields plus the toolkit's (sld ... origin).",
        ),
        "PendingDeleteDomain": _record_schema(
            "PendingDeleteDomain",
            PENDING_OUTPUT,
            _PENDING_NOT_NULL,
            "A pending-delete row: the reference fields plus the toolkit's.",
        ),
        "FreeDomain": _record_schema(
            "FreeDomain",
            free_fields,
            _FREE_NOT_NULL,
            "A free-tier listing: names past the first few masked (••••••••.tld).",
        ),
        "PaginationLinks": {
            "type": "object",
            "required": ["first", "last", "prev", "next"],
            "properties": {k: {"type": ["string", "null"]} for k in ("first", "last", "prev", "next")},
        },
        "PaginationMeta": {
            "type": "object",
            "required": ["current_page", "from", "last_page", "path", "per_page", "to", "total"],
            "properties": {
                "current_page": {"type": "integer"},
                "from": nullable_int,
                "last_page": {"type": "integer"},
                "path": {"type": "string"},
                "per_page": {"type": "integer"},
                "to": nullable_int,
                "total": {"type": "integer"},
            },
        },
        "Cursor": {
            "type": "object",
            "description": "Present only in keyset mode (after_id).",
            "required": ["after_id", "next_after_id", "has_more", "order"],
            "properties": {
                "after_id": {"type": "integer"},
                "next_after_id": nullable_int,
                "has_more": {"type": "boolean"},
                "order": {"type": "string", "examples": ["id asc"]},
            },
        },
        "DomainPage": _page("Domain", cursor=_ref("Cursor")),
        "AuctionResult": _record_schema(
            "AuctionResult",
            _result_fields(),
            _RESULT_NOT_NULL,
            "What an auction the mirror saw end came to (docs/guides/results.md).",
        ),
        "AuctionResultPage": _page("AuctionResult"),
        "PendingDeletePage": _page("PendingDeleteDomain"),
        "FreePage": {
            "type": "object",
            "required": ["data", "meta"],
            "properties": {
                "data": {"type": "array", "items": _ref("FreeDomain")},
                "meta": {
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer"},
                        "total_available": {"type": "integer"},
                        "visible_names": {"type": "integer"},
                        "free_tier": {"type": "boolean"},
                    },
                },
                "note": {"type": "string"},
                "upsell": {
                    "type": "object",
                    "properties": {k: {"type": "string"} for k in ("message", "signup_url", "pro_url")},
                },
            },
        },
        "Message": {"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}}},
        "ValidationError": {
            "type": "object",
            "required": ["message", "errors"],
            "properties": {
                "message": {"type": "string"},
                "errors": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
            },
        },
        "AccessError": {
            "type": "object",
            "required": ["error", "message"],
            "properties": {
                "error": {"type": "string", "enum": ["plan_required", "cursor_not_available"]},
                "message": {"type": "string"},
                "required_plan": {"type": "string", "description": "plan_required: the lowest plan that may."},
                "upgrade_url": {
                    "type": "string",
                    "format": "uri",
                    "description": "plan_required: this replica's page on plans and keys.",
                },
                "docs": {
                    "type": "string",
                    "format": "uri",
                    "description": "cursor_not_available: this replica's page on the cursor.",
                },
            },
        },
        "BusyError": {
            "type": "object",
            "required": ["error", "message"],
            "properties": {
                "error": {
                    "type": "string",
                    "examples": ["busy", "count_busy"],
                    "description": "busy; count_busy on the pending-delete routes (the live service's code).",
                },
                "message": {"type": "string"},
            },
        },
    }


_DOCUMENT: dict[str, Any] | None = None


def build_openapi(server_url: str | None = None) -> dict[str, Any]:
    """The document (a fresh copy); `server_url` (e.g. `http://127.0.0.1:8000`) fills `servers`."""
    global _DOCUMENT
    if _DOCUMENT is None:
        _DOCUMENT = _build()
    document = copy.deepcopy(_DOCUMENT)
    if server_url:
        document["servers"] = [{"url": server_url.rstrip("/") or "/", "description": "This replica"}]
    return document
