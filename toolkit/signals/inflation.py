"""Metrics inflated just before an auction ends: a known scam, flagged from the listing's
own history.

`listing_history` records every change of `trust_flow`, `citation_flow`,
`domain_authority`, `referring_domains` and `backlinks_count` (with the price fields). A
listing's metrics *jumped* when one of them rose sharply within `JUMP_WINDOW_DAYS` days
before its auction end (the last observation for a listing without an end):

- the window is (end - 30 days, end]; observations after the end are not read;
- the baseline is the last value observed at or before the window's start, else the
  first value observed (a listing first seen inside the window);
- the peak is the highest value observed inside the window, after the baseline;
- the rise is sharp when `peak - baseline >= points` and `peak >= baseline * ratio`
  (`RISE_THRESHOLDS`: 10 points and x1.5 for TF, CF and DA; x2 and +20 referring domains;
  x2 and +200 backlinks). Null values are not observations: a metric that appears
  (null -> 25, a first enrichment) never counts as a rise.

When several metrics jumped, the reason names the one that rose most past its threshold.
`flag_metric_jumps(conn, ids)` writes `metrics_jumped` (0/1) and `metrics_jump` (the
reason: metric, from, to, rise, when) on the listings.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

__all__ = ["JUMP_WINDOW_DAYS", "METRICS", "RISE_THRESHOLDS", "Rise", "Jump", "metric_jump", "flag_metric_jumps"]

JUMP_WINDOW_DAYS = 30
METRICS = ("trust_flow", "citation_flow", "domain_authority", "referring_domains", "backlinks_count")


@dataclass(frozen=True)
class Rise:
    points: int  # at least this many more
    ratio: float  # and at least this many times the baseline


RISE_THRESHOLDS: dict[str, Rise] = {
    "trust_flow": Rise(10, 1.5),
    "citation_flow": Rise(10, 1.5),
    "domain_authority": Rise(10, 1.5),
    "referring_domains": Rise(20, 2.0),
    "backlinks_count": Rise(200, 2.0),
}


@dataclass(frozen=True)
class Jump:
    metric: str
    before: int  # the baseline
    after: int  # the peak inside the window
    rise: int
    before_at: str  # when each was observed (UTC ISO 8601)
    after_at: str

    def reason(self) -> str:
        return (
            f"{self.metric.replace('_', ' ')} rose from {self.before} to {self.after} (+{self.rise}) between "
            f"{self.before_at[:10]} and {self.after_at[:10]}, within {JUMP_WINDOW_DAYS} days of the auction end"
        )

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def metric_jump(observations: Sequence[tuple[str, dict[str, Any]]], auction_end: str | None) -> Jump | None:
    """The sharpest rise of one listing's metrics (see the module's rules), None when none.
    `observations`: (observed_at, {metric: value}) pairs, any order."""
    ordered = sorted(observations, key=lambda o: o[0])
    if auction_end:
        end = _moment(auction_end)
        ordered = [o for o in ordered if _moment(o[0]) <= end]
    if len(ordered) < 2:
        return None
    end = _moment(auction_end) if auction_end else _moment(ordered[-1][0])
    start = end - timedelta(days=JUMP_WINDOW_DAYS)
    best: tuple[float, Jump] | None = None
    for metric in METRICS:
        seen = [(at, values[metric]) for at, values in ordered if values.get(metric) is not None]
        if len(seen) < 2:
            continue
        before = [s for s in seen if _moment(s[0]) <= start]
        base_at, base = before[-1] if before else seen[0]
        inside = [s for s in seen if _moment(s[0]) > start and s[0] > base_at]
        if not inside:
            continue
        peak_at, peak = max(inside, key=lambda s: (s[1], s[0]))
        threshold = RISE_THRESHOLDS[metric]
        rise = peak - base
        if rise >= threshold.points and peak >= base * threshold.ratio:
            strength = rise / threshold.points
            jump = Jump(metric, int(base), int(peak), int(rise), base_at, peak_at)
            if best is None or strength > best[0]:
                best = (strength, jump)
    return best[1] if best else None


def flag_metric_jumps(conn: sqlite3.Connection, ids: Iterable[int] | None = None) -> int:
    """Re-compute `metrics_jumped` / `metrics_jump` of the listings `ids` (all listings with
    at least two metric observations when None), inside the caller's transaction. Returns
    how many are flagged now."""
    columns = ", ".join(METRICS)
    has_metric = " OR ".join(f"{m} IS NOT NULL" for m in METRICS)
    if ids is None:
        chosen = [
            r[0]
            for r in conn.execute(
                f"SELECT listing_id FROM listing_history WHERE {has_metric} GROUP BY listing_id HAVING count(*) >= 2"
            )
        ]
    else:
        chosen = list(dict.fromkeys(ids))
    flagged = 0
    for start in range(0, len(chosen), 500):
        chunk = chosen[start : start + 500]
        marks = ",".join("?" * len(chunk))
        ends = dict(conn.execute(f"SELECT id, auction_end_date FROM listings WHERE id IN ({marks})", chunk).fetchall())
        history: dict[int, list[tuple[str, dict[str, Any]]]] = {}
        for row in conn.execute(
            f"SELECT listing_id, observed_at, {columns} FROM listing_history "
            f"WHERE listing_id IN ({marks}) AND ({has_metric})",
            chunk,
        ):
            history.setdefault(row[0], []).append((row[1], dict(zip(METRICS, row[2:]))))
        updates = []
        for listing_id in chunk:
            if listing_id not in ends:
                continue
            jump = metric_jump(history.get(listing_id, []), ends[listing_id])
            if jump:
                flagged += 1
            updates.append(
                (
                    int(jump is not None),
                    json.dumps({**jump.to_json(), "reason": jump.reason()}) if jump else None,
                    listing_id,
                )
            )
        conn.executemany("UPDATE listings SET metrics_jumped = ?, metrics_jump = ? WHERE id = ?", updates)
    return flagged
