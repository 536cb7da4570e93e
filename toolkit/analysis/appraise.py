"""A price range for every live listing, learnt from the sales the mirror knows (the auctions
it saw end and the sales reported elsewhere), a live estimate for every auction with bids, and
their errors measured on sales they did not learn from, beside the peers a user could use instead.

    from toolkit import Mirror
    from toolkit.analysis.appraise import appraise, backtest
    appraise(Mirror("data/mirror.db"))            # writes each live listing's value_low / _mid / _high in EUR
    backtest(Mirror("data/mirror.db")).summary()  # trains before a day, scores what sold after it

**The model.** scikit-learn's `HistGradientBoostingRegressor` with the quantile loss, three
times (the 10th, 50th and 90th percentiles: an 80% range and its middle), on the logarithm of
each sale's price in EUR, the range calibrated on the latest sales (split conformal quantile
regression, `train`). Why this one: gradient boosting handles the features' mix (counts,
metrics often missing, categories) without scaling, treats a missing value as information,
and its quantile loss gives a range directly; scikit-learn's histogram version is LightGBM's
algorithm in a library analysts already have, with native categorical features and no
system library beyond the wheels.

**The sales** are the mirror's sold auction results (`auction_results`) and the reported
sales (`reported_sales`, `edt ingest sales`): both teach the model and both are scored by the
backtest, each saying where it came from.

**The features**, all known before a sale (never its final bids): what the label says
(analysis/namefeatures.py: its words and how common they are, its shape and letter/number
pattern, and the prices of the sales learnt from sharing a word); the TLD, its family (legacy, new, a
country's) and the venue; Trust Flow, Citation Flow, referring domains, backlinks, Wayback
snapshots and the archive's age; Estibot's appraisal; the price asked when first seen. A
feature missing on every sale learnt from, or the same on all of them (a mirror filled by the
free feeds has no link metrics; reported sales have no listing at all), is left out of that
model, which says so (`PriceModel.left_out`).

**Null, with the reason**, when the model cannot judge a listing: fewer than `MIN_RESULTS`
sales to learn from, a deleted ccTLD name (not for sale), or a TLD family with no sale among
those learnt from. The three quantiles are put in order per listing (a boosted quantile can
cross its neighbour), so a range's low is never above its high.

**The live estimate** of an auction with bids (analysis/live.py) is written beside the range
(`live_low`, `live_mid`, `live_high`); the deal signal reads it for auctions with bids.
"""

from __future__ import annotations

import bisect
import json
import math
import os
import pickle
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..names import split_domain
from ..sources import REGFREE
from ..store.fields import iso_timestamp
from ..store.results import save_live, save_values, value_model_path
from .comps import tld_family
from .live import LiveModel, live_ranges, quantile_booster, train_live
from .range_notes import coverage_note, value_model
from .namefeatures import LABEL_NUMERIC, label_features, word_price_table, word_prices

__all__ = [
    "MIN_RESULTS",
    "QUANTILES",
    "PriceModel",
    "train",
    "appraise",
    "appraise_if_due",
    "value_new",
    "backtest",
    "Backtest",
    "model_path",
    "unvalued_reasons",
    "NOT_FOR_SALE",
    "RETRAIN_AFTER",
    "FEATURE_REASONS",
]

MIN_RESULTS = 200  # sales to learn from before any range is given
NOT_FOR_SALE = "a deleted ccTLD name: not for sale"  # the reason a regfree row has no range
QUANTILES = (0.1, 0.5, 0.9)
_LINK_METRICS = ("trust_flow", "citation_flow", "referring_domains", "backlinks_count", "wayback_snapshots")
METRICS = (*_LINK_METRICS, "archive_age", "estibot_eur", "first_price_eur")
NUMERIC = (*LABEL_NUMERIC, "comps_word", "comps_word_n", *METRICS)
CATEGORICAL = ("tld", "family", "source", "pattern")
_LOGGED = ("referring_domains", "backlinks_count", "wayback_snapshots", "estibot_eur", "first_price_eur")
_MAX_CATEGORIES = 250  # HistGradientBoosting's bins: the commonest values, the rest read as missing
# Why a feature is left out of a model (`PriceModel.left_out`).
FEATURE_REASONS = {"missing": "missing on every sale learnt from", "constant": "the same on every sale learnt from"}

_LISTING_FEATURES = (
    "l.trust_flow, l.citation_flow, l.referring_domains, l.backlinks_count, l.wayback_snapshots, "
    "l.wayback_first_date, l.estibot_appraisal"
)


def _features(frame: Any, today: date, words: dict[str, tuple[float, int]] | None = None, prices: Any = None) -> Any:
    """The model's columns from a frame with name, tld, source, the listing metrics,
    `first_price_eur` and `estibot_eur`. The word comparables come from `words` (the sales
    learnt from), or, for the sales themselves, from `prices` (their log EUR prices, each
    priced by the others)."""
    import pandas as pd

    parts = frame["name"].map(split_domain)  # (label, .tld) of each name, split once
    out = label_features(parts.str[0])
    out.index = frame.index
    if words is not None or prices is not None:
        out["comps_word"], out["comps_word_n"] = word_prices(out["word_list"], prices, table=words)
    else:
        out["comps_word"], out["comps_word_n"] = np.nan, 0.0
    for column in (*_LINK_METRICS, "estibot_eur", "first_price_eur"):
        out[column] = pd.to_numeric(frame[column], errors="coerce").astype(float) if column in frame else np.nan
    first = (
        pd.to_datetime(frame["wayback_first_date"], errors="coerce", format="ISO8601")
        if "wayback_first_date" in frame
        else pd.Series(pd.NaT, index=frame.index)
    )
    out["archive_age"] = (pd.Timestamp(today) - first).dt.days / 365.25
    for column in _LOGGED:
        out[column] = np.log1p(out[column].clip(lower=0))
    tlds = frame["tld"].fillna(parts.str[1]).str.lstrip(".")
    out["tld"] = tlds
    out["family"] = tlds.map(tld_family)
    out["source"] = frame["source"].fillna("").str.lower()
    return out


@dataclass
class PriceModel:
    """Three quantile models, the features they use (and those left out, with why), the
    categories they learnt and the word prices of the sales learnt from."""

    models: list[Any]
    categories: dict[str, list[str]]
    trained_on: int
    trained_at: str
    ended_before: str | None = None
    widen: float = 0.0  # conformal correction of the range, in log EUR (the calibration's)
    features: list[str] = field(default_factory=lambda: [*NUMERIC, *CATEGORICAL])
    left_out: dict[str, str] = field(default_factory=dict)  # feature -> why (FEATURE_REASONS)
    words: dict[str, tuple[float, int]] = field(default_factory=dict)  # word -> (median log EUR, sales)
    live: LiveModel | None = None

    def _matrix(self, features: Any) -> Any:
        matrix = features[self.features].copy()
        for column in CATEGORICAL:
            if column in self.features:
                known = {value: code for code, value in enumerate(self.categories[column])}
                matrix[column] = features[column].map(known).astype(float)  # unseen: NaN, a missing value
        return matrix.astype(float)

    def predict(self, features: Any) -> tuple[np.ndarray, np.ndarray]:
        """(low, mid, high in EUR as rows of an n x 3 array, the reason per row or None)."""
        from ..config import bounded_threads

        matrix = self._matrix(features)
        with bounded_threads():
            logs = np.column_stack([m.predict(matrix) for m in self.models])
        logs[:, 0] -= self.widen
        logs[:, 2] += self.widen
        logs.sort(axis=1)  # quantiles that crossed are put back in order
        values = np.round(np.expm1(logs), 2)
        families = set(self.categories["family"])
        reasons = np.array(
            [
                None if f in families else f"no sold result of its TLD family ({f}) to learn from"
                for f in features["family"]
            ],
            dtype=object,
        )
        return values, reasons


_SOLD = "r.sold = 1 AND r.final_price_eur IS NOT NULL"


def _sales_frame(mirror: Any, *, ended_before: str | None = None, ended_from: str | None = None) -> Any:
    """Every sale to learn from or to score, oldest first: the mirror's sold auction results
    (with their listing's metrics) and the reported sales (`origin`: "auction" or the file).
    Columns: listing_id (null for a reported sale), name, tld, source (the venue), ended_at,
    final_price_eur, the listing metrics, first_price_eur, estibot_eur, origin."""
    import pandas as pd

    where, args = [_SOLD], []
    reported_where, reported_args = ["price_eur IS NOT NULL"], []
    if ended_before:
        where.append("r.ended_at < ?")
        args.append(ended_before)
        reported_where.append("sold_on < ?")
        reported_args.append(ended_before[:10])
    if ended_from:
        where.append("r.ended_at >= ?")
        args.append(ended_from)
        reported_where.append("sold_on >= ?")
        reported_args.append(ended_from[:10])
    conn = mirror.connection()
    auctions = pd.read_sql_query(
        f"SELECT r.listing_id, r.name, r.tld, r.source, r.ended_at, r.final_price_eur, r.currency, {_LISTING_FEATURES}, "
        "(SELECT h.price FROM listing_history h WHERE h.listing_id = r.listing_id ORDER BY h.observed_at LIMIT 1) "
        f"AS first_price, 'auction' AS origin, l.id IS NULL AS put_away FROM auction_results r "
        f"LEFT JOIN listings l ON l.id = r.listing_id WHERE {' AND '.join(where)}",
        conn,
        params=args,
    )
    auctions = _with_put_away_listings(mirror, auctions).drop(columns="put_away")
    reported = pd.read_sql_query(
        "SELECT NULL AS listing_id, name, tld, venue AS source, sold_on || 'T00:00:00Z' AS ended_at, "
        "price_eur AS final_price_eur, currency, origin FROM reported_sales "
        f"WHERE {' AND '.join(reported_where)}",
        conn,
        params=reported_args,
    )
    frame = (
        pd.concat([f for f in (auctions, reported) if not f.empty], ignore_index=True)
        if not (auctions.empty and reported.empty)
        else auctions
    )
    for column in (*_LINK_METRICS, "wayback_first_date", "estibot_appraisal", "first_price"):
        if column not in frame:
            frame[column] = None
    frame = frame.sort_values(["ended_at", "name"], kind="stable").reset_index(drop=True)
    return _with_eur(frame)


_FEATURE_COLUMNS = [c.removeprefix("l.") for c in _LISTING_FEATURES.split(", ")]


def _with_put_away_listings(mirror: Any, auctions: Any) -> Any:
    """The metrics and first asking price of the sold auctions whose listing was packed or
    archived (`edt archive`): read from there, as a plain listing's are from SQLite."""
    import pandas as pd

    from ..store.parquet_archive import archived_rows

    away = auctions["put_away"].astype(bool).to_numpy()
    if not away.any():
        return auctions
    ids = [int(i) for i in auctions.loc[away, "listing_id"]]
    conn = mirror.connection()
    listed = pd.DataFrame(
        archived_rows(mirror.path, "listings", "id", ids, ["id", *_FEATURE_COLUMNS], conn=conn),
        columns=["listing_id", *_FEATURE_COLUMNS],
    ).drop_duplicates("listing_id")
    history = pd.DataFrame(
        archived_rows(
            mirror.path, "listing_history", "listing_id", ids, ["listing_id", "observed_at", "price"], conn=conn
        ),
        columns=["listing_id", "observed_at", "first_price"],
    )
    first = history.sort_values("observed_at").drop_duplicates("listing_id")[["listing_id", "first_price"]]
    found = auctions.loc[away, ["listing_id"]].merge(listed, how="left").merge(first, how="left")
    auctions = auctions.copy()
    for column in [*_FEATURE_COLUMNS, "first_price"]:
        auctions[column] = auctions[column].astype(object)
        auctions.loc[away, column] = found[column].to_numpy(dtype=object)
    return auctions


def _sold_count(mirror: Any) -> int:
    conn = mirror.connection()
    sold = conn.execute(f"SELECT count(*) FROM auction_results r WHERE {_SOLD}").fetchone()[0]
    return sold + conn.execute("SELECT count(*) FROM reported_sales WHERE price_eur IS NOT NULL").fetchone()[0]


def _with_eur(frame: Any) -> Any:
    """`first_price_eur` and `estibot_eur` (Estibot appraises in US dollars) at today's ECB
    rates: one rate a currency, each column converted at once."""
    import pandas as pd

    from ..signals.fx import fx_table

    day = date.today().isoformat()
    table = fx_table()
    currency = frame["currency"] if "currency" in frame else frame["listing_currency"]
    rates = {c: table.rate(c, day) for c in pd.unique(currency) if isinstance(c, str) and c}
    rate = currency.map(lambda c: rates.get(c) if isinstance(c, str) else None).astype(float)
    frame["first_price_eur"] = (pd.to_numeric(frame["first_price"], errors="coerce") * rate).round(2)
    usd = table.rate("USD", day)
    frame["estibot_eur"] = (pd.to_numeric(frame["estibot_appraisal"], errors="coerce") * usd).round(2)
    return frame


CALIBRATION_SHARE = 0.2  # the latest sales, kept out of the fit to calibrate the range


def _usable(features: Any) -> tuple[list[str], dict[str, str]]:
    """The features a model can learn from these rows, and those left out with why."""
    used, left_out = [], {}
    for column in (*NUMERIC, *CATEGORICAL):
        values = features[column]
        if values.isna().all():
            left_out[column] = FEATURE_REASONS["missing"]
        elif values.nunique(dropna=False) <= 1:
            left_out[column] = FEATURE_REASONS["constant"]
        else:
            used.append(column)
    return used, left_out


def train(mirror: Any, *, ended_before: str | None = None, max_iter: int = 200) -> PriceModel | None:
    """The model learnt from every sale (ended before `ended_before` when given); None with
    fewer than `MIN_RESULTS`.

    The quantile models are fitted on the older 80% of the sales; the latest 20% calibrate
    the range (split conformal quantile regression: the range is widened, or narrowed, by the
    80th percentile of how far each calibration price fell outside it), so that it holds four
    prices in five on sales it did not learn from, as a fitted quantile alone does not. The
    live estimate is learnt beside it (analysis/live.py)."""
    from ..config import bounded_threads

    frame = _sales_frame(mirror, ended_before=ended_before)
    if len(frame) < MIN_RESULTS:
        return None
    target = np.log1p(frame["final_price_eur"].astype(float).to_numpy())
    features = _features(frame, mirror.now().date(), prices=target)
    cut = int(len(frame) * (1 - CALIBRATION_SHARE))
    used, left_out = _usable(features.iloc[:cut])
    categories = {
        c: features[c].iloc[:cut].value_counts().index[:_MAX_CATEGORIES].sort_values().tolist() for c in CATEGORICAL
    }
    categories["family"] = sorted(
        features["family"].dropna().unique().tolist()
    )  # every family it saw: the reasons read it
    model = PriceModel(
        [],
        categories,
        len(frame),
        iso_timestamp(mirror.now().replace(microsecond=0)),
        ended_before,
        features=used,
        left_out=left_out,
        words=word_price_table(features["word_list"], target),
    )
    matrix = model._matrix(features)
    mask = [c in CATEGORICAL for c in matrix.columns]
    with bounded_threads():  # two processes training at once must not spin against each other
        for quantile in QUANTILES:
            regressor = quantile_booster(quantile, max_iter, 0.05, mask or None)
            # the middle minimises the expected error in percent of the price: the median of the
            # prices weighted by 1/price (below the plain median when prices spread widely)
            weight = np.exp(-target[:cut]) if quantile == 0.5 else None
            model.models.append(regressor.fit(matrix.iloc[:cut], target[:cut], sample_weight=weight))
        low, high = model.models[0].predict(matrix.iloc[cut:]), model.models[2].predict(matrix.iloc[cut:])
    outside = np.maximum(low - target[cut:], target[cut:] - high)
    level = min(1.0, (QUANTILES[2] - QUANTILES[0]) * (1 + 1 / len(outside)))
    model.widen = float(np.quantile(outside, level, method="higher"))
    model.live = train_live(mirror, ended_before=ended_before)
    return model


def _live_frame(mirror: Any, *, unvalued: bool = False) -> Any:
    import pandas as pd

    now = iso_timestamp(mirror.now())
    frame = pd.read_sql_query(
        f"SELECT l.id AS listing_id, l.name, l.tld, l.source, l.currency, {_LISTING_FEATURES}, "
        "CASE WHEN l.source = ? THEN NULL ELSE (SELECT h.price FROM listing_history h WHERE h.listing_id = l.id "
        "ORDER BY h.observed_at LIMIT 1) END AS first_price, l.value_reason AS stored_reason "
        "FROM listings l WHERE l.closed_at IS NULL AND l.live_until > ?"
        + (" AND l.valued_at IS NULL" if unvalued else ""),
        mirror.connection(),
        params=[REGFREE, now],
    )
    return _with_eur(frame)


def _ranges(mirror: Any, model: PriceModel | None, live: Any) -> list[tuple[int, Any, Any, Any, str | None]]:
    """(listing_id, low, mid, high, reason) of each listing of `live`: the model's range, or
    null with the reason it gives none."""
    if model is None:
        reason = f"too few sales to learn from ({_sold_count(mirror):,} of the {MIN_RESULTS:,} needed)"
        return [(int(i), None, None, None, reason) for i in live["listing_id"]]
    regfree = (live["source"] == REGFREE).to_numpy()
    for_sale = live[~regfree]  # a deleted ccTLD name is neither read nor predicted: a quarter of a full mirror
    rows: list[tuple[int, Any, Any, Any, str | None]] = [
        (int(i), None, None, None, NOT_FOR_SALE) for i in live["listing_id"][regfree]
    ]
    if for_sale.empty:
        return sorted(rows)
    values, reasons = model.predict(_features(for_sale, mirror.now().date(), words=model.words))
    for listing_id, value, reason in zip(for_sale["listing_id"], values, reasons):
        low, mid, high = (None, None, None) if reason else map(float, value)
        rows.append((int(listing_id), low, mid, high, reason))
    return sorted(rows)  # in id order: each page of the table written once


def model_path(mirror: Any) -> Path:
    """Where the last trained model is kept: beside the mirror, as its columnar index is
    (the listings a sync brings between two trainings are valued with it)."""
    return value_model_path(mirror.path)


def _save_model(mirror: Any, model: PriceModel | None) -> None:
    path = model_path(mirror)
    if model is None:
        path.unlink(missing_ok=True)
        return
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL))
    os.replace(partial, path)


def _load_model(mirror: Any) -> PriceModel | None:
    """The model `appraise` last kept, or None (none kept, or one this toolkit cannot read:
    a model kept by an older toolkit has other features, and waits for the next training)."""
    try:
        model = pickle.loads(model_path(mirror).read_bytes())
    except (OSError, pickle.UnpicklingError, AttributeError, ImportError, EOFError, TypeError, ValueError):
        return None
    current = isinstance(model, PriceModel) and all(hasattr(model, name) for name in ("features", "words", "live"))
    return model if current else None


def appraise(mirror: Any, *, model: PriceModel | None = None, measure: bool = True) -> dict[str, Any]:
    """Train (unless `model` is given) and write every live listing's range onto the listing
    (`value_low`, `value_mid`, `value_high`, or `value_reason`; store/results.py `save_values`)
    and every live auction's live estimate (`live_low`, `live_mid`, `live_high`), in one
    transaction; with `measure`, the backtest of the last week first, whose coverage is
    kept with the ranges (`value_model` in `mirror_meta`: what the app shows beside each
    range). The model is kept beside the mirror for `value_new`. Returns that summary."""
    started = time.perf_counter()
    measured = backtest(mirror) if measure else None
    model = model or train(mirror)
    frame = _live_frame(mirror)
    rows = _ranges(mirror, model, frame)
    live = live_ranges(model.live if model else None, mirror)
    # A deleted ccTLD name already marked not for sale is left as it is: a quarter of a full mirror not rewritten.
    marked = set(frame.loc[frame["stored_reason"] == NOT_FOR_SALE, "listing_id"])
    stamp = iso_timestamp(mirror.now().replace(microsecond=0))
    summary = {
        "listings": len(rows),
        "valued": sum(r[1] is not None for r in rows),
        "trained_on": model.trained_on if model else 0,
        "valued_at": stamp,
        "live": sum(r[1] is not None for r in live),
        "left_out": model.left_out if model else {},
        "backtest": None
        if measured is None or not measured.scored
        else {
            "until": measured.until,
            "auctions": measured.scored,
            "coverage": measured.coverage,
            "median_abs_eur": measured.median_abs_eur,
            "median_abs_pct": measured.median_abs_pct,
            "live": measured.live,
        },
    }
    conn = mirror.connection()
    with conn:
        changed = [r for r in rows if not (r[4] == NOT_FOR_SALE and r[0] in marked)]
        # one write a listing: its range and its live estimate
        save_values(conn, changed, stamp, live={r[0]: r[1:] for r in live})
        summary["seconds"] = round(time.perf_counter() - started, 1)  # the writing included
        conn.execute(
            "INSERT INTO mirror_meta (key, value) VALUES ('value_model', ?) ON CONFLICT(key) DO UPDATE SET "
            "value = excluded.value",
            [json.dumps(summary)],
        )
    _save_model(mirror, model)
    return summary


def value_new(mirror: Any) -> int:
    """Value the live listings never valued (those a sync brought since the last `appraise`),
    and estimate the live auctions whose bidding changed since, with the model it kept;
    returns how many listings were written (0 without a kept model)."""
    model = _load_model(mirror)
    if model is None:
        return 0
    rows = _ranges(mirror, model, _live_frame(mirror, unvalued=True))
    live = [r for r in live_ranges(model.live, mirror, missing_only=True) if r[1] is not None]
    if rows or live:
        conn = mirror.connection()
        with conn:
            save_values(conn, rows, iso_timestamp(mirror.now().replace(microsecond=0)))
            save_live(conn, live)
    return len(rows) + len({r[0] for r in live} - {r[0] for r in rows})


# -- the backtest ---------------------------------------------------------------------------

SCORED_SHARE = 0.2  # of a short sales history, the latest sales a backtest scores
NO_SALE = "-"  # the day of a backtest of a mirror without a sale
BANDS = ((0, 50), (50, 200), (200, 1000), (1000, math.inf))


@dataclass
class Backtest:
    until: str
    trained_on: int
    scored: int
    coverage: float | None
    median_abs_eur: float | None
    median_abs_pct: float | None
    by_band: list[dict[str, Any]] = field(default_factory=list)
    by_tld: list[dict[str, Any]] = field(default_factory=list)
    by_origin: list[dict[str, Any]] = field(default_factory=list)  # the auctions the mirror saw end, each sales file
    peers: list[dict[str, Any]] = field(default_factory=list)  # what a user could use instead, on the same sales
    others: list[dict[str, Any]] = field(default_factory=list)  # the appraisals the feeds carry, on the same auctions
    left_out: dict[str, str] = field(default_factory=dict)  # the features the model could not use, and why
    live: dict[str, Any] | None = None  # the live estimate 24 hours before the end, beside the range

    def summary(self) -> str:
        if self.until == NO_SALE:
            return (
                "no sale to learn from yet: sales come from the auctions the mirror sees end, and from the sales "
                "reported elsewhere (edt ingest sales FILE)"
            )
        if self.trained_on < MIN_RESULTS:
            return (
                f"{self.trained_on:,} sales before {self.until} to learn from; the model needs {MIN_RESULTS}: "
                "pass a later day as --until, or add sales (edt ingest sales FILE)"
            )
        if not self.scored:
            return (
                f"no sale on or after {self.until} to score (trained on {self.trained_on:,}): pass an earlier --until"
            )
        right = f"80% range right {self.coverage:.0%} of the time on {self.scored:,} sales since {self.until}"
        error = f"median error {self.median_abs_eur:,.0f} EUR ({self.median_abs_pct:.0%})"
        return f"{right} (trained on {self.trained_on:,} before it); {error}"

    def to_dict(self) -> dict[str, Any]:
        return {**vars(self), "summary": self.summary()}  # the words say why nothing was scored


def _scored(low: np.ndarray, mid: np.ndarray, high: np.ndarray, actual: np.ndarray) -> dict[str, Any]:
    error = np.abs(mid - actual)
    scored = (
        {"coverage": round(float(((low <= actual) & (actual <= high)).mean()), 3)}
        if low is not None
        else {"coverage": None}
    )
    return {
        **scored,
        "median_abs_eur": round(float(np.median(error)), 2),
        "median_abs_pct": round(float(np.median(error / actual)), 3),
    }


def _lookup_peer(trained: Any, tested: Any, keys: list[str]) -> np.ndarray:
    """The 10th, 50th and 90th percentiles of the training prices of each group of `keys`
    (five sales at least), else of the coarser groups, else of every sale: a lookup table."""
    import pandas as pd

    def groups(frame: Any, names: list[str]) -> Any:
        return frame[names].astype(str).agg("|".join, axis=1) if names else pd.Series("", index=frame.index)

    prices = np.log(trained["final_price_eur"].astype(float).to_numpy())
    out = np.full((len(tested), 3), np.nan)
    for depth in range(len(keys), -1, -1):
        table = pd.DataFrame({"key": groups(trained, keys[:depth]).to_numpy(), "price": prices})
        sizes = table.groupby("key").size()
        found = table[table["key"].isin(sizes[sizes >= 5].index)].groupby("key")["price"].quantile(list(QUANTILES))
        found = found.unstack()
        wanted = groups(tested, keys[:depth]).to_numpy()
        todo = np.isnan(out[:, 0]) & np.isin(wanted, found.index)
        if todo.any():
            out[todo] = found.loc[wanted[todo]].to_numpy()
    return np.exp(out)


def _peers(trained: Any, tested: Any, actual: np.ndarray) -> list[dict[str, Any]]:
    """One range for every name, and the venue x TLD x label length lookup, on the same sales."""

    def shaped(frame: Any) -> Any:
        return frame.assign(
            venue=frame["source"].fillna("").str.lower(),
            tld_=frame["tld"].fillna("").str.lstrip(".").str.lower(),
            length=frame["name"].map(lambda n: min(len(split_domain(n)[0]), 15)),
        )

    trained, tested = shaped(trained), shaped(tested)
    peers = []
    for label, keys in (("one range for every name", []), ("venue x TLD x length lookup", ["venue", "tld_", "length"])):
        values = _lookup_peer(trained, tested, keys)
        peers.append({"peer": label, "sales": len(actual), **_scored(values[:, 0], values[:, 1], values[:, 2], actual)})
    return peers


def _live_backtest(mirror: Any, model: PriceModel, until: str, tested: Any, mids: np.ndarray) -> dict[str, Any] | None:
    """The live estimate learnt before `until`, read 24 hours (18 to 30) before the end of each
    auction that sold after it with 5 bids or more then, beside the range on the same auctions."""
    from .live import predict, training_frame

    if model.live is None:
        return None
    seen = training_frame(mirror, ended_from=until)
    if seen.empty:
        return None
    seen = seen[(seen["hours_left"] >= 18) & (seen["hours_left"] <= 30) & (seen["bids"] >= 5)]
    seen = seen.assign(gap=(seen["hours_left"] - 24).abs()).sort_values("gap").drop_duplicates("listing_id")
    by_id = {int(i): m for i, m in zip(tested["listing_id"], mids) if i == i and i is not None}
    seen = seen[seen["listing_id"].map(lambda i: int(i) in by_id)]
    if seen.empty:
        return None
    values = predict(model.live, seen)
    actual = seen["final_price_eur"].to_numpy(dtype=float)
    ours = _scored(values[:, 0], values[:, 1], values[:, 2], actual)
    before = _scored(None, np.array([by_id[int(i)] for i in seen["listing_id"]]), None, actual)  # type: ignore[arg-type]
    return {
        "auctions": len(seen),
        **ours,
        "range_median_abs_eur": before["median_abs_eur"],
        "range_median_abs_pct": before["median_abs_pct"],
    }


def default_until(mirror: Any) -> str | None:
    """The backtest's default day: a week before the last sale; or, when that leaves fewer than
    `MIN_RESULTS` sales to learn from (a sales file of a few days), the day of the sale four
    fifths of the way through them, when it leaves enough. None without a sale."""
    days = sorted(
        day
        for (day,) in mirror.connection().execute(
            f"SELECT substr(r.ended_at, 1, 10) FROM auction_results r WHERE {_SOLD} UNION ALL "
            "SELECT sold_on FROM reported_sales WHERE price_eur IS NOT NULL"
        )
    )
    if not days:
        return None
    week = (date.fromisoformat(days[-1]) - timedelta(days=7)).isoformat()
    if bisect.bisect_left(days, week) >= MIN_RESULTS:
        return week
    later = days[int(len(days) * (1 - SCORED_SHARE))]
    return later if bisect.bisect_left(days, later) >= MIN_RESULTS else week


def backtest(mirror: Any, *, until: str | date | None = None, max_iter: int = 200) -> Backtest:
    """Train on the sales before `until` (default: `default_until`) and score
    those on or after it: the share of prices inside the 80% range, the median absolute error
    of the middle in EUR and in percent, by price band, TLD and origin; beside it, on the same
    sales, the peers (one range for every name, the venue x TLD x length lookup), Estibot's
    appraisal and GoValue where present, and the live estimate 24 hours before the end."""
    if until is None:
        until = default_until(mirror)
        if until is None:
            return Backtest(NO_SALE, 0, 0, None, None, None)
    until = until.isoformat() if isinstance(until, date) else str(until)
    model = train(mirror, ended_before=until, max_iter=max_iter)
    tested = _sales_frame(mirror, ended_from=until)
    if model is None or tested.empty:
        learnt = model.trained_on if model else len(_sales_frame(mirror, ended_before=until))
        return Backtest(until, learnt, 0, None, None, None, left_out=model.left_out if model else {})
    values, _ = model.predict(_features(tested, mirror.now().date(), words=model.words))
    low, mid, high = values[:, 0], values[:, 1], values[:, 2]
    actual = tested["final_price_eur"].astype(float).to_numpy()
    inside = (low <= actual) & (actual <= high)
    error = np.abs(mid - actual)
    whole = _scored(low, mid, high, actual)
    report = Backtest(
        until,
        model.trained_on,
        len(actual),
        whole["coverage"],
        whole["median_abs_eur"],
        whole["median_abs_pct"],
        left_out=model.left_out,
    )
    for lo, hi in BANDS:
        chosen = (actual >= lo) & (actual < hi)
        if chosen.any():
            band = f"{lo:,}-{hi:,} EUR" if hi != math.inf else f"{lo:,}+ EUR"
            report.by_band.append(
                {
                    "band": band,
                    "auctions": int(chosen.sum()),
                    "coverage": round(float(inside[chosen].mean()), 3),
                    "median_abs_eur": round(float(np.median(error[chosen])), 2),
                    "median_abs_pct": round(float(np.median(error[chosen] / actual[chosen])), 3),
                }
            )
    tlds = tested["tld"].fillna("").str.lstrip(".").to_numpy()
    for tld in [t for t, _ in sorted(((t, (tlds == t).sum()) for t in set(tlds)), key=lambda p: -p[1])][:10]:
        chosen = tlds == tld
        report.by_tld.append(
            {
                "tld": tld,
                "auctions": int(chosen.sum()),
                "coverage": round(float(inside[chosen].mean()), 3),
                "median_abs_eur": round(float(np.median(error[chosen])), 2),
            }
        )
    origins = tested["origin"].to_numpy()
    for origin in sorted(set(origins), key=lambda o: (o != "auction", o)):
        chosen = origins == origin
        report.by_origin.append(
            {
                "origin": "auctions the mirror saw end" if origin == "auction" else f"reported ({origin})",
                "sales": int(chosen.sum()),
                **_scored(low[chosen], mid[chosen], high[chosen], actual[chosen]),
            }
        )
    report.peers = _peers(_sales_frame(mirror, ended_before=until), tested, actual)
    auctions = origins == "auction"
    if auctions.any():
        seen = tested[auctions]
        report.others = _other_appraisals(mirror, seen, actual[auctions], error[auctions])
    report.live = _live_backtest(mirror, model, until, tested, mid)
    return report


def _other_appraisals(mirror: Any, tested: Any, actual: np.ndarray, ours: np.ndarray) -> list[dict[str, Any]]:
    """Estibot (the record's field) and GoValue (GoDaddy's `valuation`, Namecheap's `goValue`
    in the feed's raw record) on the auctions they appraised, with ours on the same ones."""
    from ..ingest.common import BadRow, parse_money
    from ..signals.fx import to_eur

    out = []
    estibot = tested["estibot_eur"].astype(float).to_numpy()
    govalue = np.full(len(tested), np.nan)
    ids = [int(i) for i in tested["listing_id"]]
    raws = dict(
        mirror.connection()
        .execute(f"SELECT id, raw FROM raw_records WHERE kind = 'listing' AND id IN ({','.join('?' * len(ids))})", ids)
        .fetchall()
    )
    for index, listing_id in enumerate(ids):
        raw = json.loads(raws[listing_id]) if raws.get(listing_id) else {}
        record = raw.get("feed_record") if isinstance(raw, dict) else None
        value = (record or {}).get("valuation") or (record or {}).get("goValue") if isinstance(record, dict) else None
        try:
            amount = parse_money(value)
        except BadRow:
            amount = None
        if amount:
            govalue[index] = to_eur(amount, "USD", date.today().isoformat()) or np.nan
    for label, theirs in (("Estibot (estibot_appraisal)", estibot), ("GoValue (feed records)", govalue)):
        chosen = ~np.isnan(theirs)
        if chosen.any():
            error = np.abs(theirs[chosen] - actual[chosen])
            out.append(
                {
                    "appraisal": label,
                    "auctions": int(chosen.sum()),
                    "median_abs_eur": round(float(np.median(error)), 2),
                    "median_abs_pct": round(float(np.median(error / actual[chosen])), 3),
                    "ours_median_abs_eur": round(float(np.median(ours[chosen])), 2),
                }
            )
    return out


def unvalued_reasons(mirror: Any, top: int = 5) -> list[tuple[str, int]]:
    """The commonest reasons live listings have no range, with how many listings each."""
    return (
        mirror.connection()
        .execute(
            "SELECT value_reason, count(*) FROM listings WHERE closed_at IS NULL AND live_until > ? "
            "AND value_reason IS NOT NULL GROUP BY 1 ORDER BY 2 DESC LIMIT ?",
            [iso_timestamp(mirror.now()), top],
        )
        .fetchall()
    )


RETRAIN_AFTER = 0.1  # the share of new sold results since the last training that retrains


def appraise_if_due(mirror: Any, say: Callable[[str], None] = print) -> dict[str, Any] | None:
    """After a scheduled sync or feed: appraise again when enough new sold results arrived
    since the last training (a tenth more, and at least `MIN_RESULTS` in all), else value the
    listings new since with the kept model. Says one line when it wrote anything."""
    sold = _sold_count(mirror)
    last = (value_model(mirror) or {}).get("trained_on") or 0
    if sold < MIN_RESULTS or (last and sold < last * (1 + RETRAIN_AFTER)):
        valued = value_new(mirror)
        if valued:
            say(
                f"appraise: ranges for {valued:,} new listing{'s' if valued != 1 else ''}, with the model learnt from "
                f"{last:,} sales"
            )
        return None
    summary = appraise(mirror)
    say(
        f"appraise: ranges for {summary['valued']:,} listings, learnt from {summary['trained_on']:,} sales"
        + (f"; {coverage_note(summary)}" if coverage_note(summary) else "")
    )
    return summary
