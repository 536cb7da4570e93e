"""The demo source through time: `edt demo --days N` lives the N days ending today.

The demo's world is planned once for the whole window (`plan_world`): every platform
listing that is live at some moment of it, with when it appeared, when it leaves its source
(an auction's end, a closeout sold or withdrawn), its price, the bids it will have, when
they come, and what an unsold auction becomes; the pending-delete names of every weekly
batch, with their drop dates and what happened at the drop; the deleted-ccTLD database's
monthly batches. `run_days` (`playback.py`) then plays the service's schedules (`toolkit.sync.schedule`'s cron
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

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from typing import Any

import numpy as np

from ..ingest.lifecycle import predict_drop_window
from .catalog import PENDING_TLDS, PLATFORMS, TIMELAPSE, langs_for
from .clock import DAY, HOUR, anchor_of, iso
from .name_maker import NameMaker
from .pending import PENDING_ID_BASE, pending_records, status_mix
from .plan import (
    CHUNK,
    KIND_TYPE,
    LISTING_ID_BASE,
    SCALES,
    ListingPlan,
    Scale,
    TldCodes,
    allocate,
    draw_bids,
    draw_prices,
    name_columns,
    pick_tlds,
    regfree_batches,
    regfree_columns,
)
from .words import THEMES

__all__ = [
    "World",
    "JUMP_MIN_TF",
    "METRICS",
    "plan_world",
    "bids_at",
    "sync_moments",
    "searches_and_runs",
    "DEMO_SEARCHES",
    "DEMO_SEARCH_PREFIX",
    "played_runs",
]

_DELAYED = next(i for i, p in enumerate(PLATFORMS) if p.slug == TIMELAPSE.delayed_platform)
JUMP_MIN_TF = 15  # a jump is planned on auctions whose final Trust Flow reaches this
METRICS = ("trust_flow", "citation_flow", "domain_authority", "referring_domains", "backlinks_count")
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
    from ..sync.schedule import DEFAULT_SCHEDULES, triggers

    out = []
    start = datetime.fromtimestamp(first, tz=timezone.utc)
    end = datetime.fromtimestamp(last, tz=timezone.utc)
    for job, trigger in triggers(DEFAULT_SCHEDULES, timezone.utc).items():
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
    runs = [(iso(t), job) for t, job in sync_moments(first, int(anchor_of(today).timestamp())) if t > saved]
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
            statuses, shares, stage = status_mix(tld)
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
    ids = (PENDING_ID_BASE + np.cumsum(rng.geometric(0.8, len(prepared)))).tolist()
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
        names, picked = pick_tlds(rng, platform, n)
        price = draw_prices(rng, spec, platform.rounding, n)
        bids = np.full(n, -1, dtype=np.int64)
        top = np.full(n, np.nan)
        if spec.type in ("auction", "backorder"):
            bids, top = draw_bids(rng, price, min(0.9, spec.bid_share * tl.bids_at_end_factor), 1.5, 0.9)
        parts.append(
            {
                **name_columns(
                    rng, tld_id, si, np.full(n, ki, dtype=np.int8), names, picked, platform.themes, platform.brandable
                ),
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
    reg_names, picked, created = regfree_batches(rng, sc.regfree, first_day)
    created = np.minimum(created, first - HOUR)
    n = int(picked.shape[0])
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
    parts.append(
        {
            **regfree_columns(rng, tld_id, reg_names, reg_tld, reg_created),
            "gone": reg_gone,
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
    total = int(cols["src"].shape[0])
    order = np.lexsort((rng.random(total), cols["created"]))
    cols = {key: value[order] for key, value in cols.items()}
    position = np.empty(total, dtype=np.int64)
    position[order] = np.arange(total)
    relist = np.where(cols["relist"] >= 0, position[np.maximum(cols["relist"], 0)], -1)
    ids = LISTING_ID_BASE + np.cumsum(rng.geometric(0.75, total)).astype(np.int64)
    plan = ListingPlan.of(today, last, tlds, ids, np.zeros(total, dtype=bool), cols)
    plan.namer = NameMaker(random.Random(seed * 1_000_003 + 999_983))
    regfree_from = {}
    for row in np.flatnonzero(cols["from_pending"] >= 0).tolist():
        record = pending[int(cols["from_pending"][row])]
        regfree_from[row] = int(cols["from_pending"][row])
        plan.names[row] = (record["domain"], [record["domain"].rpartition("." + record["tld"])[0]])
    # Metrics bought just before the sale: on auctions with bids, a few days before the end,
    # when the 4-hourly bids runs read them (the rise is seen, as a real one would be).
    gamma = rng.uniform(tl.bid_timing[0], tl.bid_timing[1], total)
    lead = (rng.uniform(tl.jump_days_before_end[0], tl.jump_days_before_end[1], total) * DAY).astype(np.int64)
    moment = plan.end - lead
    chosen = (KIND_TYPE[plan.src, plan.kind] == "auction") & (plan.bids > 0) & (rng.random(total) < tl.jump_share)
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
    total = int(cols["src"].shape[0])
    unsold = (KIND_TYPE[cols["src"], cols["kind"]] == "auction") & (cols["bids"] == 0)
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


def bids_at(
    created: np.ndarray, end: np.ndarray, final: np.ndarray, gamma: np.ndarray, t: int | np.ndarray
) -> np.ndarray:
    """Bids an auction shows at `t`: its final count times the elapsed share of its bidding
    time (up to the last bids run before its end) to the power `gamma` (bids come late)."""
    last = np.maximum((end - 1) // (4 * HOUR) * (4 * HOUR), created + 1)
    share = np.clip((t - created) / (last - created), 0.0, 1.0)
    return np.where(share >= 1.0, final, np.minimum(final, np.floor(final * share**gamma))).astype(np.int64)
