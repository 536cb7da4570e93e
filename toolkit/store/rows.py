"""Records as received become the mirror's rows: types normalised, the toolkit's fields
derived (`listing_row`, `pending_row`), and how each kind's rows are kept when stored again
(`Kind`). The row-by-row writer (`writer.py`) and the set-based one (`staged_write.py`) both
write what these make.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from ..names import label_stats, split_domain
from ..signals.wayback_content import ARCHIVE_FIELDS
from ..signals.fx import to_eur
from ..signals.inflation import METRICS
from ..signals.spam import current_dictionary
from .fields import (
    age_in_years,
    LISTING_DERIVED_FIELDS,
    LISTING_EXTRA_FIELDS,
    LISTING_FIELDS,
    PENDING_FIELDS,
    converters,
    iso_date,
)
from .tables import LISTING_COLUMNS, PENDING_COLUMNS

__all__ = [
    "WriteCounts",
    "Kind",
    "LISTING_KIND",
    "PENDING_KIND",
    "listing_row",
    "pending_row",
    "listing_values",
    "pending_values",
    "unknown_fields",
    "compact_json",
    "age_in_years",
    "FAR_FUTURE",
    "SIGNAL_COLUMNS",
    "HISTORY_FIELDS",
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


def compact_json(value: Any) -> str:
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
            row[field] = compact_json(row[field])
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
    row["spam_terms"] = compact_json(terms)
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


@dataclass(frozen=True)
class Kind:
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


LISTING_KIND = Kind(
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
PENDING_KIND = Kind("pending_delete", PENDING_COLUMNS, _PENDING_UPSERT, "pending_delete", pending_row)
listing_values = itemgetter(*LISTING_KIND.names)  # a listing_row dict -> the tuple the writer takes
pending_values = itemgetter(*PENDING_KIND.names)


_encode_raw = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode  # one text whatever order the fields came in


def unknown_fields(record: dict[str, Any], kind: Kind) -> str | None:
    """The record's fields the table has no column for, as JSON (None when it has none):
    what `raw_records` keeps so that nothing the remote sends is lost."""
    extra = {k: v for k, v in record.items() if k not in kind.columns and k not in kind.derived}
    return _encode_raw(extra) if extra else None
