"""The only code that writes records into the mirror.

Everything that brings rows in (the sync, the demo source, public feeds) yields plain
dicts shaped as the reference records and hands them to `save_listings` /
`save_pending`, which normalise types, derive the toolkit's fields, keep the record as
received in `raw_records` (the fields it has no column for), upsert by id in batches (one transaction each), append
`listing_history` when a price field changed and maintain first/last seen.

A big file's rows go the set-based way (`StagedWrite`, inside the caller's transaction): each
record normalised once into a table beside the mirror (`staging`), then merged by the same
rules in a few statements, a changed row rewriting only the columns that changed.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from datetime import date, datetime, timezone
from itertools import islice
from operator import itemgetter
from typing import Any

from ..names import label_stats, split_domain
from ..signals.wayback_content import ARCHIVE_FIELDS
from ..signals.fx import to_eur
from ..signals.inflation import METRICS, flag_metric_jumps
from ..signals.spam import current_dictionary, record_fingerprint, stored_fingerprint
from .meta import bump_generation
from .reflag import reflag
from .fields import (
    LISTING_DERIVED_FIELDS,
    LISTING_EXTRA_FIELDS,
    LISTING_FIELDS,
    PENDING_FIELDS,
    SQL_TYPES,
    converters,
    iso_date,
    iso_timestamp,
)
from .schema import LISTING_COLUMNS, PENDING_COLUMNS

__all__ = [
    "WriteCounts",
    "StagedWrite",
    "staging",
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

FAR_FUTURE = "9999-12-31T23:59:59Z"
# The price range `edt appraise` writes (analysis/appraise.py): kept through every later write.
VALUE_FIELDS = ("value_low", "value_mid", "value_high", "value_reason", "valued_at")
# The live estimate of an auction with bids: kept while the bidding it was read from is the same
# (a new bid or end drops it, so it is never below the bid shown, until the next estimate).
LIVE_FIELDS = ("live_low", "live_mid", "live_high")
_BIDDING = ("max_bid", "bids_count", "auction_end_date", "currency")
# Listing columns the writer derives (from price, currency, name) or keeps from the stored
# row (metric jump, archive signals, price range): a record never changes them by itself.
SIGNAL_COLUMNS = (
    "price_eur",
    "effective_price_eur",
    "spam_terms",
    "spam_count",
    "metrics_jumped",
    "metrics_jump",
    *ARCHIVE_FIELDS,
    *VALUE_FIELDS,
    *LIVE_FIELDS,
)
HISTORY_FIELDS = ("price", "max_bid", "bids_count", "effective_price", "auction_end_date", *METRICS)


@dataclass
class WriteCounts:
    seen: int = 0
    new: int = 0
    updated: int = 0
    closed: int = 0

    def __iadd__(self, other: "WriteCounts") -> "WriteCounts":
        self.seen += other.seen
        self.new += other.new
        self.updated += other.updated
        self.closed += other.closed
        return self


def utc_now() -> str:
    return iso_timestamp(datetime.now(timezone.utc).replace(microsecond=0))


def age_in_years(first_date: str | None, today: date | None = None) -> int | None:
    """Whole years from `first_date` (YYYY-MM-DD) to today (`age`, docs/reference/fields.md)."""
    if not first_date:
        return None
    today = today or datetime.now(timezone.utc).date()
    year, month, day = int(first_date[:4]), int(first_date[5:7]), int(first_date[8:10])
    return today.year - year - ((today.month, today.day) < (month, day))


_LISTING_CONVERTERS = converters(LISTING_FIELDS)
# Archive signals come from `edt enrich`; a record may carry them (the demo source, or a
# mirror of our own replica), and a record without them never clears stored ones (`_save`).
_ARCHIVE_CONVERTERS = converters({f: LISTING_EXTRA_FIELDS[f] for f in ARCHIVE_FIELDS})
_PENDING_CONVERTERS = converters(PENDING_FIELDS)


def _upsert_sql(table: str, columns: list[str]) -> str:
    """One prepared upsert by id; `first_seen_at` keeps its first value."""
    updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in ("id", "first_seen_at"))
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        f"ON CONFLICT(id) DO UPDATE SET {updates}"
    )


_LISTING_UPSERT = _upsert_sql("listings", list(LISTING_COLUMNS))
_PENDING_UPSERT = _upsert_sql("pending_delete", list(PENDING_COLUMNS))


_encode_json = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_quote = json.encoder.encode_basestring  # the C escaper behind the encoder above


def _compact_json(value: Any) -> str:
    """`json.dumps(value, ensure_ascii=False, separators=(",", ":"))`, faster for the
    common case, a list of strings."""
    if type(value) is list and all(type(item) is str for item in value):
        return "[" + ",".join(map(_quote, value)) + "]"
    return _encode_json(value)


def _shape(fields: dict[str, str]) -> tuple[dict[str, None], tuple[str, ...], tuple[str, ...]]:
    """A row template and the fields that need JSON text or 0/1 (for `_canonical`)."""
    return (
        dict.fromkeys(fields),
        tuple(f for f, kind in fields.items() if kind in ("array", "object")),
        tuple(f for f, kind in fields.items() if kind == "bool"),
    )


_SHAPES = {id(LISTING_FIELDS): _shape(LISTING_FIELDS), id(PENDING_FIELDS): _shape(PENDING_FIELDS)}


def _canonical(record: dict[str, Any], fields: dict[str, str]) -> dict[str, Any]:
    """The stored form of a record whose values already have their stored types (the demo
    source makes them so): arrays and objects still become JSON text. Keys outside `fields`
    ride along unread (rows are written by column name)."""
    template, json_fields, bool_fields = _SHAPES.get(id(fields)) or _shape(fields)
    row = {**template, **record}
    for field in json_fields:
        if row[field] is not None:
            row[field] = _compact_json(row[field])
    for field in bool_fields:
        if row[field] is not None:
            row[field] = int(row[field])
    return row


def listing_row(record: dict[str, Any], *, origin: str, observed_at: str, canonical: bool = False) -> dict[str, Any]:
    """A `listings` row from a record as received: types normalised, derived fields added.
    `canonical` skips the type checks for records known to carry stored types already."""
    get = record.get
    if canonical:
        row = _canonical(record, LISTING_FIELDS)
    else:
        row = {field: convert(get(field)) for field, convert in _LISTING_CONVERTERS}
    if row["id"] is None or not row["name"]:
        raise ValueError(f"a listing needs an id and a name, got id={record.get('id')!r} name={record.get('name')!r}")
    row["name"] = row["name"].strip().lower()
    sld, suffix = split_domain(row["name"])
    row["tld"] = suffix or row["tld"]
    row["sld"] = sld
    row["length"], row["hyphens"], row["digits"] = label_stats(sld)
    if row["source"]:
        row["source"] = row["source"].strip().lower()
    if row["language"]:
        row["language"] = row["language"].strip().upper()
    row["effective_price"] = row["max_bid"] if row["max_bid"] is not None else row["price"]
    day = observed_at[:10]  # the ECB rate of the day the price was seen (signals/fx.py)
    row["price_eur"] = to_eur(row["price"], row["currency"], day)
    row["effective_price_eur"] = to_eur(row["effective_price"], row["currency"], day)
    terms = current_dictionary(max_staleness=1.0).match(sld)
    row["spam_terms"] = _compact_json(terms)
    row["spam_count"] = len(terms)
    row["metrics_jumped"], row["metrics_jump"] = 0, None  # a stored row keeps its own (`_save`)
    for field in (
        *VALUE_FIELDS,
        *LIVE_FIELDS,
    ):  # the mirror's own appraisal, never a record's: a stored row keeps its own
        row[field] = None
    if not canonical:
        for field, convert in _ARCHIVE_CONVERTERS:
            row[field] = convert(get(field))
    else:
        for field in ARCHIVE_FIELDS:
            row.setdefault(field, None)
        if row["archive_parked"] is not None:
            row["archive_parked"] = int(row["archive_parked"])
    row["age"] = age_in_years(row["wayback_first_date"])
    for flag in ("is_spammy", "has_gmb"):  # booleans the schema does not allow to be null
        row[flag] = row[flag] or 0
    row["created_at"] = row["created_at"] or observed_at
    row["updated_at"] = row["updated_at"] or row["created_at"]
    row["origin"] = origin
    row["first_seen_at"] = observed_at
    row["last_seen_at"] = observed_at
    row["closed_at"] = None
    row["live_until"] = row["auction_end_date"] or FAR_FUTURE
    return row


def pending_row(record: dict[str, Any], *, origin: str, observed_at: str, canonical: bool = False) -> dict[str, Any]:
    """A `pending_delete` row from a record as received (see `listing_row` for `canonical`)."""
    get = record.get
    row = (
        _canonical(record, PENDING_FIELDS) if canonical else {f: convert(get(f)) for f, convert in _PENDING_CONVERTERS}
    )
    if row["id"] is None or not row["domain"]:
        raise ValueError(
            f"a pending-delete row needs an id and a domain, got id={record.get('id')!r} domain={record.get('domain')!r}"
        )
    row["domain"] = row["domain"].strip().lower()
    sld, suffix = split_domain(row["domain"])
    row["tld"] = suffix.lstrip(".") or (row["tld"] or "").lstrip(".").lower()
    row["sld"] = sld
    _, row["hyphens"], row["digits"] = label_stats(sld)
    if row["sld_length"] is None:
        row["sld_length"] = len(sld)
    row["is_idn"] = (
        row["is_idn"] if row["is_idn"] is not None else int(row["domain"].startswith("xn--") or "xn--" in row["domain"])
    )
    if row["language"]:
        row["language"] = row["language"].strip().upper()
    row["origin"] = origin
    row["drop_window_start"] = iso_date(get("drop_window_start"))
    row["drop_window_end"] = iso_date(get("drop_window_end"))
    if row["drop_window_start"] and row["drop_window_end"] and row["drop_window_start"] > row["drop_window_end"]:
        raise ValueError(
            f"{row['domain']}: drop_window_start {row['drop_window_start']} is after "
            f"drop_window_end {row['drop_window_end']}"
        )
    row["first_seen_at"] = observed_at
    row["last_seen_at"] = observed_at
    return row


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while batch := list(islice(iterator, size)):
        yield batch


def _existing(conn: sqlite3.Connection, kind: "_Kind", ids: list[int]) -> dict[int, tuple]:
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


@dataclass(frozen=True)
class _Kind:
    """How records of one kind become rows: which table, which shape, which raw kind.
    Rows travel as tuples in `names` order (the table's columns; `id` first)."""

    table: str
    columns: dict[str, str]
    upsert: str
    raw_kind: str
    to_row: Callable[..., dict[str, Any]]
    kept: tuple[str, ...] = ()  # columns a stored row keeps (derived after the write)
    kept_unless_given: tuple[str, ...] = ()  # columns a stored row keeps when the record has none
    # (column, the columns it derives from): a stored row keeps its value while they are the
    # same (a EUR price keeps the rate of the day its price was first seen)
    kept_while_same: tuple[tuple[str, tuple[str, ...]], ...] = ()
    derived: tuple[str, ...] = ()  # fields of a record worked out from the others: not kept as raw

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.columns)

    def position(self, name: str) -> int:
        return self.names.index(name)


_LISTINGS = _Kind(
    "listings",
    LISTING_COLUMNS,
    _LISTING_UPSERT,
    "listing",
    listing_row,
    kept=("metrics_jumped", "metrics_jump", *VALUE_FIELDS),
    kept_unless_given=ARCHIVE_FIELDS,
    kept_while_same=(
        ("price_eur", ("price", "currency")),
        ("effective_price_eur", ("effective_price", "currency")),
        *((field, _BIDDING) for field in LIVE_FIELDS),
    ),
    derived=tuple(LISTING_DERIVED_FIELDS),
)
_PENDING = _Kind("pending_delete", PENDING_COLUMNS, _PENDING_UPSERT, "pending_delete", pending_row)
listing_values = itemgetter(*_LISTINGS.names)  # a listing_row dict -> the tuple the writer takes
pending_values = itemgetter(*_PENDING.names)


_encode_raw = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode  # one text whatever order the fields came in


def _unknown_fields(record: dict[str, Any], kind: _Kind) -> str | None:
    """The record's fields the table has no column for, as JSON (None when it has none):
    what `raw_records` keeps so that nothing the remote sends is lost."""
    extra = {k: v for k, v in record.items() if k not in kind.columns and k not in kind.derived}
    return _encode_raw(extra) if extra else None


def _save(
    conn: sqlite3.Connection, kind: _Kind, rows_and_raws: list[tuple[tuple, str | None]]
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
    kind: _Kind,
    records: Iterable[Any],
    *,
    origin: str,
    observed_at: str | None,
    keep_raw: bool,
    batch_size: int,
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
        if normalized:
            pairs = [(row, None) for row in batch]
        else:
            pairs = [
                (
                    values(kind.to_row(rec, origin=origin, observed_at=observed_at, canonical=canonical)),
                    _unknown_fields(rec, kind) if keep_raw else None,
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


_HISTORY_POSITIONS = tuple(_LISTINGS.position(f) for f in HISTORY_FIELDS)
_history_values = itemgetter(*_HISTORY_POSITIONS)
_metric_values = itemgetter(*(_LISTINGS.position(f) for f in METRICS))


def _metric_rose(old: tuple, new: tuple) -> bool:
    """A metric went up (a first value, null -> n, is not a rise)."""
    return any(a is not None and b is not None and b > a for a, b in zip(old, new))


def _current_spam_flags(conn: sqlite3.Connection) -> None:
    """Before listings are written: when the spam dictionary changed since the mirror was
    flagged, every listing is re-flagged (a broken file fails here, before anything is written)."""
    dictionary = current_dictionary()
    if stored_fingerprint(conn) != dictionary.fingerprint:
        if conn.execute("SELECT 1 FROM listings LIMIT 1").fetchone():
            reflag(conn, dictionary)
        else:
            with conn:
                record_fingerprint(conn, dictionary)


def save_listings(
    conn: sqlite3.Connection,
    records: Iterable[Any],
    *,
    origin: str,
    observed_at: str | None = None,
    keep_raw: bool = True,
    batch_size: int = 1000,
    normalized: bool = False,
    commit_with: Callable[[sqlite3.Connection], None] | None = None,
    flag_jumps: bool = True,
    canonical: bool = False,
) -> WriteCounts:
    """Upsert listing records; a history row for each new listing and each change of a price
    field or a metric. `commit_with(conn)` runs inside each batch's transaction (a sync's
    checkpoint: pass a page's rows in one batch and they commit together with it).

    A listing whose metric rose gets its `metrics_jumped` flag re-computed in the same
    transaction (`toolkit.signals.inflation`); `flag_jumps=False` leaves that to the caller
    (a bulk load calls `flag_metric_jumps` once at its end). Spam flags follow the
    dictionary in use: when it changed since the mirror was flagged, every listing is
    re-flagged first (`toolkit.store.reflag`)."""
    _current_spam_flags(conn)

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

    return _save_all(
        conn,
        _LISTINGS,
        records,
        origin=origin,
        observed_at=observed_at,
        keep_raw=keep_raw,
        batch_size=batch_size,
        normalized=normalized,
        canonical=canonical,
        in_batch=write_history,
        commit_with=commit_with,
    )


def save_pending(
    conn: sqlite3.Connection,
    records: Iterable[Any],
    *,
    origin: str,
    observed_at: str | None = None,
    keep_raw: bool = True,
    batch_size: int = 1000,
    normalized: bool = False,
    commit_with: Callable[[sqlite3.Connection], None] | None = None,
    canonical: bool = False,
) -> WriteCounts:
    """Upsert pending-delete records (`commit_with`, `canonical` as for `save_listings`)."""
    return _save_all(
        conn,
        _PENDING,
        records,
        origin=origin,
        observed_at=observed_at,
        keep_raw=keep_raw,
        batch_size=batch_size,
        normalized=normalized,
        canonical=canonical,
        commit_with=commit_with,
    )


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


# -- set-based writes -----------------------------------------------------------------------

_KINDS = {kind.table: kind for kind in (_LISTINGS, _PENDING)}
SLICE_ROWS = 256  # rows one statement of a set-based write changes at most (`StagedWrite._sliced`)
_LAST = (1 << 63) - 1  # above every id and place
_HISTORY_INSERT = (
    f"INSERT INTO main.listing_history (listing_id, observed_at, {', '.join(HISTORY_FIELDS)}) "
    f"SELECT {{id}}, :stamp, {', '.join('{t}.' + f for f in HISTORY_FIELDS)} FROM {{source}}"
)


@contextmanager
def staging(conn: sqlite3.Connection, name: str = "stage") -> Iterator[str]:
    """A database attached for the set-based writes of one load, yielding its name: a temporary
    file (a named one: SQLite keeps a nameless one in memory when temp_store is MEMORY, as the
    mirror's connections have it), so that a big file's staged rows take disk, not memory.
    Attach it before the load's transaction begins; it is removed when the block ends."""
    folder = tempfile.mkdtemp(prefix="edt-stage-")
    conn.execute(f"ATTACH DATABASE ? AS {name}", [os.path.join(folder, "stage.db")])
    try:
        for pragma in ("journal_mode=OFF", "synchronous=OFF", "cache_size=-16384"):
            conn.execute(f"PRAGMA {name}.{pragma}")
        yield name
    finally:
        try:
            if conn.in_transaction:  # the load's transaction ended; only an error leaves one open
                conn.rollback()
            conn.execute(f"DETACH DATABASE {name}")
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def _literal(value: Any, sql_type: str) -> str | None:
    """`value` as SQL text, when it can be written into a statement once for every row (NULL,
    a whole number of an INTEGER column, a text of a TEXT column); None: it is bound."""
    if value is None:
        return "NULL"
    if type(value) is int and sql_type == "INTEGER":
        return str(value)
    if type(value) is str and sql_type == "TEXT" and "\x00" not in value:
        return "'" + value.replace("'", "''") + "'"
    return None


def _insert(
    conn: sqlite3.Connection,
    into: str,
    names: Sequence[str],
    types: Sequence[str],
    rows: list[tuple],
    conflict: str = "",
) -> None:
    """INSERT `rows` (tuples in `names` order) into `into`. A column that holds the same value in
    every row is written into the statement once; only the others are bound row by row (binding
    is most of an insert's cost, and a feed's rows share most of their columns: origin, times,
    empty fields)."""
    if not rows:
        return
    columns = list(zip(*rows))
    bound, values = [], []
    for column, sql_type, name in zip(columns, types, names):
        first = column[0]
        literal = _literal(first, sql_type) if column[-1] == first and column.count(first) == len(column) else None
        values.append(literal or "?")
        if literal is None:
            bound.append(column)
    conn.executemany(
        f"INSERT INTO {into} ({', '.join(names)}) VALUES ({', '.join(values)}) {conflict}",
        zip(*bound) if bound else [()] * len(rows),
    )


def _same(columns: Iterable[str], a: str = "s", b: str = "o") -> str:
    return " AND ".join(f"{a}.{c} IS {b}.{c}" for c in columns) or "1"


class StagedWrite:
    """Records of one table (`listings`, `pending_delete`) written set-based, by the rules of
    `save_listings` / `save_pending`, inside the caller's transaction:

        with staging(conn) as stage:        # before the transaction
            ... begin it ...
            staged = StagedWrite(conn, "listings", stage, origin=..., observed_at=..., tags={"line": "INTEGER"})
            refused = staged.add(records, tags)     # each normalised once (listing_row), staged
            staged.seen(ids, tags)                  # rows the caller knows unchanged: only seen again
            dropped = staged.repeats()              # an id staged twice keeps its first row
            counts = staged.write(sticky=("created_at",), changed_at="updated_at")

    A stage row keeps the caller's `tags` (where it came from) beside the table's columns, in
    the order added (`_seq`). Into a table holding no rows yet, `add` writes each row straight
    into the mirror (the first of an id kept) and stages its id and tags alone.

    `write` merges what is staged: new rows inserted; a stored row rewritten in the columns that
    changed only (a column no index holds costs a row's write, one an index holds that index's
    too), a stored row's kept columns kept (`_Kind`); history for each new row and each change
    of a price field or metric, the metric jumps flagged again for rises; raw records written
    where they changed; the rows only seen again get their last sighting."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        table: str,
        stage: str,
        *,
        origin: str,
        observed_at: str,
        tags: dict[str, str] | None = None,
    ) -> None:
        self.conn, self.kind, self.origin, self.observed_at = conn, _KINDS[table], origin, observed_at
        self.table = f"{stage}.{table}"  # the stage table, for the caller's own reads of its tags
        self.tags = dict(tags or {})
        self._types = [SQL_TYPES[t] for t in self.kind.columns.values()]
        self._values = itemgetter(*self.kind.names)
        self._seq = 0
        self._deduped = False
        self._staged: list[list[Any]] = [[], [], []]  # the ids, places and only-seen flags staged, as arrays
        # Straight into the mirror when it holds no row of the table (nor a raw record of its kind) yet.
        self.direct = (
            conn.execute(f"SELECT 1 FROM main.{table} LIMIT 1").fetchone() is None
            and conn.execute("SELECT 1 FROM main.raw_records WHERE kind = ? LIMIT 1", [self.kind.raw_kind]).fetchone()
            is None
        )
        columns = [f"{c} {t}" for c, t in zip(self.kind.names, self._types)]
        conn.execute(
            f"CREATE TABLE {self.table} (_seq INTEGER PRIMARY KEY, {', '.join(columns)}, _raw TEXT, "
            f"{''.join(f'_{t} {sql}, ' for t, sql in self.tags.items())}_seen INTEGER, _present INTEGER, "
            "_mask TEXT, _history INTEGER, _rose INTEGER)"
        )
        if table == "listings":
            _current_spam_flags(conn)

    def _next(self, count: int) -> range:
        start = self._seq + 1
        self._seq += count
        return range(start, start + count)

    def next(self, count: int) -> range:
        """The places of the next `count` rows in the load (see `add`)."""
        return self._next(count)

    def add(
        self, records: list[dict[str, Any]], tags: list[tuple] | None = None, order: Sequence[int] | None = None
    ) -> list[tuple[int, str]]:
        """Normalise each record (`listing_row` / `pending_row`, records of stored types) and stage
        it with its tags (a tuple in `tags` order, one a record) at its place in the load (`order`,
        rising numbers; default: after what is staged). Returns (index, reason) of each record the
        normalisation refuses; the others are staged."""
        kind, names = self.kind, self.kind.names
        order = order if order is not None else self._next(len(records))
        rows, raws, kept_tags, seqs, refused = [], [], [], [], []
        for index, record in enumerate(records):
            try:
                row = self._values(
                    kind.to_row(record, origin=self.origin, observed_at=self.observed_at, canonical=True)
                )
            except (ValueError, TypeError) as exc:
                refused.append((index, str(exc)))
                continue
            rows.append(row)
            raws.append(_unknown_fields(record, kind))
            kept_tags.append(tags[index] if tags else ())
            seqs.append(order[index])
        self._note([row[0] for row in rows], seqs, seen=False)
        tag_names = [f"_{t}" for t in self.tags]
        tag_types = list(self.tags.values())
        if self.direct:
            _insert(self.conn, f"main.{kind.table}", names, self._types, rows, "ON CONFLICT(id) DO NOTHING")
            _insert(
                self.conn,
                "main.raw_records",
                ("kind", "id", "raw"),
                ("TEXT", "INTEGER", "TEXT"),
                [(kind.raw_kind, row[0], raw) for row, raw in zip(rows, raws) if raw is not None],
                "ON CONFLICT(kind, id) DO NOTHING",
            )
            _insert(
                self.conn,
                self.table,
                ("_seq", "id", names[1], *tag_names),
                ("INTEGER", "INTEGER", "TEXT", *tag_types),
                [(seq, row[0], row[1], *tag) for seq, row, tag in zip(seqs, rows, kept_tags)],
            )
        else:
            _insert(
                self.conn,
                self.table,
                ("_seq", *names, "_raw", *tag_names),
                ("INTEGER", *self._types, "TEXT", *tag_types),
                [(seq, *row, raw, *tag) for seq, row, raw, tag in zip(seqs, rows, raws, kept_tags)],
            )
        return refused

    def seen(self, ids: Sequence[int], tags: list[tuple] | None = None, order: Sequence[int] | None = None) -> None:
        """Stage rows the mirror holds unchanged (by id, with their tags, at their place in the
        load: see `add`): `write` moves only their last sighting."""
        if self.direct and ids:
            raise ValueError(f"{self.kind.table} holds no rows: none can be seen again")
        tag_names = [f"_{t}" for t in self.tags]
        order = order if order is not None else self._next(len(ids))
        self._note(ids, order, seen=True)
        self.conn.executemany(
            f"INSERT INTO {self.table} (_seq, id, _seen{''.join(', ' + t for t in tag_names)}) "
            f"VALUES (?, ?, 1{', ?' * len(tag_names)})",
            [(seq, row_id, *tag) for seq, row_id, tag in zip(order, ids, tags or [()] * len(ids))],
        )

    def _note(self, ids: Sequence[int], order: Sequence[int], *, seen: bool) -> None:
        """Keep the staged ids and places as arrays (17 bytes a row, where SQLite would sort them
        in memory): `repeats` and the last sightings read them."""
        import numpy as np

        if len(ids):
            for kept, values in zip(
                self._staged, (np.array(ids, dtype=np.int64), np.array(order, dtype=np.int64), np.full(len(ids), seen))
            ):
                kept.append(values)

    def _arrays(self) -> list[Any]:
        """The staged ids, places and only-seen flags, one array each."""
        import numpy as np

        if any(len(kept) != 1 for kept in self._staged):
            empty = (np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, bool))
            self._staged = [[np.concatenate(kept) if kept else none] for kept, none in zip(self._staged, empty)]
        return [kept[0] for kept in self._staged]

    def repeats(self) -> list[tuple[Any, ...]]:
        """Drop every staged row whose id an earlier one holds (the first is kept); returns each
        dropped row as (its name, the first's tags, its tags), the name read from the mirror for
        a row only seen again."""
        import numpy as np

        if self._deduped:
            return []
        self._deduped = True
        ids, places, seen = self._arrays()
        order = np.lexsort((places, ids))  # by id, then place
        ids, places = ids[order], places[order]
        repeated = np.flatnonzero(ids[1:] == ids[:-1]) + 1
        if not len(repeated):
            return []
        starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
        firsts = places[starts[np.searchsorted(starts, repeated, side="right") - 1]].tolist()
        later = places[repeated].tolist()
        keep = np.ones(len(ids), dtype=bool)
        keep[repeated] = False
        self._staged = [[ids[keep]], [places[keep]], [seen[order][keep]]]
        name, tags = self.kind.names[1], ", ".join(f"_{t}" for t in self.tags) or "NULL"
        found = {
            row[0]: row[1:]
            for row in self.conn.execute(
                f"SELECT _seq, coalesce(s.{name}, (SELECT m.{name} FROM main.{self.kind.table} m WHERE m.id = s.id)), {tags} "
                f"FROM {self.table} s WHERE _seq IN (SELECT value FROM json_each(?))",
                [json.dumps(later + firsts)],
            )
        }
        self.conn.execute(
            f"DELETE FROM {self.table} WHERE _seq IN (SELECT value FROM json_each(?))", [json.dumps(later)]
        )
        dropped = sorted(zip(later, firsts))
        return [(found[seq][0], found[first][1:], found[seq][1:]) for seq, first in dropped]

    def foreign(self) -> list[tuple[Any, ...]]:
        """Drop every staged row whose id the mirror holds under another name (a hash collision);
        returns each as (its id, its name, the holder's name, its tags)."""
        if self.direct:
            return []
        name = self.kind.names[1]
        tags = ", ".join(f"s._{t}" for t in self.tags) or "NULL"
        found = self.conn.execute(
            f"SELECT s._seq, s.id, s.{name}, m.{name}, {tags} FROM {self.table} s "
            f"JOIN main.{self.kind.table} m ON m.id = s.id "
            f"WHERE s._seen IS NULL AND m.{name} IS NOT s.{name}"
        ).fetchall()
        self.conn.executemany(f"DELETE FROM {self.table} WHERE _seq = ?", [(row[0],) for row in found])
        return [(row[1], row[2], row[3], row[4:]) for row in found]

    def _slices(self, where: str, params: dict[str, Any], rows: int, order: str = "_seq") -> list[dict[str, int]]:
        """Bounds (`low` <= `order` < `high`) of the stage rows matching `where`, `rows` at a time."""
        starts = [
            r[0]
            for r in self.conn.execute(
                f"SELECT {order} FROM (SELECT {order}, row_number() OVER (ORDER BY {order}) AS n FROM {self.table} "
                f"WHERE {where}) WHERE n % {rows} = 1",
                params,
            )
        ]
        return [{"low": low, "high": high} for low, high in zip(starts, [*starts[1:], _LAST])]

    def _sliced(
        self, sql: str, where: str, params: dict[str, Any], rows: int = SLICE_ROWS, order: str = "_seq"
    ) -> None:
        """Run `sql` (whose stage rows are those `where` picks, within `:low` and `:high`) a slice
        of `rows` at a time: SQLite journals in memory each page a statement changes until the
        statement ends, and a listing changes a page of each of its two dozen indexes."""
        for bounds in self._slices(where, params, rows, order):
            self.conn.execute(sql, {**params, **bounds})

    def write(
        self, *, sticky: tuple[str, ...] = (), changed_at: str | None = None, flag_jumps: bool = True
    ) -> WriteCounts:
        """Write what is staged into the mirror; returns the counts. `sticky`: columns a stored
        row keeps whatever the record says; `changed_at`: a column stamped with `observed_at`
        only when the row changed (any column but the sightings, the signals and itself, or its
        raw record), else kept."""
        if not self._deduped:
            self.repeats()
        conn, kind, stage = self.conn, self.kind, self.table
        main, at = f"main.{kind.table}", {"stamp": self.observed_at, "raw_kind": kind.raw_kind}
        history = kind is _LISTINGS
        within = "_seq >= :low AND _seq < :high"
        counts = WriteCounts(seen=conn.execute(f"SELECT count(*) FROM {stage}").fetchone()[0])
        bump_generation(conn)  # what this write notes for the columnar index is newer than any index read before it
        if self.direct:
            counts.new = counts.seen
            if history:
                self._sliced(
                    _HISTORY_INSERT.format(id="m.id", t="m", source=f"{stage} s JOIN {main} m ON m.id = s.id")
                    + f" WHERE s.{within} ORDER BY s._seq",
                    "1",
                    at,
                    SLICE_ROWS * 16,
                )
            return counts
        # A stored row's kept columns, as `_save` keeps them, and the caller's sticky ones.
        rules = {c: f"o.{c}" for c in sticky}
        rules.update({c: f"coalesce(o.{c}, s.{c})" for c in kind.kept})
        rules.update({c: f"coalesce(s.{c}, o.{c})" for c in kind.kept_unless_given})
        for column, sources in kind.kept_while_same:
            rules[column] = f"CASE WHEN o.{column} IS NOT NULL AND {_same(sources)} THEN o.{column} ELSE s.{column} END"
        rules["_present"] = "1"
        conn.execute(
            f"UPDATE {stage} AS s SET {', '.join(f'{c} = {e}' for c, e in rules.items())} FROM {main} AS o "
            f"WHERE o.id = s.id AND s._seen IS NULL"
        )
        if changed_at:
            compared = [
                c for c in kind.names if c not in ("first_seen_at", "last_seen_at", changed_at, *SIGNAL_COLUMNS)
            ]
            conn.execute(
                f"UPDATE {stage} AS s SET {changed_at} = CASE WHEN {_same(compared)} AND s._raw IS "
                f"(SELECT r.raw FROM main.raw_records r WHERE r.kind = :raw_kind AND r.id = s.id) "
                f"THEN o.{changed_at} ELSE s.{changed_at} END FROM {main} AS o WHERE o.id = s.id AND s._present",
                at,
            )
        written = [c for c in kind.names if c not in ("id", "first_seen_at")]  # an upsert's columns
        flags = {"_mask": " || ".join(f"(s.{c} IS NOT o.{c})" for c in written)}
        if history:
            flags["_history"] = f"NOT ({_same(HISTORY_FIELDS)})"
            flags["_rose"] = " OR ".join(
                f"(o.{m} IS NOT NULL AND s.{m} IS NOT NULL AND s.{m} > o.{m})" for m in METRICS
            )
        conn.execute(
            f"UPDATE {stage} AS s SET {', '.join(f'{c} = {e}' for c, e in flags.items())} FROM {main} AS o "
            "WHERE o.id = s.id AND s._present"
        )
        new = "_seen IS NULL AND _present IS NULL"
        counts.new = conn.execute(f"SELECT count(*) FROM {stage} WHERE {new}").fetchone()[0]
        masks = [m for (m,) in conn.execute(f"SELECT DISTINCT _mask FROM {stage} WHERE _present")]
        seen_at = written.index("last_seen_at")
        moved = [m for m in masks if "1" in m[:seen_at] + m[seen_at + 1 :]]
        counts.updated = conn.execute(
            f"SELECT count(*) FROM {stage} WHERE _mask IN (SELECT value FROM json_each(?))", [json.dumps(moved)]
        ).fetchone()[0]
        names = ", ".join(kind.names)
        self._sliced(
            f"INSERT INTO {main} ({names}) SELECT {names} FROM {stage} WHERE {new} AND {within} ORDER BY id", new, at
        )
        for mask in masks:  # each set of changed columns in one statement a slice
            changed = [c for c, bit in zip(written, mask) if bit == "1"]
            if changed:
                self._sliced(
                    f"UPDATE {main} AS o SET ({', '.join(changed)}) = ({', '.join('s.' + c for c in changed)}) "
                    f"FROM {stage} AS s WHERE s._mask = :mask AND s.{within} AND s.id = o.id",
                    "_mask = :mask",
                    {**at, "mask": mask},
                )
        if history:
            self._sliced(
                _HISTORY_INSERT.format(id="id", t=stage, source=stage)
                + f" WHERE {stage}.{within} AND _seen IS NULL AND (_present IS NULL OR _history) ORDER BY _seq",
                "_seen IS NULL AND (_present IS NULL OR _history)",
                at,
            )
        self._sliced(
            f"INSERT INTO main.raw_records (kind, id, raw) SELECT :raw_kind, s.id, s._raw FROM {stage} s "
            f"WHERE s.{within} AND s._seen IS NULL AND s._raw IS NOT NULL AND s._raw IS NOT "
            "(SELECT r.raw FROM main.raw_records r WHERE r.kind = :raw_kind AND r.id = s.id) ORDER BY s.id "
            "ON CONFLICT(kind, id) DO UPDATE SET raw = excluded.raw",
            "_seen IS NULL AND _raw IS NOT NULL",
            at,
        )
        # Only seen again: the last sighting, in id order (each page of the table rewritten once).
        import numpy as np

        ids, _, seen = self._arrays()
        ids = np.sort(ids[seen])
        for start in range(0, len(ids), SLICE_ROWS * 16):
            conn.execute(
                f"UPDATE {main} SET last_seen_at = ? WHERE id IN (SELECT value FROM json_each(?))",
                [self.observed_at, json.dumps(ids[start : start + SLICE_ROWS * 16].tolist())],
            )
        if history and flag_jumps:
            rising = [row[0] for row in conn.execute(f"SELECT id FROM {stage} WHERE _rose ORDER BY _seq")]
            if rising:
                flag_metric_jumps(conn, rising)
        return counts
