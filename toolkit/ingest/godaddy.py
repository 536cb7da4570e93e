"""GoDaddy Auctions' public inventory files -> listing records of source `godaddy`.

GoDaddy publishes its auction inventory at https://inventory.auctions.godaddy.com/
(`all_listings.json.zip`, `closeout_listings.json.zip`, ... and older `.csv.zip` files):
zipped JSON `{"meta": {...}, "data": [{"domainName", "link", "auctionType", "price",
"valuation", "numberOfBids", "auctionEndTime", "domainAge", "majesticTf", "majesticCf",
...}]}`, or CSV with the same fields as columns (camelCase, or the older `Domain Name,
Auction Type, Auction End Time (PDT), Price, ...` headers).

Mapping (to the fields of docs/reference/fields.md):
- `auctionType` -> `type` / `auction_type`: Bid -> auction/Bid, BuyNow -> closeout/BuyNow,
  Offer -> closeout/Offer (a make-offer listing has no fixed price; the reference names only
  Bid and BuyNow for GoDaddy). Any other value is a skipped row naming it (`GODADDY_TYPES`).
- `price` ("$1,234") is the listing's current price in USD: for a Bid auction with bids it
  is the highest bid (`max_bid`, `price` unknown: null), without bids the starting price
  (`price`); for BuyNow/Offer the asking price (`price`).
- `auctionEndTime` -> `auction_end_date`, UTC. A naive time is Pacific when its column says
  so (`(PDT)`/`(PST)`), else UTC.
- `majesticTf`/`majesticCf` -> `trust_flow`/`citation_flow` (0-100).
- `link` -> `purchase_url` (else the platform's pattern in toolkit/sources.py).
- `valuation` (GoDaddy's own GoValue, not Estibot), `domainAge`, `pageviews`, `isAdult` and
  every other field have no column: the whole original row is kept as `feed_record`.
- `id`: `ingest_id("godaddy", name)` (see common.py: stable, in [2**52, 2**53)).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from functools import partial
from typing import Any
from datetime import tzinfo
from zoneinfo import ZoneInfo

from .common import LISTING, BadRow, IngestError, ListingPlatform, OnBadRow, Row, Skipped, reading_key, text_digest
from .common import clean_domain, parse_money, parse_timestamp, whole_number
from .feed_csv import csv_records, csv_table, header_key
from .feed_file import FeedFile, file_rows, json_items, look_ahead

__all__ = ["GODADDY_TYPES", "GODADDY_URL", "godaddy_rows"]

GODADDY_URL = "https://inventory.auctions.godaddy.com/all_listings.json.zip"
_PLATFORM = ListingPlatform.of("godaddy")
_PACIFIC = ZoneInfo("America/Los_Angeles")

# auctionType (compared without case, spaces or punctuation) -> (type, auction_type)
GODADDY_TYPES: dict[str, tuple[str, str]] = {
    key: kind
    for kind, keys in (
        (("auction", "Bid"), ("bid", "auction", "expired", "expiredauction", "publicauction")),
        (("closeout", "BuyNow"), ("buynow", "closeout", "fixedprice")),
        (("closeout", "Offer"), ("offer", "makeoffer", "offercounteroffer")),
    )
    for key in keys
}

# CSV headers (compared as header_key) -> the JSON field they hold
_CSV_FIELDS = {
    "domainname": "domainName",
    "domain": "domainName",
    "name": "domainName",
    "link": "link",
    "url": "link",
    "listingurl": "link",
    "auctiontype": "auctionType",
    "type": "auctionType",
    "listingtype": "auctionType",
    "price": "price",
    "currentprice": "price",
    "currentbid": "price",
    "buynowprice": "price",
    "valuation": "valuation",
    "govalue": "valuation",
    "numberofbids": "numberOfBids",
    "bids": "numberOfBids",
    "bidcount": "numberOfBids",
    "auctionendtime": "auctionEndTime",
    "endtime": "auctionEndTime",
    "auctionenddate": "auctionEndTime",
    "auctionendtimepdt": "auctionEndTime",
    "auctionendtimepst": "auctionEndTime",
    "auctionendtimeutc": "auctionEndTime",
    "domainage": "domainAge",
    "majestictf": "majesticTf",
    "tf": "majesticTf",
    "trustflow": "majesticTf",
    "majesticcf": "majesticCf",
    "cf": "majesticCf",
    "citationflow": "majesticCf",
}
_COUNT_KEYS = ("totalRecords", "total_records", "total", "count", "recordCount", "numberOfRecords")


def _record(fields: dict[str, Any], original: Any, end_zone: tzinfo | None) -> dict[str, Any]:
    """A listing record from one inventory row (`fields` in the JSON's names)."""
    name = clean_domain(fields.get("domainName"))
    kind = fields.get("auctionType")
    key = "".join(ch for ch in str(kind or "").lower() if ch.isalnum())
    if key not in GODADDY_TYPES:
        known = ", ".join(sorted({v[1] for v in GODADDY_TYPES.values()}))
        raise BadRow(f"auctionType {kind!r} is not one this adapter maps ({known}); add it to GODADDY_TYPES")
    amount = parse_money(fields.get("price"))
    bids = whole_number(fields.get("numberOfBids"), "numberOfBids")
    end = fields.get("auctionEndTime")
    return _PLATFORM.listing(
        name,
        GODADDY_TYPES[key],
        amount,
        bids,
        fields.get("link"),
        original,
        auction_end_date=parse_timestamp(end, zone=end_zone, us_dates=True) if end not in (None, "") else None,
        trust_flow=whole_number(fields.get("majesticTf"), "majesticTf", 0, 100),
        citation_flow=whole_number(fields.get("majesticCf"), "majesticCf", 0, 100),
    )


def _json_rows(feed: FeedFile, on_bad_row: OnBadRow) -> Iterator[Row]:
    meta, items = json_items(feed, "data")
    declared = next(
        (
            meta["meta"][k]
            for k in _COUNT_KEYS
            if isinstance(meta.get("meta"), dict) and isinstance(meta["meta"].get(k), int)
        ),
        None,
    )
    ahead, found = look_ahead(items, lambda item: isinstance(item, dict) and "domainName" in item)
    if ahead and not found:
        raise IngestError(
            feed.name,
            None,
            "no record has a domainName field",
            "check that this is a GoDaddy Auctions inventory file (or pick the right feed)",
        )
    count = 0
    key = reading_key(__file__, "json")
    for count, item in itertools.chain(ahead, items):
        if not isinstance(item, dict):
            on_bad_row(Skipped(feed.name, count, f"expected an object, got {type(item).__name__}", "record"))
            continue
        text = repr(item)
        yield Row(
            LISTING,
            feed.name,
            count,
            None,
            "record",
            text_digest(text, key),
            partial(_record, item, item, None),
            size=2 * len(text),  # the record's objects, about twice its text
        )
    if declared is not None and declared != count:
        raise IngestError(
            feed.name,
            None,
            f"meta declares {declared} records but data holds {count}",
            "the file is incomplete: download it again",
        )


def _csv_rows(feed: FeedFile, on_bad_row: OnBadRow) -> Iterator[Row]:
    header, rows = csv_table(feed)
    fields = [_CSV_FIELDS.get(header_key(h)) for h in header]
    if "domainName" not in fields:
        raise IngestError(
            feed.name,
            1,
            f"no domain column in the header ({', '.join(header)})",
            "check that this is a GoDaddy Auctions inventory CSV (a domainName column)",
        )
    end_header = next((h for h, f in zip(header, fields) if f == "auctionEndTime"), "")
    zone = _PACIFIC if any(tag in end_header.upper() for tag in ("(PDT)", "(PST)", "(PT)")) else None
    key = reading_key(__file__, *header)
    yield from csv_records(feed, header, rows, fields, LISTING, lambda m, o: _record(m, o, zone), on_bad_row, key=key)


def _rows(feed: FeedFile, stamp: str, on_bad_row: OnBadRow) -> Iterator[Row]:
    """The listing rows of one inventory file (JSON or CSV, zipped or not), with their lines; each
    row's record is made when asked (`Row.made`)."""
    return (_json_rows if feed.starts_json() else _csv_rows)(feed, on_bad_row)


godaddy_rows = file_rows(_rows)
