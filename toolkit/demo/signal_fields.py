"""The demo's judging signals: spammy names, archive content, metric histories.

Each draws from its own random stream (seeded by the demo's seed and the chunk), so the
fields the demo made before these signals existed stay exactly as they were.

- `spam_names`: most listings the demo marks `is_spammy` (links without trust) get a name
  holding a spam word of the built-in dictionary (`casinobonus.com`, `cheappills.net`);
- `archive_columns`: the archive signals `edt enrich` computes from CDX rows
  (`toolkit.signals.wayback_content`), for rows with Wayback figures: years archived out of the
  span, the longest gap, redirect share, parked pages (more often on parking nameservers)
  and the continuity score by the same formula;
- `metric_history_states`: earlier observations of some listings' metrics, so
  `listing_history` shows metric curves: an organic drift for most of them, and a sharp
  rise just before the auction end (the inflation scam) for a few live auctions.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import Any

import numpy as np

from ..signals.wayback_content import ARCHIVE_FIELDS, parking_service
from .clock import iso

__all__ = ["SPAM_WORDS", "spam_names", "archive_columns", "metric_history_states"]

DAY = 86_400
# Spam words the demo puts in names (all in the built-in dictionary).
SPAM_WORDS = (
    "casino",
    "poker",
    "betting",
    "pills",
    "viagra",
    "payday",
    "loans",
    "replica",
    "escort",
    "porn",
    "xxx",
    "slots",
    "torrent",
    "essay",
)
_SPAM_NAME_SHARE = 0.7
INFLATED_SHARE = 0.06  # of live auctions with Trust Flow >= 15 ending within 25 days
ORGANIC_SHARE = 0.12  # of other enriched platform listings older than two days


def spam_names(
    names: list[str], parts: list[list[str]], spam: list[bool], fixed: set[int], seed: int, chunk: int
) -> None:
    """Put a spam word in the names of most spam rows (in place); rows in `fixed` keep
    theirs (their earlier states were written under it)."""
    rnd = random.Random(seed * 7919 + chunk * 31 + 18)
    for i, is_spam in enumerate(spam):
        if not is_spam or i in fixed or rnd.random() >= _SPAM_NAME_SHARE:
            continue
        label, dot, suffix = names[i].partition(".")
        word = rnd.choice(SPAM_WORDS)
        head = parts[i][0] if parts[i] else label
        names[i] = (f"{word}{head}" if rnd.random() < 0.5 else f"{head}{word}") + dot + suffix
        parts[i] = [word, head]


def archive_columns(
    rng: np.random.Generator,
    first_ord: np.ndarray,
    last_ord: np.ndarray,
    authority: np.ndarray,
    has_wb: np.ndarray,
    nameservers: list[Any],
) -> dict[str, list[Any]]:
    """The six archive columns (None where `has_wb` is False)."""
    n = len(first_ord)
    first_year = _years(first_ord)
    last_year = _years(last_ord)
    span = np.maximum(last_year - first_year + 1, 1)
    coverage = np.clip(0.62 + 0.16 * authority + rng.normal(0, 0.2, n), 0.08, 1.0)
    years = np.clip(np.round(span * coverage), np.minimum(span, 2), span).astype(np.int64)
    missing = span - years
    gap = np.where(missing > 0, np.ceil(missing * rng.uniform(0.25, 1.0, n)), 0).astype(np.int64)
    redirect = np.where(rng.random(n) < 0.08, rng.uniform(0.55, 1.0, n), rng.beta(0.7, 7.0, n))
    services: dict[tuple[str, ...], str | None] = {}  # few distinct nameserver sets: look each up once
    for ns in nameservers:
        key = tuple(ns or ())
        if key not in services:
            services[key] = parking_service(key)
    service_of = [services[tuple(ns or ())] for ns in nameservers]
    on_parking = np.array([s is not None for s in service_of], dtype=bool)
    parked_digest = rng.random(n) < np.where(on_parking, 0.55, 0.05)
    parked_share = np.where(parked_digest, rng.uniform(0.8, 1.0, n), 0.0)
    content_years = np.round(years * (1 - redirect * rng.uniform(0.5, 1.0, n)))
    continuity = np.round(100 * content_years / span * (1 - parked_share)).astype(np.int64)
    captures = np.maximum(10, (rng.exponential(60, n) + 10).astype(np.int64))
    out: dict[str, list[Any]] = {k: [None] * n for k in ARCHIVE_FIELDS}
    first_years, last_years = first_year.tolist(), last_year.tolist()
    for i in np.flatnonzero(has_wb).tolist():
        reasons = []
        service = service_of[i]
        if service:
            reasons.append(f"nameservers at {service}")
        if parked_digest[i]:
            total = int(captures[i])
            same = max(10, int(round(total * parked_share[i])))
            start = max(first_years[i], last_years[i] - int(rng.integers(1, 6)))
            digest = "".join(rng.choice(list("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"), 8))
            reasons.append(
                f"the same page (digest {digest}) in {same} of {total} captures from {start} to {last_years[i]}"
            )
        out["archive_years"][i] = int(years[i])
        out["archive_longest_gap"][i] = int(gap[i])
        out["archive_redirect_share"][i] = round(float(redirect[i]), 3)
        out["archive_parked"][i] = int(bool(reasons))
        out["archive_parked_reason"][i] = "; ".join(reasons) or None
        out["archive_continuity"][i] = int(continuity[i])
    return out


def _years(ordinals: np.ndarray) -> np.ndarray:
    """Calendar years of proleptic Gregorian ordinals (`date.toordinal()`)."""
    days = np.asarray(ordinals, dtype=np.int64) - 719_163  # 1970-01-01
    return days.astype("datetime64[D]").astype("datetime64[Y]").astype(np.int64) + 1970


def metric_history_states(
    records: list[dict[str, Any]], skip: set[int], anchor: int, seed: int, chunk: int
) -> list[tuple[str, list[dict[str, Any]]]]:
    """Earlier states of some listings of one chunk (their metrics as first seen), grouped
    by the daily 07:00 fetch that saw them: [(observed_at, records)] oldest first. `skip`:
    ids whose earlier states are written elsewhere (the bid history)."""
    rnd = random.Random(seed * 104_729 + chunk * 17 + 18)
    by_time: dict[int, list[dict[str, Any]]] = {}
    for record in records:
        if record["id"] in skip or record["source"] == "regfree" or record["trust_flow"] is None:
            continue
        created = _seconds(record["created_at"])
        end = _seconds(record["auction_end_date"]) if record["auction_end_date"] else None
        live_auction = record["type"] == "auction" and end is not None and anchor < end < anchor + 25 * DAY
        inflate = live_auction and record["trust_flow"] >= 15 and rnd.random() < INFLATED_SHARE
        if not inflate and (created > anchor - 2 * DAY or rnd.random() >= ORGANIC_SHARE):
            continue
        horizon = min(anchor, end) if end else anchor
        days = [d for d in range(1, 61) if created < anchor - d * DAY < horizon]
        if not days:
            continue
        chosen = sorted(rnd.sample(days, min(len(days), rnd.randint(1, 3))), reverse=True)  # oldest first
        for step, d in enumerate(chosen):
            earlier: dict[str, Any] = dict(record)
            share = (step + 1) / (len(chosen) + 1)  # later states are closer to today's values
            for metric, points in (("trust_flow", 3), ("citation_flow", 4), ("domain_authority", 2)):
                value = record[metric]
                if value is not None:
                    earlier[metric] = max(0, value - round(rnd.randint(0, points) * (1 - share)))
            for metric, drift in (("referring_domains", 0.12), ("backlinks_count", 0.2)):
                value = record[metric]
                if value is not None:
                    earlier[metric] = int(round(value * (1 - rnd.uniform(0, drift) * (1 - share))))
            if inflate:  # metrics bought just before the sale: low until the last days
                earlier["trust_flow"] = round(record["trust_flow"] * rnd.uniform(0.15, 0.45))
                if record["domain_authority"] is not None and rnd.random() < 0.5:
                    earlier["domain_authority"] = round(record["domain_authority"] * rnd.uniform(0.2, 0.5))
                if record["referring_domains"] is not None and rnd.random() < 0.5:
                    earlier["referring_domains"] = round(record["referring_domains"] * rnd.uniform(0.1, 0.4))
            earlier["updated_at"] = iso(anchor - d * DAY)
            by_time.setdefault(anchor - d * DAY, []).append(earlier)
    return [(iso(t), by_time[t]) for t in sorted(by_time)]


def _seconds(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())
