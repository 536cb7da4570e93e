"""The live estimate of a running auction: what it will sell for, given what the bidding
already says.

    from toolkit.analysis.live import train_live, live_ranges
    model = train_live(mirror)                          # learnt from the bidding of the auctions that sold
    live_ranges(model, mirror)                          # [(listing_id, low, mid, high)] in EUR

An auction with bids carries more than its name: its current bid, how many bids there were
and how fast they came, and how long is left. The model learns, from every sighting of an
auction that later sold (`listing_history` before its end), how far the final price rose
above the bid seen then: the 10th, 50th and 90th percentiles of log(final / bid) by
scikit-learn's quantile gradient boosting, calibrated on the latest fifth of the auctions as
the price range is (split conformal), separately for each stretch of time left (`HOURS_LEFT`:
a range read a week before the end must hold four final prices in five, as one read an hour
before it must) and for the auctions with `MANY_BIDS` bids or more apart from the quieter
ones. The range is the current bid times those rises, never below the bid itself: a final
price is never below a bid already made.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..store.fields import iso_timestamp

__all__ = [
    "LIVE_NUMERIC",
    "LiveModel",
    "train_live",
    "live_frame",
    "training_frame",
    "live_ranges",
    "MIN_AUCTIONS",
    "quantile_booster",
]

LIVE_NUMERIC = ("log_bid", "bids", "hours_left", "bids_per_hour", "hours_listed")
MIN_AUCTIONS = 100  # sold auctions whose bidding was seen, before a live estimate is given
_MAX_ROWS = 50_000  # sightings learnt from at most (a seeded sample beyond): the rises are few and alike
_ITERATIONS = 100  # boosting rounds (at a learning rate of 0.1): its five features need no more
CALIBRATION_SHARE = 0.2
HOURS_LEFT = (6, 18, 36, 96)  # the stretches of time left calibrated apart (edges in hours)
MANY_BIDS = 5  # ... and within each, the auctions with this many bids or more apart from the others
_MIN_CALIBRATION = 30  # auctions a stretch needs to be calibrated apart (else it takes the whole's)


@dataclass
class LiveModel:
    models: list[Any]
    sources: list[str]
    widen: list[float]  # the conformal correction of each calibration group (`_stretch`), in log EUR
    trained_on: int  # sold auctions


def _stretch(hours_left: Any, bids: Any) -> np.ndarray:
    """The calibration group of each sighting: its stretch of time left, and whether it had
    `MANY_BIDS` bids or more (a contested auction's rise is surer than a quiet one's)."""
    stretch = np.searchsorted(np.array(HOURS_LEFT, dtype=float), np.asarray(hours_left, dtype=float), side="right")
    return stretch * 2 + (np.asarray(bids, dtype=float) >= MANY_BIDS)


LEVEL = 0.81  # the share of final prices the range is calibrated to hold: the middle of 0.78-0.85, not its edge


def _widen(outside: np.ndarray) -> float:
    level = min(1.0, LEVEL * (1 + 1 / len(outside)))
    return float(np.quantile(outside, level, method="higher"))


def _calibrated(outside: np.ndarray, groups: np.ndarray, auctions: np.ndarray) -> list[float]:
    """The conformal correction of each calibration group, from one miss per auction and group
    (the median of its sightings'): a range is judged per auction, and an auction seen thirty
    times would otherwise weigh thirty times one seen once (calibrated per sighting, the range
    held 85% of the final prices on average over six demos, per auction 80%)."""
    import pandas as pd

    per = pd.DataFrame({"miss": outside, "group": groups, "auction": auctions}).groupby(["auction", "group"])["miss"]
    one = per.median().reset_index()
    whole = _widen(one["miss"].to_numpy())
    return [
        _widen(one.loc[one["group"] == k, "miss"].to_numpy())
        if (one["group"] == k).sum() >= _MIN_CALIBRATION
        else whole
        for k in range(2 * (len(HOURS_LEFT) + 1))
    ]


def _hours(later: Any, earlier: Any) -> Any:
    import pandas as pd

    a = pd.to_datetime(later, utc=True, format="ISO8601")
    b = pd.to_datetime(earlier, utc=True, format="ISO8601")
    return ((a - b).dt.total_seconds() / 3600).to_numpy(dtype=float)


def _matrix(frame: Any, sources: list[str]) -> Any:
    import pandas as pd

    out = pd.DataFrame(index=frame.index)
    out["log_bid"] = np.log(frame["bid_eur"].astype(float).clip(lower=0.01))
    out["bids"] = frame["bids"].astype(float)
    out["hours_left"] = frame["hours_left"].astype(float).clip(lower=0)
    listed = frame["hours_listed"].astype(float).clip(lower=1)
    out["bids_per_hour"] = out["bids"] / listed
    out["hours_listed"] = listed
    codes = {s: i for i, s in enumerate(sources)}
    out["source"] = frame["source"].map(codes).astype(float)
    return out


def training_frame(mirror: Any, *, ended_before: str | None = None, ended_from: str | None = None) -> Any:
    """Every sighting with bids, before its end, of an auction that sold: bid_eur, bids,
    hours_left, hours_listed, source, the final EUR price, listing_id and ended_at."""
    import pandas as pd

    where, args = ["r.sold = 1", "r.final_price_eur IS NOT NULL", "r.final_price > 0"], []
    if ended_before:
        where.append("r.ended_at < ?")
        args.append(ended_before)
    if ended_from:
        where.append("r.ended_at >= ?")
        args.append(ended_from)
    frame = pd.read_sql_query(
        "SELECT r.listing_id, r.source, r.ended_at, r.final_price_eur, r.final_price_eur / r.final_price AS rate, "
        "h.observed_at, h.max_bid, h.bids_count AS bids, l.first_seen_at FROM auction_results r "
        "JOIN listing_history h ON h.listing_id = r.listing_id AND h.observed_at < r.ended_at "
        "LEFT JOIN listings l ON l.id = r.listing_id "
        f"WHERE {' AND '.join(where)} AND h.bids_count > 0 AND h.max_bid > 0",
        mirror.connection(),
        params=args,
    )
    frame = pd.concat(
        [f for f in (frame, _put_away_sightings(mirror, where, args)) if not f.empty] or [frame], ignore_index=True
    )
    if frame.empty:
        return frame
    frame["bid_eur"] = frame["max_bid"] * frame["rate"]
    frame["hours_left"] = _hours(frame["ended_at"], frame["observed_at"])
    first = frame["first_seen_at"].fillna(frame["observed_at"])
    frame["hours_listed"] = _hours(frame["observed_at"], first)
    frame["source"] = frame["source"].fillna("")
    return frame


def _put_away_sightings(mirror: Any, where: list[str], args: list[Any]) -> Any:
    """`training_frame`'s rows for the sold auctions whose listing was packed or archived
    (`edt archive`): their sightings read from there, as a plain listing's are from SQLite."""
    import pandas as pd

    from ..store.parquet_archive import archived_rows

    conn = mirror.connection()
    results = pd.read_sql_query(
        "SELECT r.listing_id, r.source, r.ended_at, r.final_price_eur, r.final_price_eur / r.final_price AS rate "
        f"FROM auction_results r WHERE {' AND '.join(where)} AND NOT EXISTS "
        "(SELECT 1 FROM listings l WHERE l.id = r.listing_id)",
        conn,
        params=args,
    )
    if results.empty:
        return results
    ids = [int(i) for i in results["listing_id"]]
    seen = pd.DataFrame(
        archived_rows(
            mirror.path,
            "listing_history",
            "listing_id",
            ids,
            ["listing_id", "observed_at", "max_bid", "bids_count"],
            conn=conn,
        ),
        columns=["listing_id", "observed_at", "max_bid", "bids"],
    )
    first = pd.DataFrame(
        archived_rows(mirror.path, "listings", "id", ids, ["id", "first_seen_at"], conn=conn),
        columns=["listing_id", "first_seen_at"],
    ).drop_duplicates("listing_id")
    rows = results.merge(seen, on="listing_id").merge(first, on="listing_id", how="left")
    keep = (rows["observed_at"] < rows["ended_at"]) & (rows["bids"].fillna(0) > 0) & (rows["max_bid"].fillna(0) > 0)
    return rows[keep]


def quantile_booster(quantile: float, max_iter: int, learning_rate: float, categorical: list[bool] | None) -> Any:
    """An unfitted gradient-boosted regressor of the `quantile` (the live and the value models'),
    `categorical` marking the matrix's category columns."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    return HistGradientBoostingRegressor(
        loss="quantile",
        quantile=quantile,
        max_iter=max_iter,
        learning_rate=learning_rate,
        min_samples_leaf=20,
        random_state=0,
        categorical_features=categorical,
    )


def train_live(mirror: Any, *, ended_before: str | None = None, max_iter: int = _ITERATIONS) -> LiveModel | None:
    """The live model learnt from the bidding of the auctions that sold (ended before
    `ended_before` when given); None with fewer than `MIN_AUCTIONS` of them."""
    from ..config import bounded_threads

    frame = training_frame(mirror, ended_before=ended_before)
    auctions = frame["listing_id"].nunique() if not frame.empty else 0
    if auctions < MIN_AUCTIONS:
        return None
    if len(frame) > _MAX_ROWS:
        frame = frame.sample(_MAX_ROWS, random_state=0)
    frame = frame.sort_values(["ended_at", "listing_id", "observed_at"]).reset_index(drop=True)
    sources = sorted(frame["source"].unique().tolist())
    matrix = _matrix(frame, sources)
    target = np.log(frame["final_price_eur"].to_numpy(dtype=float) / frame["bid_eur"].to_numpy(dtype=float)).clip(0)
    # the latest fifth of the auctions (all their sightings) calibrates the range
    ends = frame["ended_at"].to_numpy()
    cut = int(np.searchsorted(ends, ends[int(len(ends) * (1 - CALIBRATION_SHARE))]))
    cut = min(max(cut, 1), len(frame) - 1)
    model = LiveModel([], sources, [], int(auctions))
    mask = [c == "source" for c in matrix.columns]
    with bounded_threads():
        for quantile in (0.1, 0.5, 0.9):
            model.models.append(quantile_booster(quantile, max_iter, 0.1, mask).fit(matrix.iloc[:cut], target[:cut]))
        low, high = model.models[0].predict(matrix.iloc[cut:]), model.models[2].predict(matrix.iloc[cut:])
    outside = np.maximum(low - target[cut:], target[cut:] - high)
    groups = _stretch(frame["hours_left"].to_numpy()[cut:], frame["bids"].to_numpy()[cut:])
    model.widen = _calibrated(outside, groups, frame["listing_id"].to_numpy()[cut:])
    return model


def predict(model: LiveModel, frame: Any) -> np.ndarray:
    """(low, mid, high) in EUR of each row of `frame` (bid_eur, bids, hours_left,
    hours_listed, source): ordered, finite, never below the bid."""
    from ..config import bounded_threads

    if frame.empty:
        return np.zeros((0, 3))
    matrix = _matrix(frame, model.sources)
    with bounded_threads():
        rises = np.column_stack([m.predict(matrix) for m in model.models])
    widen = np.array(model.widen)[_stretch(frame["hours_left"].to_numpy(dtype=float).clip(0), frame["bids"])]
    rises[:, 0] -= widen
    rises[:, 2] += widen
    rises = np.sort(np.clip(rises, 0, 20), axis=1)  # never below the bid; a rise of e^20 is no estimate
    bid = frame["bid_eur"].to_numpy(dtype=float)
    values = bid[:, None] * np.exp(rises)
    return np.maximum(np.round(values, 2), np.round(bid, 2)[:, None])


def live_frame(mirror: Any, *, missing_only: bool = False) -> Any:
    """The live auctions with bids now: listing_id, bid_eur, bids, hours_left, hours_listed,
    source (with `missing_only`, those without a live estimate)."""
    import pandas as pd

    now = iso_timestamp(mirror.now())
    frame = pd.read_sql_query(
        "SELECT id AS listing_id, source, effective_price_eur AS bid_eur, bids_count AS bids, auction_end_date, "
        "first_seen_at FROM listings WHERE closed_at IS NULL AND live_until > ? AND type = 'auction' "
        "AND bids_count > 0 AND max_bid > 0 AND effective_price_eur > 0 AND auction_end_date > ?"
        + (" AND live_mid IS NULL" if missing_only else ""),
        mirror.connection(),
        params=[now, now],
    )
    if frame.empty:
        return frame
    stamp = pd.Series([now] * len(frame), index=frame.index)
    frame["hours_left"] = _hours(frame["auction_end_date"], stamp)
    frame["hours_listed"] = _hours(stamp, frame["first_seen_at"].fillna(now))
    frame["source"] = frame["source"].fillna("")
    return frame


def live_ranges(model: LiveModel | None, mirror: Any, *, missing_only: bool = False) -> list[tuple[int, Any, Any, Any]]:
    """(listing_id, low, mid, high) of each live auction with bids: the model's estimate, or
    null without a model."""
    frame = live_frame(mirror, missing_only=missing_only)
    if frame.empty:
        return []
    if model is None:
        return [(int(i), None, None, None) for i in frame["listing_id"]]
    values = predict(model, frame)
    return [(int(i), float(low), float(mid), float(high)) for i, (low, mid, high) in zip(frame["listing_id"], values)]
