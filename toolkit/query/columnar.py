"""The columnar filter index: what every `/api/domains` filter and sort reads, held as
compact NumPy arrays, one row per listing in id order.

It comes in two parts, each a file beside the mirror:
- `live` (`<mirror>.colidx`): the open listings, platforms' and regfree (`closed_at` null).
  Every live request reads this part only, so a year of closed listings costs it nothing;
- `all` (`<mirror>.colidx-all`): every listing, closed and archived ones too, built when
  first asked for (`include_closed=1`, or a clock set before the newest closing).

A request becomes a boolean mask (one per filter, through the conditions of
`toolkit/query/conditions.py`), the count is the mask's sum, and the page is the first matches in
the sort's precomputed order; only the page's rows are then read from SQLite, by id. So the
cost of a request hardly depends on which filters it combines.

The index belongs to one generation of the mirror (`mirror_meta.generation`, bumped by
every committed write). It is built inside one read transaction, saved beside the mirror
(`<mirror>.colidx`, replaced atomically) and memory-mapped by readers, so a one-shot
`edt query` does not rebuild it. A reader whose generation differs from the index's uses
the SQLite planner instead (`sqlplan.py`), which gives the same answers.

How values are held, so that every comparison gives exactly SQLite's answer:
- whole numbers (counts, metrics, seconds, days) in the narrowest integer type, with the
  type's minimum for NULL (kept out of every comparison); the compared value is moved to
  the whole number that gives the same answer for `>=`, `<`, ...;
- reals (prices): the rank of each value among the column's distinct values (kept beside
  it, sorted, as `values:<column>`), a whole number as above: a compared value becomes the
  rank it would take, so the answer is the reals' own, in a quarter of float64's room;
- timestamps (`YYYY-MM-DDTHH:MM:SSZ`): seconds since 1970; the value compared is placed
  where its text would sort (a bare date just before its midnight);
- dates (`YYYY-MM-DD`): days since 1970;
- short texts (source, TLD, type, language, topic, tech and use-case arrays): a code per
  distinct text; a filter tests each distinct text once and looks the codes up;
- names: the order of `ORDER BY name, id`, and the names joined in that order, searched
  for terms too short for the trigram index.
A timestamp or date column holding another text form is left out (its filters and sorts
go to SQLite); a number column holding text fails the build, and SQLite answers all.
"""

from __future__ import annotations

import math
import os
import sqlite3
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from ..store.children import own_stops, stops_held
from ..store.schema import SORT_COLUMNS, connect
from .conditions import Unsupported

from .index_file import HeldArrays, IndexFile
from .mirror_scan import column_kind, read_generation, read_rows, reading, scan, scans
from .name_order import patch_names
from .columnar_index import (
    CODE_COLUMNS,
    DAY_COLUMNS,
    PARTS,
    TIME_COLUMNS,
    ColumnarIndex,
    index_path,
    load_index,
    number_columns,
)

__all__ = ["ColumnarIndex", "Unsupported", "index_path", "build_index", "update_index", "load_index"]


def build_index(
    mirror_path: str | os.PathLike[str],
    *,
    part: str = "live",
    attempts: int = 3,
    save_to: str | os.PathLike[str] | None = None,
) -> ColumnarIndex:
    """A part of the index of the mirror as it is now; a build that a concurrent write
    spoiled (the workers saw two generations) is tried again, up to `attempts` times.
    `save_to`: the part is saved there and returned mapped from it (its arrays never held
    in memory whole); else it is held in memory."""
    if part not in PARTS:
        raise ValueError(f"part: {part!r} is not one of {', '.join(PARTS)}")
    for attempt in range(attempts):
        try:
            return _build_once(mirror_path, part, save_to)
        except _Moved:
            if attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")


class _Moved(RuntimeError):
    """The mirror changed while the index was read."""


def _worker_start() -> None:
    """A build worker takes its own stops (`toolkit.store.children`: a Ctrl-C ends it quietly, as it
    ends the load) and ends with the process that forked it: a load killed mid-build (kill -9)
    leaves no worker waiting for work that will never come (Linux; elsewhere nothing)."""
    import ctypes
    import signal
    import sys

    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    own_stops(interrupt=signal.SIG_DFL)
    _give_freed_memory_back()


def _give_freed_memory_back() -> None:
    """Arrow's buffers in a build worker come from jemalloc, told to give freed pages back at
    once: Arrow's default allocator kept each parsed slice's freed buffers (a worker's peak at
    1.1 million listings: 404 MB with it, 330 MB so). A pyarrow without jemalloc keeps its own."""
    import pyarrow as pa

    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
        pa.jemalloc_set_decay_ms(0)
    except NotImplementedError:
        pass


def _build_once(
    mirror_path: str | os.PathLike[str], part: str, save_to: str | os.PathLike[str] | None
) -> ColumnarIndex:
    """Read the filter and sort columns of one generation of the mirror and build the index.

    Two workers each scan, parse and sort half of the columns, on their own connection
    (forked processes where possible: SQLite's allocator makes threads wait on each other),
    each writing its arrays to a scratch file as it makes them; the generation and the
    listings each one saw must agree. The two files become the part's file (`save_to`), or
    are read into memory."""
    path = os.fspath(mirror_path)
    folder = os.fspath(Path(save_to).parent) if save_to is not None else tempfile.gettempdir()
    # Two halves of about equal cost (the second also reads the name order).
    first = list(number_columns()) + ["created_at", "first_seen_at"]
    second = [c for c in TIME_COLUMNS + DAY_COLUMNS + CODE_COLUMNS if c not in first]
    parts = [(path, first, False, part, folder), (path, second, True, part, folder)]
    if hasattr(os, "fork") and threading.active_count() == 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool: Any = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"), initializer=_worker_start)
    else:
        pool = ThreadPoolExecutor(2)
    with pool:
        with stops_held():  # the workers start with their own (toolkit/store/children.py)
            futures = [pool.submit(_build_part, *args) for args in parts]
        built = [future.exception() or future.result() for future in futures]
    halves = [h[3] for h in built if not isinstance(h, BaseException)]
    out = IndexFile(folder, target=save_to)
    try:
        for failed in built:
            if isinstance(failed, BaseException):
                raise failed
        (generation, rows, meta, _), (other_generation, _, other_meta, _) = built  # type: ignore[misc]
        if generation != other_generation or not np.array_equal(halves[0].array("id"), halves[1].array("id")):
            raise _Moved("the mirror changed while the index was read; build again")
        out.take(halves[0])
        out.take(halves[1], skip=("id",))
        for key, value in other_meta.items():
            meta[key] = value + meta[key] if isinstance(value, list) else {**meta[key], **value}
        meta["part"] = part
        if part == "all":  # the archive's version as of the rows read (an archive batch changes the generation too)
            meta.update(_all_part_meta(path, generation))
        if save_to is not None:
            out.finish(generation, rows, meta)
            return _mapped(save_to, part)
        return ColumnarIndex(generation, out.arrays(), meta)
    finally:
        for half in halves:
            half.discard()
        out.discard()


def _all_part_meta(path: str, generation: int) -> dict[str, Any]:
    conn = connect(path, readonly=True)
    try:
        conn.execute("BEGIN")
        if read_generation(conn) != generation:
            raise _Moved("the mirror changed while the index was read; build again")
        return {
            "archive": _archive_version(conn),
            # Archived and packed listings are not in SQLite's trigram index: their names are searched here.
            "outside_fts": conn.execute(
                "SELECT EXISTS (SELECT 1 FROM archive_parts WHERE tbl = 'listings') "
                "OR EXISTS (SELECT 1 FROM packed_listings)"
            ).fetchone()[0]
            == 1,
        }
    finally:
        conn.close()


def _archive_version(conn: sqlite3.Connection) -> str:
    from ..store.parquet_archive import archive_version

    return archive_version(conn)


def _build_part(
    path: str, columns: list[str], with_names: bool, part: str, folder: str
) -> tuple[int, int, dict[str, Any], IndexFile]:
    """Scan `columns` (and the name order), hold them in id order and sort the sortable ones,
    each array written to a scratch file in `folder` as it is made. Returns the generation,
    the rows, the meta and that file."""
    out = IndexFile(folder)
    try:
        meta: dict[str, Any] = {"whole": {}, "codes": {}, "nonnull": {}, "unusable": []}
        sortable = {c for c, _ in SORT_COLUMNS.values()}
        groups = [["id", *group] for group in _scan_groups(columns)]
        ids: np.ndarray | None = None
        for generation, table in scans(path, groups, part):
            scan_ids = _numpy(table.column("id"))
            order = np.argsort(scan_ids, kind="stable")
            if ids is None:
                ids = scan_ids[order]
                out.add("id", ids)
            elif not np.array_equal(scan_ids[order], ids):
                raise _Moved("two scans of one read disagree; build again")
            for column in table.column_names[1:]:
                kind = column_kind(column)
                data = table.column(column).combine_chunks()
                if kind in _TEXT_LENGTHS:
                    data = _as_whole_numbers(data, kind)
                    if data is None:
                        meta["unusable"].append(column)  # a stored form this index cannot compare as SQLite does
                        continue
                arrays: dict[str, np.ndarray] = {}
                _put(arrays, meta, column, kind, data, order)
                if column in sortable:
                    arrays[f"sort:{column}"], arrays[f"starts:{column}"], meta["nonnull"][column] = _sort_order(
                        arrays[column]
                    )
                for name, array in arrays.items():
                    out.add(name, array)
                del arrays, data
            del table, scan_ids, order
        assert ids is not None  # the first group's scan set it
        rows = len(ids)
        if with_names:
            name_generation, names = scan(path, ["id", "name"], part)
            if name_generation != generation or names.num_rows != rows:
                raise _Moved("the mirror changed while the index was read; build again")
            arrays = {"id": ids}
            _put_names(arrays, meta, _by_name(names), rows)
            for name, array in arrays.items():
                if name != "id":
                    out.add(name, array)
        return generation, rows, meta, out
    except BaseException:
        out.discard()
        raise


def _scan_groups(columns: list[str]) -> list[list[str]]:
    """`columns` in the groups a build worker reads one after the other (so that it holds one
    group's table at a time): those the covering index lacks together (one pass that looks
    each row up in the table), then the others, read from the index alone."""
    from ..store.tables import FILTER_COLUMNS

    looked_up = [c for c in columns if c not in FILTER_COLUMNS]
    covered = [c for c in columns if c in FILTER_COLUMNS]
    return [group for group in (looked_up, covered) if group] or [[]]


def _by_name(table: Any) -> Any:
    """(id, name) rows in `ORDER BY name, id` order: Arrow compares texts byte by byte, as
    SQLite's BINARY collation."""
    import pyarrow.compute as pc

    return table.take(pc.sort_indices(table, sort_keys=[("name", "ascending"), ("id", "ascending")]))


def _numpy(data: Any, fill: Any = None) -> np.ndarray:
    """An Arrow array of numbers or booleans as NumPy, its nulls set to `fill`, read from
    its buffers: pyarrow's `to_numpy` and `fill_null` import pandas (over half a second in
    a fresh process, and in each build worker)."""
    import pyarrow as pa

    if isinstance(data, pa.ChunkedArray):
        data = data.combine_chunks()
    dtype = {pa.int64(): np.int64, pa.int32(): np.int32, pa.float64(): np.float64, pa.bool_(): bool}[data.type]
    if not len(data):
        return np.zeros(0, dtype=dtype)
    buffers = data.buffers()
    values = (
        _bits(buffers[1], data)
        if dtype is bool
        else np.frombuffer(buffers[1], dtype=dtype)[data.offset : data.offset + len(data)]
    )
    if data.null_count:
        if fill is None:
            raise ValueError("an array with nulls and nothing to fill them with")
        values = np.where(_bits(buffers[0], data), values, fill)
    return values


def _bits(buffer: Any, data: Any) -> np.ndarray:
    """One bit a value (Arrow's validity bitmaps and booleans) as a NumPy bool array."""
    bits = np.unpackbits(np.frombuffer(buffer, dtype=np.uint8), bitorder="little")
    return bits[data.offset : data.offset + len(data)].astype(bool)


def _nulls(data: Any) -> np.ndarray:
    """Where an Arrow array holds NULL."""
    if not data.null_count:
        return np.zeros(len(data), dtype=bool)
    return ~_bits(data.buffers()[0], data)


# The stored text forms that read back exactly: any other makes the column unusable here.
_TEXT_LENGTHS = {"time": 20, "day": 10}


def _as_whole_numbers(data: Any, kind: str) -> Any:
    """Timestamps as seconds and dates as days since 1970, or None when a stored text is not
    exactly `YYYY-MM-DDTHH:MM:SSZ` (or `YYYY-MM-DD`): other forms sort differently as text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if data.null_count < len(data):
        lengths = pc.min_max(pc.utf8_length(data)).as_py()
        if lengths["min"] != _TEXT_LENGTHS[kind] or lengths["max"] != _TEXT_LENGTHS[kind]:
            return None
    try:
        if kind == "time":
            return pc.strptime(data, format="%Y-%m-%dT%H:%M:%SZ", unit="s").cast(pa.int64())
        return pc.strptime(data, format="%Y-%m-%d", unit="s").cast(pa.date32()).cast(pa.int32())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _sort_order(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """(order, starts of runs of equal values in it, non-null count): NULL last, ties by id."""
    null = _null_of(values)
    present = ~np.isnan(values) if null is None else values != null
    where = np.flatnonzero(present)
    perm = np.concatenate((where[np.argsort(values[where], kind="stable")], np.flatnonzero(~present)))
    head = values[perm[: len(where)]]
    starts = np.flatnonzero(np.r_[True, head[1:] != head[:-1]]) if len(where) else np.array([], dtype=np.int64)
    return perm.astype(np.int32), starts.astype(np.int32), len(where)


def _put_names(arrays: dict[str, np.ndarray], meta: dict[str, Any], table: Any, rows: int) -> None:
    """The name order (`ORDER BY name, id`), and the names joined in that order."""
    import pyarrow.compute as pc

    ids = arrays["id"]
    name_ids = _numpy(table.column("id"))
    positions = np.searchsorted(ids, name_ids)
    if rows and not np.array_equal(ids[np.minimum(positions, rows - 1)], name_ids):
        raise _Moved("the name scan disagrees with the others; build again")
    names = table.column("name").combine_chunks()
    arrays["sort:name"] = positions.astype(np.int32)
    if rows:  # each name with a line break after it, from the string array's buffers
        offsets = np.frombuffer(names.buffers()[1], dtype=np.int32)[names.offset : names.offset + rows + 1]
        body = np.frombuffer(names.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
        text = np.insert(body, offsets[1:] - offsets[0], 10)
    else:
        text, offsets = np.zeros(0, np.uint8), np.zeros(1, np.int32)
    arrays["name_text"] = text
    arrays["name_ends"] = (offsets[1:] - offsets[0] + np.arange(1, rows + 1)).astype(np.int32)
    if int(np.count_nonzero(text == 10)) != rows:
        raise RuntimeError("a name holds a line break; the index cannot search names")
    differs = _numpy(pc.not_equal(names.slice(1), names.slice(0, max(rows - 1, 0))))
    arrays["starts:name"] = np.flatnonzero(np.r_[True, differs]).astype(np.int32) if rows else np.array([], np.int32)
    meta["nonnull"]["name"] = rows


def _null_of(values: np.ndarray) -> Any:
    """The value that stands for NULL in an integer column (its type's minimum); None for floats."""
    return np.iinfo(values.dtype).min if values.dtype.kind == "i" else None


def _put(
    arrays: dict[str, np.ndarray], meta: dict[str, Any], column: str, kind: str, data: Any, order: np.ndarray
) -> None:
    """Hold one column in id order: codes for texts, the narrowest integer type for whole
    numbers (seconds, days, counts), float64 for reals."""
    import pyarrow.compute as pc

    if kind == "code":
        codes = _numpy(data.indices, fill=len(data.dictionary))[order]  # NULL: past the last text
        arrays[column] = codes.astype(_index_type(len(data.dictionary) + 1))
        meta["codes"][column] = data.dictionary.to_pylist()
        return
    if kind == "real":
        values = _numpy(data, fill=math.nan)[order]
        distinct = np.unique(values[~np.isnan(values)])
        arrays[column], arrays[f"values:{column}"] = _ranks(values, distinct, _index_type(len(distinct) + 1)), distinct
        meta["whole"][column] = True
        return
    width = _whole_type(pc.min(data).as_py(), pc.max(data).as_py())
    values = _numpy(data, fill=np.iinfo(width).min)[order]
    arrays[column] = values.astype(width)
    meta["whole"][column] = True


# -- refreshing: only the rows a write touched ----------------------------------------

# Past this share of changed rows, building the whole index again costs about the same.
_REFRESH_SHARE = 0.2


def update_index(
    mirror_path: str | os.PathLike[str],
    previous: "ColumnarIndex | None" = None,
    *,
    part: str = "live",
    save_to: str | os.PathLike[str] | None = None,
) -> "ColumnarIndex":
    """A part of the index of the mirror as it is now: `previous` with the rows written since
    its generation read again (the mirror's change log, `listing_changes`), or, when that log
    cannot say (a bulk load since, too many changes, a held form that changed), built whole.
    `save_to`: the part is saved there, an array at a time as it is made (never whole in
    memory beside `previous`), and returned mapped from it."""
    if previous is not None and previous.part != part:
        raise ValueError(f"an index of part {previous.part!r} cannot be refreshed as {part!r}")
    if previous is not None:
        out = IndexFile(Path(save_to).parent, target=save_to) if save_to is not None else None
        try:
            refreshed = _refresh(os.fspath(mirror_path), previous, out)
        except _Moved:
            refreshed = None
        finally:
            if out is not None:
                out.discard()  # nothing, once finished
        if refreshed is not None:
            if refreshed is previous and save_to is not None:
                previous.save(save_to)
            return refreshed
    return build_index(mirror_path, part=part, save_to=save_to)


def _mapped(path: str | os.PathLike[str], part: str) -> "ColumnarIndex":
    index = load_index(path, part)
    if index is None:
        raise OSError(f"{path}: the index part just written does not read back")
    return index


def _held_columns() -> list[str]:
    return [*number_columns(), *TIME_COLUMNS, *DAY_COLUMNS, *CODE_COLUMNS]


def _refresh(path: str, previous: "ColumnarIndex", out: "IndexFile | None" = None) -> "ColumnarIndex | None":
    """`previous` patched with the rows the change log names since its generation, all read
    in one read transaction (`out`: written there, and mapped from it); None when only a
    whole build can give the current index."""
    columns = _held_columns()
    if (
        previous.meta["unusable"]
        or any(c not in previous.arrays for c in columns)
        or "sort:name" not in previous.arrays
    ):
        return None
    conn = reading(path)
    try:
        conn.execute("BEGIN")
        generation = read_generation(conn)
        if generation == previous.generation:
            return previous
        start = conn.execute("SELECT value FROM mirror_meta WHERE key = 'changes_from'").fetchone()
        if start is None or generation < previous.generation or previous.generation < int(start[0]):
            return None  # the log does not cover every write since `previous`
        if previous.part == "all" and previous.meta.get("archive") != _archive_version(conn):
            return None  # files joined or left the archive
        since = (previous.generation,)
        changed = np.array(
            [i for (i,) in conn.execute("SELECT id FROM listing_changes WHERE generation >= ? ORDER BY id", since)],
            dtype=np.int64,
        )
        if len(changed) > max(previous.rows * _REFRESH_SHARE, 1000):
            return None
        held = (
            f" AND {PARTS[previous.part]}" if PARTS[previous.part] else ""
        )  # a row that left the part is gone from it
        table = read_rows(
            conn,
            ["id", *columns, "name"],
            f"listings WHERE id IN (SELECT id FROM listing_changes WHERE generation >= ?){held}",
            since,
        )
    finally:
        conn.close()
    try:
        return _patched(previous, generation, changed, table, columns, out)
    except _Unpatchable:
        return None


class _Unpatchable(Exception):
    """A changed row holds a value the previous index's form cannot take (a new text form)."""


def _patched(
    previous: "ColumnarIndex",
    generation: int,
    changed: np.ndarray,
    table: Any,
    columns: list[str],
    out: "IndexFile | None" = None,
) -> "ColumnarIndex":
    """The arrays of `previous` with the rows of `table` written over, added or (ids of
    `changed` no longer in the mirror) removed; the sort orders of changed columns again.
    With `out`, each array goes to that file as it is made (and `previous`'s pages read are
    given back a column at a time), and the part is returned mapped from it."""
    import copy

    scanned = _numpy(table.column("id"))
    order = np.argsort(scanned, kind="stable")
    ids = scanned[order]
    old_ids = previous.arrays["id"]
    found = _positions(old_ids, ids)
    updated, added = found >= 0, found < 0
    gone = changed[~np.isin(changed, ids)]
    removed = _positions(old_ids, gone)
    removed = removed[removed >= 0]
    kept_ids = np.delete(old_ids, removed) if len(removed) else old_ids
    insert_at = np.searchsorted(kept_ids, ids[added])
    reshaped = bool(len(removed) or added.any())

    def patch(old: np.ndarray, new: np.ndarray) -> np.ndarray:
        values = np.array(old)
        values[found[updated]] = new[updated]
        if reshaped:
            values = np.insert(np.delete(values, removed), insert_at, new[added])
        return values

    meta = copy.deepcopy(previous.meta)
    arrays: dict[str, np.ndarray] = {} if out is not None else dict(previous.arrays)
    sink = out if out is not None else HeldArrays(arrays)
    new_ids = patch(old_ids, ids)
    sink.add("id", new_ids)
    made = {
        "id": new_ids,
        **{key: previous.arrays[key] for key in _NAME_ARRAYS},
    }  # what `patch_names` reads or replaces
    for column in columns:
        reals: dict[str, np.ndarray] = (
            {f"values:{column}": previous.arrays[f"values:{column}"]} if f"values:{column}" in previous.arrays else {}
        )
        old, new = _changed_values(
            previous.arrays[column], meta, column, table.column(column).combine_chunks(), order, reals
        )
        values = patch(old, new)
        sink.add(column, values)
        for name, held in reals.items():
            sink.add(name, held)
        same = np.array_equal(old[found[updated]], new[updated], equal_nan=new.dtype.kind == "f")
        if f"sort:{column}" in previous.arrays:
            if reshaped or not same:
                perm, starts, meta["nonnull"][column] = _sort_order(values)
            else:
                perm, starts = previous.arrays[f"sort:{column}"], previous.arrays[f"starts:{column}"]
            sink.add(f"sort:{column}", perm)
            sink.add(f"starts:{column}", starts)
        del old, new, values
        if out is not None:
            previous.release()
    scanned_names = table.column("name").to_pylist()
    names = [scanned_names[i] for i in order]
    patch_names(previous, made, meta, found, removed, ids, names)
    for key in _NAME_ARRAYS:
        sink.add(key, made[key])
    for key, array in previous.arrays.items():  # any other array, as it was
        if key not in sink:
            sink.add(key, array)
    if out is not None:
        previous.release()
        out.finish(generation, len(new_ids), meta)
        return _mapped(out.target, meta.get("part", "live"))  # type: ignore[arg-type]  # finish needs one
    return ColumnarIndex(generation, arrays, meta, keep=previous._keep)


_NAME_ARRAYS = ("sort:name", "name_text", "name_ends", "starts:name")


def _positions(held: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The position of each of `ids` in the sorted `held`, -1 where it is not there."""
    at = np.searchsorted(held, ids)
    inside = at < len(held)
    hit = np.zeros(len(ids), dtype=bool)
    hit[inside] = held[at[inside]] == ids[inside]
    return np.where(hit, at, -1)


def _changed_values(
    old: np.ndarray, meta: dict[str, Any], column: str, data: Any, order: np.ndarray, arrays: dict[str, np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """(the old column, in a type that also holds the new values; the new values in it, in
    `order`). Arrow arrays are turned into NumPy before being reordered: Arrow's `take`
    with a NumPy index imports pandas. A real's distinct values in `arrays` grow as needed."""
    kind = column_kind(column)
    if kind == "code":
        old, codes = _changed_codes(old, meta["codes"][column], data)
        return old, codes[order]
    if kind == "real":
        return _changed_reals(old, arrays, column, _numpy(data, fill=math.nan)[order])
    if kind in _TEXT_LENGTHS:
        data = _as_whole_numbers(data, kind)
        if data is None:
            raise _Unpatchable(column)
    nulls = _nulls(data)[order]
    values = _numpy(data, fill=0).astype(np.int64)[order]
    info = np.iinfo(old.dtype)
    present = values[~nulls]
    if len(present) and (present.min() <= info.min or present.max() > info.max):
        held = old[old != info.min]
        low = min(int(present.min()), int(held.min()) if len(held) else int(present.min()))
        high = max(int(present.max()), int(held.max()) if len(held) else int(present.max()))
        wider = _whole_type(low, high)
        widened = old.astype(wider)
        widened[old == info.min] = np.iinfo(wider).min
        old, info = widened, np.iinfo(wider)
    return old, np.where(nulls, info.min, values).astype(old.dtype)


def _changed_reals(
    old: np.ndarray, arrays: dict[str, np.ndarray], column: str, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Ranks of new real values; values never held join the distinct ones, and the old
    ranks move to their places among them (the order, and so every sort, is unchanged)."""
    held = arrays[f"values:{column}"]
    fresh = np.setdiff1d(values[~np.isnan(values)], held)
    if len(fresh):
        distinct = np.union1d(held, fresh)
        width = np.promote_types(old.dtype, _index_type(len(distinct) + 1))
        moved = np.full(len(old), np.iinfo(width).min, dtype=width)
        present = old != np.iinfo(old.dtype).min
        moved[present] = np.searchsorted(distinct, held)[old[present]]
        old, held = moved, distinct
        arrays[f"values:{column}"] = distinct
    return old, _ranks(values, held, old.dtype)


def _index_type(count: int) -> Any:
    """The integer type for codes or ranks below `count` (NULL is kept apart: a code past the
    last text, or the type's minimum)."""
    return np.int16 if count < 2**15 else np.int32


def _whole_type(low: int | None, high: int | None) -> Any:
    """The narrowest integer type holding `low .. high` with its minimum left for NULL."""
    for candidate in (np.int8, np.int16, np.int32):
        info = np.iinfo(candidate)
        if low is None or high is None or (info.min < low and high <= info.max):
            return candidate
    return np.int64


def _ranks(values: np.ndarray, distinct: np.ndarray, dtype: Any) -> np.ndarray:
    """Each real's rank among the sorted distinct values; NULL (NaN) as the type's minimum."""
    ranks = np.searchsorted(distinct, values).astype(dtype)
    ranks[np.isnan(values)] = np.iinfo(dtype).min
    return ranks


def _changed_codes(old: np.ndarray, texts_held: list[str], data: Any) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the new texts; a text not seen before gets the next code (the NULL code,
    one past the last text, moves up with it)."""
    null_before = len(texts_held)
    code_of = {text: code for code, text in enumerate(texts_held)}
    codes = []
    for text in data.to_pylist():
        if text is None:
            codes.append(-1)
            continue
        code = code_of.get(text)
        if code is None:
            code = code_of[text] = len(texts_held)
            texts_held.append(text)
        codes.append(code)
    null = len(texts_held)
    dtype = np.promote_types(old.dtype, _index_type(null + 1))
    if null != null_before:
        moved = old.astype(dtype)
        moved[old == null_before] = null
        old = moved
    new = np.array(codes, dtype=np.int64)
    return old, np.where(new < 0, null, new).astype(old.dtype)
