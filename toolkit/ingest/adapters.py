"""The feeds `ingest_file` reads, as a table: each adapter's name, what it yields, how its
file becomes rows, the options it takes and where its public file is. An adapter module
writes only its `X_rows`; reading its records without writing them (`parse`) and downloading
its file first (`fetch`) are the table's, the same for every feed.

    from toolkit.ingest import ADAPTERS, parse_godaddy
    ADAPTERS["bardate"].rows(path, observed_at=..., on_bad_row=..., bounds=...)   # Row, ...
    for record in parse_godaddy("all_listings.json.zip", on_bad_row=print): ...  # records only
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .bardate import BARDATE_URL, bardate_rows
from .common import LISTING, PENDING, OnBadRow, Row, made, strict
from .feed_file import fetch
from .droplist import NASK_DELETED_URL, droplist_rows
from .godaddy import GODADDY_URL, godaddy_rows
from .namecheap import NAMECHEAP_URL, namecheap_rows
from .zonediff import zonediff_rows
from ..store.named import by_name

__all__ = [
    "ADAPTERS",
    "Adapter",
    "adapter_for",
    "INGEST_PENDING_SOURCES",
    "parse_godaddy",
    "parse_namecheap",
    "parse_bardate",
    "parse_droplist",
    "parse_zonediff",
    "fetch_godaddy",
    "fetch_namecheap",
    "fetch_bardate",
    "fetch_droplist",
]

# The pending-delete `source` values ingested rows carry, beside the live service's
# `oi-diff` and `czds-daily` (toolkit.query.params.PENDING_SOURCES): the feed, named as such.
INGEST_PENDING_SOURCES = ("bardate", "droplist", "zonediff")


@dataclass(frozen=True)
class Adapter:
    """One feed: how its file becomes records."""

    name: str
    description: str
    kinds: tuple[str, ...]  # the record kinds it yields: "listing", "pending"
    rows: Callable[..., Iterator[Row]]  # (path, *, observed_at, on_bad_row, bounds, **options) -> Row, ...
    options: tuple[str, ...] = ()  # keyword options ingest_file passes on
    url: str | None = None  # where the public file is, when there is one place

    def parse(self, path: str | Path, *, on_bad_row: OnBadRow = strict, **options: Any) -> Iterator[dict[str, Any]]:
        """The records of one file (docs/reference/fields.md), nothing written. A bad row stops
        the parse (`strict`) unless `on_bad_row` takes it (`list.append` collects them);
        `options` are the adapter's (`observed_at`, and `Adapter.options`)."""
        for row in made(self.rows(path, on_bad_row=on_bad_row, **options), on_bad_row):
            yield row.made()

    def fetch(self, url: str | None = None, dest: str | Path | None = None, **options: Any) -> Iterator[dict[str, Any]]:
        """Download `url` (default: the feed's public file) with `fetch` into `dest` (default a
        temporary folder), then yield its records (`parse`)."""
        yield from self.parse(fetch(self.file_url(url), dest), **options)

    def file_url(self, url: str | None = None) -> str:
        """`url`, else where the feed's public file is (`ValueError` when it has no one place)."""
        if url is None and self.url is None:
            raise ValueError(f"{self.name}: no default URL; pass url=")
        return url or self.url or ""


ADAPTERS: dict[str, Adapter] = by_name(
    Adapter(
        "godaddy",
        "GoDaddy Auctions inventory (zipped JSON or CSV)",
        (LISTING,),
        godaddy_rows,
        url=GODADDY_URL,
    ),
    Adapter(
        "namecheap",
        "Namecheap Market sales CSV (auctions, or buy-now)",
        (LISTING,),
        namecheap_rows,
        url=NAMECHEAP_URL,
    ),
    Adapter(
        "bardate",
        "Internetstiftelsen .se/.nu release list (JSON or TXT)",
        (PENDING,),
        bardate_rows,
        url=BARDATE_URL,
    ),
    Adapter(
        "droplist",
        "registry deletion/drop list (a name a line, or CSV with dates)",
        (PENDING,),
        droplist_rows,
        options=("status", "list_date"),
        url=NASK_DELETED_URL,
    ),
    Adapter(
        "zonediff",
        "two zone files or name lists of one TLD (previous= the older)",
        (PENDING, LISTING),
        zonediff_rows,
        options=("previous", "is_available", "status", "zone_date", "tld"),
    ),
)


def adapter_for(feed: str) -> Adapter:
    """The adapter of `feed` (case and spaces ignored); `ValueError` naming the feeds otherwise."""
    adapter = ADAPTERS.get(str(feed).strip().lower())
    if adapter is None:
        raise ValueError(f"feed: unknown feed {feed!r}; choose one of {', '.join(ADAPTERS)}")
    return adapter


# Each feed's records, and its public file's (the names the package has always offered).
parse_godaddy = ADAPTERS["godaddy"].parse
parse_namecheap = ADAPTERS["namecheap"].parse
parse_bardate = ADAPTERS["bardate"].parse
parse_droplist = ADAPTERS["droplist"].parse
parse_zonediff = ADAPTERS["zonediff"].parse
fetch_godaddy = ADAPTERS["godaddy"].fetch
fetch_namecheap = ADAPTERS["namecheap"].fetch
fetch_bardate = ADAPTERS["bardate"].fetch
fetch_droplist = ADAPTERS["droplist"].fetch
