"""`edt serve`: the mirror as the live service's REST API, on localhost.

A thin ASGI shell (Starlette) over the query layer: every rule (validation, plans,
envelope, masking) is `Mirror`'s; this module adds only what is HTTP: bearer keys, rate
limits and their headers, absolute links, JSON errors, streaming, CORS and the OpenAPI
document (`toolkit.serve.openapi`, generated from the same parameter definitions).

    from toolkit.serve.server import create_app
    app = create_app("data/mirror.db", {"my-key": "pro"}, rates={"pro": 600})

Routes: `GET /api/domains`, `/api/domains/{id}`, `/api/pending-delete`,
`/api/pending-delete/{domain}`, `/api/free/domains`, `/api/export`, `/openapi.json`, `/`.
Every answer is JSON with a 2xx or 4xx status (503 when the mirror is locked by a long
write, or its file is damaged: then one warning line in the log names the file and `edt
doctor`); an unexpected error is logged (never with headers: the key is a secret) and
answered 400 with a message, never a stack trace.
"""

from __future__ import annotations

import html
import ipaddress
import json
import logging
import os
import re
import sqlite3
import sys
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from datetime import datetime
from functools import partial
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..errors import ApiError, invalid
from ..formats import csv_chunks
from ..query.params import DOMAIN_PARAMS, gather, merge_repeated
from ..plans import CAPABILITIES, PLANS, REQUIREMENTS, require
from ..query import Mirror
from ..store.damage import DAMAGED_MESSAGE, damage_in, damage_words, damaged_line
from .openapi import EXPORT_FORMAT, EXPORT_MEDIA_TYPES, build_openapi
from .ratelimit import ENTERPRISE_DEFAULT, Decision, KeyStore, SlidingWindow, effective_limits
from .log_lines import log_config
from .web import KEY_QUERY_PARAMETERS
from .web import bearer_key as _bearer
from .web import unauthenticated_body
from .web import client_address as _client
from .web import json_response as _json

__all__ = ["create_app", "serve", "startup_lines", "is_loopback", "BackgroundServer"]

log = logging.getLogger("toolkit.serve.server")

TOO_MANY = {"message": "Too Many Attempts."}
BAD_REQUEST = {"message": "The request could not be processed: check the path and the parameters."}
BUSY = {
    "error": "busy",
    "message": "The mirror is busy (a long write is in progress); retry after Retry-After seconds.",
}
DAMAGED = {"error": "damaged", "message": DAMAGED_MESSAGE}
# The pending-delete routes answer a 503 with one of the live service's codes (its OpenAPI lists
# count_busy, count_timeout, rows_timeout there): a locked mirror is its "busy".
PENDING_BUSY = {**BUSY, "error": "count_busy"}
# The live service's 403 bodies carry a link (its OpenAPI): `upgrade_url` on a plan error,
# `docs` on cursor_not_available. Here they point at the sections of this replica's own page
# (`/`) that explain plans and keys, and the cursor.
ERROR_LINKS = {"plan_required": ("upgrade_url", "/#plans"), "cursor_not_available": ("docs", "/#cursor")}
CORS = {"Access-Control-Allow-Origin": "*"}
_HOST = re.compile(
    r"(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*"
    r"|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?"
)
_CHUNK = 64 * 1024


def _base_url(request: Request) -> str:
    """scheme://host[:port] as the client addressed us (a malformed Host falls back to the socket)."""
    scope = request.scope
    host = request.headers.get("host", "")
    if not _HOST.fullmatch(host):
        server = scope.get("server") or ("127.0.0.1", 80)
        name = f"[{server[0]}]" if ":" in str(server[0]) else str(server[0])
        host = name if server[1] in (None, 80) else f"{name}:{server[1]}"
    return f"{scope.get('scheme', 'http')}://{host}{scope.get('root_path', '')}"


def _with_link(body: Mapping[str, Any], request: Request) -> Mapping[str, Any]:
    """`body` plus the link the live service's 403 of its kind carries (absolute, on this replica)."""
    link = ERROR_LINKS.get(str(body.get("error")))
    if link is None:
        return body
    name, target = link
    return {**body, name: _base_url(request) + target}


def _params(request: Request) -> dict[str, Any]:
    # A repeated name arrives as a list: parse_params merges a list filter's values into its
    # comma list and refuses (422) two values of a one-value parameter, as the CLI and MCP do.
    # A key sent as a query parameter is not read, and never written back into the links.
    return gather((k, v) for k, v in request.query_params.multi_items() if k.lower() not in KEY_QUERY_PARAMETERS)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _damaged(path: Any, where: str, exc: BaseException, headers: Mapping[str, str] | None = None) -> Response:
    """A damaged mirror: 503 saying so (no path: the file is the operator's business), and
    one warning line in the log naming the file and `edt doctor` (no traceback)."""
    log.warning("%s (answering %s: 503)", damaged_line(path, damage_words(damage_in(exc) or exc)), where)
    return _json(503, DAMAGED, headers)


class _Api:
    """The endpoints, over one read-only Mirror, one key store and one rate limiter."""

    def __init__(self, mirror: Mirror, keys: KeyStore, limits: dict[str, int], limiter: SlidingWindow):
        self.mirror = mirror
        self.keys = keys
        self.limits = limits
        self.limiter = limiter

    # -- the shared shell ----------------------------------------------------------------
    async def _answer(
        self, request: Request, call: Callable[[], Response], headers: Mapping[str, str], busy: Mapping[str, str] = BUSY
    ) -> Response:
        """Run a query-layer call in the threadpool; its errors become the API's answers (docs/reference/errors.md)."""
        try:
            return await run_in_threadpool(call)
        except ApiError as exc:
            return _json(exc.status, _with_link(exc.body, request), headers)
        except sqlite3.OperationalError as exc:
            if _is_busy(exc):
                return _json(503, busy, {**headers, "Retry-After": "60"})
            if damage_in(exc) is None:
                log.exception("query failed on %s", request.url.path)
                return _json(400, BAD_REQUEST, headers)
            return _damaged(self.mirror.path, request.url.path, exc, headers)
        except Exception as exc:  # a bug or an input nobody foresaw: logged (never headers), a 400, never a trace
            if damage_in(exc) is not None:  # the file, not the request: 503, and one line for the operator
                return _damaged(self.mirror.path, request.url.path, exc, headers)
            log.exception("query failed on %s", request.url.path)
            return _json(400, BAD_REQUEST, headers)

    async def _keyed(
        self, request: Request, call: Callable[[str], Response], busy: Mapping[str, str] = BUSY
    ) -> Response:
        """401 without a valid key; 429 past the plan's limit; else `call(plan)`, with the
        X-RateLimit headers on every answer (`busy`: the 503 body of a locked mirror)."""
        identity = self.keys.lookup(_bearer(request))
        if identity is None:
            return _json(401, unauthenticated_body(request))
        decision: Decision = self.limiter.hit(identity.bucket, self.limits[identity.plan])
        headers = decision.headers()
        if not decision.allowed:
            return _json(429, TOO_MANY, headers)
        response = await self._answer(request, partial(call, identity.plan), headers, busy)
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        return response

    def _ok(self, body: Any, headers: Mapping[str, str] | None = None) -> Response:
        return _json(200, body, headers)

    # -- routes --------------------------------------------------------------------------
    async def domains(self, request: Request) -> Response:
        params, url = _params(request), _base_url(request) + "/api/domains"
        return await self._keyed(
            request, lambda plan: self._ok(self.mirror.search_domains(params, plan, url=url, strict=False))
        )

    async def results(self, request: Request) -> Response:
        params, url = _params(request), _base_url(request) + "/api/results"
        return await self._keyed(
            request, lambda plan: self._ok(self.mirror.search_results(params, plan, url=url, strict=False))
        )

    async def domain(self, request: Request) -> Response:
        # The query layer decides what an id is (plan rules first, then 404).
        raw = request.path_params["id"]
        return await self._keyed(request, lambda plan: self._ok(self.mirror.get_domain(raw, plan)))

    async def pending(self, request: Request) -> Response:
        params, url = _params(request), _base_url(request) + "/api/pending-delete"
        return await self._keyed(
            request,
            lambda plan: self._ok(self.mirror.search_pending_delete(params, plan, url=url, strict=False)),
            PENDING_BUSY,
        )

    async def pending_domain(self, request: Request) -> Response:
        domain = request.path_params["domain"]
        return await self._keyed(
            request, lambda plan: self._ok(self.mirror.get_pending_delete(domain, plan)), PENDING_BUSY
        )

    async def free(self, request: Request) -> Response:
        if request.method == "OPTIONS":  # CORS preflight
            preflight = {
                "Access-Control-Allow-Methods": "GET, OPTIONS",
                "Access-Control-Allow-Headers": "*",
                "Access-Control-Max-Age": "600",
            }
            return Response(status_code=204, headers={**CORS, **preflight})
        decision = self.limiter.hit("addr:" + _client(request), self.limits["free"])
        headers = {**decision.headers(), **CORS}
        if not decision.allowed:
            return _json(429, TOO_MANY, headers)
        params = _params(request)
        response = await self._answer(
            request, lambda: self._ok(self.mirror.free_domains(params, strict=False)), headers
        )
        for name, value in headers.items():
            response.headers.setdefault(name, value)
        return response

    async def export(self, request: Request) -> Response:
        params = _params(request)

        def call(plan: str) -> Response:
            raw_format = params.get("format") or ""
            if isinstance(raw_format, list):  # format=csv&format=ndjson: refused as any one-value parameter
                raw_format = merge_repeated(EXPORT_FORMAT, raw_format) or ""
            fmt = EXPORT_FORMAT.parse(raw_format) if raw_format.strip() else EXPORT_FORMAT.default
            rows = self.mirror.export_rows(params, plan, strict=False)  # plan and filter errors raise here
            rows = _primed(rows)  # and a damaged mirror: a 503 before the stream starts, not a cut one
            chunks = _csv_chunks(rows) if fmt == "csv" else _ndjson_chunks(rows)
            stamp = self.mirror.now().strftime("%Y%m%dT%H%M%SZ")
            return StreamingResponse(
                chunks,
                media_type=EXPORT_MEDIA_TYPES[fmt],
                headers={"Content-Disposition": f'attachment; filename="domains-{stamp}.{fmt}"'},
            )

        return await self._keyed(request, call)

    async def webhooks(self, request: Request) -> Response:
        """POST /api/webhooks (Enterprise): a saved search whose new matches are POSTed to a
        URL after each scheduled sync job (`edt schedule`), by the alerts' own code."""
        try:
            body = await request.json()
        except ValueError:
            body = None

        def call(plan: str) -> Response:
            from ..sync.saved_searches import register_webhook

            require(plan, "webhook")
            if not isinstance(body, dict):
                raise invalid("body", 'send a JSON object: {"url": "https://...", "filters": {...}, "secret": "..."}')
            filters = body.get("filters", {})
            if not isinstance(filters, dict):
                raise invalid("filters", 'an object of /api/domains parameters, e.g. {"tld": ".fr"}')
            for key, value in filters.items():
                if not _filter_value(value):
                    raise invalid(
                        f"filters.{key}",
                        f'{key} takes a text or a number, or a list of them (e.g. {{"tld": [".fr", ".de"]}})',
                    )
            secret, name = body.get("secret"), body.get("name")
            if secret is not None and not isinstance(secret, str):
                raise invalid("secret", "the secret is a text, which signs each delivery")
            if name is not None and not isinstance(name, str):
                raise invalid("name", "the name is a text of 1 to 80 characters")
            try:
                created = register_webhook(
                    Mirror(self.mirror.path), body.get("url", ""), filters, secret=secret, name=name
                )
            except ValueError as exc:
                field, _, message = str(exc).partition(": ")
                raise invalid(field if message else "url", message or str(exc)) from None
            return _json(201, {"data": created})

        return await self._keyed(request, call)

    async def openapi(self, request: Request) -> Response:
        return _json(200, build_openapi(_base_url(request)), CORS)

    async def home(self, request: Request) -> Response:
        return HTMLResponse(_home_page(build_openapi(_base_url(request)), self.limits))


def _filter_value(value: Any) -> bool:
    """A webhook filter's value as a query would give it: a text, a number, or a list of them."""
    if isinstance(value, list):
        return all(isinstance(v, (str, int, float)) for v in value)
    return isinstance(value, (str, int, float))


# -- export encodings: bounded chunks, constant memory ---------------------------------------


def _primed(rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """`rows` with its first row read now (in the request's own call, where an error is still
    an answer), closed with it."""
    first = next(rows, None)

    def all_rows() -> Iterator[dict[str, Any]]:
        try:
            if first is not None:
                yield first
                yield from rows
        finally:
            close = getattr(rows, "close", None)
            if close:
                close()

    return all_rows()


def _ndjson_chunks(rows: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    parts: list[str] = []
    size = 0
    try:
        for row in rows:
            line = json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n"
            parts.append(line)
            size += len(line)
            if size >= _CHUNK:
                yield "".join(parts).encode("utf-8")
                parts, size = [], 0
        if parts:
            yield "".join(parts).encode("utf-8")
    except Exception as exc:
        if damage_in(exc) is None:  # a damaged file is logged once, in one line, by the guard
            log.exception("export stream failed")
        raise  # the connection is cut: a client never mistakes a truncated export for a whole one
    finally:
        close = getattr(rows, "close", None)
        if close:
            close()


def _csv_chunks(rows: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    from ..query import LISTING_EXPORT

    return csv_chunks(rows, list(LISTING_EXPORT), chunk_bytes=_CHUNK)


# -- the home page ----------------------------------------------------------------------------


def _home_page(document: dict[str, Any], limits: Mapping[str, int]) -> str:
    esc = html.escape
    rows = []
    for path, item in document["paths"].items():
        op = item["get"]
        names = ", ".join(esc(p["name"]) for p in op.get("parameters", []) if p["in"] == "query") or "-"
        link = f'<a href="{esc(path)}">{esc(path)}</a>' if path == "/api/free/domains" else esc(path)  # no key needed
        rows.append(
            f"<tr><td><code>GET {link}</code></td><td>{esc(op['summary'])}</td><td><details><summary>"
            f"{len(op.get('parameters', []))} parameters</summary><small>{names}</small></details></td></tr>"
        )
    plan_rows = []
    for plan in PLANS:
        unlocks = [CAPABILITIES[c] for c, lowest in REQUIREMENTS.items() if lowest == plan]
        plan_rows.append(
            f"<tr><td><code>{esc(plan)}</code></td><td>{limits[plan]}</td>"
            f"<td>{esc('; '.join(unlocks)) or '-'}</td></tr>"
        )
    base = document["servers"][0]["url"].rstrip("/")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Expired Domains Toolkit: local API</title>
<style>body{{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}}
td{{padding:.2rem .6rem;vertical-align:top;border-bottom:1px solid #ddd}}code{{font-size:.95em}}</style></head>
<body><h1>Expired Domains Toolkit: local API</h1>
<p>This mirror, served as the live service's REST API. The OpenAPI document:
<a href="/openapi.json">/openapi.json</a> (load it in any OpenAPI viewer or client generator).</p>
<p>Keys: <code>Authorization: Bearer &lt;KEY&gt;</code>.</p>
<table>{"".join(rows)}</table>
<p><code>curl -H "Authorization: Bearer $KEY" "{esc(base)}/api/domains?tld=.fr&amp;tf_min=20"</code></p>
<h2 id="plans">Plans and keys</h2>
<p>Each key has a plan, given by whoever runs this mirror (<code>edt serve --key KEY=PLAN</code>);
a plan includes everything the plans above it unlock. A request beyond the key's plan is a 403
<code>plan_required</code> naming the plan it needs: ask the mirror's operator for a key of that plan.</p>
<table><tr><th>plan</th><th>requests per minute</th><th>unlocks</th></tr>{"".join(plan_rows)}</table>
<p>Free: no key, {limits["free"]} requests a minute per client address on <code>/api/free/domains</code>.</p>
<h2 id="cursor">The after_id cursor</h2>
<p>{esc(DOMAIN_PARAMS["after_id"].description)} Each answer carries a <code>cursor</code> object; pass its
<code>next_after_id</code> back as <code>after_id</code> while <code>has_more</code> is true. The cursor never
returns regfree rows: <code>after_id</code> with <code>source=regfree</code> is a 403
<code>cursor_not_available</code>; page through regfree with <code>page</code>/<code>per_page</code>.</p>
</body></html>"""


# -- safety net -----------------------------------------------------------------------------------


class _Guard:
    """Outermost: a trailing slash is ignored; anything unexpected becomes a JSON 400, never a trace."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path") or "/"
        if len(path) > 1 and path.endswith("/"):
            scope = {**scope, "path": path.rstrip("/") or "/"}
        started = False

        async def guarded(message: MutableMapping[str, Any]) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, guarded)
        except Exception as exc:
            if damage_in(exc) is not None:  # a damaged mirror met outside a route's own answer (a stream)
                mirror = getattr(
                    getattr(scope.get("app"), "state", None), "mirror", None
                )  # Starlette sets scope["app"]
                answer = _damaged(getattr(mirror, "path", "the mirror"), str(scope.get("path")), exc)
                if not started:
                    await answer(scope, receive, send)
                return  # a stream already started is cut short (its client sees it incomplete), no traceback
            if started:
                raise
            log.exception("unexpected error on %s %s", scope.get("method"), scope.get("path"))
            await _json(400, BAD_REQUEST)(scope, receive, send)


async def _not_found(request: Request, exc: Exception) -> Response:
    return _json(404, {"message": "Not found."})


async def _http_error(request: Request, exc: Exception) -> Response:
    status = getattr(exc, "status_code", 400)
    if status == 404:
        return _json(404, {"message": "Not found."})
    if status == 405:
        allow = (getattr(exc, "headers", None) or {}).get("Allow") or "GET, HEAD"
        return _json(405, {"message": f"Method not allowed: this route answers {allow}."}, {"Allow": allow})
    return _json(status if 400 <= status < 500 else 400, {"message": getattr(exc, "detail", None) or "Bad request."})


# -- the app ------------------------------------------------------------------------------------


def create_app(
    db_path: str | os.PathLike[str] | Mirror,
    keys: Mapping[str, str] | KeyStore | None = None,
    rates: Mapping[str, int] | None = None,
    *,
    clock: Callable[[], datetime] | None = None,
    rate_clock: Callable[[], float] | None = None,
) -> Starlette:
    """The ASGI app over the mirror at `db_path` (opened read-only; it must exist).

    `keys`: {KEY: PLAN} or a `KeyStore`. `rates`: requests per minute per plan overriding
    the plans' own (`free` also limits the free endpoint per client address); overrides
    are logged. `clock` is the mirror's clock (tests freeze it), `rate_clock` the rate
    limiter's (seconds, monotonic).
    """
    if isinstance(db_path, Mirror):
        mirror = db_path
    else:
        # A long-lived reader: a write elsewhere (a sync) makes it rebuild the columnar index
        # in the background, answering through SQLite meanwhile.
        mirror = Mirror(db_path, readonly=True, clock=clock, engine=os.environ.get("EDT_ENGINE") or "background")
    store = keys if isinstance(keys, KeyStore) else KeyStore(keys or {})
    limits = effective_limits(rates)
    for plan, value in (rates or {}).items():
        log.warning("rate limit overridden: %s %s requests/minute", plan, value)
    limiter = SlidingWindow(clock=rate_clock) if rate_clock else SlidingWindow()
    api = _Api(mirror, store, limits, limiter)
    routes = [
        Route("/", api.home, methods=["GET"]),
        Route("/openapi.json", api.openapi, methods=["GET"]),
        Route("/api/domains", api.domains, methods=["GET"]),
        Route("/api/domains/{id}", api.domain, methods=["GET"]),
        Route("/api/pending-delete", api.pending, methods=["GET"]),
        Route("/api/pending-delete/{domain}", api.pending_domain, methods=["GET"]),
        Route("/api/free/domains", api.free, methods=["GET", "OPTIONS"]),
        Route("/api/export", api.export, methods=["GET"]),
        Route("/api/results", api.results, methods=["GET"]),
        Route("/api/webhooks", api.webhooks, methods=["POST"]),
        *_mcp_routes(api),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(_Guard)],
        exception_handlers={404: _not_found, HTTPException: _http_error},
    )
    app.router.redirect_slashes = False
    app.state.mirror = mirror
    app.state.keys = store
    app.state.limits = limits
    return app


class _LazyAsgi:
    """An ASGI app built on its first request (so `mcp` is imported only when MCP is used)."""

    def __init__(self, build: Callable[[], ASGIApp]):
        self._build = build
        self._app: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._app is None:
            try:
                self._app = await run_in_threadpool(self._build)
            except ImportError as exc:  # an mcp the toolkit cannot use (e.g. 1.x)
                log.error("MCP unavailable: %s", exc)
                body = {"message": "MCP needs mcp>=2.3: pip install 'expired-domains-toolkit[mcp]'."}
                await _json(501, body)(scope, receive, send)
                return
        await _errors_as_json(self._app, scope, receive, send)


async def _errors_as_json(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> None:
    """`app` with each error it answers in plain text (the MCP transports' "Invalid session ID")
    answered as the API's JSON `{"message": ...}`; everything else passed on as sent."""
    held: dict[str, Any] = {}  # an error's start, until its body is whole
    body = bytearray()

    async def sending(message: MutableMapping[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = {k.lower(): v for k, v in message.get("headers", [])}
            if message["status"] >= 400 and b"json" not in headers.get(b"content-type", b""):
                held.update(message)
                return
        elif held and message["type"] == "http.response.body":
            body.extend(message.get("body", b""))
            if message.get("more_body"):
                return
            text = body.decode("utf-8", "replace").strip() or "The request could not be processed."
            payload = json.dumps({"message": text}).encode()
            kept = [(k, v) for k, v in held.get("headers", []) if k.lower() not in (b"content-type", b"content-length")]
            kept += [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
            await send({**held, "headers": kept})
            await send({"type": "http.response.body", "body": payload})
            return
        await send(message)

    await app(scope, receive, sending)


# MCP paths: ours, then the live service's (its server card's) for the same endpoint
# (`toolkit.serve.mcp_server.MCP_PATH`, `MCP_FREE_PATH`, `MCP_ALIASES`; not imported: that imports mcp).
MCP_PATHS = {
    False: ("/mcp/expired-domains", "/mcp/catchdoms"),
    True: ("/mcp/expired-domains/free", "/mcp/catchdoms/free"),
}


def _mcp_routes(api: _Api) -> list[Route]:
    """MCP (`toolkit.serve.mcp_server`: streamable HTTP and legacy SSE) at /mcp/expired-domains (the
    bearer key decides the plan, as on the REST routes) and /mcp/expired-domains/free (no key),
    and the same endpoints at the live service's /mcp/catchdoms and /mcp/catchdoms/free, when
    the optional `mcp` package is installed."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return []

    def endpoint(free: bool) -> Callable[[], ASGIApp]:
        def build() -> ASGIApp:
            from .mcp_server import http_endpoint

            return http_endpoint(api.mirror, keys=api.keys, limits=api.limits, limiter=api.limiter, free=free)

        return build

    routes = []
    for free, paths in MCP_PATHS.items():
        app = _LazyAsgi(endpoint(free))  # one endpoint (its servers, its SSE sessions) on every path
        routes += [Route(path, app) for path in paths]
    return routes


# -- running it -----------------------------------------------------------------------------------


def is_loopback(host: str) -> bool:
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def startup_lines(db: str, host: str, port: int, keys: KeyStore, rates: Mapping[str, int] | None) -> list[str]:
    """What `edt serve` says before it starts: where, who may reach it, keys and limits."""
    shown = f"[{host}]" if ":" in host else host
    lines = [f"edt serve: {db} (read-only) at http://{shown}:{port}/  (OpenAPI: /openapi.json)"]
    if is_loopback(host):
        lines.append(f"Bound to {host}: only this machine can connect (use --host 0.0.0.0 to share on the network).")
    else:
        lines.append(
            f"Bound to {host}: other machines can connect. Plain HTTP: keys travel unencrypted, "
            "put a TLS proxy in front for anything beyond a trusted network."
        )
        if not len(keys):
            lines.append(
                "WARNING: bound beyond loopback with no keys: anyone who can reach this port gets "
                "/api/free/domains; every keyed endpoint answers 401. Add --key KEY=PLAN or --keys-file."
            )
    if len(keys):
        lines.append(
            "Keys: " + ", ".join(f"{n} {plan}" for plan, n in keys.plans().items()) + " (held as SHA-256 digests)."
        )
    elif is_loopback(host):
        lines.append("No keys: every keyed endpoint answers 401. Add --key KEY=PLAN or --keys-file PATH.")
    limits = effective_limits(rates)
    described = []
    for plan in PLANS:
        text = f"{plan} {limits[plan]}"
        if rates and plan in rates:
            text += " (OVERRIDDEN by --rate)"
        elif plan == "enterprise":
            text += f" (configurable: default {ENTERPRISE_DEFAULT}, set with --rate enterprise=N)"
        described.append(text)
    lines.append(
        "Requests per minute per key: " + ", ".join(described) + "; free also per address on /api/free/domains."
    )
    return lines


def serve(
    db_path: str,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    keys: Mapping[str, str] | KeyStore | None = None,
    rates: Mapping[str, int] | None = None,
    log_level: str = "info",
    echo: Callable[[str], None] | None = None,
) -> None:
    """Run the app with uvicorn until interrupted (one process: the rate limits live in it)."""
    import uvicorn

    store = keys if isinstance(keys, KeyStore) else KeyStore(keys or {})
    app = create_app(db_path, store, rates)
    say = echo or (lambda line: print(line, file=sys.stderr, flush=True))
    for line in startup_lines(str(db_path), host, port, store, rates):
        say(line)
    uvicorn.run(
        app,
        host=host,
        port=port,
        log_level=log_level,
        proxy_headers=False,  # X-Forwarded-For from a client must not dodge the per-address limit
        server_header=False,
        access_log=True,  # path and query only, never headers
        log_config=log_config(),  # each line one line, a key in a query left out
    )


class BackgroundServer:
    """An ASGI app served by uvicorn on a free loopback port in a daemon thread (tests, the
    sync benchmark): `with BackgroundServer(app) as server: ... server.url ...`."""

    def __init__(self, app: Any, host: str = "127.0.0.1"):
        import socket
        import threading

        import uvicorn

        with socket.socket() as probe:
            probe.bind((host, 0))
            self.port = probe.getsockname()[1]
        self.host = host
        config = uvicorn.Config(app, host=host, port=self.port, log_level="warning", access_log=False)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="edt-background-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def __enter__(self) -> "BackgroundServer":
        import time

        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError(f"the server did not start on {self.url}")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=10)
