"""The demo source through time: `edt demo --days N` lives the N days ending today.

The demo's world is planned once for the whole window (`plan_world`): every platform
listing that is live at some moment of it, with when it appeared, when it leaves its source
(an auction's end, a closeout sold or withdrawn), its price, the bids it will have, when
they come, and what an unsold auction becomes; the pending-delete names of every weekly
batch, with their drop dates and what happened at the drop; the deleted-ccTLD database's
monthly batches. `run_days` then plays the service's schedules (`toolkit.sync.schedule`'s cron
lines: bids every 4 hours, new listings every morning, pending-delete on Mondays, regfree
on the 1st) from the first morning to today's, and at each run writes what a sync at that
moment would have seen, through the writer the sync uses, observed at that moment:

- listings: the new ones since the last run; once a week a full pass, which writes every
  live listing that changed (a closeout's price cut, re-measured metrics), notes the others
  as seen, and closes those that left their source (`close_listings`), as `edt sync` does;
- bids: every auction whose bids changed since the last run;
- pending: the week's inventory; names no longer in it are removed;
- regfree: the month's batch (new rows, the dropped names that reached the database);
  rows registered since are closed.

What the demo made happen is kept as its truth in `raw_records` (kind `demo_truth`): the
listings whose metrics it made jump before their end, and what became of each pending name
at its drop, so a test can score the toolkit's readers against it. Parameters:
`catalog.TIMELAPSE`.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

import numpy as np

from ..ingest.lifecycle import predict_drop_window
from ..signals.fx import to_eur
from ..store.schema import LISTING_COLUMNS
from ..store.writer import close_listings, listing_row, listing_values, save_listings, save_pending
from .catalog import PENDING_TLDS, PLATFORMS, REGFREE_TLDS, TIMELAPSE, langs_for
from .generate import (
    CHUNK,
    DAY,
    HOUR,
    SCALES,
    ListingPlan,
    Scale,
    TldCodes,
    _REGFREE_INDEX,
    _TYPE,
    _choose_langs,
    _choose_themes,
    _listing_chunk,
    _month_back,
    _round_price,
    _status_mix,
    allocate,
    anchor_of,
    pending_records,
)
from .name_maker import NameMaker
from .words import THEMES

__all__ = [
    "World",
    "State",
    "Player",
    "plan_world",
    "run_days",
    "state_at",
    "bids_at",
    "sync_moments",
    "searches_and_runs",
    "DEMO_SEARCHES",
    "DEMO_SEARCH_PREFIX",
    "played_runs",
]

_ID_BASE = 38_400_000
_PENDING_ID_BASE = 1_874_000
_WEEK = 7 * DAY
_DELAYED = next(i for i, p in enumerate(PLATFORMS) if p.slug == TIMELAPSE.delayed_platform)
JUMP_MIN_TF = 15  # a jump is planned on auctions whose final Trust Flow reaches this
_METRICS = ("trust_flow", "citation_flow", "domain_authority", "referring_domains", "backlinks_count")
# Saved searches the time-lapse demo makes (on its first day, or the day asked), so the
# watchlist and the alert outbox have something to show.
DEMO_SEARCH_PREFIX = "demo: "
DEMO_SEARCHES = {
    "demo: .fr with Trust Flow 15+": {"tld": ".fr", "tf_min": "15"},
    "demo: auctions with bids, score 40+": {"type": "auction", "has_bids": "1", "score_min": "40"},
    "demo: short .com under 100": {"tld": ".com", "length_max": "8", "price_max": "100"},
}


@dataclass
class World:
    """Every listing and pending-delete name the window will see, and how each one lives."""

    plan: ListingPlan  # the listings in id (= created) order; plan.end: -1 for no auction end
    first: int  # the first sync (seconds): 07:00 UTC on the window's first day
    last: int  # today's 07:00 UTC
    gone: np.ndarray  # when each listing leaves its source (seconds)
    price0: np.ndarray  # its first price
    gamma: np.ndarray  # how late its bids come
    relist: np.ndarray  # the row of the listing it becomes when unsold, else -1
    drift: np.ndarray  # how much its metrics move over its life (share)
    jump_at: np.ndarray  # when its metrics jump (seconds), else -1
    cuts: np.ndarray  # closeouts whose seller cuts the price every week
    pending: list[dict[str, Any]] = field(default_factory=list)  # every pending record, in listed order
    pending_listed: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pending_leaves: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    pending_outcome: list[str] = field(default_factory=list)  # regfree | re-registered | still pending
    regfree_from: dict[int, int] = field(default_factory=dict)  # listing row -> pending index

    def present(self, t: int) -> np.ndarray:
        """Rows live on their source at `t`."""
        return (self.plan.created <= t) & (t < self.gone)


def _mondays(first: date, last: date) -> list[date]:
    monday = first - timedelta(days=first.weekday())
    out = []
    while monday <= last:
        out.append(monday)
        monday += timedelta(days=7)
    return out


def sync_moments(first: int, last: int) -> list[tuple[int, str]]:
    """The runs of `edt schedule`'s default cron lines (UTC) from `first` to `last` (both
    included), oldest first, as (seconds, job): what a mirror synced on schedule saw."""
    from ..sync.schedule import DEFAULT_SCHEDULES, _trigger

    out = []
    start = datetime.fromtimestamp(first, tz=timezone.utc)
    end = datetime.fromtimestamp(last, tz=timezone.utc)
    for job, cron in DEFAULT_SCHEDULES.items():
        trigger = _trigger(cron, timezone.utc)
        moment = trigger.get_next_fire_time(None, start - timedelta(seconds=1))
        while moment is not None and moment <= end:
            out.append((int(moment.timestamp()), job))
            moment = trigger.get_next_fire_time(moment, moment + timedelta(seconds=1))
    out = [item for item in out if item[0] != first] + [(first, job) for job in ("regfree", "pending", "listings")]
    order = {"regfree": 0, "pending": 1, "listings": 2, "bids": 3}  # the first sync runs every dataset's job
    return sorted(out, key=lambda item: (item[0], order[item[1]]))


def played_runs(meta: Mapping[str, str]) -> dict[str, tuple[int, datetime]]:
    """What a time-lapse demo lived (its notes in `mirror_meta`: `demo_today`, `demo_days`):
    each sync job's runs over its window and the last one, {job: (runs, last)}; empty for a
    demo of one day."""
    if not meta.get("demo_days") or not meta.get("demo_today"):
        return {}
    today = date.fromisoformat(meta["demo_today"])
    first = int(anchor_of(today - timedelta(days=int(meta["demo_days"]))).timestamp())
    played: dict[str, tuple[int, datetime]] = {}
    for moment, job in sync_moments(first, int(anchor_of(today).timestamp())):
        runs, _ = played.get(job, (0, None))
        played[job] = (runs + 1, datetime.fromtimestamp(moment, tz=timezone.utc))
    return played


def searches_and_runs(today: date, days: int, searches_day: int = 1) -> tuple[datetime, list[tuple[str, str]]]:
    """When the time-lapse's saved searches are saved (right after the morning sync of day
    `searches_day`, 0 being the first) and the scheduled runs after it, as (ISO moment, job):
    what `toolkit.sync.alerts.replay_alerts` replays."""
    if not 0 <= searches_day <= days:
        raise ValueError(f"searches_day must be from 0 to {days} (got {searches_day})")
    first = int(anchor_of(today - timedelta(days=days)).timestamp())
    saved = first + searches_day * DAY
    runs = [(_iso(t), job) for t, job in sync_moments(first, int(anchor_of(today).timestamp())) if t > saved]
    return datetime.fromtimestamp(saved, tz=timezone.utc), runs


# -- planning the window ----------------------------------------------------------------------


def _pending_world(
    sc: Scale, seed: int, first_day: date, today: date, anchor: int
) -> tuple[list[dict], np.ndarray, np.ndarray]:
    """Weekly cohorts of pending-delete names: each seen in a pre-drop status in the week
    before the Monday batch that first lists it, listed until the first batch after its drop."""
    rng = np.random.default_rng([seed, 41])
    rnd = random.Random(seed * 1_000_003 + 606_061)
    namer = NameMaker(rnd)
    weeks = TIMELAPSE.pending_weeks_listed
    mondays = _mondays(first_day - timedelta(days=7 * weeks), today)
    tld_names = [t for t, _ in PENDING_TLDS]
    tld_weights = np.array([w for _, w in PENDING_TLDS])
    per_week = max(1, sc.pending // weeks)
    prepared, listed, drops = [], [], []
    for monday in mondays:
        picked = rng.choice(len(tld_names), per_week, p=tld_weights / tld_weights.sum())
        for index in picked.tolist():
            tld = tld_names[index]
            statuses, shares, stage = _status_mix(tld)
            status = statuses[int(rng.choice(len(statuses), p=shares / shares.sum()))]
            evidence = monday.toordinal() - rnd.randint(1, 7)
            window, _ = predict_drop_window(tld, status, date.fromordinal(evidence), date.fromordinal(evidence - 1))
            drop = window.estimate.toordinal() if window else evidence + rnd.randint(5, 45)
            if drop <= monday.toordinal():
                continue  # dropped before a batch could list it
            mix = langs_for("." + tld)
            lang_key = rnd.choices([k for k, _ in mix], [w for _, w in mix])[0]
            theme = THEMES[rnd.randrange(len(THEMES))]
            seen = (evidence - date(1970, 1, 1).toordinal()) * DAY + rnd.randint(0, DAY - 1)
            batch = int(datetime(monday.year, monday.month, monday.day, 8, tzinfo=timezone.utc).timestamp())
            prepared.append((tld, status, evidence, seen, lang_key, theme, monday.toordinal(), batch - HOUR))
            listed.append(batch)
            drops.append((drop + 1 - date(1970, 1, 1).toordinal()) * DAY)  # past once its drop day is over
    ids = (_PENDING_ID_BASE + np.cumsum(rng.geometric(0.8, len(prepared)))).tolist()
    records: list[dict] = []
    for chunk, start in enumerate(range(0, len(prepared), CHUNK)):
        stop = min(len(prepared), start + CHUNK)
        records += pending_records(
            prepared[start:stop], ids[start:stop], seed + 7_919, chunk, today, anchor, rnd, namer
        )
    return records, np.array(listed, dtype=np.int64), np.array(drops, dtype=np.int64)


def plan_world(scale: str | Scale, seed: int, first_day: date, today: date) -> World:
    """Every listing live at some moment from `first_day` 07:00 to `today` 07:00 UTC, and
    every pending-delete name listed meanwhile, with their lives (see the module)."""
    sc = SCALES[scale] if isinstance(scale, str) else scale
    tl = TIMELAPSE
    rng = np.random.default_rng([seed, 31])
    first, last = int(anchor_of(first_day).timestamp()), int(anchor_of(today).timestamp())
    counts = allocate([p.full for p in PLATFORMS], sc.listings, 1)
    per_day = tl.new_per_day * sc.listings / SCALES["full"].listings
    # Each kind's flow of new listings is its share of the day's total, by how many of its
    # listings a moment holds over how long a listing of its kind stays; its listings then
    # stay the catalogue's count over that flow, so a moment holds the catalogue's volumes.
    kinds = []
    for si, platform in enumerate(PLATFORMS):
        kw = np.array([k.weight for k in platform.kinds])
        for ki, spec in enumerate(platform.kinds):
            held = counts[si] * kw[ki] / kw.sum()
            lo, hi = spec.duration
            base = 15.0 if spec.type == "backorder" else (lo + hi) / 2 if spec.ends else min(lo + (hi - lo) / 3, hi)
            kinds.append((si, ki, spec, held, held / max(base, 0.5)))
    total_share = sum(k[4] for k in kinds)
    tld_id = TldCodes()
    tlds = tld_id.names

    parts: list[dict[str, np.ndarray]] = []
    for si, ki, spec, held, share in kinds:
        flow = per_day * share / total_share
        if held <= 0 or flow <= 0:
            continue
        life = held / flow  # days
        span_start = first - int(min(tl.warmup_days, 4 * life) * DAY)
        n = int(rng.poisson(flow * (last - span_start) / DAY))
        if n == 0:
            continue
        platform = PLATFORMS[si]
        created = rng.integers(span_start, last, n)
        created = (created // DAY) * DAY + 5 * HOUR + rng.integers(0, 2 * HOUR, n)  # the platform's morning feed
        if si == _DELAYED:
            created += int(tl.delay_hours * HOUR)
        if spec.ends:
            end = created + (life * rng.uniform(0.6, 1.4, n) * DAY).astype(np.int64)
            end = (end // 60) * 60
            gone = end
        else:
            end = np.full(n, -1, dtype=np.int64)
            gone = created + (rng.exponential(life, n) * DAY).astype(np.int64) + HOUR
        keep = gone > first
        created, end, gone = created[keep], end[keep], gone[keep]
        n = created.shape[0]
        names = [t for t, _ in platform.tlds]
        tw = np.array([w for _, w in platform.tlds])
        picked = rng.choice(len(names), n, p=tw / tw.sum())
        if spec.price[0] == "fixed":
            price = np.full(n, float(spec.price[1]))
        else:
            _, median, sigma, low, high = spec.price
            price = _round_price(np.clip(median * np.exp(sigma * rng.standard_normal(n)), low, high), platform.rounding)
        bids = np.full(n, -1, dtype=np.int64)
        top = np.full(n, np.nan)
        if spec.type in ("auction", "backorder"):
            has = rng.random(n) < min(0.9, spec.bid_share * tl.bids_at_end_factor)
            count = np.clip(np.ceil(np.exp(rng.normal(1.5, 0.9, n))), 1, 350).astype(np.int64)
            growth = 0.12 * count**1.3 * np.exp(rng.normal(0, 0.5, n))
            step = np.maximum(1.0, np.round(price * 0.05))
            bids = np.where(has, count, 0)
            top = np.where(has, np.maximum(np.round(price * (1 + growth)), price + step), np.nan)
        parts.append(
            {
                "src": np.full(n, si, dtype=np.int16),
                "kind": np.full(n, ki, dtype=np.int8),
                "tld": np.array([tld_id(t) for t in names], dtype=np.int16)[picked],
                "lang": _choose_langs(rng, names, picked),
                "theme": _choose_themes(rng, n, platform.themes),
                "brandable": rng.random(n) < platform.brandable,
                "created": created,
                "end": end,
                "gone": gone,
                "price": price,
                "bids": bids,
                "max_bid": top,
            }
        )

    # The deleted-ccTLD database: a batch on the 1st of each month (a year back), and in the
    # window the dropped pending names that reached it.
    pending, pending_listed, pending_drops = _pending_world(sc, seed, first_day, today, last)
    reg_names = [t for t, _ in REGFREE_TLDS]
    reg_counts = allocate([w for _, w in REGFREE_TLDS], sc.regfree, 1)
    n = sum(reg_counts)
    picked = np.repeat(np.arange(len(reg_names)), reg_counts)
    months_back = rng.choice(12, n, p=(w := 0.85 ** np.arange(12)) / w.sum())
    first_of_month = np.array(
        [int(datetime(*_month_back(first_day, k), 1, tzinfo=timezone.utc).timestamp()) for k in range(12)]
    )
    created = np.minimum(first_of_month[months_back] + 3 * HOUR + rng.integers(0, 3 * HOUR, n), first - HOUR)
    taken = created + (rng.exponential(30 / tl.regfree_taken_per_month, n) * DAY).astype(np.int64)
    keep = taken > first
    reg_rows = {"tld": picked[keep], "created": created[keep], "gone": taken[keep]}
    refreshes = [m for m in _month_starts(first_day, today)]
    reg_set = {t.lstrip(".") for t in reg_names}
    outcome = ["still pending"] * len(pending)
    extra_tld, extra_created, extra_from = [], [], []
    for index, record in enumerate(pending):
        drop = int(pending_drops[index])
        if drop >= last:
            continue
        if record["tld"] in reg_set and rng.random() < tl.dropped_to_regfree:
            refresh = next((r for r in refreshes if r > drop), None)
            outcome[index] = "regfree" if refresh is not None else "regfree at the next refresh"
            if refresh is not None:
                extra_tld.append(reg_names.index("." + record["tld"]))
                extra_created.append(
                    refresh - 4 * HOUR - 1800 + int(rng.integers(0, 3 * HOUR))
                )  # 03:00-06:00 on the 1st
                extra_from.append(index)
        else:
            outcome[index] = "re-registered"
    reg_tld = np.concatenate([reg_rows["tld"], np.array(extra_tld, dtype=np.int64)])
    reg_created = np.concatenate([reg_rows["created"], np.array(extra_created, dtype=np.int64)])
    reg_gone = np.concatenate(
        [
            reg_rows["gone"],
            np.array(extra_created, dtype=np.int64)
            + (rng.exponential(30 / tl.regfree_taken_per_month, len(extra_created)) * DAY).astype(np.int64),
        ]
    )
    m = reg_tld.shape[0]
    parts.append(
        {
            "src": np.full(m, _REGFREE_INDEX, dtype=np.int16),
            "kind": np.zeros(m, dtype=np.int8),
            "tld": np.array([tld_id(t) for t in reg_names], dtype=np.int16)[reg_tld],
            "lang": _choose_langs(rng, reg_names, reg_tld),
            "theme": _choose_themes(rng, m, ()),
            "brandable": np.zeros(m, dtype=bool),
            "created": reg_created,
            "end": np.full(m, -1, dtype=np.int64),
            "gone": reg_gone,
            "price": np.full(m, np.nan),
            "bids": np.full(m, -1, dtype=np.int64),
            "max_bid": np.full(m, np.nan),
            "from_pending": np.concatenate(
                [np.full(reg_rows["tld"].shape[0], -1), np.array(extra_from, dtype=np.int64)]
            ),
        }
    )
    for part in parts:
        part.setdefault("from_pending", np.full(part["src"].shape[0], -1, dtype=np.int64))

    cols = {key: np.concatenate([p[key] for p in parts]) for key in parts[0]}
    # Unsold auctions come back: a closeout on the same platform, or a listing on another.
    cols = _relistings(rng, cols)
    total = cols["src"].shape[0]
    order = np.lexsort((rng.random(total), cols["created"]))
    cols = {key: value[order] for key, value in cols.items()}
    position = np.empty(total, dtype=np.int64)
    position[order] = np.arange(total)
    relist = np.where(cols["relist"] >= 0, position[np.maximum(cols["relist"], 0)], -1)
    ids = _ID_BASE + np.cumsum(rng.geometric(0.75, total)).astype(np.int64)
    plan = ListingPlan(
        today=today,
        anchor=last,
        tlds=tlds,
        ids=ids,
        history=np.zeros(total, dtype=bool),
        **{
            k: cols[k]
            for k in ("src", "kind", "tld", "lang", "theme", "brandable", "created", "end", "price", "bids", "max_bid")
        },
    )
    plan.namer = NameMaker(random.Random(seed * 1_000_003 + 999_983))
    regfree_from = {}
    for row in np.flatnonzero(cols["from_pending"] >= 0).tolist():
        record = pending[int(cols["from_pending"][row])]
        regfree_from[row] = int(cols["from_pending"][row])
        plan.names[row] = (record["domain"], [record["domain"].rpartition("." + record["tld"])[0]])
    # Metrics bought just before the sale: on auctions with bids, a few days before the end,
    # when the 4-hourly bids runs read them (the rise is seen, as a real one would be).
    gamma = rng.uniform(*tl.bid_timing, total)
    lead = (rng.uniform(*tl.jump_days_before_end, total) * DAY).astype(np.int64)
    moment = plan.end - lead
    chosen = (_TYPE[plan.src, plan.kind] == "auction") & (plan.bids > 0) & (rng.random(total) < tl.jump_share)
    chosen &= (moment > first) & (moment < last - 3 * HOUR) & (moment > plan.created + DAY)  # a bids run sees it
    chosen &= bids_at(plan.created, plan.end, plan.bids, gamma, moment) > 0
    jump_at = np.where(chosen, moment, -1)
    return World(
        plan=plan,
        first=first,
        last=last,
        gone=cols["gone"],
        price0=cols["price"].copy(),
        gamma=gamma,
        relist=relist,
        drift=np.where(rng.random(total) < tl.drifting_share, rng.uniform(0, tl.metric_drift, total), 0.0),
        cuts=rng.random(total) < tl.cutting_share,
        jump_at=jump_at,
        pending=pending,
        pending_listed=pending_listed,
        pending_leaves=np.array([_next_monday_batch(int(d)) for d in pending_drops.tolist()], dtype=np.int64),
        pending_outcome=outcome,
        regfree_from=regfree_from,
    )


def _month_starts(first_day: date, today: date) -> list[int]:
    """07:30 UTC on each 1st of a month from `first_day` to `today`: the regfree runs."""
    out = []
    year, month = first_day.year, first_day.month
    while (year, month) <= (today.year, today.month):
        moment = int(datetime(year, month, 1, 7, 30, tzinfo=timezone.utc).timestamp())
        if first_day <= date(year, month, 1) <= today:
            out.append(moment)
        month += 1
        if month > 12:
            year, month = year + 1, 1
    return out


def _next_monday_batch(moment: int) -> int:
    """The first Monday 08:00 UTC batch after `moment`: the one that no longer lists it."""
    day = datetime.fromtimestamp(moment, tz=timezone.utc).date()
    monday = day + timedelta(days=(7 - day.weekday()) % 7 or 7)
    return int(datetime(monday.year, monday.month, monday.day, 8, tzinfo=timezone.utc).timestamp())


def _relistings(rng: np.random.Generator, cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Rows for what unsold auctions become (a closeout on the same platform, or a listing
    on another), with `relist`: the new row's index, on the original."""
    tl = TIMELAPSE
    total = cols["src"].shape[0]
    unsold = (_TYPE[cols["src"], cols["kind"]] == "auction") & (cols["bids"] == 0)
    draw = rng.random(total)
    to_closeout = unsold & (draw < tl.unsold_to_closeout)
    elsewhere = unsold & (draw >= tl.unsold_to_closeout) & (draw < tl.unsold_to_closeout + tl.unsold_elsewhere)
    rows = np.flatnonzero(to_closeout | elsewhere)
    new: dict[str, list] = {key: [] for key in cols}
    keep_rows = []
    for row in rows.tolist():
        si = int(cols["src"][row])
        if to_closeout[row]:
            kinds = [ki for ki, k in enumerate(PLATFORMS[si].kinds) if k.type == "closeout"]
            if not kinds:
                continue
            target, ki = si, kinds[0]
        else:
            choices = [j for j, p in enumerate(PLATFORMS) if j != si and any(k.type == "auction" for k in p.kinds)]
            target = choices[int(rng.integers(len(choices)))]
            ki = next(j for j, k in enumerate(PLATFORMS[target].kinds) if k.type == "auction")
        spec = PLATFORMS[target].kinds[ki]
        created = int(cols["gone"][row]) + int(rng.uniform(*tl.relist_after_days) * DAY)
        if spec.ends:
            lo, hi = spec.duration
            end = created + int(max(lo, 1) * DAY + rng.uniform(0, max(hi - lo, 0.5)) * DAY)
            end, gone = (end // 60) * 60, (end // 60) * 60
        else:
            end, gone = -1, created + int(rng.exponential(20) * DAY) + HOUR
        values = {
            "src": target,
            "kind": ki,
            "tld": cols["tld"][row],
            "lang": cols["lang"][row],
            "theme": cols["theme"][row],
            "brandable": cols["brandable"][row],
            "created": created,
            "end": end,
            "gone": gone,
            "price": float(cols["price"][row]) * (0.8 if target == si else 1.0),
            "bids": -1 if not spec.ends else 0,
            "max_bid": np.nan,
            "from_pending": -1,
        }
        for key in cols:
            if key != "relist":
                new[key].append(values[key])
        keep_rows.append(row)
    relist = np.full(total + len(keep_rows), -1, dtype=np.int64)
    relist[np.array(keep_rows, dtype=np.int64)] = total + np.arange(len(keep_rows))
    out = {key: np.concatenate([value, np.array(new[key], dtype=value.dtype)]) for key, value in cols.items()}
    out["relist"] = relist
    return out


# -- a listing's state at a moment ------------------------------------------------------------


def bids_at(
    created: np.ndarray, end: np.ndarray, final: np.ndarray, gamma: np.ndarray, t: int | np.ndarray
) -> np.ndarray:
    """Bids an auction shows at `t`: its final count times the elapsed share of its bidding
    time (up to the last bids run before its end) to the power `gamma` (bids come late)."""
    last = np.maximum((end - 1) // (4 * HOUR) * (4 * HOUR), created + 1)
    share = np.clip((t - created) / (last - created), 0.0, 1.0)
    return np.where(share >= 1.0, final, np.minimum(final, np.floor(final * share**gamma))).astype(np.int64)


@dataclass
class State:
    """What the source shows of some listings at a moment: the fields that change over a
    listing's life, one array per field (rows in the order asked)."""

    bids: np.ndarray  # -1: no bids field (not an auction)
    max_bid: np.ndarray  # NaN: none
    price: np.ndarray  # NaN: none (regfree)
    metrics: np.ndarray  # (rows, 5) in _METRICS order, -1: none

    def record(self, i: int) -> dict[str, Any]:
        """Row `i`'s fields as a record's."""
        out: dict[str, Any] = {m: (None if v < 0 else int(v)) for m, v in zip(_METRICS, self.metrics[i].tolist())}
        price = float(self.price[i])
        out["price"] = None if np.isnan(price) else price
        bids = int(self.bids[i])
        if bids >= 0:
            top = float(self.max_bid[i])
            out["bids_count"] = bids
            out["max_bid"] = None if np.isnan(top) else top
        return out


def state_at(world: World, finals: np.ndarray, rows: np.ndarray, t: int) -> State:
    """The source's view of `rows` at `t` (`finals`: every row's final metrics): bids and top
    bid (bids come late, the last before the final bids run); a closeout's price, cut every
    week; the metrics, re-measured weekly, nearer their final values week after week, low
    until a planned jump."""
    plan = world.plan
    created, end, gone = plan.created[rows], plan.end[rows], world.gone[rows]
    final_bids = plan.bids[rows]
    price0 = world.price0[rows]
    bids = np.where(final_bids >= 0, bids_at(created, end, np.maximum(final_bids, 0), world.gamma[rows], t), -1)
    top = plan.max_bid[rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.where(final_bids > 0, bids / np.maximum(final_bids, 1), 0.0)
        grown = np.maximum(np.round(price0 + (top - price0) * ratio**1.3), price0 + 1.0)
    max_bid = np.where(bids > 0, grown, np.nan)
    closeout = (end < 0) & (plan.src[rows] != _REGFREE_INDEX) & world.cuts[rows]
    steps = np.maximum(0, (t - created) // (TIMELAPSE.closeout_step_days * DAY))
    cut = np.maximum(TIMELAPSE.closeout_floor, TIMELAPSE.closeout_step**steps)
    price = np.where(closeout, np.round(price0 * cut, 2), price0)
    horizon = np.minimum(gone, world.last)
    weeks = np.maximum(1, (horizon - created) // _WEEK)
    share = world.drift[rows] * np.maximum(0, (horizon - t) // _WEEK) / weeks
    final = finals[rows]
    metrics = np.where(final >= 0, np.maximum(0, np.round(final * (1 - share[:, None]))), -1).astype(np.int64)
    jumped = (world.jump_at[rows] > 0) & (t < world.jump_at[rows]) & (final[:, 0] >= JUMP_MIN_TF)
    metrics[jumped, 0] = np.round(final[jumped, 0] * 0.3)
    low_rd = jumped & (final[:, 3] >= 0)
    metrics[low_rd, 3] = np.round(final[low_rd, 3] * 0.3)
    return State(bids=bids, max_bid=max_bid, price=price, metrics=metrics)


@lru_cache(maxsize=1 << 16)  # most rows of a run share its moment
def _iso(seconds: int) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# -- playing the window --------------------------------------------------------------------------


@dataclass
class _Made:
    """What the run keeps per listing: the records made but not yet written (their listing
    has not appeared yet), each listing's final metrics, and what its source showed when
    it was last written (to tell a change)."""

    finals: np.ndarray  # (rows, 5): final metrics, -1 for none
    bids: np.ndarray
    max_bid: np.ndarray
    price: np.ndarray
    metrics: np.ndarray
    waiting: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_chunk: int = 0

    @classmethod
    def sized(cls, rows: int) -> "_Made":
        return cls(
            finals=np.full((rows, len(_METRICS)), -1, dtype=np.int64),
            bids=np.full(rows, -2, dtype=np.int64),
            max_bid=np.full(rows, np.nan),
            price=np.full(rows, np.nan),
            metrics=np.full((rows, len(_METRICS)), -2, dtype=np.int64),
        )


def _next_chunk(world: World, made: _Made, seed: int) -> dict[int, dict[str, Any]]:
    """The records of the next chunk (chunks in id order), by row."""
    plan = world.plan
    chunk = made.next_chunk
    start, stop = chunk * CHUNK, min(len(plan), (chunk + 1) * CHUNK)
    out = {}
    for offset, record in enumerate(_listing_chunk(plan, start, stop, seed, chunk)):
        r = start + offset
        if record["source"] == "regfree":
            record.update(price=None, max_bid=None, effective_price=None, bids_count=None)
        out[r] = record
        made.finals[r] = [-1 if record[m] is None else record[m] for m in _METRICS]
        target = int(world.relist[r])
        if target >= 0:  # an unsold auction comes back under its own name
            plan.names[target] = (record["name"], [record["name"].partition(".")[0]])
    made.next_chunk += 1
    return out


def run_days(
    writer: Any, world: World, seed: int, *, origin: str, report: Callable[[str, int], None] | None = None
) -> dict[str, int]:
    """Play every scheduled run of the window into the mirror through `writer` (inside the
    caller's transaction), then keep the demo's truth; returns counts. `report(stage, done)`
    hears each simulated day (0: the first sync)."""
    player = Player(world, seed, origin=origin, report=report)
    counts = player.play_until(writer, world.last)
    player.keep_truth(writer)
    return counts


class Player:
    """Plays a world's scheduled runs into a mirror, run after run (`play_until`).

    As a mirror synced on schedule sees them (the default): the listings run writes the new
    listings, and once a week (the sync's full pass) every changed one, closing those gone;
    the bids run writes the auctions with a bid whose bids or metrics changed (new ones too);
    regfree and pending-delete runs their datasets. `source=True` plays the source itself
    (the remote of a replayed sync): at every run, every listing as it is then, those gone
    closed at once, so that a replica serving it at that moment answers what the service did."""

    def __init__(
        self,
        world: World,
        seed: int,
        *,
        origin: str,
        source: bool = False,
        report: Callable[[str, int], None] | None = None,
    ):
        # the sync's own rules: a full listings pass when the last is older than this, else the
        # listings added from the day before the newest it had
        from ..sync.run import FULL_PASS_EVERY, INCREMENTAL_OVERLAP

        self.overlap = int(INCREMENTAL_OVERLAP.total_seconds())

        self.world, self.seed, self.origin, self.source = world, seed, origin, source
        self.say = report or (lambda stage, done: None)
        self.full_every = int(FULL_PASS_EVERY.total_seconds())
        rows = len(world.plan)
        self.made = _Made.sized(rows)
        self.written = np.zeros(rows, dtype=bool)  # rows the mirror holds
        self.closed = np.zeros(rows, dtype=bool)
        self.counts = {"runs": 0, "listings": 0, "updates": 0, "closed": 0, "pending": 0, "regfree": 0}
        self.runs = sync_moments(world.first, world.last)
        self.next_run = 0
        self.last_full: int | None = None
        self.high_water = 0  # the newest listing a listings run saw (created_at, seconds)
        self.pending_written: set[int] = set()
        self.day = None
        self.regfree = world.plan.src == _REGFREE_INDEX
        self.auctions = world.plan.bids > 0

    def play_until(self, writer: Any, moment: int) -> dict[str, int]:
        """Play the runs not played yet up to `moment` (included); returns the counts so far."""
        while self.next_run < len(self.runs) and self.runs[self.next_run][0] <= moment:
            at, job = self.runs[self.next_run]
            self.next_run += 1
            self.counts["runs"] += 1
            if (at - self.world.first) // DAY != self.day:
                self.day = (at - self.world.first) // DAY
                self.say("day", int(self.day))
            if self.source:
                self._source(writer, at, job)
            else:
                getattr(self, f"_{job}")(writer, at)
        return self.counts

    def keep_truth(self, writer: Any) -> None:
        _keep_truth(writer, self.world, self.made)

    # -- the runs ---------------------------------------------------------------------------
    def _new(self, writer: Any, rows: list[int], at: int) -> None:
        _write_new(writer, self.world, self.made, rows, at, self.seed, self.origin)
        self.written[rows] = True

    def _close(self, writer: Any, rows: np.ndarray, at: int) -> None:
        ids = self.world.plan.ids[rows].tolist()
        self.counts["closed"] += close_listings(writer, ids, closed_at=_iso(at), commit=False)
        self.closed[rows] = True

    def _listings(self, writer: Any, at: int) -> None:
        """A full pass (the first, then when the last is older than the sync's period) reads
        every live listing; an incremental one those added since the day before the newest
        it had (`created_after`, whole days): the new ones written, the changed ones written
        again, the others seen."""
        plan = self.world.plan
        present = self.world.present(at) & ~self.regfree
        full = self.last_full is None or at - self.last_full > self.full_every
        if not full:
            present &= plan.created >= (self.high_water - self.overlap) // DAY * DAY
        old = np.flatnonzero(present & self.written)
        new = np.flatnonzero(present & ~self.written).tolist()
        self.counts["listings"] += len(new)
        self._new(writer, new, at)
        changed = _changed(self.world, self.made, old.tolist(), at)
        self.counts["updates"] += len(changed)
        _write_changes(writer, self.world, self.made, changed, at, self.origin)
        _seen(writer, plan.ids[np.setdiff1d(old, changed)].tolist(), _iso(at))
        if present.any():
            self.high_water = max(self.high_water, int(plan.created[present].max()))
        if full:  # the rows it did not see have left their source
            self._close(writer, np.flatnonzero(self.written & ~present & ~self.closed & ~self.regfree), at)
            self.last_full = at

    def _bids(self, writer: Any, at: int) -> None:  # has_bids=1: the auctions with a bid now
        plan = self.world.plan
        live = self.world.present(at) & self.auctions & (plan.end > at)
        live &= bids_at(plan.created, plan.end, plan.bids, self.world.gamma, at) > 0
        old = np.flatnonzero(live & self.written).tolist()
        new = np.flatnonzero(live & ~self.written).tolist()  # seen here before the next listings run
        self.counts["listings"] += len(new)
        self._new(writer, new, at)
        rows = _changed(self.world, self.made, old, at)
        self.counts["updates"] += len(rows)
        _write_changes(writer, self.world, self.made, rows, at, self.origin)

    def _regfree(self, writer: Any, at: int) -> None:
        present = self.world.present(at) & self.regfree
        rows = np.flatnonzero(present)
        old, new = rows[self.written[rows]], rows[~self.written[rows]].tolist()
        self.counts["regfree"] += len(new)
        changed = _changed(self.world, self.made, old.tolist(), at)
        _write_changes(writer, self.world, self.made, changed, at, self.origin)
        _seen(writer, self.world.plan.ids[np.setdiff1d(old, changed)].tolist(), _iso(at))
        self._new(writer, new, at)
        self._close(writer, np.flatnonzero(self.written & ~present & ~self.closed & self.regfree), at)

    def _pending(self, writer: Any, at: int) -> None:
        world = self.world
        listed = np.flatnonzero((world.pending_listed <= at) & (at < world.pending_leaves)).tolist()
        save_pending(
            writer, [world.pending[i] for i in listed], origin=self.origin, observed_at=_iso(at), keep_raw=False
        )
        self.counts["pending"] += len(set(listed) - self.pending_written)
        gone = [int(world.pending[i]["id"]) for i in sorted(self.pending_written - set(listed))]
        for start in range(0, len(gone), 500):  # what the sync's full pass removes
            chunk = gone[start : start + 500]
            writer.execute(f"DELETE FROM pending_delete WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        self.pending_written = set(listed)

    def _source(self, writer: Any, at: int, job: str) -> None:
        """The source at `at`: every listing there as it is, the gone ones closed; the weekly
        and monthly datasets at their runs."""
        present = self.world.present(at)
        if job == "pending":
            self._pending(writer, at)
        old = np.flatnonzero(present & self.written).tolist()
        new = np.flatnonzero(present & ~self.written & (~self.regfree | (job == "regfree"))).tolist()
        self._new(writer, new, at)
        _write_changes(writer, self.world, self.made, _changed(self.world, self.made, old, at), at, self.origin)
        gone = self.written & ~present & ~self.closed
        self._close(writer, np.flatnonzero(gone & (~self.regfree | (job == "regfree"))), at)


def _changed(world: World, made: _Made, rows: list[int], t: int) -> list[int]:
    """Of `rows` (written before), those whose source shows something else at `t`."""
    if not rows:
        return []
    index = np.array(rows, dtype=np.int64)
    now = state_at(world, made.finals, index, t)
    same = (now.bids == made.bids[index]) & (now.metrics == made.metrics[index]).all(axis=1)
    same &= np.isclose(now.price, made.price[index], equal_nan=True)
    same &= np.isclose(now.max_bid, made.max_bid[index], equal_nan=True)
    return index[~same].tolist()


def _write_new(writer: Any, world: World, made: _Made, rows: list[int], t: int, seed: int, origin: str) -> None:
    """Write listings seen for the first time at `t`, as their source shows them then. Their
    records are made chunk by chunk and written as they come; rows of a chunk that appear
    later wait (a few hours of arrivals at full scale)."""
    if not rows:
        return
    wanted = set(rows)
    ready = [(row, made.waiting.pop(row)) for row in sorted(wanted & made.waiting.keys())]
    _save(writer, world, made, ready, t, origin)
    while made.next_chunk * CHUNK <= max(rows):
        pairs = []
        for row, record in _next_chunk(world, made, seed).items():
            if row in wanted:
                pairs.append((row, record))
            elif world.gone[row] > t:  # appears later (a row gone before any run never is)
                made.waiting[row] = record
        _save(writer, world, made, pairs, t, origin)


_COLUMNS = list(LISTING_COLUMNS)
_AT = {name: i for i, name in enumerate(_COLUMNS)}


def _write_changes(writer: Any, world: World, made: _Made, rows: list[int], t: int, origin: str) -> None:
    """Write listings the mirror holds again, as their source shows them at `t`: each stored
    row with the fields that changed (and what the writer derives from them), through the
    writer as rows (`save_listings(normalized=True)`)."""
    if not rows:
        return
    plan = world.plan
    index = np.array(sorted(rows), dtype=np.int64)
    ids = plan.ids[index].tolist()
    now = state_at(world, made.finals, index, t)
    made.bids[index], made.max_bid[index], made.price[index] = now.bids, now.max_bid, now.price
    made.metrics[index] = now.metrics
    position = {listing_id: i for i, listing_id in enumerate(ids)}
    stamp = _iso(t)
    day = stamp[:10]
    out = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        for stored in writer.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM listings WHERE id IN ({','.join('?' * len(chunk))})", chunk
        ):
            i = position[stored[0]]
            values = list(stored)
            for name, value in now.record(i).items():
                values[_AT[name]] = value
            price, top = values[_AT["price"]], values[_AT["max_bid"]]
            values[_AT["effective_price"]] = top if top is not None else price
            currency = values[_AT["currency"]]
            if price != stored[_AT["price"]]:
                values[_AT["price_eur"]] = to_eur(price, currency, day)
            if values[_AT["effective_price"]] != stored[_AT["effective_price"]]:
                values[_AT["effective_price_eur"]] = to_eur(values[_AT["effective_price"]], currency, day)
            values[_AT["updated_at"]] = _iso(max(int(plan.created[index[i]]), min(t, int(world.gone[index[i]]))))
            values[_AT["last_seen_at"]] = stamp
            out.append(tuple(values))
    save_listings(
        writer,
        out,
        origin=origin,
        observed_at=stamp,
        keep_raw=False,
        flag_jumps=False,
        normalized=True,
        batch_size=2000,
    )


def _save(writer: Any, world: World, made: _Made, pairs: list[tuple[int, dict[str, Any]]], t: int, origin: str) -> None:
    """Write (row, record) pairs with their state at `t` through the writer (rows made as the
    demo's own records are, `listing_row(canonical=True)`), noting what was shown."""
    if not pairs:
        return
    index = np.array([row for row, _ in pairs], dtype=np.int64)
    now = state_at(world, made.finals, index, t)
    made.bids[index], made.max_bid[index], made.price[index] = now.bids, now.max_bid, now.price
    made.metrics[index] = now.metrics
    stamp = _iso(t)
    rows = []
    for i, (row, record) in enumerate(pairs):
        out = {**record, **now.record(i)}
        out["effective_price"] = out["max_bid"] if out.get("max_bid") is not None else out["price"]
        out["updated_at"] = _iso(max(int(world.plan.created[row]), min(t, int(world.gone[row]))))
        rows.append(listing_values(listing_row(out, origin=origin, observed_at=stamp, canonical=True)))
    save_listings(
        writer,
        rows,
        origin=origin,
        observed_at=stamp,
        keep_raw=False,
        flag_jumps=False,
        normalized=True,
        batch_size=2000,
    )


def _seen(writer: Any, ids: list[int], stamp: str) -> None:
    """A full pass saw these listings unchanged: their last sighting moves, nothing else."""
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        writer.execute(
            f"UPDATE listings SET last_seen_at = ? WHERE id IN ({','.join('?' * len(chunk))})", [stamp, *chunk]
        )


def _keep_truth(writer: Any, world: World, made: _Made) -> None:
    """What the demo made happen, for tests and readers to be scored against."""
    plan = world.plan
    rows = []
    for row in np.flatnonzero((world.jump_at > 0) & (made.finals[:, 0] >= JUMP_MIN_TF)).tolist():
        rows.append(("demo_truth", int(plan.ids[row]), json.dumps({"metrics_jump_at": _iso(int(world.jump_at[row]))})))
    for index, outcome in enumerate(world.pending_outcome):
        if outcome == "still pending":
            continue
        rows.append(("demo_truth", int(world.pending[index]["id"]), json.dumps({"pending_outcome": outcome})))
    writer.executemany(
        "INSERT INTO raw_records (kind, id, raw) VALUES (?, ?, ?) "
        "ON CONFLICT(kind, id) DO UPDATE SET raw = excluded.raw",
        rows,
    )


def iter_days(first_day: date, today: date) -> Iterator[date]:
    day = first_day
    while day <= today:
        yield day
        day += timedelta(days=1)
