"""The columnar index itself (`ColumnarIndex`): a part of the index held as NumPy arrays,
read from its file beside the mirror (memory-mapped), saved, and asked for masks, counts and
pages; the exact comparisons on the held forms. How an index is built and refreshed from the
mirror is `columnar.py` (its module docstring says how values are held)."""

from __future__ import annotations

import json
import math
import mmap
import os
from collections.abc import Callable, Mapping
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from ..sources import REGFREE
from ..store.fields import iso_timestamp
from ..store.schema import OPEN, SORT_COLUMNS
from .conditions import Condition, Unsupported
from .index_file import ALIGN, FORMAT, MAGIC, IndexFile
from .params import DOMAIN_PARAMS, Context


__all__ = [
    "ColumnarIndex",
    "load_index",
    "index_path",
    "PARTS",
    "FORMAT",
    "MAGIC",
    "ALIGN",
    "TIME_COLUMNS",
    "DAY_COLUMNS",
    "CODE_COLUMNS",
    "number_columns",
    "condition_columns",
]

_TIMESTAMP_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z"
_DATE_GLOB = "[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"

# How each column the filters and sorts read is held (see the module's docstring).
TIME_COLUMNS = ("created_at", "auction_end_date", "first_seen_at", "live_until")
DAY_COLUMNS = ("wayback_first_date",)
CODE_COLUMNS = ("source", "tld", "type", "language", "ttf_topic", "historical_tech", "use_cases")


def condition_columns() -> set[str]:
    return {c for p in DOMAIN_PARAMS.values() if isinstance(p.clause, Condition) for c in p.clause.columns}


def number_columns() -> tuple[str, ...]:
    wanted = condition_columns() | {column for column, _ in SORT_COLUMNS.values()}
    held = set(TIME_COLUMNS) | set(DAY_COLUMNS) | set(CODE_COLUMNS) | {"id", "name"}
    return tuple(sorted(wanted - held))


# Which listings each part holds, as the condition its scans add.
PARTS = {"live": OPEN, "all": None}


def index_path(mirror_path: str | os.PathLike[str], part: str = "live") -> Path:
    """Where a part of a mirror's columnar index lives: beside it."""
    return Path(f"{os.fspath(mirror_path)}.colidx" + ("" if part == "live" else f"-{part}"))


# -- the index -----------------------------------------------------------------------


class ColumnarIndex:
    """The arrays of one generation, and the primitives the conditions' masks use."""

    def __init__(self, generation: int, arrays: dict[str, np.ndarray], meta: dict[str, Any], *, keep: Any = None):
        self.generation = generation
        self.arrays = arrays
        self.meta = meta
        self.rows = len(arrays["id"])
        self.part: str = meta.get("part", "live")
        self._keep = keep  # the memory map the arrays are views of
        self._code_cache: dict[tuple[str, Any], np.ndarray] = {}

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays.values())

    # -- saving and loading --------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to `path`, replacing any older one at once (never half written)."""
        out = IndexFile(Path(path).parent, target=path)
        try:
            for name, array in self.arrays.items():
                out.add(name, array)
        except BaseException:
            out.discard()
            raise
        out.finish(self.generation, self.rows, self.meta)

    def release(self) -> None:
        """Give back the pages of a mapped part this process has read (the system's page cache
        keeps them; a later read maps them again), so that reading a whole part once, as a
        refresh does, does not stay in the process's memory."""
        if isinstance(self._keep, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            self._keep.madvise(mmap.MADV_DONTNEED)

    # -- what the conditions' masks use --------------------------------------------------
    def compare(self, column: str, op: str, value: Any) -> np.ndarray:
        values = self.arrays.get(column)
        if values is None or column in self.meta["unusable"]:
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
        distinct = self.arrays.get(f"values:{column}")
        if distinct is not None:  # a real, held as its rank among the distinct values
            op, target = _rank_target(distinct, op, target)
        if column in self.meta["whole"]:
            return _compare_whole(values, op, target)
        return _OPS[op](values, target)

    def _truth(self, column: str, test: Callable[[str], bool]) -> np.ndarray:
        """`test` of each distinct text of a code column, by code (the last slot is NULL:
        never matches)."""
        if column not in self.meta["codes"]:
            raise Unsupported(column)
        uniques = self.meta["codes"][column]
        table = np.zeros(len(uniques) + 1, dtype=bool)
        table[: len(uniques)] = [test(u) for u in uniques]
        return table

    def _lookup(self, column: str, key: Any, test: Callable[[str], bool]) -> np.ndarray:
        table = self._code_cache.get((column, key))
        if table is None:
            table = self._truth(column, test)
            if len(self._code_cache) > 256:
                self._code_cache.clear()
            self._code_cache[(column, key)] = table
        return table[self.arrays[column]]

    def among(self, column: str, values: tuple[str, ...]) -> np.ndarray:
        wanted = set(values)
        return self._lookup(column, ("in", tuple(sorted(wanted))), wanted.__contains__)

    def where_text(self, column: str, test: Callable[[str], bool]) -> np.ndarray:
        return self._truth(column, test)[self.arrays[column]]

    def name_contains(self, term: str) -> np.ndarray:
        """Rows whose name holds `term` (as SQLite's instr: exact, case as stored): the
        term's bytes are compared at every offset of the joined names at once, and each
        name's stretch is reduced to one answer (a match cannot cross the line breaks)."""
        text, needle = self.arrays["name_text"], np.frombuffer(term.encode(), dtype=np.uint8)
        mask = np.zeros(self.rows, dtype=bool)
        span = len(text) - len(needle) + 1
        if not self.rows or not len(needle) or span <= 0:
            return mask if len(needle) else ~mask
        found = text[:span] == needle[0]
        for offset in range(1, len(needle)):
            found &= text[offset : span + offset] == needle[offset]
        ends = self.arrays["name_ends"]
        at = np.flatnonzero(found)
        if len(at) < self.rows // 4:  # few matches: find each one's name
            mask[self.arrays["sort:name"][np.searchsorted(ends, at, side="right")]] = True
            return mask
        hit = np.zeros(len(text), dtype=bool)
        hit[:span] = found
        mask[self.arrays["sort:name"]] = np.logical_or.reduceat(hit, np.concatenate(([0], ends[:-1])))
        return mask

    @property
    def fts_complete(self) -> bool:
        """Whether SQLite's trigram index holds every name this part holds (not so when
        listings were archived or packed)."""
        return not self.meta.get("outside_fts")

    def positions_of(self, ids: np.ndarray) -> np.ndarray:
        """Row positions of these listing ids (ids absent from the index are dropped)."""
        at = np.searchsorted(self.arrays["id"], ids)
        inside = at < self.rows
        at, ids = at[inside], ids[inside]
        return at[self.arrays["id"][at] == ids]

    # -- answering -----------------------------------------------------------------------
    def mask(
        self, values: Mapping[str, Any], now: datetime, fts: Callable[[str, str, int, int], np.ndarray]
    ) -> np.ndarray:
        """The rows an `/api/domains` request matches (validated `values`), as of `now`;
        Unsupported when the index cannot answer it (a filter, or the sort, it does not hold)."""
        if "after_id" not in values:
            self._sort_column(values.get("sort"))
        ctx = Context(today=now.date(), table="listings", now=now)
        regfree = values.get("source") == REGFREE
        source = self.among("source", (REGFREE,))
        mask = source if regfree else ~source
        if not values.get("include_closed"):
            mask &= self.compare("live_until", ">", now)
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

    def _sort_column(self, sort: str | None) -> tuple[str, bool]:
        """(the column a `sort` value orders by, descending?): Unsupported when the index
        holds no order for it (a column left out of the build)."""
        sort = sort or "-score"
        column, reversed_ = SORT_COLUMNS[sort.lstrip("-")]
        if column != "id" and f"sort:{column}" not in self.arrays:
            raise Unsupported(f"sort by {column}")
        return column, sort.startswith("-") != reversed_

    def page(self, mask: np.ndarray, sort: str | None, offset: int, limit: int) -> np.ndarray:
        """The ids of the page: matches `offset` to `offset + limit` in the sort's order
        (nulls last, ties by id, as `sqlplan.order_by`)."""
        column, descending = self._sort_column(sort)
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
        nonnull = self.meta["nonnull"][column]
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

    def __init__(self, index: ColumnarIndex, fts: Callable[[str, str, int, int], np.ndarray]):
        self._index, self._fts = index, fts

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)

    def fts_match(self, table: str, match: str) -> np.ndarray:
        if table != "listings":
            raise Unsupported(table)
        mask = np.zeros(self._index.rows, dtype=bool)
        if self._index.rows:  # only the part's id range: the matches of closed listings (older ids) are not read
            ids = self._index.arrays["id"]
            mask[self._index.positions_of(self._fts(table, match, int(ids[0]), int(ids[-1])))] = True
        return mask


def load_index(path: str | os.PathLike[str], part: str = "live") -> ColumnarIndex | None:
    """The index part saved at `path`, memory-mapped, or None when there is none (or it is of
    another format or part, or lacks a column the parameter table's filters now read)."""
    try:
        with open(path, "rb") as f:
            mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except (FileNotFoundError, ValueError, OSError):
        return None
    try:
        if mapped[: len(MAGIC)] != MAGIC:
            return None
        size = int.from_bytes(mapped[len(MAGIC) : len(MAGIC) + 8], "little")
        header = json.loads(mapped[len(MAGIC) + 8 : len(MAGIC) + 8 + size])
        if header.get("format") != FORMAT or header["meta"].get("part") != part:
            return None
        if not set(number_columns()) <= set(header["layout"]):
            return None  # built before a filter's column joined the parameter table: build it again
        start = -(-(len(MAGIC) + 8 + size) // ALIGN) * ALIGN
        arrays = {
            name: np.frombuffer(mapped, dtype=np.dtype(dtype), count=count, offset=start + offset)
            for name, (dtype, offset, count) in header["layout"].items()
        }
    except (ValueError, KeyError, json.JSONDecodeError):
        return None
    return ColumnarIndex(header["generation"], arrays, header["meta"], keep=mapped)


# -- exact comparisons on the held forms ---------------------------------------------

_OPS: dict[str, Callable[[np.ndarray, Any], np.ndarray]] = {
    ">=": np.greater_equal,
    ">": np.greater,
    "<=": np.less_equal,
    "<": np.less,
    "=": np.equal,
}


def _compare_whole(values: np.ndarray, op: str, target: float) -> np.ndarray:
    """`values op target` for whole numbers held as integers, whose type's minimum stands
    for NULL: the target is moved to the whole number that gives the same answer."""
    info = np.iinfo(values.dtype)
    low, high, null = info.min + 1, info.max, info.min
    if op == "=":
        if target != math.floor(target) or not low <= target <= high:
            return np.zeros(values.shape, dtype=bool)
        return values == values.dtype.type(target)
    whole = math.ceil(target) if op in (">=", "<") else math.floor(target)
    if op == ">=":
        return values >= values.dtype.type(max(whole, low)) if whole <= high else np.zeros(values.shape, dtype=bool)
    if op == ">":
        return values > values.dtype.type(max(whole, null)) if whole < high else np.zeros(values.shape, dtype=bool)
    if op == "<":
        if whole <= low:
            return np.zeros(values.shape, dtype=bool)
        return (values < values.dtype.type(whole)) & (values != null) if whole <= high else values != null
    if whole < low:  # <=
        return np.zeros(values.shape, dtype=bool)
    return (values <= values.dtype.type(whole)) & (values != null) if whole < high else values != null


def _rank_target(distinct: np.ndarray, op: str, value: float) -> tuple[str, float]:
    """`real op value` as a comparison of ranks among the sorted distinct reals: exact, as
    the reals themselves would compare (a value between two held ones falls between ranks)."""
    if op == "=":
        at = int(np.searchsorted(distinct, value))
        return "=", float(at) if at < len(distinct) and distinct[at] == value else 0.5  # 0.5: no rank equals it
    side = "left" if op in (">=", "<") else "right"
    return (">=" if op in (">=", ">") else "<"), float(
        np.searchsorted(distinct, value, side="left" if side == "left" else "right")
    )


_EPOCH = datetime(1970, 1, 1)


def _timestamp_position(value: Any) -> float:
    """Where a compared value sorts among stored `YYYY-MM-DDTHH:MM:SSZ` texts, in seconds:
    a bare date sorts before its midnight, a fraction of a second before the whole second."""
    text = (iso_timestamp(value) if isinstance(value, datetime) else None) or str(value)
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
