"""The mirror read as pandas DataFrames, for the notebooks and the charts: every listing a
request matches (`domains_df`), the auction results (`results_df`), the pending-delete rows
(`pending_df`) and a listing's history (`listing_history`). `Mirror`'s methods of the same
names are these functions, the mirror their first argument."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..store.schema import DEAL_RATIO
from ..store.tables import HISTORY_COLUMNS as HISTORY_TABLE
from .params import DOMAIN_PARAMS, PENDING_PARAMS
from .records import LISTING_OUTPUT, PENDING_OUTPUT, select_columns
from .replica import check_domain_plan, parsed_request, pending_sql

if TYPE_CHECKING:
    import pandas as pd

    from .mirror import Mirror

__all__ = ["domains_df", "results_df", "pending_df", "listing_history", "HISTORY_COLUMNS"]

# What a listing's history holds, oldest first (`listing_history`).
HISTORY_COLUMNS = [c for c in HISTORY_TABLE if c not in ("id", "listing_id")]


def domains_df(
    mirror: Mirror,
    params: Mapping[str, Any] | None = None,
    plan: str | None = None,
    *,
    columns: Iterable[str] | None = None,
    sample: int | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """Every matching listing as a pandas DataFrame (the `/api/domains` filters, no paging).

    `columns` picks fields (default all; `age` needs `wayback_first_date`, which is added).
    `sample=N` keeps about N rows when more match: every k-th by id, the same rows each
    time (charts over a broad filter need the shape, not all 500,000 points)."""
    import pandas as pd

    plan, values = parsed_request(mirror, plan, "domains", DOMAIN_PARAMS, {**(params or {}), **filters}, strict=True)
    check_domain_plan(values, plan)
    sql = mirror.search.sql(values, mirror.now())
    chosen = select_columns(columns, LISTING_OUTPUT)
    if "age" in chosen and "wayback_first_date" not in chosen:
        chosen.append("wayback_first_date")
    where, args = sql.where, list(sql.args)
    read = [f"{DEAL_RATIO} AS deal" if c == "deal" else c for c in chosen]  # a derived field, as SQL
    sampled = mirror.search.sampled_ids(values, sample) if sample else None
    if sampled is not None:  # the columnar index picked (and ordered) the rows `id % step = 0` keeps
        read = read if "id" in chosen else ["id", *read]
        frame = pd.read_sql_query(
            f"SELECT {', '.join(read)} FROM listings WHERE id IN (SELECT value FROM json_each(?))",
            mirror.connection(),
            params=[json.dumps(sampled)],
        )
        frame = frame.set_index("id", drop=False).loc[sampled].reset_index(drop=True)[chosen]
    else:
        if sample:
            total = mirror.search_domains({**(params or {}), **filters, "per_page": 1}, plan)["meta"]["total"]
            step = -(-total // sample)
            if step > 1:
                where, args = f"({where}) AND id % ? = 0", [*args, step]
        frame = pd.read_sql_query(
            f"SELECT {', '.join(read)} FROM listings WHERE {where} ORDER BY {sql.order}",
            mirror.connection(),
            params=args,
        )
    _typed(frame)
    if "age" in frame.columns:
        today = mirror.now().date()
        first = frame["wayback_first_date"].astype("string")
        birthday_ahead = (first.str.slice(5) > f"{today.month:02d}-{today.day:02d}").astype("Int64")
        frame["age"] = (today.year - first.str.slice(0, 4).astype("Int64") - birthday_ahead).astype("Int64")
    if not values.get("include_historical_traffic") and "historical_traffic" in frame.columns and columns is None:
        frame = frame.drop(columns=["historical_traffic"])
    return frame


def _typed(frame: pd.DataFrame) -> None:
    """Each listing field as its kind: nullable booleans and integers, JSON read back."""
    for name, kind in LISTING_OUTPUT.items():
        if name not in frame.columns:
            continue
        if kind == "bool":
            frame[name] = frame[name].astype("boolean")
        elif kind in ("array", "object"):
            frame[name] = frame[name].map(lambda v: json.loads(v) if isinstance(v, str) else None)
        elif kind == "int":
            frame[name] = frame[name].astype("Int64")
    _numbers(frame, LISTING_OUTPUT)


def _numbers(frame: pd.DataFrame, kinds: Mapping[str, str]) -> None:
    """A number column SQLite gave as objects (every value NULL, no row to type it) read as
    numbers: missing, not None."""
    import pandas as pd

    for name in frame.columns:
        if kinds.get(name) in ("num", "int") and frame[name].dtype == object:
            frame[name] = pd.to_numeric(frame[name])


def results_df(
    mirror: Mirror,
    params: Mapping[str, Any] | None = None,
    plan: str | None = None,
    *,
    ended_after: str | None = None,
    ended_before: str | None = None,
    sold: bool | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """The result of every auction the mirror saw end (`auction_results`, store/results.py)
    as a DataFrame, newest end first: final price (native and EUR), bids, sold, where the
    name went next. The `/api/domains` filters (`params`, `filters`) choose the listings,
    closed or not; `ended_after` / `ended_before` (ISO dates or moments) and `sold` the results."""
    import pandas as pd

    where: list[str] = ["1"]
    args: list[Any] = []
    if ended_after:
        where.append("r.ended_at >= ?")
        args.append(str(ended_after))
    if ended_before:
        where.append("r.ended_at < ?")
        args.append(str(ended_before))
    if sold is not None:
        where.append("r.sold = ?")
        args.append(int(bool(sold)))
    frame = pd.read_sql_query(
        f"SELECT r.* FROM auction_results r WHERE {' AND '.join(where)} ORDER BY r.ended_at DESC, r.listing_id",
        mirror.connection(),
        params=args,
    )
    chosen = {k: v for k, v in {**(params or {}), **filters}.items() if v not in (None, "")}
    if chosen:
        listings = domains_df(mirror, {**chosen, "include_closed": "1"}, plan, columns=["id"])
        frame = frame[frame["listing_id"].isin(listings["id"])].reset_index(drop=True)
    frame["sold"] = frame["sold"].astype(bool)
    for column in ("bids", "next_id"):
        frame[column] = frame[column].astype("Int64")
    return frame


def pending_df(
    mirror: Mirror,
    params: Mapping[str, Any] | None = None,
    plan: str | None = None,
    *,
    columns: Iterable[str] | None = None,
    **filters: Any,
) -> pd.DataFrame:
    """Every matching pending-delete row (the /api/pending-delete filters, no paging) as a
    DataFrame; `columns` picks fields (default all)."""
    import pandas as pd

    _, values = parsed_request(
        mirror, plan, "pending_delete", PENDING_PARAMS, {**(params or {}), **filters}, strict=True
    )
    where, args, order = pending_sql(mirror, values)
    chosen = select_columns(columns, PENDING_OUTPUT)
    frame = pd.read_sql_query(
        f"SELECT {', '.join(chosen)} FROM pending_delete WHERE {where} ORDER BY {order}",
        mirror.connection(),
        params=args,
    )
    _numbers(frame, PENDING_OUTPUT)
    return frame


def listing_history(mirror: Mirror, listing_id: int | str, plan: str | None = None) -> pd.DataFrame:
    """A listing's price, bid and metric history (`listing_history`), oldest first, as a
    DataFrame; an archived listing's from the archive, where its history went with it."""
    import pandas as pd

    mirror.get_domain(listing_id, plan)  # 404 / 403 as the API
    with mirror.search.snapshot() as conn:
        frame = pd.read_sql_query(
            f"SELECT {', '.join(HISTORY_COLUMNS)} FROM listing_history WHERE listing_id = ? ORDER BY observed_at, id",
            conn,
            params=[int(listing_id)],
        )
        held = conn.execute("SELECT 1 FROM listings WHERE id = ?", [int(listing_id)]).fetchone()
        if held is None and mirror.search.archived(conn):
            from ..store.parquet_archive import archived_rows

            rows = archived_rows(
                mirror.path, "listing_history", "listing_id", [int(listing_id)], ["id", *HISTORY_COLUMNS], conn=conn
            )
            rows.sort(key=lambda r: (r[1], r[0]))
            frame = pd.DataFrame([r[1:] for r in rows], columns=HISTORY_COLUMNS)
    return frame
