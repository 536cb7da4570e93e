"""Frames for analysts: the logic behind the notebooks, over the public Python API.

Each function takes a `Mirror` (or a frame one returned) and returns a pandas DataFrame an
analyst can read, chart (`toolkit.analysis.charts`) or act on. Filters are the `/api/domains` or
`/api/pending-delete` parameters; history questions read the mirror's tables in SQL,
where SQL is the natural tool.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

import pandas as pd

from ..query import Mirror

__all__ = [
    "METRICS",
    "tf_cf_by",
    "spam_signal",
    "topics",
    "tf_per_price",
    "age_profile",
    "first_snapshot_cohorts",
    "language_by_tld",
    "age_against_price",
    "drops_ahead",
    "status_mix",
    "best_of_the_week",
    "bid_trajectories",
    "closed_listings",
    "first_seen_cohorts",
    "SIGNAL_FLAGS",
    "flagged_buys",
    "currency_mistakes",
]

METRICS = [
    "id",
    "name",
    "source",
    "tld",
    "type",
    "currency",
    "effective_price",
    "score",
    "trust_flow",
    "citation_flow",
    "ttf_topic",
    "age",
    "wayback_first_date",
    "wayback_snapshots",
    "language",
    "auction_end_date",
    "bids_count",
]
# CF this far above TF (CF >= 2 TF + 10) is the classic sign of bought, low-quality links.
SPAM_MARGIN = 10


def _listings(mirror: Mirror, params: Mapping[str, Any] | None, columns: list[str] | None = None) -> pd.DataFrame:
    return mirror.domains_df(dict(params or {}), columns=columns or METRICS)


def tf_cf_by(mirror: Mirror, by: str = "source", params: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Per `source` or `tld`: listings, how many have TF/CF, median TF and CF, median TF/CF."""
    frame = spam_signal(_listings(mirror, params))
    frame["with_metrics"] = frame["trust_flow"].notna() & frame["citation_flow"].notna()  # 0 / 0 is known
    grouped = frame.groupby(by, dropna=False)
    out = pd.DataFrame(
        {
            "listings": grouped.size(),
            "with_metrics": grouped["with_metrics"].sum(),
            "median_tf": grouped["trust_flow"].median(),
            "median_cf": grouped["citation_flow"].median(),
            "median_ratio": grouped["tf_cf_ratio"].median(),
            "spam_share": grouped["cf_far_above_tf"].mean(),
        }
    )
    return out.sort_values("listings", ascending=False)


def spam_signal(frame: pd.DataFrame) -> pd.DataFrame:
    """Adds `tf_cf_ratio` (TF / CF, where CF > 0) and `cf_far_above_tf` (CF >= 2 TF + 10)."""
    out = frame.copy()
    tf = out["trust_flow"].astype("Float64")
    cf = out["citation_flow"].astype("Float64")
    out["tf_cf_ratio"] = (tf / cf.where(cf > 0)).astype("Float64")
    out["cf_far_above_tf"] = (cf >= 2 * tf + SPAM_MARGIN).astype("boolean")
    return out


def topics(frame: pd.DataFrame, top: int = 15) -> pd.DataFrame:
    """Listings and median TF per top-level topic (the part of `ttf_topic` before '/')."""
    category = frame["ttf_topic"].fillna("Unknown").str.split("/").str[0]
    grouped = frame.assign(category=category).groupby("category")
    out = pd.DataFrame({"listings": grouped.size(), "median_tf": grouped["trust_flow"].median()})
    return out.sort_values("listings", ascending=False).head(top)


def tf_per_price(mirror: Mirror, params: Mapping[str, Any] | None = None, top: int = 10) -> pd.DataFrame:
    """Live auctions with a price and TF, ranked by TF per unit of price within each currency
    (prices in different currencies are not compared)."""
    frame = _listings(mirror, {"type": "auction", **dict(params or {})})
    frame = frame[frame["effective_price"].gt(0) & frame["trust_flow"].gt(0) & frame["currency"].notna()]
    frame = frame.assign(tf_per_unit=frame["trust_flow"].astype(float) / frame["effective_price"].astype(float))
    ranked = frame.sort_values(["currency", "tf_per_unit", "id"], ascending=[True, False, True])
    return (
        ranked.groupby("currency")
        .head(top)[
            ["currency", "name", "source", "trust_flow", "effective_price", "tf_per_unit", "auction_end_date", "id"]
        ]
        .reset_index(drop=True)
    )


def age_profile(mirror: Mirror, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Per whole year of age: listings, median snapshots and snapshots per year of age."""
    frame = _listings(mirror, params)
    frame = frame[frame["age"].notna() & frame["wayback_snapshots"].notna()]
    density = frame["wayback_snapshots"].astype(float) / frame["age"].clip(lower=1).astype(float)
    grouped = frame.assign(density=density).groupby("age")
    return pd.DataFrame(
        {
            "listings": grouped.size(),
            "median_snapshots": grouped["wayback_snapshots"].median(),
            "snapshots_per_year": grouped["density"].median(),
        }
    )


def first_snapshot_cohorts(frame: pd.DataFrame) -> pd.DataFrame:
    """Per year of the first web-archive snapshot: listings, median TF and median price."""
    year = pd.to_numeric(frame["wayback_first_date"].str.slice(0, 4), errors="coerce")
    grouped = frame.assign(first_year=year).dropna(subset=["first_year"]).groupby("first_year")
    out = pd.DataFrame(
        {
            "listings": grouped.size(),
            "median_tf": grouped["trust_flow"].median(),
            "median_price": grouped["effective_price"].median(),
        }
    )
    out.index = out.index.astype(int)
    return out


def language_by_tld(frame: pd.DataFrame, top_tlds: int = 10) -> pd.DataFrame:
    """Share of each language among the listings of the largest TLDs (rows sum to 1)."""
    largest = frame["tld"].value_counts().head(top_tlds).index
    subset = frame[frame["tld"].isin(largest)]
    return pd.crosstab(subset["tld"], subset["language"].fillna("Unknown"), normalize="index").loc[largest]


def age_against_price(frame: pd.DataFrame) -> pd.DataFrame:
    """Median price and listings per age band, per currency."""
    bands = pd.cut(
        frame["age"].astype(float),
        [0, 2, 5, 10, 15, 20, 30, 100],
        right=False,
        labels=["0-1", "2-4", "5-9", "10-14", "15-19", "20-29", "30+"],
    )
    priced = frame.assign(age_band=bands)[frame["effective_price"].notna() & bands.notna()]
    return priced.groupby(["currency", "age_band"], observed=True)["effective_price"].agg(["count", "median"])


def drops_ahead(mirror: Mirror, days: int = 45, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Pending-delete domains dropping from today to `days` ahead, counted per day and TLD."""
    today = mirror.now().date()
    window = {"drop_date_from": today.isoformat(), "drop_date_to": (today + timedelta(days=days)).isoformat()}
    frame = mirror.pending_df({**window, **dict(params or {})}, columns=["tld", "estimated_drop_date"])
    counts = frame.groupby(["estimated_drop_date", "tld"]).size().rename("domains").reset_index()
    return counts.sort_values(["estimated_drop_date", "domains"], ascending=[True, False]).reset_index(drop=True)


def status_mix(mirror: Mirror, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Pending-delete domains per WHOIS status, with their share."""
    frame = mirror.pending_df(dict(params or {}), columns=["whois_status"])
    counts = frame["whois_status"].value_counts().rename("domains").to_frame()
    counts["share"] = counts["domains"] / counts["domains"].sum()
    return counts


def best_of_the_week(mirror: Mirror, n: int = 20) -> pd.DataFrame:
    """The pending-delete domains dropping within 7 days, best score first."""
    frame = mirror.pending_df(
        {"drops_within": "7"},
        columns=["domain", "tld", "whois_status", "estimated_drop_date", "score", "trust_flow", "referring_domains"],
    )
    return (
        frame.sort_values(["score", "trust_flow", "domain"], ascending=[False, False, True], na_position="last")
        .head(n)
        .reset_index(drop=True)
    )


def bid_trajectories(mirror: Mirror, top: int = 10) -> pd.DataFrame:
    """The price and bid history (`listing_history`) of the live auctions that changed most."""
    now = mirror.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    return pd.read_sql_query(
        """
        WITH busiest AS (
            SELECT h.listing_id, count(*) AS changes
            FROM listing_history h JOIN listings l ON l.id = h.listing_id
            WHERE l.type = 'auction' AND l.closed_at IS NULL AND l.auction_end_date > ?
            GROUP BY h.listing_id ORDER BY changes DESC, h.listing_id LIMIT ?
        )
        SELECT l.name, h.listing_id, h.observed_at, h.bids_count, h.max_bid, h.effective_price, b.changes
        FROM listing_history h JOIN busiest b USING (listing_id) JOIN listings l ON l.id = h.listing_id
        ORDER BY b.changes DESC, h.listing_id, h.observed_at, h.id
        """,
        mirror.connection(),
        params=[now, top],
    )


def _with_put_away(mirror: Mirror, sql: str, params: list[Any], columns: list[str]) -> pd.DataFrame:
    """`sql`'s rows of the plain listings, and the same over the packed and archived ones
    (`edt archive`), as one frame: `sql` reads a table `listings` of `columns`."""
    import sqlite3

    from ..store.parquet_archive import archive_table

    frame = pd.read_sql_query(sql, mirror.connection(), params=params)
    put_away = archive_table(mirror.path, "listings", columns=columns, conn=mirror.connection())
    if put_away is None or not put_away.num_rows:
        return frame
    scratch = sqlite3.connect(":memory:")  # the same SQL over them, so both halves agree
    try:
        put_away.to_pandas().to_sql("listings", scratch, index=False)
        return pd.concat([frame, pd.read_sql_query(sql, scratch, params=params)], ignore_index=True)
    finally:
        scratch.close()


def closed_listings(mirror: Mirror) -> pd.DataFrame:
    """Listings a full sync found gone from their source, newest first, with how long they
    were seen (packed and archived ones too)."""
    frame = _with_put_away(
        mirror,
        "SELECT id, name, source, first_seen_at, closed_at, "
        "round(julianday(closed_at) - julianday(first_seen_at), 1) AS days_listed "
        "FROM listings WHERE closed_at IS NOT NULL",
        [],
        ["id", "name", "source", "first_seen_at", "closed_at"],
    )
    return frame.sort_values(["closed_at", "id"], ascending=[False, True], ignore_index=True)


def first_seen_cohorts(mirror: Mirror) -> pd.DataFrame:
    """Listings per day this mirror first saw them, per origin (demo, sync, ingest), and how
    many of each cohort are still live (packed and archived ones counted too)."""
    now = mirror.now().strftime("%Y-%m-%dT%H:%M:%SZ")
    sql = (
        "SELECT substr(first_seen_at, 1, 10) AS first_seen, origin, count(*) AS listings, "
        "sum(closed_at IS NULL AND (auction_end_date IS NULL OR auction_end_date > ?)) AS still_live "
        "FROM listings GROUP BY 1, 2"
    )
    frame = _with_put_away(mirror, sql, [now], ["first_seen_at", "origin", "closed_at", "auction_end_date"])
    frame = frame.groupby(["first_seen", "origin"], as_index=False, dropna=False)[["listings", "still_live"]].sum()
    return frame.sort_values(["first_seen", "origin"], ignore_index=True)


# ---------------------------------------------------------------- judging signals

# The exclusion filters of the signals (toolkit/signals/) and the column each reads.
SIGNAL_FLAGS = {"exclude_inflated": "metrics_jumped", "exclude_spam": "spam_count", "exclude_parked": "archive_parked"}
_SIGNAL_COLUMNS = [
    "id",
    "name",
    "source",
    "currency",
    "effective_price",
    "effective_price_eur",
    "trust_flow",
    "metrics_jumped",
    "metrics_jump",
    "spam_count",
    "spam_terms",
    "archive_parked",
    "archive_parked_reason",
    "archive_continuity",
]


def flagged_buys(mirror: Mirror, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """What a shortlist (`params`) holds that a flag would have left out: one row per flag
    (inflated metrics, spam words, a parked page: known flags only, an unchecked archive is
    not counted as parked) and one for any of them, with the listings and their value in
    EUR; `kept` is the rest of the shortlist."""
    frame = _listings(mirror, params, _SIGNAL_COLUMNS)
    hits = {
        "exclude_inflated": frame["metrics_jumped"].fillna(False).astype(bool),
        "exclude_spam": frame["spam_count"].fillna(0).astype(int) > 0,
        "exclude_parked": frame["archive_parked"].fillna(False).astype(bool),
    }
    hits["any flag"] = hits["exclude_inflated"] | hits["exclude_spam"] | hits["exclude_parked"]
    value = frame["effective_price_eur"].astype("Float64")
    rows = [{"flag": name, "listings": int(hit.sum()), "eur": float(value[hit].sum())} for name, hit in hits.items()]
    rows.append(
        {"flag": "kept", "listings": int((~hits["any flag"]).sum()), "eur": float(value[~hits["any flag"]].sum())}
    )
    return pd.DataFrame(rows).set_index("flag")


def currency_mistakes(mirror: Mirror, limit: float, params: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Per currency: listings `price_max=limit` returns (native prices) against those
    `price_eur_max=limit` returns, and the listings only one of the two includes."""
    native = _listings(mirror, {**(params or {}), "price_max": limit}, ["id", "currency"])
    euro = _listings(mirror, {**(params or {}), "price_eur_max": limit}, ["id", "currency"])
    a = native.groupby(native["currency"].fillna("none")).id.apply(set)
    b = euro.groupby(euro["currency"].fillna("none")).id.apply(set)
    rows = []
    columns = ["currency", "price_max", "price_eur_max", "wrongly_in", "wrongly_out"]
    for currency in sorted(set(a.index) | set(b.index)):
        ids_a, ids_b = a.get(currency, set()), b.get(currency, set())
        rows.append(
            {
                "currency": currency,
                "price_max": len(ids_a),
                "price_eur_max": len(ids_b),
                "wrongly_in": len(ids_a - ids_b),
                "wrongly_out": len(ids_b - ids_a),
            }
        )
    return pd.DataFrame(rows, columns=columns).set_index("currency")  # no listing: an empty table
