"""The alert outbox's rows (`alert_outbox`): what every kind of alert queues, delivered by
`toolkit.sync.alerts.deliver_alerts` to the log, the alerts file and the webhook."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["MATCH_FIELDS", "outbox_add"]

# The fields of each row an alert tells (the columns of the alerts file, as CSV).
MATCH_FIELDS = [
    "id",
    "name",
    "source",
    "type",
    "effective_price",
    "currency",
    "auction_end_date",
    "score",
    "trust_flow",
    "citation_flow",
    "purchase_url",
    "first_seen_at",
]


def outbox_add(conn: Any, search: str, payload: dict[str, Any], now: str, *, logged: bool = False) -> None:
    """One outbox row (in the caller's transaction, which also records what it tells, so it
    is queued exactly once). `payload["matches"]` are the rows a file gets, keyed as
    `MATCH_FIELDS`; `payload["event"]` names the event (`new_domains`, `name_stage`, `name_listed`).
    `logged`: the row counts as said in the log at `now` (an alert of a past run, replayed)."""
    conn.execute(
        "INSERT INTO alert_outbox (search, created_at, matches, payload, attempts, logged_at) "
        "VALUES (?, ?, ?, ?, 0, ?)",
        [
            search,
            now,
            len(payload["matches"]),
            json.dumps(payload, ensure_ascii=False, sort_keys=True),
            now if logged else None,
        ],
    )
