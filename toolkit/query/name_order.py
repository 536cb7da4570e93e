"""The name order of a columnar index part after a write (`patch_names`): the order of `ORDER
BY name, id` and the names joined in it, with the leaving names cut out and the incoming ones
spliced in where they sort, without sorting a million names again."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .columnar_index import ColumnarIndex

__all__ = ["patch_names", "name_positions"]

# Up to this many incoming names are placed by a binary search each, more among every
# `_NAME_STEP`th old name first.
_FEW_NAMES = 2000
_NAME_STEP = 64


def patch_names(
    previous: "ColumnarIndex",
    arrays: dict[str, np.ndarray],
    meta: dict[str, Any],
    found: np.ndarray,
    removed: np.ndarray,
    ids: np.ndarray,
    names: list[str],
) -> None:
    """The name order and the joined names after the change: unchanged when no name changed
    and no row came or went; else the old order (`ORDER BY name, id`: bytes, ties by id)
    with the leaving names cut out and the incoming ones spliced in where they sort."""
    rows, order, old_ids = previous.rows, previous.arrays["sort:name"], previous.arrays["id"]
    ends = previous.arrays["name_ends"].astype(np.int64)
    begins = np.r_[0, ends[:-1]] if rows else ends
    blob = previous.arrays["name_text"].tobytes()
    rank = np.empty(rows, dtype=np.int64)
    rank[order] = np.arange(rows)

    def name_at(r: int) -> bytes:
        return blob[begins[r] : ends[r] - 1]

    encoded = [name.encode() for name in names]
    renamed = [i for i in np.flatnonzero(found >= 0) if name_at(rank[found[i]]) != encoded[i]]
    added = np.flatnonzero(found < 0)
    if not renamed and not len(added) and not len(removed):
        return
    leaving = np.sort(rank[np.concatenate((removed, found[renamed])).astype(np.int64)])
    incoming = sorted((encoded[i], int(ids[i])) for i in [*renamed, *added])
    # Where each incoming name sorts in the old order, and then among the names that stay.
    before_old = name_positions(incoming, blob, old_ids[order], name_at)
    at = before_old - np.searchsorted(leaving, before_old)
    # The joined names: the old text with the leaving names cut out and the incoming spliced in.
    pieces, cursor, cut = [], 0, 0
    for (name, _), position in zip(incoming, before_old):
        while cut < len(leaving) and leaving[cut] < position:
            pieces.append(blob[cursor : begins[leaving[cut]]])
            cursor, cut = int(ends[leaving[cut]]), cut + 1
        start = int(begins[position]) if position < rows else len(blob)
        pieces += [blob[cursor:start], name, b"\n"]
        cursor = start
    for r in leaving[cut:]:
        pieces.append(blob[cursor : begins[r]])
        cursor = int(ends[r])
    pieces.append(blob[cursor:])
    text = b"".join(pieces)
    lengths = np.insert(np.delete(np.diff(np.r_[0, ends]), leaving), at, [len(n) + 1 for n, _ in incoming])
    # Row positions: the staying rows' positions move by the rows removed before them and
    # the rows added before them (by id).
    new_ids = arrays["id"]
    deleted, added_ids = np.sort(removed), np.sort(ids[added])
    staying = order[np.setdiff1d(np.arange(rows), leaving, assume_unique=True)].astype(np.int64)
    moved = staying - np.searchsorted(deleted, staying) + np.searchsorted(added_ids, old_ids[staying])
    arrays["sort:name"] = np.insert(moved, at, np.searchsorted(new_ids, [i for _, i in incoming])).astype(np.int32)
    arrays["name_text"] = np.frombuffer(text, dtype=np.uint8)
    arrays["name_ends"] = np.cumsum(lengths).astype(np.int32)
    # Runs of equal names: only next to a cut or a splice can a run start or end.
    same = np.ones(rows, dtype=bool)
    same[previous.arrays["starts:name"]] = False
    same = np.insert(np.delete(same, leaving), at, False)
    total = len(same)
    new_ends = arrays["name_ends"].astype(np.int64)
    after_cut = leaving - np.arange(len(leaving))  # the kept index that follows each cut
    touched = np.concatenate(
        (at + np.arange(len(at)), at + np.arange(len(at)) + 1, after_cut + np.searchsorted(at, after_cut, side="right"))
    )
    for f in np.unique(touched):
        if 0 < f < total:
            same[f] = (
                text[(new_ends[f - 2] if f > 1 else 0) : new_ends[f - 1] - 1] == text[new_ends[f - 1] : new_ends[f] - 1]
            )
    if total:
        same[0] = False
    arrays["starts:name"] = np.flatnonzero(~same).astype(np.int32)
    meta["nonnull"]["name"] = total


def name_positions(
    incoming: list[tuple[bytes, int]], blob: bytes, ids_in_order: np.ndarray, name_at: Callable[[int], bytes]
) -> np.ndarray:
    """For each (name, id) of the sorted `incoming`, the old rank it goes before (`ORDER BY
    name, id`): one vectorised search among every `_NAME_STEP`th old name, then a binary
    search within the stretch it falls in (the old names are never all split out at once:
    a million of them would take 130 MB)."""
    import bisect

    rows = len(ids_in_order)
    key = lambda r: (name_at(r), int(ids_in_order[r]))  # noqa: E731
    if len(incoming) <= _FEW_NAMES:
        return np.array([bisect.bisect_left(range(rows), item, key=key) for item in incoming], dtype=np.int64)
    marks = np.arange(0, rows, _NAME_STEP)
    sampled = [name_at(int(r)) for r in marks]
    width = max(len(n) for n in [*sampled, *(name for name, _ in incoming), b"-"])
    sample = np.array(sampled, dtype=f"S{width}")
    wanted = np.array([name for name, _ in incoming], dtype=f"S{width}")
    # Between the last mark below the name and the first mark above it.
    low = np.searchsorted(sample, wanted, side="left") - 1
    high = np.searchsorted(sample, wanted, side="right")
    lows = np.where(low >= 0, marks[np.maximum(low, 0)], 0)
    highs = np.where(high < len(marks), marks[np.minimum(high, len(marks) - 1)], rows)
    return np.array(
        [
            bisect.bisect_left(range(rows), item, lo=int(lo), hi=int(hi), key=key)
            for item, lo, hi in zip(incoming, lows, highs)
        ],
        dtype=np.int64,
    )
