"""The time-lapse played: `run_days` writes every scheduled run of a planned world
(`timelapse.plan_world`) into the mirror, through the writer the sync uses, observed at its
moment; `Player` plays them run after run (as a mirror synced on schedule saw them, or, with
`source=True`, as the source itself showed them). `state_at` is what the source shows of a
listing at a moment: its bids and top bid, a closeout's cut price, its re-measured metrics.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..signals.fx import to_eur
from ..store.schema import LISTING_COLUMNS
from ..store.writer import close_listings, listing_row, listing_values, save_pending
from .catalog import TIMELAPSE
from .clock import DAY, iso
from .generate import listing_chunk
from .plan import (
    CHUNK,
    REGFREE_INDEX,
)
from .timelapse import JUMP_MIN_TF, METRICS, World, bids_at, sync_moments
from .worker import write_listing_rows

__all__ = ["State", "state_at", "Player", "run_days"]

WEEK = 7 * DAY  # metrics are re-measured weekly


# -- a listing's state at a moment ------------------------------------------------------------


@dataclass
class State:
    """What the source shows of some listings at a moment: the fields that change over a
    listing's life, one array per field (rows in the order asked)."""

    bids: np.ndarray  # -1: no bids field (not an auction)
    max_bid: np.ndarray  # NaN: none
    price: np.ndarray  # NaN: none (regfree)
    metrics: np.ndarray  # (rows, 5) in METRICS order, -1: none

    def record(self, i: int) -> dict[str, Any]:
        """Row `i`'s fields as a record's."""
        out: dict[str, Any] = {m: (None if v < 0 else int(v)) for m, v in zip(METRICS, self.metrics[i].tolist())}
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
    closeout = (end < 0) & (plan.src[rows] != REGFREE_INDEX) & world.cuts[rows]
    steps = np.maximum(0, (t - created) // (TIMELAPSE.closeout_step_days * DAY))
    cut = np.maximum(TIMELAPSE.closeout_floor, TIMELAPSE.closeout_step**steps)
    price = np.where(closeout, np.round(price0 * cut, 2), price0)
    horizon = np.minimum(gone, world.last)
    weeks = np.maximum(1, (horizon - created) // WEEK)
    share = world.drift[rows] * np.maximum(0, (horizon - t) // WEEK) / weeks
    final = finals[rows]
    metrics = np.where(final >= 0, np.maximum(0, np.round(final * (1 - share[:, None]))), -1).astype(np.int64)
    jumped = (world.jump_at[rows] > 0) & (t < world.jump_at[rows]) & (final[:, 0] >= JUMP_MIN_TF)
    metrics[jumped, 0] = np.round(final[jumped, 0] * 0.3)
    low_rd = jumped & (final[:, 3] >= 0)
    metrics[low_rd, 3] = np.round(final[low_rd, 3] * 0.3)
    return State(bids=bids, max_bid=max_bid, price=price, metrics=metrics)


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
            finals=np.full((rows, len(METRICS)), -1, dtype=np.int64),
            bids=np.full(rows, -2, dtype=np.int64),
            max_bid=np.full(rows, np.nan),
            price=np.full(rows, np.nan),
            metrics=np.full((rows, len(METRICS)), -2, dtype=np.int64),
        )


def _next_chunk(world: World, made: _Made, seed: int) -> dict[int, dict[str, Any]]:
    """The records of the next chunk (chunks in id order), by row."""
    plan = world.plan
    chunk = made.next_chunk
    start, stop = chunk * CHUNK, min(len(plan), (chunk + 1) * CHUNK)
    out = {}
    for offset, record in enumerate(listing_chunk(plan, start, stop, seed, chunk)):
        r = start + offset
        if record["source"] == "regfree":
            record.update(price=None, max_bid=None, effective_price=None, bids_count=None)
        out[r] = record
        made.finals[r] = [-1 if record[m] is None else record[m] for m in METRICS]
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
        from ..sync.engine import FULL_PASS_EVERY, INCREMENTAL_OVERLAP

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
        self.day: int | None = None  # the simulated day of the last run played
        self.regfree = world.plan.src == REGFREE_INDEX
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
        self.counts["closed"] += close_listings(writer, ids, closed_at=iso(at), commit=False)
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
        _seen(writer, plan.ids[np.setdiff1d(old, changed)].tolist(), iso(at))
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
        _seen(writer, self.world.plan.ids[np.setdiff1d(old, changed)].tolist(), iso(at))
        self._new(writer, new, at)
        self._close(writer, np.flatnonzero(self.written & ~present & ~self.closed & self.regfree), at)

    def _pending(self, writer: Any, at: int) -> None:
        world = self.world
        listed = np.flatnonzero((world.pending_listed <= at) & (at < world.pending_leaves)).tolist()
        save_pending(
            writer, [world.pending[i] for i in listed], origin=self.origin, observed_at=iso(at), keep_raw=False
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
    now = _shown(world, made, index, t)
    position = {listing_id: i for i, listing_id in enumerate(ids)}
    stamp = iso(t)
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
            values[_AT["updated_at"]] = iso(max(int(plan.created[index[i]]), min(t, int(world.gone[index[i]]))))
            values[_AT["last_seen_at"]] = stamp
            out.append(tuple(values))
    write_listing_rows(writer, out, origin, stamp, batch=2000)


def _save(writer: Any, world: World, made: _Made, pairs: list[tuple[int, dict[str, Any]]], t: int, origin: str) -> None:
    """Write (row, record) pairs with their state at `t` through the writer (rows made as the
    demo's own records are, `listing_row(canonical=True)`), noting what was shown."""
    if not pairs:
        return
    index = np.array([row for row, _ in pairs], dtype=np.int64)
    now = _shown(world, made, index, t)
    stamp = iso(t)
    rows = []
    for i, (row, record) in enumerate(pairs):
        out = {**record, **now.record(i)}
        out["effective_price"] = out["max_bid"] if out.get("max_bid") is not None else out["price"]
        out["updated_at"] = iso(max(int(world.plan.created[row]), min(t, int(world.gone[row]))))
        rows.append(listing_values(listing_row(out, origin=origin, observed_at=stamp, canonical=True)))
    write_listing_rows(writer, rows, origin, stamp, batch=2000)


def _shown(world: World, made: _Made, index: np.ndarray, t: int) -> State:
    """The source's view of the rows `index` at `t`, noted as what the mirror was last shown."""
    now = state_at(world, made.finals, index, t)
    made.bids[index], made.max_bid[index], made.price[index] = now.bids, now.max_bid, now.price
    made.metrics[index] = now.metrics
    return now


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
        rows.append(("demo_truth", int(plan.ids[row]), json.dumps({"metrics_jump_at": iso(int(world.jump_at[row]))})))
    for index, outcome in enumerate(world.pending_outcome):
        if outcome == "still pending":
            continue
        rows.append(("demo_truth", int(world.pending[index]["id"]), json.dumps({"pending_outcome": outcome})))
    writer.executemany(
        "INSERT INTO raw_records (kind, id, raw) VALUES (?, ?, ?) "
        "ON CONFLICT(kind, id) DO UPDATE SET raw = excluded.raw",
        rows,
    )
