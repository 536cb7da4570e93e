"""The feeds `ingest_file` reads, as a table: each adapter's name, what it yields, how its
file becomes rows and records, the options it takes and where its public file is.

    from toolkit.ingest import ADAPTERS
    ADAPTERS["bardate"].rows(path, observed_at=..., on_bad_row=..., bounds=...)   # Row, ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .bardate import BARDATE_URL, bardate_rows, parse_bardate
from .common import LISTING, PENDING, Row
from .droplist import NASK_DELETED_URL, droplist_rows, parse_droplist
from .godaddy import GODADDY_URL, godaddy_rows, parse_godaddy
from .namecheap import NAMECHEAP_URL, namecheap_rows, parse_namecheap
from .zonediff import parse_zonediff, zonediff_rows

__all__ = ["ADAPTERS", "Adapter", "INGEST_PENDING_SOURCES"]

# The pending-delete `source` values ingested rows carry, beside the live service's
# `oi-diff` and `czds-daily` (toolkit.query.params.PENDING_SOURCES): the feed, named as such.
INGEST_PENDING_SOURCES = ("bardate", "droplist", "zonediff")


@dataclass(frozen=True)
class Adapter:
    """One feed: how its file becomes records."""

    name: str
    description: str
    kinds: tuple[str, ...]  # the record kinds it yields: "listing", "pending"
    rows: Callable[..., Iterator[Row]]  # (path, *, observed_at, on_bad_row, **options) -> Row, ...
    parse: Callable[..., Iterator[dict[str, Any]]]  # the same, records only
    options: tuple[str, ...] = ()  # keyword options ingest_file passes on
    url: str | None = None  # where the public file is, when there is one place


ADAPTERS: dict[str, Adapter] = {
    a.name: a
    for a in (
        Adapter(
            "godaddy",
            "GoDaddy Auctions inventory (zipped JSON or CSV)",
            (LISTING,),
            godaddy_rows,
            parse_godaddy,
            url=GODADDY_URL,
        ),
        Adapter(
            "namecheap",
            "Namecheap Market sales CSV (auctions, or buy-now)",
            (LISTING,),
            namecheap_rows,
            parse_namecheap,
            url=NAMECHEAP_URL,
        ),
        Adapter(
            "bardate",
            "Internetstiftelsen .se/.nu release list (JSON or TXT)",
            (PENDING,),
            bardate_rows,
            parse_bardate,
            url=BARDATE_URL,
        ),
        Adapter(
            "droplist",
            "registry deletion/drop list (a name a line, or CSV with dates)",
            (PENDING,),
            droplist_rows,
            parse_droplist,
            options=("status", "list_date"),
            url=NASK_DELETED_URL,
        ),
        Adapter(
            "zonediff",
            "two zone files or name lists of one TLD (previous= the older)",
            (PENDING, LISTING),
            zonediff_rows,
            parse_zonediff,
            options=("previous", "is_available", "status", "zone_date", "tld"),
        ),
    )
}
