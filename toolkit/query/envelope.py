"""The envelope every paged answer comes in: data, links, meta (docs/reference/semantics.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

__all__ = ["envelope", "query_string"]


def query_string(raw: Mapping[str, Any] | None, **overrides: Any) -> str:
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


def envelope(data: list, *, total: int, page: int, per_page: int, url: str, raw: Mapping[str, Any] | None) -> dict:
    last_page = max(1, math.ceil(total / per_page))
    offset = (page - 1) * per_page

    def link(n: int) -> str:
        return f"{url}?{query_string(raw, page=n)}"

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
