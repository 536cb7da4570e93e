"""What the REST replica (`server.py`) and the MCP endpoints (`mcp_server.py`) share: the
bearer key of a request, the client's address, and JSON answers."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

__all__ = ["bearer_key", "client_address", "dumps", "json_response"]


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


def client_address(request: Request) -> str:
    """The client's IP address as the socket saw it (the free tier's limit is per address)."""
    return request.client.host if request.client else "unknown"
