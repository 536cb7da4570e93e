"""The demo's clock: its "now" is 07:00 UTC on its day (after the morning fetch of every
platform), and every moment it writes is a whole second in UTC.

    anchor_of(date(2026, 1, 14))     # 2026-01-14 07:00 UTC
    demo_day()                       # the day a demo loaded now is of
    iso(seconds)                     # "2026-01-14T07:00:00Z"
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache

__all__ = ["ANCHOR_HOUR", "DAY", "HOUR", "EPOCH_ORDINAL", "anchor_of", "demo_day", "demo_today", "iso", "month_back"]

ANCHOR_HOUR = 7  # the demo's "now": this hour UTC, after the morning fetch of every platform
DAY = 86_400
HOUR = 3_600
EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def anchor_of(today: date) -> datetime:
    """The demo's "now": 07:00 UTC on `today`, after the morning fetch of every platform."""
    return datetime.combine(today, time(ANCHOR_HOUR, 0), tzinfo=timezone.utc)


def demo_day(now: datetime | None = None) -> date:
    """The day a demo loaded at `now` (the clock) is of: the last day whose 07:00 UTC fetch has
    happened (before 07:00 UTC, yesterday), so no demo row is stamped later than the clock."""
    return ((now or datetime.now(timezone.utc)) - timedelta(hours=ANCHOR_HOUR)).date()


def demo_today(today: date | datetime | None, now: datetime | None = None) -> date:
    """The demo's day: `today` (a datetime's UTC day), else `demo_day(now)`."""
    if today is None:
        return demo_day(now)
    if isinstance(today, datetime):
        return (today.astimezone(timezone.utc) if today.tzinfo else today).date()
    return today


@lru_cache(maxsize=1 << 16)  # most rows of a run share its moment
def iso(seconds: int) -> str:
    """Epoch seconds as the writer's `YYYY-MM-DDTHH:MM:SSZ` (UTC)."""
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def month_back(today: date, k: int) -> tuple[int, int]:
    """(year, month) `k` months before `today`'s."""
    month = today.year * 12 + today.month - 1 - k
    return month // 12, month % 12 + 1
