"""What the query layer returns: the output fields of each record kind and how a stored row
becomes a record (docs/reference/fields.md)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from ..store.fields import (
    LISTING_DERIVED_FIELDS,
    LISTING_EXTRA_FIELDS,
    LISTING_FIELDS,
    PENDING_EXTRA_FIELDS,
    PENDING_FIELDS,
    from_db,
)
from ..store.schema import deal_ratio
from ..store.fields import age_in_years

__all__ = [
    "FREE_FIELDS",
    "FREE_VISIBLE_NAMES",
    "LISTING_OUTPUT",
    "LISTING_STORED",
    "LISTING_DERIVED",
    "LISTING_EXPORT",
    "listing_columns",
    "LISTING_SELECT",
    "PENDING_OUTPUT",
    "PENDING_SELECT",
    "listing_record",
    "pending_record",
    "select_columns",
]

# What a listing record carries: the reference fields plus the toolkit's own (not `raw`,
# which lives in `raw_records`, nor the internal `live_until`), and the fields no column holds,
# worked out from the record's own (`deal`: store.schema.deal_ratio, what deal_min and sort=deal read).
LISTING_STORED: dict[str, str] = {
    **LISTING_FIELDS,
    **{k: v for k, v in LISTING_EXTRA_FIELDS.items() if k != "live_until"},
}
LISTING_DERIVED: dict[str, str] = LISTING_DERIVED_FIELDS
LISTING_OUTPUT: dict[str, str] = {**LISTING_STORED, **LISTING_DERIVED}
# The columns of an export of listings (`historical_traffic`, a monthly series, only on request).
LISTING_EXPORT: dict[str, str] = {k: v for k, v in LISTING_OUTPUT.items() if k != "historical_traffic"}


def listing_columns(historical_traffic: bool = False) -> dict[str, str]:
    """The columns of a flat file of listings (CSV, Parquet): those of an export, and
    `historical_traffic` (as JSON text) when the request asked for it with
    include_historical_traffic=1, as the records then carry it. Without that flag the records
    leave it out (as the service's do), so a column for it would always be empty."""
    return LISTING_OUTPUT if historical_traffic else LISTING_EXPORT


PENDING_OUTPUT: dict[str, str] = {**PENDING_FIELDS, **PENDING_EXTRA_FIELDS}
FREE_FIELDS = tuple(
    "name tld source type price max_bid currency bids_count auction_end_date score age "
    "domain_authority backlinks_count referring_domains language purchase_url".split()
)
FREE_VISIBLE_NAMES = 3
LISTING_SELECT = ", ".join(LISTING_STORED)
PENDING_SELECT = ", ".join(PENDING_OUTPUT)


def select_columns(asked: Iterable[str] | None, known: Mapping[str, str]) -> list[str]:
    """The output fields asked for, checked (a wrong name is a bad argument, not SQL)."""
    if asked is None:
        return list(known)
    chosen = list(dict.fromkeys(asked))
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise ValueError(f"columns: unknown field {', '.join(unknown)}; choose from {', '.join(known)}")
    return chosen


def listing_record(row: tuple, today: date, *, historical_traffic: bool = False) -> dict[str, Any]:
    """A `listings` row (selected as LISTING_SELECT) as the API's record; `age` as of `today`."""
    record = {name: from_db(kind, value) for (name, kind), value in zip(LISTING_STORED.items(), row)}
    record["age"] = age_in_years(record["wayback_first_date"], today)
    ratio = deal_ratio(record)
    record["deal"] = None if ratio is None else round(ratio, 3)
    if not historical_traffic:
        del record["historical_traffic"]
    return record


def pending_record(row: tuple) -> dict[str, Any]:
    """A `pending_delete` row (selected as PENDING_SELECT) as the API's record."""
    return {name: from_db(kind, value) for (name, kind), value in zip(PENDING_OUTPUT.items(), row)}
