"""Namecheap Market's public sales files -> listing records of source `namecheap`.

Namecheap publishes two CSV files, linked from Namecheap Market's pages and refreshed
through the day (`toolkit.store.feed_catalog`):

- `Namecheap_Market_Sales.csv`, the auctions: `url, name, startDate, endDate, price,
  startPrice, renewPrice, bidCount, ahrefsDomainRating, umbrellaRanking, cloudflareRanking,
  estibotValue, extensionsTaken, keywordSearchCount, registeredDate, lastSoldPrice,
  lastSoldYear, isPartnerSale, semrushAScore, majesticCitation, ahrefsBacklinks,
  semrushBacklinks, majesticBacklinks, majesticTrustFlow, goValue` (ISO 8601 times in UTC,
  plain decimal prices in US dollars);
- `Namecheap_Market_Sales_Buy_Now.csv`, the fixed-price listings: `permalink, domain,
  price, extensions_taken`.

Mapping (to the fields of docs/reference/fields.md):
- an auction -> `type` auction, `auction_type` Bid; `price` with bids is the highest bid
  (`max_bid`), without bids the starting price (`price`); `endDate` -> `auction_end_date`;
  `bidCount` -> `bids_count`;
- a buy-now row -> `type` closeout, `auction_type` BuyNow, `price` the asking price;
- `majesticTrustFlow`/`majesticCitation` -> `trust_flow`/`citation_flow`,
  `majesticBacklinks` -> `backlinks_count`, `estibotValue` -> `estibot_appraisal`,
  `registeredDate` -> `whois_registered_at`, `url`/`permalink` -> `purchase_url`;
- every other column (Ahrefs, Semrush, GoValue, the start price, the last sale, the
  keyword searches, ...) has no column: the whole original row is kept as `feed_record`
  in `raw_records`.
- `id`: `ingest_id("namecheap", name)`: one listing per name on this platform, beside the
  same name's GoDaddy listing (the API keeps one per platform too).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .common import LISTING, BadRow, IngestError, ListingPlatform, OnBadRow, Row, reading_key
from .common import clean_domain, parse_money, parse_timestamp, whole_number
from .feed_csv import csv_records, csv_table, header_key
from .feed_file import FeedFile, file_rows

__all__ = ["NAMECHEAP_URL", "NAMECHEAP_BUY_NOW_URL", "namecheap_rows"]

NAMECHEAP_URL = "https://nc-aftermarket-www-production.s3.amazonaws.com/reports/Namecheap_Market_Sales.csv"
NAMECHEAP_BUY_NOW_URL = NAMECHEAP_URL.replace(".csv", "_Buy_Now.csv")
_PLATFORM = ListingPlatform.of("namecheap")

# header (compared as header_key) -> the field it fills; the two files' own names
_FIELDS = {
    "name": "name",
    "domain": "name",
    "url": "url",
    "permalink": "url",
    "enddate": "endDate",
    "price": "price",
    "bidcount": "bidCount",
    "majestictrustflow": "trustFlow",
    "majesticcitation": "citationFlow",
    "majesticbacklinks": "backlinks",
    "estibotvalue": "estibot",
    "registereddate": "registered",
}
_AUCTION_ONLY = ("startdate", "bidcount", "startprice")  # a header with one of these is the auctions file


def _money(value: str, field: str) -> float | None:
    try:
        return parse_money(value)
    except BadRow as exc:
        raise BadRow(f"{field}: {exc}") from None


def _record(fields: dict[str, str], original: dict[str, str], auction: bool) -> dict[str, Any]:
    name = clean_domain(fields.get("name"))
    amount = _money(fields.get("price", ""), "price")
    bids = whole_number(fields.get("bidCount"), "bidCount") if auction else None
    end = fields.get("endDate") or ""
    registered = fields.get("registered") or ""
    return _PLATFORM.listing(
        name,
        ("auction", "Bid") if auction else ("closeout", "BuyNow"),
        amount,
        bids,
        (fields.get("url") or "").strip(),
        original,
        auction_end_date=parse_timestamp(end) if end.strip() else None,
        trust_flow=whole_number(fields.get("trustFlow"), "majesticTrustFlow", 0, 100),
        citation_flow=whole_number(fields.get("citationFlow"), "majesticCitation", 0, 100),
        backlinks_count=whole_number(fields.get("backlinks"), "majesticBacklinks"),
        estibot_appraisal=_money(fields.get("estibot", ""), "estibotValue"),
        whois_registered_at=parse_timestamp(registered) if registered.strip() else None,
    )


def _rows(feed: FeedFile, stamp: str, on_bad_row: OnBadRow) -> Iterator[Row]:
    """The listing rows of one Namecheap Market file (auctions or buy-now), with their lines; each
    row's record is made when asked (`Row.made`)."""
    header, rows = csv_table(feed, delimiters=",")
    keys = [header_key(h) for h in header]
    fields = [_FIELDS.get(k) for k in keys]
    if "name" not in fields or "price" not in fields:
        raise IngestError(
            feed.name,
            1,
            f"no name and price columns in the header ({', '.join(header)})",
            "check that this is Namecheap Market's Namecheap_Market_Sales(_Buy_Now).csv",
        )
    auction = any(k in keys for k in _AUCTION_ONLY)
    if auction and "endDate" not in fields:
        raise IngestError(
            feed.name,
            1,
            "an auctions file without its endDate column",
            "the file's columns changed: check Namecheap_Market_Sales.csv's header",
        )
    key = reading_key(__file__, *header)
    yield from csv_records(
        feed, header, rows, fields, LISTING, lambda m, o: _record(m, o, auction), on_bad_row, key=key
    )


namecheap_rows = file_rows(_rows)
