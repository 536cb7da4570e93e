"""What is said beside a price range: the last appraisal's summary, kept in the mirror, and how
often its ranges held ("80% range, right 82% of the time on 1,390 sales since 18 Nov"), read by
the app, the CLI and the scheduled appraisal (analysis/appraise.py writes the summary)."""

from __future__ import annotations

import json
from datetime import date
from typing import Any

__all__ = ["coverage_note", "live_coverage_note", "value_model"]


def value_model(mirror: Any) -> dict[str, Any] | None:
    """The last `appraise`'s summary (its backtest's coverage with it), or None."""
    row = mirror.connection().execute("SELECT value FROM mirror_meta WHERE key = 'value_model'").fetchone()
    return json.loads(row[0]) if row else None


def coverage_note(summary: dict[str, Any] | None) -> str | None:
    """ "80% range, right 82% of the time on 1,390 sales since 18 Nov" (None before a backtest)."""
    measured = (summary or {}).get("backtest")
    if not measured:
        return None
    since = date.fromisoformat(measured["until"][:10])
    return (
        f"80% range, right {measured['coverage']:.0%} of the time on {measured['auctions']:,} sales since "
        f"{since.day} {since:%b}"
    )


def live_coverage_note(summary: dict[str, Any] | None) -> str | None:
    """ "80% range given the bidding, right 81% of the time on 96 auctions a day before their end"
    (None before a backtest that could read the live estimate)."""
    live = ((summary or {}).get("backtest") or {}).get("live")
    if not live or live.get("coverage") is None:
        return None
    return (
        f"80% range given the bidding, right {live['coverage']:.0%} of the time on {live['auctions']:,} auctions "
        "a day before their end"
    )
