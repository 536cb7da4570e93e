"""What the REST replica (`server.py`) and the MCP endpoints (`mcp_server.py`) share: the
bearer key of a request, the client's address, and JSON answers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..errors import unauthenticated

__all__ = ["bearer_key", "client_address", "dumps", "json_response", "unauthenticated_body"]


def dumps(body: Any) -> bytes:
    """A JSON body as the replica sends it: UTF-8, compact, never NaN."""
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def json_response(status: int, body: Any, headers: Mapping[str, str] | None = None) -> Response:
    return Response(dumps(body), status_code=status, headers=dict(headers or {}), media_type="application/json")


def bearer_key(request: Request) -> str | None:
    """The key of `Authorization: Bearer <KEY>` (the only scheme the API reads), else None."""
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    token = token.strip()
    try:  # headers arrive as latin-1; keys are UTF-8 text
        token = token.encode("latin-1").decode("utf-8")
    except UnicodeError:
        pass
    return token or None


# Where clients often put a key that this server does not read (the 401 says to move it).
KEY_QUERY_PARAMETERS = ("api_key", "apikey", "key")
KEY_HEADERS = ("X-API-Key",)
SEND_AS = "Authorization: Bearer KEY"


def unauthenticated_body(request: Request) -> dict[str, Any]:
    """The 401's body for `request` (no key, or one this server does not know): the
    reference's `{"message": ...}`, saying to send the key as `Authorization: Bearer KEY`,
    and, when the request carried one where it is not read (an `api_key`, `apikey` or `key`
    query parameter, an `X-API-Key` header), naming that place. Never the key itself."""
    if bearer_key(request) is not None:
        return unauthenticated(f"The key sent as {SEND_AS} is not one this server knows.").body
    names = {name.lower(): name for name in request.query_params}
    misplaced = [f"the {names[p]} query parameter" for p in KEY_QUERY_PARAMETERS if p in names]
    misplaced += [f"the {h} header" for h in KEY_HEADERS if request.headers.get(h)]
    if misplaced:
        where = " and ".join(misplaced)
        return unauthenticated(f"A key in {where} is not read: send it in the header {SEND_AS} instead.").body
    return unauthenticated(f"Send your API key in the header {SEND_AS}.").body


def client_address(request: Request) -> str:
    """The client's IP address as the socket saw it (the free tier's limit is per address)."""
    return request.client.host if request.client else "unknown"
