"""The only code that writes records into the mirror.

Everything that brings rows in (the sync, the demo source, public feeds) yields plain
dicts shaped as the reference records and hands them to `save_listings` /
`save_pending`, which normalise types, derive the toolkit's fields, keep the record as
received in `raw_records` (the fields it has no column for), upsert by id in batches (one transaction each), append
`listing_history` when a price field changed and maintain first/last seen.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import date, datetime, timezone
from itertools import islice
from operator import itemgetter
from typing import Any

from ..names import label_stats, split_domain
from ..signals.archive import ARCHIVE_FIELDS
from ..signals.fx import to_eur
from ..signals.inflation import METRICS, flag_metric_jumps
from ..signals.spam import current_dictionary, record_fingerprint, stored_fingerprint
from .meta import bump_generation
from .reflag import reflag
from .fields import LISTING_DERIVED_FIELDS, LISTING_EXTRA_FIELDS, LISTING_FIELDS, PENDING_FIELDS, converters, iso_date, iso_timestamp
from .schema import LISTING_COLUMNS, PENDING_COLUMNS

__all__ = [
    "WriteCounts",
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
SIGNAL_COLUMNS = ("price_eur", "effective_price_eur", "spam_terms", "spam_count", "metrics_jumped", "metrics_jump",
                  *ARCHIVE_FIELDS, *VALUE_FIELDS, *LIVE_FIELDS)  # fmt: skip
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
    for field in (*VALUE_FIELDS, *LIVE_FIELDS):  # the mirror's own appraisal, never a record's: a stored row keeps its own
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
    row = _canonical(record, PENDING_FIELDS) if canonical else {f: convert(get(f)) for f, convert in _PENDING_CONVERTERS}
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
    row["is_idn"] = row["is_idn"] if row["is_idn"] is not None else int(row["domain"].startswith("xn--") or "xn--" in row["domain"])
    if row["language"]:
        row["language"] = row["language"].strip().upper()
    row["origin"] = origin
    row["drop_window_start"] = iso_date(get("drop_window_start"))
    row["drop_window_end"] = iso_date(get("drop_window_end"))
    if row["drop_window_start"] and row["drop_window_end"] and row["drop_window_start"] > row["drop_window_end"]:
        raise ValueError(f"{row['domain']}: drop_window_start {row['drop_window_start']} is after "
                         f"drop_window_end {row['drop_window_end']}")  # fmt: skip
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


_LISTINGS = _Kind("listings", LISTING_COLUMNS, _LISTING_UPSERT, "listing", listing_row,
                  kept=("metrics_jumped", "metrics_jump", *VALUE_FIELDS), kept_unless_given=ARCHIVE_FIELDS,
                  kept_while_same=(("price_eur", ("price", "currency")),
                                   ("effective_price_eur", ("effective_price", "currency")),
                                   *((field, _BIDDING) for field in LIVE_FIELDS)),
                  derived=tuple(LISTING_DERIVED_FIELDS))  # fmt: skip
_PENDING = _Kind("pending_delete", PENDING_COLUMNS, _PENDING_UPSERT, "pending_delete", pending_row)
listing_values = itemgetter(*_LISTINGS.names)  # a listing_row dict -> the tuple the writer takes
pending_values = itemgetter(*_PENDING.names)


def _unknown_fields(record: dict[str, Any], kind: _Kind) -> str | None:
    """The record's fields the table has no column for, as JSON (None when it has none):
    what `raw_records` keeps so that nothing the remote sends is lost."""
    extra = {k: v for k, v in record.items() if k not in kind.columns and k not in kind.derived}
    return json.dumps(extra, ensure_ascii=False) if extra else None


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
        kept_while_same = [(kind.position(c), [kind.position(s) for s in sources]) for c, sources in kind.kept_while_same]
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
                (values(kind.to_row(rec, origin=origin, observed_at=observed_at, canonical=canonical)),
                 _unknown_fields(rec, kind) if keep_raw else None)
                for rec in batch
            ]  # fmt: skip
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
    dictionary = current_dictionary()  # a broken file fails here, before anything is written
    if stored_fingerprint(conn) != dictionary.fingerprint:
        if conn.execute("SELECT 1 FROM listings LIMIT 1").fetchone():
            reflag(conn, dictionary)
        else:
            with conn:
                record_fingerprint(conn, dictionary)

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

    return _save_all(conn, _LISTINGS, records, origin=origin, observed_at=observed_at, keep_raw=keep_raw,
                     batch_size=batch_size, normalized=normalized, canonical=canonical, in_batch=write_history,
                     commit_with=commit_with)  # fmt: skip


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
    return _save_all(conn, _PENDING, records, origin=origin, observed_at=observed_at, keep_raw=keep_raw,
                     batch_size=batch_size, normalized=normalized, canonical=canonical, commit_with=commit_with)  # fmt: skip


def close_listings(conn: sqlite3.Connection, ids: Iterable[int], *, closed_at: str | None = None,
                   commit: bool = True) -> int:  # fmt: skip
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
