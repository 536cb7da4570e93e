"""The only code that writes records into the mirror.

Everything that brings rows in (the sync, the demo source, public feeds) yields plain
dicts shaped as the reference records and hands them to `save_listings` /
`save_pending`, which normalise types, derive the toolkit's fields (`rows.py`), keep the record as
received in `raw_records` (the fields it has no column for), upsert by id in batches (one transaction each), append
`listing_history` when a price field changed and maintain first/last seen.

A big file's rows go the set-based way (`StagedWrite`, `staged_write.py`, inside the caller's
transaction): each record normalised once into a table beside the mirror (`staging`), then
merged by the same rules in a few statements, a changed row rewriting only the columns that changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from itertools import islice
from operator import itemgetter
from typing import Any, Required, TypedDict, Unpack

from ..signals.inflation import METRICS, flag_metric_jumps
from .fields import utc_now
from .meta import bump_generation
from .reflag import current_spam_flags
from .rows import (
    FAR_FUTURE,
    HISTORY_FIELDS,
    LISTING_KIND,
    LIVE_FIELDS,
    PENDING_KIND,
    SIGNAL_COLUMNS,
    VALUE_FIELDS,
    Kind,
    WriteCounts,
    age_in_years,
    listing_row,
    listing_values,
    pending_row,
    pending_values,
    unknown_fields,
)
from .staged_write import StagedWrite, staging

__all__ = [
    "WriteCounts",
    "StagedWrite",
    "staging",
    "SaveOptions",
    "save_listings",
    "save_pending",
    "close_listings",
    "listing_row",
    "pending_row",
    "listing_values",
    "pending_values",
    "age_in_years",
    "utc_now",
    "bump_generation",
    "FAR_FUTURE",
    "SIGNAL_COLUMNS",
    "VALUE_FIELDS",
    "LIVE_FIELDS",
]


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _existing(conn: sqlite3.Connection, kind: "Kind", ids: list[int]) -> dict[int, tuple]:
    """The stored values (in `kind.names` order) of those of `ids` already in the table."""
    found: dict[int, tuple] = {}
    if not conn.execute(f"SELECT 1 FROM {kind.table} LIMIT 1").fetchone():
        return found  # an empty table (a first load): nothing to compare with
    for chunk in _batches(ids, 500):
        cursor = conn.execute(
            f"SELECT {', '.join(kind.names)} FROM {kind.table} WHERE id IN ({','.join('?' * len(chunk))})", chunk
        )
        for values in cursor:
            found[values[0]] = values
    return found


def _save(
    conn: sqlite3.Connection, kind: Kind, rows_and_raws: list[tuple[tuple, str | None]]
) -> tuple[WriteCounts, dict[int, tuple], list[tuple]]:
    """Upsert one batch of rows (tuples in `kind.names` order); returns the counts, the
    previous state of the rows that existed and the rows as written."""
    rows = {row[0]: row for row, _ in rows_and_raws}  # last one wins within a batch
    before = _existing(conn, kind, list(rows))
    counts = WriteCounts(seen=len(rows))
    if before:
        first_seen, last_seen = kind.position("first_seen_at"), kind.position("last_seen_at")
        kept = [kind.position(c) for c in kind.kept]
        kept_unless_given = [kind.position(c) for c in kind.kept_unless_given]
        kept_while_same = [
            (kind.position(c), [kind.position(s) for s in sources]) for c, sources in kind.kept_while_same
        ]
        for row_id, row in rows.items():
            old = before.get(row_id)
            if old is None:
                counts.new += 1
                continue
            if old[first_seen]:
                row = rows[row_id] = (*row[:first_seen], old[first_seen], *row[first_seen + 1 :])
            if kept or kept_unless_given or kept_while_same:
                values = list(row)
                for i, sources in kept_while_same:
                    if old[i] is not None and all(old[j] == values[j] for j in sources):
                        values[i] = old[i]
                for i in kept:
                    values[i] = old[i] if old[i] is not None else values[i]
                for i in kept_unless_given:
                    if values[i] is None:
                        values[i] = old[i]
                row = rows[row_id] = tuple(values)
            if any(a != b for i, (a, b) in enumerate(zip(old, row)) if i not in (first_seen, last_seen)):
                counts.updated += 1
    else:
        counts.new = len(rows)
    conn.executemany(kind.upsert, rows.values())
    raws = [(kind.raw_kind, row[0], raw) for row, raw in rows_and_raws if raw is not None]
    if raws:
        conn.executemany(
            "INSERT INTO raw_records (kind, id, raw) VALUES (?, ?, ?) ON CONFLICT(kind, id) DO UPDATE SET raw = excluded.raw",
            raws,
        )
    return counts, before, list(rows.values())


def _save_all(
    conn: sqlite3.Connection,
    kind: Kind,
    records: Iterable[Any],
    *,
    origin: str,
    observed_at: str | None = None,
    keep_raw: bool = True,
    batch_size: int = 1000,
    normalized: bool = False,
    canonical: bool = False,
    in_batch: Callable[[list[tuple], dict[int, tuple], str], None] | None = None,
    commit_with: Callable[[sqlite3.Connection], None] | None = None,
) -> WriteCounts:
    """Upsert `records` in batches, one transaction each (with `in_batch` and `commit_with`
    run inside it; `commit_with` runs once, in its own transaction, when there are no rows).

    `normalized` records are rows already made by `listing_row` / `pending_row` and turned
    into tuples by `listing_values` / `pending_values` (with this origin and observed_at),
    e.g. in a worker process: they have no raw record. `canonical` records carry stored types
    already (see `listing_row`)."""
    if normalized and keep_raw:
        raise ValueError("normalized rows are not records as received: pass keep_raw=False")
    observed_at = observed_at or utc_now()
    values = itemgetter(*kind.names)
    total = WriteCounts()
    for batch in _batches(records, batch_size):
        pairs: list[tuple[tuple, str | None]]
        if normalized:
            pairs = [(row, None) for row in batch]
        else:
            pairs = [
                (
                    values(kind.to_row(rec, origin=origin, observed_at=observed_at, canonical=canonical)),
                    unknown_fields(rec, kind) if keep_raw else None,
                )
                for rec in batch
            ]
        with conn:
            counts, before, rows = _save(conn, kind, pairs)
            if in_batch:
                in_batch(rows, before, observed_at)
            if commit_with:
                commit_with(conn)
            bump_generation(conn)
        total += counts
    if commit_with and not total.seen:
        with conn:
            commit_with(conn)
    return total


_HISTORY_POSITIONS = tuple(LISTING_KIND.position(f) for f in HISTORY_FIELDS)
_history_values = itemgetter(*_HISTORY_POSITIONS)
_metric_values = itemgetter(*(LISTING_KIND.position(f) for f in METRICS))


def _metric_rose(old: tuple, new: tuple) -> bool:
    """A metric went up (a first value, null -> n, is not a rise)."""
    return any(a is not None and b is not None and b > a for a, b in zip(old, new))


class SaveOptions(TypedDict, total=False):
    """The keyword options of `save_listings` and `save_pending` (only `origin` is required)."""

    origin: Required[str]
    observed_at: str | None  # when the records were seen (default: now)
    keep_raw: bool  # keep each record as received in raw_records (default True)
    batch_size: int  # records a transaction (default 1000)
    normalized: bool  # tuples `listing_values`/`pending_values` made, no raw record (default False)
    commit_with: Callable[[sqlite3.Connection], None] | None  # run inside each batch's transaction
    canonical: bool  # records that carry stored types already (default False)


def save_listings(
    conn: sqlite3.Connection, records: Iterable[Any], *, flag_jumps: bool = True, **options: Unpack[SaveOptions]
) -> WriteCounts:
    """Upsert listing records; a history row for each new listing and each change of a price
    field or a metric. `commit_with(conn)` runs inside each batch's transaction (a sync's
    checkpoint: pass a page's rows in one batch and they commit together with it).

    A listing whose metric rose gets its `metrics_jumped` flag re-computed in the same
    transaction (`toolkit.signals.inflation`); `flag_jumps=False` leaves that to the caller
    (a bulk load calls `flag_metric_jumps` once at its end). Spam flags follow the
    dictionary in use: when it changed since the mirror was flagged, every listing is
    re-flagged first (`toolkit.store.reflag`)."""
    current_spam_flags(conn)

    def write_history(rows: list[tuple], before: dict[int, tuple], observed: str) -> None:
        history = []
        rising = []
        for row in rows:
            now = _history_values(row)
            old = before.get(row[0])
            if old is None or _history_values(old) != now:
                history.append((row[0], observed, *now))
                if old is not None and _metric_rose(_metric_values(old), _metric_values(row)):
                    rising.append(row[0])
        conn.executemany(
            f"INSERT INTO listing_history (listing_id, observed_at, {', '.join(HISTORY_FIELDS)}) "
            f"VALUES (?, ?, {', '.join('?' * len(HISTORY_FIELDS))})",
            history,
        )
        if rising and flag_jumps:
            flag_metric_jumps(conn, rising)

    return _save_all(conn, LISTING_KIND, records, in_batch=write_history, **options)


def save_pending(conn: sqlite3.Connection, records: Iterable[Any], **options: Unpack[SaveOptions]) -> WriteCounts:
    """Upsert pending-delete records (`options` as for `save_listings`)."""
    return _save_all(conn, PENDING_KIND, records, **options)


def close_listings(
    conn: sqlite3.Connection, ids: Iterable[int], *, closed_at: str | None = None, commit: bool = True
) -> int:
    """Mark listings as having left their source; returns how many were live until now.
    `commit=False` leaves the transaction to the caller (a sync closes with its checkpoint)."""
    closed_at = closed_at or utc_now()
    closed = 0
    with conn if commit else nullcontext():
        for chunk in _batches(ids, 500):
            cursor = conn.execute(
                f"UPDATE listings SET closed_at = ?, live_until = ? WHERE closed_at IS NULL AND id IN ({','.join('?' * len(chunk))})",
                [closed_at, closed_at, *chunk],
            )
            closed += cursor.rowcount
        bump_generation(conn)
    return closed
