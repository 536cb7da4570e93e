"""The enrichment cache: one answer per (kind, domain) in the mirror's `enrich_cache` table
(declared in `toolkit.store.schema`), used instead of a request while it is younger than the
kind's maximum age. Failures are never cached."""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import Any

import httpx

from ..store.fields import utc_seconds
from ..store.schema import ENRICH_CACHE_TABLE as CACHE_TABLE
from .rdap import Bootstrap, RdapDomain, rdap_lookup

__all__ = ["CACHE_TABLE", "cache_get", "cache_put", "cached_rdap"]


def cache_get(
    conn: sqlite3.Connection, kind: str, domain: str, *, now: datetime, max_age: timedelta
) -> tuple[str, str, Any] | None:
    """(fetched_at, outcome, value) of a fresh entry, or None (missing or older than max_age)."""
    row = conn.execute(
        f"SELECT fetched_at, outcome, value FROM {CACHE_TABLE} WHERE kind = ? AND domain = ?", (kind, domain)
    ).fetchone()
    if not row:
        return None
    fetched = datetime.fromisoformat(row[0].replace("Z", "+00:00"))
    if now - fetched >= max_age:
        return None
    return row[0], row[1], json.loads(row[2]) if row[2] else None


def cache_put(conn: sqlite3.Connection, kind: str, domain: str, *, fetched_at: str, outcome: str, value: Any) -> None:
    """Stored at once (its own transaction): an answer fetched is never fetched again
    because the run stopped before its batch was written."""
    with conn:
        conn.execute(
            f"INSERT INTO {CACHE_TABLE} (kind, domain, fetched_at, outcome, value) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(kind, domain) DO UPDATE SET fetched_at = excluded.fetched_at, outcome = excluded.outcome, "
            "value = excluded.value",
            (kind, domain, fetched_at, outcome, json.dumps(value, separators=(",", ":"))),
        )


def cached_rdap(
    conn: sqlite3.Connection,
    client: httpx.Client,
    bootstrap: Bootstrap,
    domain: str,
    *,
    now: datetime,
    max_age: timedelta,
) -> tuple[str, RdapDomain, bool]:
    """(checked_at, the answer, whether it was fetched now) for `domain`: from the cache when
    fresh, else from the registry (and cached). Raises NoRdapService before any request for
    a TLD without RDAP, RdapError or an httpx error when the lookup fails."""
    bootstrap.entry_for(domain)
    cached = cache_get(conn, "rdap", domain, now=now, max_age=max_age)
    if cached:
        return cached[0], RdapDomain.from_json(cached[2]), False
    answer = rdap_lookup(client, bootstrap, domain)
    checked_at = utc_seconds(now)
    cache_put(
        conn,
        "rdap",
        domain,
        fetched_at=checked_at,
        outcome="available" if answer.available else "ok",
        value=answer.to_json(),
    )
    return checked_at, answer, True
