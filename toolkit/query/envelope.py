"""The envelope every paged answer comes in: data, links, meta (docs/reference/semantics.md)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

__all__ = ["envelope", "page_offset", "query_string"]


def query_string(raw: Mapping[str, Any] | None, **overrides: Any) -> str:
    pairs = []
    for key, value in (raw or {}).items():
        if key in overrides or value is None:
            continue
        if isinstance(value, (list, tuple, set)):  # a repeated name: its values once each, blanks left out
            value = ",".join(dict.fromkeys(str(v).strip() for v in value if v is not None and str(v).strip()))
        elif isinstance(value, bool):
            value = int(value)
        pairs.append((key, str(value)))
    pairs += [(k, str(v)) for k, v in overrides.items() if v is not None]
    return urlencode(pairs)


_MAX_OFFSET = 1 << 62  # a page past every row: SQLite's integers stop at 2**63


def page_offset(page: int, per_page: int) -> int:
    """The rows before `page`: any page a request may name (18 digits) past the last is empty."""
    return min((page - 1) * per_page, _MAX_OFFSET)


def envelope(data: list, *, total: int, page: int, per_page: int, url: str, raw: Mapping[str, Any] | None) -> dict:
    last_page = max(1, math.ceil(total / per_page))
    offset = page_offset(page, per_page)

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
