"""The MCP server: the live service's five tools over the query layer (docs/guides/mcp.md).

Tools named and shaped as the live server card: `search_domains`,
`search_pending_delete_domains`, `get_domain`, `list_filters`, `get_stats`; after them the
toolkit's extension `search_auction_results` (what the auctions the mirror saw end sold for:
`GET /api/results`), on the keyed endpoint only. Built with the official SDK (`mcp` >= 2.3,
the optional extra `expired-domains-toolkit[mcp]`).

`Mirror` does the work and decides every rule; the tools (`mcp_tools.py`) only adapt, and this
module serves them.

    from toolkit.serve.mcp_server import build_server
    server = build_server("data/mirror.db", plan="authority")   # an mcp MCPServer
    server.run("stdio")                                           # what `edt mcp` does

Transports: stdio (`edt mcp`, `run_stdio`), and streamable HTTP and the legacy HTTP+SSE
transport (`http_endpoint`, which `toolkit.serve.server.create_app` mounts at `/mcp/expired-domains`,
where the bearer key decides the plan, and `/mcp/expired-domains/free`, no key, the free
endpoint's semantics; and at the live service's paths for them, `/mcp/catchdoms` and
`/mcp/catchdoms/free`). `get_domain` also takes the live service's argument names
`domain_id` and `domain_name`.
"""

from __future__ import annotations

import contextvars
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.mcpserver import MCPServer
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from ..errors import ApiError
from ..plans import PLAN_LABELS, normalize_plan
from ..query import Mirror
from .web import bearer_key, client_address, json_response, unauthenticated_body
from .mcp_tools import (
    COMPACT_FIELDS,
    EXTENSION_TOOLS,
    GET_DOMAIN_ALIASES,
    MAX_RESULT_WINDOW,
    TOO_MANY,
    TOOL_NAMES,
    Tools,
    tool_specs,
)

__all__ = [
    "build_server",
    "run_stdio",
    "http_endpoint",
    "HttpEndpoint",
    "TOOL_NAMES",
    "EXTENSION_TOOLS",
    "COMPACT_FIELDS",
    "MAX_RESULT_WINDOW",
    "MCP_PATH",
    "MCP_FREE_PATH",
    "MCP_ALIASES",
    "GET_DOMAIN_ALIASES",
]

MCP_PATH = "/mcp/expired-domains"
MCP_FREE_PATH = MCP_PATH + "/free"
# The live service's paths (its server card and public configs), served as the same endpoints.
MCP_ALIASES = {MCP_PATH: "/mcp/catchdoms", MCP_FREE_PATH: "/mcp/catchdoms/free"}


# -- the server ---------------------------------------------------------------------------------------


@contextmanager
def _no_logging_setup() -> Iterator[None]:
    """MCPServer() calls logging.basicConfig: keep the host's logging as it is configured."""
    root = logging.getLogger()
    placeholder = logging.NullHandler() if not root.handlers else None
    if placeholder is not None:
        root.addHandler(placeholder)
    try:
        yield
    finally:
        if placeholder is not None:
            root.removeHandler(placeholder)


def build_server(
    mirror_or_path: Mirror | str | os.PathLike[str],
    plan: str | None = None,
    *,
    free: bool = False,
    before_call: Callable[[str], None] | None = None,
) -> MCPServer:
    """The MCP server (an `mcp` `MCPServer`) over a mirror, answering as `plan`.

    `mirror_or_path`: a `Mirror`, or the path of a mirror (opened read-only; it must exist).
    `plan`: default the mirror's (`EDT_PLAN`, else the top plan: it is your own mirror); the
    tools refuse what the plan may not see with the REST API's 403.
    `free`: the free endpoint instead (plan `free`; `search_domains` as `/api/free/domains`:
    its filters, at most 50 results, names past the first 3 masked, premium metrics omitted).
    `before_call(tool_name)` runs before every tool call and may raise `ApiError` (the HTTP
    transport counts calls against the caller's rate limit there).
    """
    mirror = mirror_or_path if isinstance(mirror_or_path, Mirror) else Mirror(mirror_or_path, readonly=True)
    chosen = "free" if free else normalize_plan(plan or mirror.plan)
    tools = Tools(mirror, chosen, free, before_call)
    scope = "the free tier" if free else f"the {PLAN_LABELS[chosen]} plan"
    instructions = (
        "A local mirror of expired-domain listings (auctions, closeouts, backorders from 20+ platforms), the "
        f"deleted-ccTLD database (regfree) and the pending-delete inventory, answering as {scope}. "
        "Start with list_filters (what exists, with counts) or get_stats; search with search_domains "
        "(fields=compact for shortlists), then get_domain for one listing's details. Prices are in each "
        "source's own currency (the record's currency field). Errors are the REST API's messages."
    )
    with _no_logging_setup():
        server = MCPServer(
            name="expired-domains-toolkit" + ("-free" if free else ""),
            title="Expired Domains Toolkit" + (" (free tier)" if free else ""),
            description="Search expired, auction, deleted-ccTLD and pending-delete domains of a local mirror "
            "with SEO metrics, quality scores, traffic estimates and auction prices.",
            instructions=instructions,
            version=_version(),
            tools=[spec.tool(tools.wrap) for spec in tool_specs(tools)],
            log_level="WARNING",
        )
    return server


def _version() -> str:
    from .. import __version__

    return __version__


def run_stdio(mirror_or_path: Mirror | str | os.PathLike[str], plan: str | None = None) -> None:
    """Serve the mirror over standard input and output until the client closes them (`edt mcp`).

    Nothing but protocol is written to stdout (the SDK's logs go to stderr)."""
    build_server(mirror_or_path, plan).run("stdio")


# -- streamable HTTP ---------------------------------------------------------------------------------

# (rate-limit bucket, requests per minute) of the HTTP caller whose request is being served.
_CALLER: contextvars.ContextVar[tuple[str, int] | None] = contextvars.ContextVar("edt_mcp_caller", default=None)


def _lowlevel(server: MCPServer) -> Any:
    # The SDK's own in-memory transport and Client reach the low-level server this way too.
    return getattr(server, "lowlevel_server", None) or server._lowlevel_server  # noqa: SLF001


class HttpEndpoint:
    """One MCP endpoint over HTTP (ASGI), over the REST replica's keys and rate limiter.

    Keyed (`free=False`): `Authorization: Bearer KEY` is looked up in the same `KeyStore` as
    the REST routes; no or an unknown key answers the REST routes' 401 (`{"message":
    "Unauthenticated. ..."}`, saying where the key goes: `web.unauthenticated_body`); the
    key's plan decides what the tools answer. Free: no key, plan `free` (the free endpoint's
    search). Every tool call counts as one request against the key's (free: the client
    address's) per-minute limit; past it the call is a tool error "Too Many Attempts.".

    Two transports on the one path:
    - Streamable HTTP, stateless, JSON responses: each POST is served by a fresh session
      manager, so it needs no lifespan (uvicorn, Starlette's TestClient and an in-process ASGI
      transport all serve it) and no session outlives its request. A streamable-HTTP client's
      GET (it carries `Mcp-Session-Id` or `MCP-Protocol-Version`) and DELETE answer 405: no
      standalone stream, no session to end, as that transport's specification allows.
    - The legacy HTTP+SSE transport (older configs' `"transport": "sse"`): a GET that accepts
      `text/event-stream` opens the stream, whose `endpoint` event names this same path with a
      `session_id`; the client POSTs its messages there. The session answers as the key that
      opened it, counts against that key's limit, and takes messages only with that key.
    """

    def __init__(
        self,
        mirror: Mirror,
        *,
        keys: Any = None,
        limits: Mapping[str, int] | None = None,
        limiter: Any = None,
        free: bool = False,
    ):
        self.mirror = mirror
        self.keys = keys
        self.limits = dict(limits or {})
        self.limiter = limiter
        self.free = free
        self._servers: dict[str, MCPServer] = {}
        self._sse: dict[str, SseServerTransport] = {}  # per path (the endpoint event names the path)
        self._lock = threading.Lock()

    def server(self, plan: str) -> MCPServer:
        """The MCP server answering as `plan` (built on first use, then kept)."""
        with self._lock:
            if plan not in self._servers:
                self._servers[plan] = build_server(self.mirror, plan, free=self.free, before_call=self._count)
            return self._servers[plan]

    def _sse_transport(self, path: str) -> SseServerTransport:
        with self._lock:
            if path not in self._sse:
                self._sse[path] = SseServerTransport(path)
            return self._sse[path]

    def _count(self, tool: str) -> None:
        caller = _CALLER.get()
        if caller is None or self.limiter is None:
            return
        bucket, limit = caller
        if not self.limiter.hit(bucket, limit).allowed:
            raise ApiError(429, dict(TOO_MANY))

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from starlette.concurrency import run_in_threadpool
        from starlette.requests import Request

        if scope["type"] != "http":
            return
        request = Request(scope, receive)
        if self.free:
            plan, bucket = "free", "addr:" + client_address(request)
        else:
            identity = self.keys.lookup(bearer_key(request)) if self.keys is not None else None
            if identity is None:
                await json_response(401, unauthenticated_body(request))(scope, receive, send)
                return
            plan, bucket = identity.plan, identity.bucket
            # The SSE transport binds a session to the credential that opened it (not the key itself).
            scope = {**scope, "user": AuthenticatedUser(AccessToken(token=bucket, client_id=bucket, scopes=[]))}
        method, path = request.method, scope["path"]
        # Tool calls run in the context of the request that carries them (an SSE session's
        # messages too: the SDK's streams pass the POST's context along), so they count here.
        token = _CALLER.set((bucket, self.limits.get(plan, 60)))
        try:
            if method == "POST" and "session_id" in request.query_params:  # a message of an SSE session
                await self._sse_transport(path).handle_post_message(scope, receive, send)
            elif method == "GET" and _opens_sse(request):
                lowlevel = _lowlevel(await run_in_threadpool(self.server, plan))
                async with self._sse_transport(path).connect_sse(scope, receive, send) as (read, write):
                    await lowlevel.run(read, write, lowlevel.create_initialization_options())
            elif method == "POST":
                server = await run_in_threadpool(self.server, plan)
                manager = StreamableHTTPSessionManager(_lowlevel(server), json_response=True, stateless=True)
                async with manager.run():
                    await manager.handle_request(scope, receive, send)
            else:
                await json_response(405, _NOT_ALLOWED, {"Allow": "GET, POST"})(scope, receive, send)
        finally:
            _CALLER.reset(token)


_NOT_ALLOWED = {
    "message": 'Method not allowed. Streamable HTTP (set your client\'s transport to "http" / '
    '"streamable-http"): POST here; this endpoint is stateless, so it has no standalone stream (GET) and no '
    'session to end (DELETE). Legacy SSE ("transport": "sse"): GET here with Accept: text/event-stream.'
}


def _opens_sse(request: Any) -> bool:
    """A legacy SSE client's GET: it accepts an event stream and carries no streamable-HTTP
    session or protocol header (a streamable-HTTP client's GET asks for its standalone stream)."""
    headers = request.headers
    if any(name in headers for name in ("mcp-session-id", "mcp-protocol-version", "last-event-id")):
        return False
    return "text/event-stream" in headers.get("accept", "").lower()


def http_endpoint(
    mirror: Mirror,
    *,
    keys: Any = None,
    limits: Mapping[str, int] | None = None,
    limiter: Any = None,
    free: bool = False,
) -> HttpEndpoint:
    """The ASGI app `toolkit.serve.server.create_app` mounts at `MCP_PATH` (`free=False`) and
    `MCP_FREE_PATH` (`free=True`), and at their `MCP_ALIASES`."""
    return HttpEndpoint(mirror, keys=keys, limits=limits, limiter=limiter, free=free)
