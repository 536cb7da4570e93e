"""The columnar filter index: what every `/api/domains` filter and sort reads, held as
compact NumPy arrays, one row per listing (live, closed and regfree) in id order.

A request becomes a boolean mask (one per filter, through the conditions of
`toolkit/conditions.py`), the count is the mask's sum, and the page is the first matches in
the sort's precomputed order; only the page's rows are then read from SQLite, by id. So the
cost of a request hardly depends on which filters it combines.

The index belongs to one generation of the mirror (`mirror_meta.generation`, bumped by
every committed write). It is built inside one read transaction, saved beside the mirror
(`<mirror>.colidx`, replaced atomically) and memory-mapped by readers, so a one-shot
`edt query` does not rebuild it. A reader whose generation differs from the index's uses
the SQLite planner instead (`sqlplan.py`), which gives the same answers.

How values are held, so that every comparison gives exactly SQLite's answer:
- numbers: float64, NULL as NaN (NaN compares false, as NULL does); whole numbers below
  2**24 as float32, with the compared value rounded to the whole number that keeps `>=`,
  `<`, ... exact;
- timestamps (`YYYY-MM-DDTHH:MM:SSZ`): seconds since 1970 as float64; the value compared
  is placed where its text would sort (a bare date just before its midnight);
- dates (`YYYY-MM-DD`): days since 1970;
- short texts (source, TLD, type, language, topic, tech and use-case arrays): a code per
  distinct text; a filter tests each distinct text once and looks the codes up;
- names: the order of `ORDER BY name, id`, and the names joined in that order, searched
  for terms too short for the trigram index.
A column whose stored values are not in these forms makes the build fail, and every
request is answered by SQLite.
"""

from __future__ import annotations

import io
import json
import math
import mmap
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..conditions import Condition, Unsupported
from ..params import DOMAIN_PARAMS, Context
from ..sources import REGFREE
from ..store.fields import iso_timestamp
from ..store.schema import SORT_COLUMNS, connect

__all__ = ["ColumnarIndex", "Unsupported", "index_path", "build_index", "load_index"]

FORMAT = 1
_MAGIC = b"EDTCOLS1"
_ALIGN = 64
_TIMESTAMP_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"
_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
_EXACT_FLOAT32 = 2**24

# How each column the filters and sorts read is held (see the module's docstring).
TIME_COLUMNS = ("created_at", "auction_end_date", "first_seen_at", "live_until")
DAY_COLUMNS = ("wayback_first_date",)
CODE_COLUMNS = ("source", "tld", "type", "language", "ttf_topic", "historical_tech", "use_cases")


def _condition_columns() -> set[str]:
    return {c for p in DOMAIN_PARAMS.values() if isinstance(p.clause, Condition) for c in p.clause.columns}


def _number_columns() -> tuple[str, ...]:
    wanted = _condition_columns() | {column for column, _ in SORT_COLUMNS.values()}
    held = set(TIME_COLUMNS) | set(DAY_COLUMNS) | set(CODE_COLUMNS) | {"id", "name"}
    return tuple(sorted(wanted - held))


def index_path(mirror_path: str | os.PathLike[str]) -> Path:
    """Where a mirror's columnar index lives: beside it."""
    return Path(f"{os.fspath(mirror_path)}.colidx")


# -- building ------------------------------------------------------------------------


def _csv(conn: sqlite3.Connection, expressions: list[str], source: str = "listings INDEXED BY idx_listings_filters") -> bytes:
    """One scan of the covering index, the expressions as CSV text made inside SQLite (so
    the scan runs without the GIL, in parallel with the other threads' scans)."""
    row = " || ',' || ".join(expressions)
    text = conn.execute(f"SELECT group_concat({row}, char(10)) FROM {source}").fetchone()[0]
    return (text or "").encode()  # fmt: skip


def _read_csv(data: bytes, names: list[str], types: Mapping[str, Any]) -> dict[str, np.ndarray]:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not data:
        empty = {"text": object, "int": np.int64}
        return {name: np.array([], dtype=empty.get(types[name], np.float64)) for name in names}
    table = pacsv.read_csv(
        io.BytesIO(data),
        read_options=pacsv.ReadOptions(column_names=names),
        parse_options=pacsv.ParseOptions(quote_char="'", double_quote=True),
        convert_options=pacsv.ConvertOptions(
            column_types={n: {"text": pa.string(), "int": pa.int64()}.get(t, pa.float64()) for n, t in types.items()},
            null_values=["", "NULL"],
            strings_can_be_null=True,
            quoted_strings_can_be_null=False,
        ),
    )
    out = {}
    for name in names:
        column = table.column(name)
        if types[name] in ("text", "int"):
            out[name] = column.to_numpy(zero_copy_only=False)
        else:
            out[name] = column.fill_null(math.nan).to_numpy()
    return out


def _number_sql(column: str) -> str:
    # Reals as 17 significant digits (they read back exactly); a text in a number column
    # (the writer never stores one) fails the parse, and the build with it.
    return (f"iif(typeof({column}) = 'real', printf('%!.17g', {column}), "
            f"iif(typeof({column}) = 'integer' OR {column} IS NULL, ifnull({column}, ''), 'not-a-number'))")  # fmt: skip


def _time_sql(column: str, glob: str, convert: str) -> str:
    return f"iif({column} GLOB '{glob}', {convert}, iif({column} IS NULL, '', 'not-a-timestamp'))"


def _snapshot(path: str) -> sqlite3.Connection:
    conn = connect(path, readonly=True)
    conn.execute("BEGIN")
    return conn


def _generation(conn: sqlite3.Connection) -> int:
    row = conn.execute("SELECT value FROM mirror_meta WHERE key = 'generation'").fetchone()
    return int(row[0]) if row else 0


def build_index(mirror_path: str | os.PathLike[str]) -> ColumnarIndex:
    """Read the filter and sort columns of one generation of the mirror and build the index.
    Three scans run at once on their own connections; the generation each saw must agree."""
    import pandas as pd

    path = os.fspath(mirror_path)
    numbers = list(_number_columns())
    number_names = ["id"] + [f"n{i}" for i in range(len(numbers))]
    other = list(TIME_COLUMNS) + list(DAY_COLUMNS) + list(CODE_COLUMNS)
    other_names = ["id"] + [f"o{i}" for i in range(len(other))]

    def scan_numbers() -> tuple[int, bytes]:
        conn = _snapshot(path)
        try:
            return _generation(conn), _csv(conn, ["id"] + [_number_sql(c) for c in numbers])
        finally:
            conn.close()

    def scan_others() -> tuple[int, bytes]:
        exprs = ["id"]
        exprs += [_time_sql(c, _TIMESTAMP_GLOB, f"unixepoch({c})") for c in TIME_COLUMNS]
        exprs += [_time_sql(c, _DATE_GLOB, f"CAST(julianday({c}) - 2440587.5 AS INTEGER)") for c in DAY_COLUMNS]
        exprs += [f"quote({c})" for c in CODE_COLUMNS]
        conn = _snapshot(path)
        try:
            return _generation(conn), _csv(conn, exprs)
        finally:
            conn.close()

    def scan_names() -> tuple[int, bytes]:
        conn = _snapshot(path)
        try:
            return _generation(conn), _csv(conn, ["id", "quote(name)"], "(SELECT id, name FROM listings ORDER BY name, id)")
        finally:
            conn.close()

    with ThreadPoolExecutor(3) as pool:
        jobs = [pool.submit(scan_numbers), pool.submit(scan_others), pool.submit(scan_names)]
        (g1, number_csv), (g2, other_csv), (g3, name_csv) = (job.result() for job in jobs)
    if not g1 == g2 == g3:
        raise RuntimeError("the mirror changed while the index was read; build again")

    num = _read_csv(number_csv, number_names, {"id": "int", **{n: "number" for n in number_names[1:]}})
    oth = _read_csv(other_csv, other_names, {"id": "int", **{
        n: ("text" if c in CODE_COLUMNS else "number") for n, c in zip(other_names[1:], other)}})  # fmt: skip
    nam = _read_csv(name_csv, ["id", "name"], {"id": "int", "name": "text"})

    ids = num["id"].astype(np.int64)
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    other_order = np.argsort(oth["id"].astype(np.int64), kind="stable")
    if not np.array_equal(oth["id"].astype(np.int64)[other_order], ids):
        raise RuntimeError("the scans disagree on the listings; build again")

    arrays: dict[str, np.ndarray] = {"id": ids}
    meta: dict[str, Any] = {"integral": {}, "codes": {}, "starts": {}}
    for name, column in zip(number_names[1:], numbers):
        _put_number(arrays, meta, column, num[name][order])
    for name, column in zip(other_names[1:], other):
        values = oth[name][other_order]
        if column in CODE_COLUMNS:
            codes, uniques = pd.factorize(values, use_na_sentinel=True)
            width = np.int16 if len(uniques) < 2**15 - 1 else np.int32
            codes = codes.astype(width)
            codes[codes < 0] = len(uniques)  # NULL: the slot after the last text, never matched
            arrays[column] = codes
            meta["codes"][column] = [str(u) for u in uniques]
        elif column in DAY_COLUMNS:
            _put_number(arrays, meta, column, values)
        else:
            arrays[column] = values.astype(np.float64)

    name_ids = nam["id"].astype(np.int64)
    positions = np.searchsorted(ids, name_ids)
    if len(name_ids) != len(ids) or (len(ids) and not np.array_equal(ids[positions], name_ids)):
        raise RuntimeError("the name scan disagrees with the others; build again")
    arrays["sort:name"] = positions.astype(np.int32)
    names = [str(n) for n in nam["name"]]
    if any("\n" in n for n in names):
        raise RuntimeError("a name holds a line break; the index cannot search names")
    in_order = nam["name"]
    same = np.r_[True, in_order[1:] != in_order[:-1]] if len(in_order) else np.array([], dtype=bool)
    arrays["starts:name"] = np.flatnonzero(same).astype(np.int32)
    meta["starts"]["name"] = len(names)
    blob = ("\n".join(names) + "\n").encode()
    lengths = np.fromiter((len(n.encode()) + 1 for n in names), dtype=np.int64, count=len(names))
    arrays["name_text"] = np.frombuffer(blob, dtype=np.uint8)
    arrays["name_ends"] = np.cumsum(lengths).astype(np.int64)

    for field, (column, _) in SORT_COLUMNS.items():
        if column in ("id", "name") or f"sort:{column}" in arrays:
            continue
        values = arrays[column]
        perm = np.argsort(values, kind="stable").astype(np.int32)  # NaN (NULL) last, ties by id
        ordered = values[perm]
        nonnull = int(np.count_nonzero(~np.isnan(ordered)))
        head = ordered[:nonnull]
        starts = np.flatnonzero(np.r_[True, head[1:] != head[:-1]]) if nonnull else np.array([], dtype=np.int64)
        arrays[f"sort:{column}"] = perm
        arrays[f"starts:{column}"] = starts.astype(np.int32)
        meta["starts"][column] = nonnull
    return ColumnarIndex(g1, arrays, meta)


def _put_number(arrays: dict[str, np.ndarray], meta: dict[str, Any], column: str, values: np.ndarray) -> None:
    present = values[~np.isnan(values)]
    integral = bool(present.size == 0 or (np.all(present == np.floor(present)) and np.abs(present).max() < _EXACT_FLOAT32))
    arrays[column] = values.astype(np.float32 if integral else np.float64)
    meta["integral"][column] = integral


# -- the index -----------------------------------------------------------------------


class ColumnarIndex:
    """The arrays of one generation, and the primitives the conditions' masks use."""

    def __init__(self, generation: int, arrays: dict[str, np.ndarray], meta: dict[str, Any], *, keep: Any = None):
        self.generation = generation
        self.arrays = arrays
        self.meta = meta
        self.rows = len(arrays["id"])
        self._keep = keep  # the memory map the arrays are views of
        self._code_cache: dict[tuple[str, Any], np.ndarray] = {}
        self._names: bytes | None = None

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())

    # -- saving and loading --------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to `path`, replacing any older one at once (never half written)."""
        layout, offset = {}, 0
        for name, array in self.arrays.items():
            layout[name] = [array.dtype.str, offset, int(array.size)]
            offset += -(-array.nbytes // _ALIGN) * _ALIGN
        header = json.dumps({"format": FORMAT, "generation": self.generation, "rows": self.rows, "layout": layout,
                             "meta": self.meta}).encode()  # fmt: skip
        start = -(-(len(_MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
        target = Path(path)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.partial")
        try:
            with open(temporary, "wb") as out:
                out.write(_MAGIC + len(header).to_bytes(8, "little") + header)
                out.write(b"\0" * (start - out.tell()))
                for name, array in self.arrays.items():
                    out.seek(start + layout[name][1])
                    out.write(np.ascontiguousarray(array).tobytes())
                out.truncate(start + offset)
            os.replace(temporary, target)
        finally:
            temporary.unlink(missing_ok=True)

    # -- what the conditions' masks use --------------------------------------------------
    def compare(self, column: str, op: str, value: Any) -> np.ndarray:
        values = self.arrays.get(column)
        if values is None:
            raise Unsupported(column)
        if column in self.meta["codes"]:
            if op != "=":
                raise Unsupported(f"{column} {op}")
            return self.among(column, (value,))
        if column in TIME_COLUMNS:
            target = _timestamp_position(value)
        elif column in DAY_COLUMNS:
            target = _day_number(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            target = float(value)
        else:
            raise Unsupported(f"{column} {op} {value!r}")
        if self.meta["integral"].get(column):
            return _compare_whole(values, op, target)
        return _OPS[op](values, target)

    def _lookup(self, column: str, key: Any, test: Callable[[str], bool]) -> np.ndarray:
        table = self._code_cache.get((column, key))
        if table is None:
            uniques = self.meta["codes"][column]
            table = np.zeros(len(uniques) + 1, dtype=bool)  # the last slot is NULL: never matches
            table[: len(uniques)] = [test(u) for u in uniques]
            if len(self._code_cache) > 256:
                self._code_cache.clear()
            self._code_cache[(column, key)] = table
        return table[self.arrays[column]]

    def among(self, column: str, values: tuple[str, ...]) -> np.ndarray:
        if column not in self.meta["codes"]:
            raise Unsupported(column)
        wanted = set(values)
        return self._lookup(column, ("in", tuple(sorted(wanted))), wanted.__contains__)

    def where_text(self, column: str, test: Callable[[str], bool]) -> np.ndarray:
        if column not in self.meta["codes"]:
            raise Unsupported(column)
        uniques = self.meta["codes"][column]
        table = np.zeros(len(uniques) + 1, dtype=bool)
        table[: len(uniques)] = [test(u) for u in uniques]
        return table[self.arrays[column]]

    def name_contains(self, term: str) -> np.ndarray:
        """Rows whose name holds `term` (as SQLite's instr: exact, case as stored)."""
        if self._names is None:
            self._names = self.arrays["name_text"].tobytes()
        haystack, needle = self._names, term.encode()
        hits, at = [], haystack.find(needle)
        while at >= 0:
            hits.append(at)
            at = haystack.find(needle, at + 1)
        mask = np.zeros(self.rows, dtype=bool)
        if hits:
            ranks = np.searchsorted(self.arrays["name_ends"], np.asarray(hits, dtype=np.int64), side="right")
            mask[self.arrays["sort:name"][ranks]] = True
        return mask

    def positions_of(self, ids: np.ndarray) -> np.ndarray:
        """Row positions of these listing ids (ids absent from the index are dropped)."""
        at = np.searchsorted(self.arrays["id"], ids)
        inside = at < self.rows
        at, ids = at[inside], ids[inside]
        return at[self.arrays["id"][at] == ids]

    # -- answering -----------------------------------------------------------------------
    def mask(self, values: Mapping[str, Any], now: datetime, fts: Callable[[str, str], np.ndarray]) -> np.ndarray:
        """The rows an `/api/domains` request matches (validated `values`), as of `now`."""
        ctx = Context(today=now.date(), table="listings")
        regfree = values.get("source") == REGFREE
        source = self.among("source", (REGFREE,))
        mask = source if regfree else ~source
        if not values.get("include_closed"):
            mask &= self.arrays["live_until"] > _timestamp_position(now)
        view = _WithFts(self, fts)
        for name, value in values.items():
            clause = DOMAIN_PARAMS[name].clause
            if clause is None:
                continue
            if not isinstance(clause, Condition):
                raise Unsupported(name)
            found = clause.mask(value, ctx, view)
            if found is not None:
                mask &= found
        return mask

    def page(self, mask: np.ndarray, sort: str | None, offset: int, limit: int) -> np.ndarray:
        """The ids of the page: matches `offset` to `offset + limit` in the sort's order
        (nulls last, ties by id, as `sqlplan.order_by`)."""
        sort = sort or "-score"
        column, reversed_ = SORT_COLUMNS[sort.lstrip("-")]
        descending = sort.startswith("-") != reversed_
        need = offset + limit
        if column == "id":
            hits = np.flatnonzero(mask)
            chosen = hits[::-1][offset:need] if descending else hits[offset:need]
            return self.arrays["id"][chosen]
        perm = self.arrays[f"sort:{column}"]
        hits = mask[perm]
        if not descending:
            return self.arrays["id"][perm[np.flatnonzero(hits)[offset:need]]]
        # Descending: the groups of equal values in reverse, ids ascending inside each.
        nonnull = self.meta["starts"][column]
        starts = self.arrays[f"starts:{column}"]
        ranked = np.array([], dtype=np.int64)
        if nonnull:
            per_group = np.add.reduceat(hits[:nonnull].astype(np.int32), starts)
            reach = np.cumsum(per_group[::-1])
            groups = min(int(np.searchsorted(reach, need)) + 1, len(starts))
            low = int(starts[len(starts) - groups])
            found = np.flatnonzero(hits[low:nonnull]) + low
            group_of = np.searchsorted(starts, found, side="right")
            ranked = found[np.argsort(-group_of, kind="stable")]
        if len(ranked) < need:
            ranked = np.concatenate([ranked, np.flatnonzero(hits[nonnull:]) + nonnull])
        return self.arrays["id"][perm[ranked[offset:need]]]


class _WithFts:
    """The index as the conditions see it during one request: plus the trigram search,
    which reads SQLite's FTS table inside the request's read transaction."""

    def __init__(self, index: ColumnarIndex, fts: Callable[[str, str], np.ndarray]):
        self._index, self._fts = index, fts

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def fts_match(self, table: str, match: str) -> np.ndarray:
        if table != "listings":
            raise Unsupported(table)
        mask = np.zeros(self._index.rows, dtype=bool)
        mask[self._index.positions_of(self._fts(table, match))] = True
        return mask


def load_index(path: str | os.PathLike[str]) -> ColumnarIndex | None:
    """The index saved at `path`, memory-mapped, or None when there is none (or it is of
    another format)."""
    try:
        with open(path, "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (FileNotFoundError, ValueError, OSError):
        return None
    try:
        if mapped[: len(_MAGIC)] != _MAGIC:
            return None
        size = int.from_bytes(mapped[len(_MAGIC) : len(_MAGIC) + 8], "little")
        header = json.loads(mapped[len(_MAGIC) + 8 : len(_MAGIC) + 8 + size])
        if header.get("format") != FORMAT:
            return None
        start = -(-(len(_MAGIC) + 8 + size) // _ALIGN) * _ALIGN
        arrays = {
            name: np.frombuffer(mapped, dtype=np.dtype(dtype), count=count, offset=start + offset)
            for name, (dtype, offset, count) in header["layout"].items()
        }
    except (ValueError, KeyError, json.JSONDecodeError):
        return None
    return ColumnarIndex(header["generation"], arrays, header["meta"], keep=mapped)


# -- exact comparisons on the held forms ---------------------------------------------

_OPS: dict[str, Callable[[np.ndarray, Any], np.ndarray]] = {
    ">=": np.greater_equal, ">": np.greater, "<=": np.less_equal, "<": np.less, "=": np.equal,
}  # fmt: skip


def _compare_whole(values: np.ndarray, op: str, target: float) -> np.ndarray:
    """`values op target` for whole numbers held as float32: the target is moved to the whole
    number that gives the same answer, and clamped where float32 is still exact."""
    if op == "=":
        if target != math.floor(target) or abs(target) >= _EXACT_FLOAT32:
            return np.zeros(values.shape, dtype=bool)
        return values == np.float32(target)
    whole = math.ceil(target) if op in (">=", "<") else math.floor(target)
    whole = max(-_EXACT_FLOAT32, min(_EXACT_FLOAT32, whole))
    return _OPS[op](values, np.float32(whole))


_EPOCH = datetime(1970, 1, 1)


def _timestamp_position(value: Any) -> float:
    """Where a compared value sorts among stored `YYYY-MM-DDTHH:MM:SSZ` texts, in seconds:
    a bare date sorts before its midnight, a fraction of a second before the whole second."""
    text = iso_timestamp(value) if isinstance(value, datetime) else str(value)
    try:
        if len(text) == 10:
            return (datetime.fromisoformat(text) - _EPOCH).total_seconds() - 0.5
        if len(text) == 20 and text[10] == "T" and text.endswith("Z"):
            return (datetime.fromisoformat(text[:19]) - _EPOCH).total_seconds()
        if len(text) > 20 and text[10] == "T" and text[19] == "." and text.endswith("Z") and text[20:-1].isdigit():
            return (datetime.fromisoformat(text[:19]) - _EPOCH).total_seconds() - 0.5
    except ValueError:
        pass
    raise Unsupported(f"timestamp {text!r}")


def _day_number(value: Any) -> float:
    text = value.isoformat() if isinstance(value, date) else str(value)
    try:
        if len(text) == 10:
            return float((date.fromisoformat(text) - date(1970, 1, 1)).days)
    except ValueError:
        pass
    raise Unsupported(f"date {text!r}")
