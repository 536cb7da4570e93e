"""A price range for every live listing, learnt from the mirror's own auction results, and
its error measured on auctions it did not learn from.

    from toolkit import Mirror
    from toolkit.analysis.appraise import appraise, backtest
    appraise(Mirror("data/mirror.db"))            # writes each live listing's value_low / _mid / _high in EUR
    backtest(Mirror("data/mirror.db")).summary()  # trains before a day, scores what ended after it

**The model.** scikit-learn's `HistGradientBoostingRegressor` with the quantile loss, three
times (the 10th, 50th and 90th percentiles: an 80% range and its middle), on the logarithm of
each sold auction's final price in EUR, the range calibrated on the latest results (split
conformal quantile regression, `train`). Why this one: gradient boosting handles the
features' mix (counts, metrics often missing, categories) without scaling, treats a missing
value as information, and its quantile loss gives a range directly; scikit-learn's
histogram version is LightGBM's algorithm in a library analysts already have, with native
categorical features and no system library beyond the wheels.

**The features**, all known while the auction runs (never its final bids):
the label's length, hyphens, digits and words (as the spam words read them); the TLD, its
family (legacy, new, a country's) and the platform; Trust Flow, Citation Flow, referring
domains, backlinks, Wayback snapshots and the archive's age; Estibot's appraisal; the price
asked when first seen.

**Null, with the reason**, when the model cannot judge a listing: fewer than `MIN_RESULTS`
sold results to learn from, a deleted ccTLD name (not for sale), or a TLD family with no
result among those learnt from. The three quantiles are put in order per listing (a
boosted quantile can cross its neighbour), so a range's low is never above its high.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import time
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..names import label_stats, split_domain
from ..signals.spam import name_words
from ..store.fields import iso_timestamp
from ..store.results import save_values, value_model_path
from .comps import tld_family

__all__ = ["MIN_RESULTS", "QUANTILES", "PriceModel", "train", "appraise", "appraise_if_due", "value_new", "backtest",
           "Backtest", "value_model", "model_path", "coverage_note", "RETRAIN_AFTER"]

MIN_RESULTS = 200  # sold results to learn from before any range is given
QUANTILES = (0.1, 0.5, 0.9)
NUMERIC = ("length", "hyphens", "digits", "words", "trust_flow", "citation_flow", "referring_domains",
           "backlinks_count", "wayback_snapshots", "archive_age", "estibot_eur", "first_price_eur")  # fmt: skip
CATEGORICAL = ("tld", "family", "source")
_LOGGED = ("referring_domains", "backlinks_count", "wayback_snapshots", "estibot_eur", "first_price_eur")

_LISTING_FEATURES = ("l.trust_flow, l.citation_flow, l.referring_domains, l.backlinks_count, l.wayback_snapshots, "
                     "l.wayback_first_date, l.estibot_appraisal")  # fmt: skip


def _features(frame: Any, today: date) -> Any:
    """The model's columns from a frame with name, tld, source, the listing metrics,
    `first_price_eur` and `estibot_eur`."""
    import pandas as pd

    out = pd.DataFrame(index=frame.index)
    slds = frame["name"].map(lambda n: split_domain(n)[0])
    stats = np.array([label_stats(s) for s in slds], dtype=float).reshape(-1, 3)
    out["length"], out["hyphens"], out["digits"] = stats[:, 0], stats[:, 1], stats[:, 2]
    out["words"] = slds.map(lambda s: len(name_words(s))).astype(float)
    for column in ("trust_flow", "citation_flow", "referring_domains", "backlinks_count", "wayback_snapshots",
                   "estibot_eur", "first_price_eur"):  # fmt: skip
        out[column] = pd.to_numeric(frame[column], errors="coerce").astype(float)
    first = pd.to_datetime(frame["wayback_first_date"], errors="coerce", format="ISO8601")
    out["archive_age"] = (pd.Timestamp(today) - first).dt.days / 365.25
    for column in _LOGGED:
        out[column] = np.log1p(out[column].clip(lower=0))
    tlds = frame["tld"].fillna(frame["name"].map(lambda n: split_domain(n)[1])).str.lstrip(".")
    out["tld"] = tlds
    out["family"] = tlds.map(tld_family)
    out["source"] = frame["source"].fillna("")
    return out


@dataclass
class PriceModel:
    """Three quantile models and the categories they learnt."""

    models: list[Any]
    categories: dict[str, list[str]]
    trained_on: int
    trained_at: str
    ended_before: str | None = None
    widen: float = 0.0  # conformal correction of the range, in log EUR (the calibration's)

    def _matrix(self, features: Any) -> Any:
        import pandas as pd

        matrix = features[list(NUMERIC)].copy()
        for column in CATEGORICAL:
            known = {value: code for code, value in enumerate(self.categories[column])}
            matrix[column] = features[column].map(known).astype(float)  # unseen: NaN, a missing value
        return matrix.astype(float) if isinstance(matrix, pd.DataFrame) else matrix

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
        reasons = np.array([None if f in families else f"no sold result of its TLD family ({f}) to learn from"
                            for f in features["family"]], dtype=object)  # fmt: skip
        return values, reasons


def _results_frame(mirror: Any, *, ended_before: str | None = None, ended_from: str | None = None) -> Any:
    import pandas as pd

    where, args = ["r.sold = 1", "r.final_price_eur IS NOT NULL"], []
    if ended_before:
        where.append("r.ended_at < ?")
        args.append(ended_before)
    if ended_from:
        where.append("r.ended_at >= ?")
        args.append(ended_from)
    frame = pd.read_sql_query(
        f"SELECT r.listing_id, r.name, r.tld, r.source, r.ended_at, r.final_price_eur, r.currency, {_LISTING_FEATURES}, "
        "l.currency AS listing_currency, (SELECT h.price FROM listing_history h WHERE h.listing_id = r.listing_id "
        "ORDER BY h.observed_at LIMIT 1) AS first_price "
        f"FROM auction_results r LEFT JOIN listings l ON l.id = r.listing_id WHERE {' AND '.join(where)}",
        mirror.connection(), params=args)  # fmt: skip
    return _with_eur(frame)


def _with_eur(frame: Any) -> Any:
    from ..signals.fx import to_eur

    day = date.today().isoformat()
    currency = frame["currency"] if "currency" in frame else frame["listing_currency"]
    frame["first_price_eur"] = [to_eur(p, c, day) if p == p and p is not None and isinstance(c, str) else None
                                for p, c in zip(frame["first_price"], currency)]  # fmt: skip
    # Estibot appraises in US dollars
    frame["estibot_eur"] = [to_eur(v, "USD", day) if v == v and v is not None else None for v in frame["estibot_appraisal"]]
    return frame


CALIBRATION_SHARE = 0.2  # the latest results, kept out of the fit to calibrate the range


def train(mirror: Any, *, ended_before: str | None = None, max_iter: int = 200) -> PriceModel | None:
    """The model learnt from every sold result (ended before `ended_before` when given); None
    with fewer than `MIN_RESULTS`.

    The quantile models are fitted on the older 80% of the results; the latest 20% calibrate
    the range (split conformal quantile regression: the range is widened, or narrowed, by the
    80th percentile of how far each calibration price fell outside it), so that it holds four
    prices in five on auctions it did not learn from, as a fitted quantile alone does not."""
    from sklearn.ensemble import HistGradientBoostingRegressor

    from ..config import bounded_threads

    frame = _results_frame(mirror, ended_before=ended_before)
    if len(frame) < MIN_RESULTS:
        return None
    frame = frame.sort_values(["ended_at", "listing_id"]).reset_index(drop=True)
    features = _features(frame, mirror.now().date())
    categories = {c: sorted(features[c].dropna().unique().tolist()) for c in CATEGORICAL}
    model = PriceModel([], categories, len(frame), iso_timestamp(mirror.now().replace(microsecond=0)), ended_before)
    matrix = model._matrix(features)
    target = np.log1p(frame["final_price_eur"].astype(float).to_numpy())
    cut = int(len(frame) * (1 - CALIBRATION_SHARE))
    mask = [matrix.columns.get_loc(c) for c in CATEGORICAL]
    with bounded_threads():  # two processes training at once must not spin against each other
        for quantile in QUANTILES:
            regressor = HistGradientBoostingRegressor(loss="quantile", quantile=quantile, max_iter=max_iter,
                                                      learning_rate=0.05, min_samples_leaf=20, random_state=0,
                                                      categorical_features=mask)  # fmt: skip
            model.models.append(regressor.fit(matrix.iloc[:cut], target[:cut]))
        low, high = model.models[0].predict(matrix.iloc[cut:]), model.models[2].predict(matrix.iloc[cut:])
    outside = np.maximum(low - target[cut:], target[cut:] - high)
    level = min(1.0, (QUANTILES[2] - QUANTILES[0]) * (1 + 1 / len(outside)))
    model.widen = float(np.quantile(outside, level, method="higher"))
    return model


def _live_frame(mirror: Any, *, unvalued: bool = False) -> Any:
    import pandas as pd

    now = iso_timestamp(mirror.now())
    frame = pd.read_sql_query(
        f"SELECT l.id AS listing_id, l.name, l.tld, l.source, l.currency, {_LISTING_FEATURES}, "
        "(SELECT h.price FROM listing_history h WHERE h.listing_id = l.id ORDER BY h.observed_at LIMIT 1) AS first_price "
        "FROM listings l WHERE l.closed_at IS NULL AND l.live_until > ?" + (" AND l.valued_at IS NULL" if unvalued else ""),
        mirror.connection(), params=[now])  # fmt: skip
    return _with_eur(frame)


def _ranges(mirror: Any, model: PriceModel | None, live: Any) -> list[tuple[int, Any, Any, Any, str | None]]:
    """(listing_id, low, mid, high, reason) of each listing of `live`: the model's range, or
    null with the reason it gives none."""
    if model is None:
        sold = mirror.connection().execute("SELECT count(*) FROM auction_results WHERE sold = 1 AND final_price_eur "
                                           "IS NOT NULL").fetchone()[0]  # fmt: skip
        reason = f"too few sold results to learn from ({sold:,} of the {MIN_RESULTS:,} needed)"
        return [(int(i), None, None, None, reason) for i in live["listing_id"]]
    if live.empty:
        return []
    values, reasons = model.predict(_features(live, mirror.now().date()))
    regfree = (live["source"] == "regfree").to_numpy()
    rows = []
    for index, listing_id in enumerate(live["listing_id"]):
        reason = "a deleted ccTLD name: not for sale" if regfree[index] else reasons[index]
        low, mid, high = (None, None, None) if reason else map(float, values[index])
        rows.append((int(listing_id), low, mid, high, reason))
    return rows


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
    """The model `appraise` last kept, or None (none kept, or one this toolkit cannot read)."""
    try:
        model = pickle.loads(model_path(mirror).read_bytes())
    except (OSError, pickle.UnpicklingError, AttributeError, ImportError, EOFError, TypeError, ValueError):
        return None
    return model if isinstance(model, PriceModel) else None


def appraise(mirror: Any, *, model: PriceModel | None = None, measure: bool = True) -> dict[str, Any]:
    """Train (unless `model` is given) and write every live listing's range onto the listing
    (`value_low`, `value_mid`, `value_high`, or `value_reason`; store/results.py `save_values`)
    in one transaction; with `measure`, the backtest of the last week first, whose coverage is
    kept with the ranges (`value_model` in `mirror_meta`: what the app shows beside each
    range). The model is kept beside the mirror for `value_new`. Returns that summary."""
    started = time.perf_counter()
    measured = backtest(mirror) if measure else None
    model = model or train(mirror)
    rows = _ranges(mirror, model, _live_frame(mirror))
    stamp = iso_timestamp(mirror.now().replace(microsecond=0))
    summary = {"listings": len(rows), "valued": sum(r[1] is not None for r in rows),
               "trained_on": model.trained_on if model else 0, "valued_at": stamp,
               "backtest": None if measured is None or not measured.scored else
               {"until": measured.until, "auctions": measured.scored, "coverage": measured.coverage,
                "median_abs_eur": measured.median_abs_eur, "median_abs_pct": measured.median_abs_pct}}  # fmt: skip
    conn = mirror.connection()
    with conn:
        save_values(conn, rows, stamp)
        summary["seconds"] = round(time.perf_counter() - started, 1)  # the writing included
        conn.execute("INSERT INTO mirror_meta (key, value) VALUES ('value_model', ?) ON CONFLICT(key) DO UPDATE SET "
                     "value = excluded.value", [json.dumps(summary)])  # fmt: skip
    _save_model(mirror, model)
    return summary


def value_new(mirror: Any) -> int:
    """Value the live listings never valued (those a sync brought since the last `appraise`)
    with the model it kept; returns how many were written (0 without a kept model)."""
    model = _load_model(mirror)
    if model is None:
        return 0
    rows = _ranges(mirror, model, _live_frame(mirror, unvalued=True))
    if rows:
        conn = mirror.connection()
        with conn:
            save_values(conn, rows, iso_timestamp(mirror.now().replace(microsecond=0)))
    return len(rows)


# -- the backtest ---------------------------------------------------------------------------

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
    others: list[dict[str, Any]] = field(default_factory=list)  # the appraisals the feeds carry, on the same auctions

    def summary(self) -> str:
        if not self.scored:
            return f"no sold auction ended on or after {self.until} to score (trained on {self.trained_on:,})"
        return (f"80% range right {self.coverage:.0%} of the time on {self.scored:,} auctions ended since "
                f"{self.until} (trained on {self.trained_on:,} before it); median error {self.median_abs_eur:,.0f} EUR "
                f"({self.median_abs_pct:.0%})")  # fmt: skip

    def to_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def backtest(mirror: Any, *, until: str | date | None = None, max_iter: int = 200) -> Backtest:
    """Train on the sold results that ended before `until` (default: a week before the last
    end) and score those that ended on or after it: the share of final prices inside the 80%
    range, the median absolute error of the middle in EUR and in percent, by price band and by
    TLD; beside it, on the same auctions, Estibot's appraisal and GoValue where present."""
    if until is None:
        last = mirror.connection().execute("SELECT max(ended_at) FROM auction_results WHERE sold = 1").fetchone()[0]
        if last is None:
            return Backtest("-", 0, 0, None, None, None)
        until = (datetime.fromisoformat(last.replace("Z", "+00:00")) - timedelta(days=7)).date().isoformat()
    until = until.isoformat() if isinstance(until, date) else str(until)
    model = train(mirror, ended_before=until, max_iter=max_iter)
    tested = _results_frame(mirror, ended_from=until)
    if model is None or tested.empty:
        return Backtest(until, model.trained_on if model else 0, 0, None, None, None)
    values, _ = model.predict(_features(tested, mirror.now().date()))
    low, mid, high = values[:, 0], values[:, 1], values[:, 2]
    actual = tested["final_price_eur"].astype(float).to_numpy()
    inside = (low <= actual) & (actual <= high)
    error = np.abs(mid - actual)
    report = Backtest(until, model.trained_on, len(actual), round(float(inside.mean()), 3),
                      round(float(np.median(error)), 2), round(float(np.median(error / actual)), 3))  # fmt: skip
    for lo, hi in BANDS:
        chosen = (actual >= lo) & (actual < hi)
        if chosen.any():
            band = f"{lo:,}-{hi:,} EUR" if hi != math.inf else f"{lo:,}+ EUR"
            report.by_band.append({"band": band, "auctions": int(chosen.sum()), "coverage": round(float(inside[chosen].mean()), 3),
                                   "median_abs_eur": round(float(np.median(error[chosen])), 2),
                                   "median_abs_pct": round(float(np.median(error[chosen] / actual[chosen])), 3)})  # fmt: skip
    tlds = tested["tld"].fillna("").str.lstrip(".").to_numpy()
    for tld in [t for t, _ in sorted(((t, (tlds == t).sum()) for t in set(tlds)), key=lambda p: -p[1])][:10]:
        chosen = tlds == tld
        report.by_tld.append({"tld": tld, "auctions": int(chosen.sum()), "coverage": round(float(inside[chosen].mean()), 3),
                              "median_abs_eur": round(float(np.median(error[chosen])), 2)})  # fmt: skip
    report.others = _other_appraisals(mirror, tested, actual, error)
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
    raws = dict(mirror.connection().execute(
        f"SELECT id, raw FROM raw_records WHERE kind = 'listing' AND id IN ({','.join('?' * len(ids))})", ids).fetchall())  # fmt: skip
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
            out.append({"appraisal": label, "auctions": int(chosen.sum()),
                        "median_abs_eur": round(float(np.median(error)), 2),
                        "median_abs_pct": round(float(np.median(error / actual[chosen])), 3),
                        "ours_median_abs_eur": round(float(np.median(ours[chosen])), 2)})  # fmt: skip
    return out


def value_model(mirror: Any) -> dict[str, Any] | None:
    """The last `appraise`'s summary (its backtest's coverage with it), or None."""
    row = mirror.connection().execute("SELECT value FROM mirror_meta WHERE key = 'value_model'").fetchone()
    return json.loads(row[0]) if row else None


def coverage_note(summary: dict[str, Any] | None) -> str | None:
    """"80% range, right 82% of the time on 1,390 auctions since 18 Nov" (None before a backtest)."""
    measured = (summary or {}).get("backtest")
    if not measured:
        return None
    since = date.fromisoformat(measured["until"][:10])
    return (f"80% range, right {measured['coverage']:.0%} of the time on {measured['auctions']:,} auctions since "
            f"{since.day} {since:%b}")


RETRAIN_AFTER = 0.1  # the share of new sold results since the last training that retrains


def appraise_if_due(mirror: Any, say: Callable[[str], None] = print) -> dict[str, Any] | None:
    """After a scheduled sync or feed: appraise again when enough new sold results arrived
    since the last training (a tenth more, and at least `MIN_RESULTS` in all), else value the
    listings new since with the kept model. Says one line when it wrote anything."""
    sold = mirror.connection().execute(
        "SELECT count(*) FROM auction_results WHERE sold = 1 AND final_price_eur IS NOT NULL").fetchone()[0]
    last = (value_model(mirror) or {}).get("trained_on") or 0
    if sold < MIN_RESULTS or (last and sold < last * (1 + RETRAIN_AFTER)):
        valued = value_new(mirror)
        if valued:
            say(f"appraise: ranges for {valued:,} new listing{'s' if valued != 1 else ''}, with the model learnt from "
                f"{last:,} sold auctions")
        return None
    summary = appraise(mirror)
    say(f"appraise: ranges for {summary['valued']:,} listings, learnt from {summary['trained_on']:,} sold auctions"
        + (f"; {coverage_note(summary)}" if coverage_note(summary) else ""))
    return summary
