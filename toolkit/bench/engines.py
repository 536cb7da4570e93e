"""The query benchmark's three engines over the same rows: the query layer (`Mirror`), DuckDB
(SQL written from the documented semantics) and pandas (boolean masks); the rows loaded once
(`load_frames`) for the two peers."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from .query_spec import Pred, Spec, query_spec
from .query_suite import BenchQuery

__all__ = ["PLAN", "Engine", "Result", "Frames", "load_frames", "QueryLayerEngine", "DuckDBEngine", "PandasEngine"]
PLAN = "enterprise"  # the plan every engine answers as: every field, every filter

# -- loading the rows once ---------------------------------------------------------------

# Listings' array columns (JSON text in SQLite) and their DuckDB list types.
_ARRAY_COLUMNS = {
    "historical_tech": "VARCHAR[]",
    "use_cases": "VARCHAR[]",
    "whois_status": "VARCHAR[]",
    "whois_nameservers": "VARCHAR[]",
    "historical_traffic_spark": "BIGINT[]",
}


@dataclass
class Frames:
    listings: Any  # pandas DataFrame: every stored column, `age` as of today, parsed timestamps
    pending: Any
    listing_columns: list[str]  # the output columns of a listing record
    pending_columns: list[str]
    load_seconds: float


def load_frames(db_path: str | os.PathLike[str], now: datetime, where: str = "1") -> Frames:
    """Every listing (`where` it holds) and pending-delete row of the mirror as DataFrames (all
    columns; the raw records live in another table). Adds `age` as of `now` and parsed timestamps."""
    import pandas as pd

    from ..query import LISTING_EXPORT, PENDING_OUTPUT

    started = time.perf_counter()
    conn = sqlite3.connect(f"file:{os.fspath(db_path)}?mode=ro", uri=True)
    try:
        listings = pd.read_sql_query(f"SELECT * FROM listings WHERE {where}", conn)
        pending = pd.read_sql_query("SELECT * FROM pending_delete", conn)
    finally:
        conn.close()
    today = now.date()

    def stamp(column: Any) -> Any:
        return pd.to_datetime(column, utc=True, format="ISO8601").dt.tz_localize(None)

    listings["_ends_ts"] = stamp(listings["auction_end_date"])
    listings["_created_ts"] = stamp(listings["created_at"])
    # age: whole years from the first snapshot to today (docs/reference/fields.md).
    first = pd.to_datetime(listings["wayback_first_date"], format="%Y-%m-%d")
    ahead = (first.dt.month > today.month) | ((first.dt.month == today.month) & (first.dt.day > today.day))
    listings["age"] = (today.year - first.dt.year - ahead.astype("int64")).where(first.notna())
    for frame in (listings, pending):  # all-null columns come back as objects: make them numbers
        for column in frame.columns:
            values = frame[column]
            if values.dtype == object and values.map(lambda v: v is None or isinstance(v, (int, float))).all():
                frame[column] = pd.to_numeric(values)
    # `deal`, a field every record carries and no column holds: as the query layer writes it
    eur = listings["effective_price_eur"]
    listings["deal"] = (listings["live_mid"].fillna(listings["value_mid"]) / eur).where(eur > 0).round(3)
    listing_columns = list(LISTING_EXPORT)
    return Frames(listings, pending, listing_columns, list(PENDING_OUTPUT), time.perf_counter() - started)


# -- the engines -------------------------------------------------------------------------

Result = tuple[int, list[dict[str, Any]]]


class Engine(Protocol):
    """What the benchmark times: an engine answering a query with its total and page rows."""

    name: str

    def run(self, query: BenchQuery) -> Result: ...

    def close(self) -> None: ...


class QueryLayerEngine:
    name = "query layer"

    def __init__(self, db_path: str | os.PathLike[str], now: datetime, engine: str = "columnar"):
        from ..query import Mirror

        self.mirror = Mirror(db_path, readonly=True, plan=PLAN, clock=lambda: now, engine=engine)
        self.answered_by: set[str] = set()

    def run(self, query: BenchQuery) -> Result:
        if query.dataset == "domains":
            envelope = self.mirror.search_domains(query.params, plan=PLAN, strict=False)
            self.answered_by.add(self.mirror.answered_by() or "sqlite")
        else:
            envelope = self.mirror.search_pending_delete(query.params, plan=PLAN)
        return envelope["meta"]["total"], envelope["data"]

    def trace(self, query: BenchQuery) -> list[str]:
        """The SQL statements the query layer runs for `query` (for EXPLAIN QUERY PLAN)."""
        conn = self.mirror.connection()
        statements: list[str] = []
        conn.set_trace_callback(statements.append)
        try:
            self.run(query)
        finally:
            conn.set_trace_callback(None)
        return [s for s in statements if s.lstrip().upper().startswith("SELECT")]

    def close(self) -> None:
        self.mirror.close()


def _q(column: str) -> str:
    return '"' + column.replace('"', '""') + '"'


# DuckDB SQL of the predicates that take one value (the `?`), `{col}` their column.
_ONE_VALUE = {
    "live": '("closed_at" IS NULL AND ("_ends_ts" IS NULL OR "_ends_ts" > ?))',
    **{
        op: f"{{col}} {sign} ?"
        for op, sign in (("eq", "="), ("ne", "<>"), ("gt", ">"), ("ge", ">="), ("lt", "<"), ("le", "<="))
    },
    "null_or_ge": "({col} IS NULL OR {col} >= ?)",
    "lacks": "NOT contains({col}, ?)",
    "length_ge": "length({col}) >= ?",
    "length_le": "length({col}) <= ?",
}


class DuckDBEngine:
    """The rows in an in-memory DuckDB database; SQL per query, parameters bound."""

    name = "duckdb"

    def __init__(self, frames: Frames, now: datetime, *, storage: str = "native", threads: int | None = None):
        import duckdb
        import pyarrow as pa

        self.now = now
        self.frames = frames
        self.con = duckdb.connect(config={"threads": threads} if threads else {})
        self._arrow: dict[str, Any] = {}
        for table, frame in (("listings", frames.listings), ("pending_delete", frames.pending)):
            self.con.register(f"{table}_arrow", pa.Table.from_pandas(frame, preserve_index=False))
            arrays = [f"CAST({_q(c)}::JSON AS {t}) AS {_q(c)}" for c, t in _ARRAY_COLUMNS.items()]
            replace = f" REPLACE ({', '.join(arrays)})" if table == "listings" else ""
            # Arrays become DuckDB lists. Native tables are DuckDB's own columnar storage
            # (zone maps, statistics): its best case; `arrow` scans registered Arrow tables.
            self.con.execute(f"CREATE TABLE {table} AS SELECT *{replace} FROM {table}_arrow")
            self.con.unregister(f"{table}_arrow")
            if storage == "arrow":
                self._arrow[table] = self.con.sql(f"SELECT * FROM {table}").to_arrow_table()
                self.con.execute(f"DROP TABLE {table}")
                self.con.register(table, self._arrow[table])
        self.storage = storage
        self._select = {
            "listings": ", ".join(map(_q, frames.listing_columns)),
            "pending_delete": ", ".join(map(_q, frames.pending_columns)),
        }

    @staticmethod
    def _column(name: str) -> str:
        if name == "@effective_price":
            return 'coalesce("max_bid", "price")'
        if name == "@deal":
            return (
                'CASE WHEN "effective_price_eur" > 0 THEN coalesce("live_mid", "value_mid") / "effective_price_eur" END'
            )
        return _q(name)

    def _predicate(self, pred: Pred, args: list[Any]) -> str:
        op, column = pred[0], pred[1]
        col = self._column(column) if column else ""
        values = pred[2:]
        if op in _ONE_VALUE:
            args.append(values[0])
            return _ONE_VALUE[op].format(col=col)
        if op == "in":
            args.extend(values[0])
            return f"{col} IN ({', '.join('?' * len(values[0]))})"
        if op == "true":
            return f"{col} <> 0"
        if op == "sum_gt0":
            return f"({col} + {self._column(values[0])}) > 0"
        if op in ("contains_any", "contains_none"):
            args.extend(values[0])
            found = "(" + " OR ".join(f"contains(lower({col}), ?)" for _ in values[0]) + ")"
            return found if op == "contains_any" else f"NOT {found}"
        if op == "segment_any":
            parts = []
            for value in values[0]:
                parts.append(f"(lower({col}) = ? OR starts_with(lower({col}), ?))")
                args += [value, value + "/"]
            return "(" + " OR ".join(parts) + ")"
        if op == "array_any":
            args.append(list(values[0]))
            return f"list_has_any({col}, ?::VARCHAR[])"
        if op == "between":
            args += [values[0], values[1]]
            return f"{col} BETWEEN ? AND ?"
        if op == "no_digit":
            return f"NOT regexp_matches({col}, '[0-9]')"
        if op in ("ratio_ge", "ratio_lt"):
            args.append(values[1])
            other = self._column(values[0])
            return f"({other} > 0 AND 100 * {col} {'>=' if op == 'ratio_ge' else '<'} ? * {other})"
        if op == "suffix_in":
            args.extend(values[0])
            ends = " OR ".join(f"ends_with({col}, ?)" for _ in values[0])
            args.extend("." + v for v in values[0])
            return f"({col} IN ({', '.join('?' * len(values[0]))}) OR {ends})"
        raise ValueError(f"unknown predicate {op}")

    def sql(self, spec: Spec) -> tuple[str, list[Any], str, list[Any]]:
        args: list[Any] = []
        where = " AND ".join(self._predicate(p, args) for p in spec.preds) or "TRUE"
        count_sql = f"SELECT count(*) FROM {spec.table} WHERE {where}"
        # The page: ids first, then the wide rows of those ids only (late materialisation:
        # a top-N or a deep OFFSET over 60-odd columns is several times slower in DuckDB).
        select = self._select[spec.table]
        if spec.after_id is not None:
            ids = f'SELECT "id" FROM {spec.table} WHERE {where} AND "id" > ? ORDER BY "id" LIMIT ?'
            page_sql = f'SELECT {select} FROM {spec.table} WHERE "id" IN ({ids}) ORDER BY "id"'
            return count_sql, args, page_sql, [*args, spec.after_id, spec.limit]
        order = ", ".join(
            f"{self._column(c)} {'ASC' if asc else 'DESC'} NULLS {'LAST' if last else 'FIRST'}"
            for c, asc, last in spec.order
        )
        ids = f'SELECT "id" FROM {spec.table} WHERE {where} ORDER BY {order}, "id" LIMIT ? OFFSET ?'
        page_sql = f'SELECT {select} FROM {spec.table} WHERE "id" IN ({ids}) ORDER BY {order}, "id"'
        return count_sql, args, page_sql, [*args, spec.limit, spec.offset]

    def run(self, query: BenchQuery) -> Result:
        count_sql, count_args, page_sql, page_args = self.sql(query_spec(query, self.now))
        total = self.con.execute(count_sql, count_args).fetchall()[0][0]
        cursor = self.con.execute(page_sql, page_args)
        names = [d[0] for d in cursor.description]
        return total, [dict(zip(names, row)) for row in cursor.fetchall()]

    def close(self) -> None:
        self.con.close()


class PandasEngine:
    """Vectorised boolean masks over the DataFrame, then sort_values and the page slice."""

    name = "pandas"

    def __init__(self, frames: Frames, now: datetime):
        self.now = now
        self.frames = frames

    @staticmethod
    def _column(df: Any, name: str) -> Any:
        if name == "@effective_price":
            return df["max_bid"].fillna(df["price"])
        if name == "@deal":
            eur = df["effective_price_eur"]
            return (df["live_mid"].fillna(df["value_mid"]) / eur).where(eur > 0)
        return df[name]

    def _mask(self, df: Any, pred: Pred) -> Any:
        import numpy as np

        op, name = pred[0], pred[1]
        values = pred[2:]
        if op == "live":
            ends = df["_ends_ts"]
            return (df["closed_at"].isna() & (ends.isna() | (ends > values[0]))).to_numpy()
        s = self._column(df, name)
        if op == "eq":
            return (s == values[0]).to_numpy(dtype=bool, na_value=False)
        if op == "ne":
            return (s.notna() & (s != values[0])).to_numpy(dtype=bool, na_value=False)
        if op in ("gt", "ge", "lt", "le"):
            compare = {"gt": s.gt, "ge": s.ge, "lt": s.lt, "le": s.le}[op]
            return compare(values[0]).to_numpy(dtype=bool, na_value=False)
        if op == "in":
            return s.isin(values[0]).to_numpy()
        if op == "true":
            return (s.fillna(0) != 0).to_numpy()
        if op == "sum_gt0":
            return (s + df[values[0]]).gt(0).to_numpy(dtype=bool, na_value=False)
        if op in ("contains_any", "contains_none"):
            lower = s.str.lower()
            mask = np.zeros(len(df), dtype=bool)
            for term in values[0]:
                mask |= lower.str.contains(term, regex=False, na=False).to_numpy(dtype=bool)
            return mask if op == "contains_any" else ~mask
        if op == "segment_any":
            lower = s.str.lower()
            mask = np.zeros(len(df), dtype=bool)
            for value in values[0]:
                hit = (lower == value) | lower.str.startswith(value + "/", na=False)
                mask |= hit.to_numpy(dtype=bool, na_value=False)
            return mask
        if op == "array_any":
            # The stored JSON text holds an element exactly when it holds its JSON string.
            mask = np.zeros(len(df), dtype=bool)
            for value in values[0]:
                needle = json.dumps(value, ensure_ascii=False)
                mask |= s.str.contains(needle, regex=False, na=False).to_numpy(dtype=bool)
            return mask
        if op == "null_or_ge":
            return (s.isna() | (s >= values[0])).to_numpy(dtype=bool, na_value=False)
        if op == "between":
            return ((s >= values[0]) & (s <= values[1])).to_numpy(dtype=bool, na_value=False)
        if op == "lacks":
            return (~s.str.contains(values[0], regex=False, na=False)).to_numpy(dtype=bool)
        if op == "no_digit":
            return (~s.str.contains(r"[0-9]", regex=True, na=False)).to_numpy(dtype=bool)
        if op in ("length_ge", "length_le"):
            lengths = s.str.len()
            return (lengths >= values[0] if op == "length_ge" else lengths <= values[0]).to_numpy(
                dtype=bool, na_value=False
            )
        if op in ("ratio_ge", "ratio_lt"):
            other = df[values[0]]
            scaled = 100 * s
            hit = scaled >= values[1] * other if op == "ratio_ge" else scaled < values[1] * other
            return (other.gt(0) & hit).to_numpy(dtype=bool, na_value=False)
        if op == "suffix_in":
            wanted = set(values[0])
            return (
                s.map(
                    lambda t: isinstance(t, str) and (t in wanted or any(t.endswith("." + v) for v in wanted)),
                    na_action="ignore",
                )
                .fillna(False)
                .to_numpy(dtype=bool)
            )
        raise ValueError(f"unknown predicate {op}")

    def run(self, query: BenchQuery) -> Result:
        import numpy as np
        import pandas as pd

        spec = query_spec(query, self.now)
        df = self.frames.listings if spec.table == "listings" else self.frames.pending
        columns = self.frames.listing_columns if spec.table == "listings" else self.frames.pending_columns
        mask = np.ones(len(df), dtype=bool)
        for pred in spec.preds:
            mask &= self._mask(df, pred)
        positions = np.flatnonzero(mask)  # rows matched, by position; only sort keys are copied
        total = len(positions)
        ids = df["id"].iloc[positions]
        if spec.after_id is not None:
            page = ids[ids > spec.after_id].sort_values(kind="stable").index[: spec.limit]
        else:
            keys = {f"k{i}": self._column(df, name).iloc[positions] for i, (name, _, _) in enumerate(spec.order)}
            keys["id"] = ids
            ordered = pd.DataFrame(keys).sort_values(
                list(keys),
                ascending=[asc for _, asc, _ in spec.order] + [True],
                na_position="last" if all(last for *_, last in spec.order) else "first",
                kind="stable",
            )
            page = ordered.index[spec.offset : spec.offset + spec.limit]
        rows = df.loc[page, columns].to_dict("records")
        if spec.table == "listings":
            for row in rows:
                for column in _ARRAY_COLUMNS:
                    if isinstance(row[column], str):
                        row[column] = json.loads(row[column])
        return total, rows

    def close(self) -> None:
        pass
