"""The free public feeds, declared once: where each file is, how often it changes, which
adapter reads it (docs/guides/feeds.md).

A feed is the file-shaped sibling of a sync job (`toolkit.store.jobs`): `edt sync --feeds`
and `edt schedule` download it (toolkit/ingest/feed_runner.py), `edt status` and the app's Sync
page show its freshness beside the API jobs'. The declaration lives here, beside the
tables it fills, so the query layer reports freshness without importing the ingest.

The config file overrides any field of a feed, or adds a feed of its own:

    [feeds.godaddy-all]
    enabled = true                      # off by default: 450 MB unzipped
    [feeds.nask-pl]
    schedule = "5 7 * * *"
    [feeds.auda-au]                     # a list whose address you know
    url = "https://example.org/purge-list.csv"
    enabled = true
    [feeds.zone-ch]                     # SWITCH's open zone data needs its published TSIG key
    tsig = "hmac-sha512:tsig-zonedata-ch-public-21-01:<the key from switch.ch>"
    enabled = true
    [feeds.godaddy-all]
    max_size_mb = 4096                  # the file may expand to 4 GB (default 2 GB)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from typing import Any

from .jobs import last_ok, run_freshness
from .named import by_name

__all__ = ["Feed", "FEEDS", "FEED_ADAPTERS", "LISTING_ADAPTERS", "feed_table", "feed_freshness", "limit_problem"]

# The adapters of toolkit.ingest (named, not imported: the store sits below the ingest).
FEED_ADAPTERS = ("godaddy", "namecheap", "bardate", "droplist", "zonediff")
LISTING_ADAPTERS = ("godaddy", "namecheap")  # platform listings, which the API's listings job also brings


@dataclass(frozen=True)
class Feed:
    name: str
    adapter: str  # a key of toolkit.ingest.ADAPTERS
    url: str | None  # http(s)://... a file; axfr://server/zone a zone transfer; None: set it in the config
    format: str  # what the publisher serves (the adapter reads it whatever it is; said in the docs)
    schedule: str  # crontab line
    every: timedelta  # how fresh the publisher keeps it
    description: str
    # SQL over `listings` (the adapter's own rows, origin `ingest:<adapter>`): the rows a
    # complete file vouches for. Those it no longer lists have closed. `:observed_at` is the
    # moment of the file. None: the file vouches for nothing (a partial list, pending-delete).
    scope: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)  # given to the adapter (status, tld, ...)
    enabled: bool = True
    tsig: str | None = field(default=None, repr=False)  # zone transfers: "algorithm:name:secret"
    keep: int = 14  # zone feeds: daily snapshots kept (the backtest replays them)
    # What the publisher's file may be before it is refused whole (None: the ingest's defaults,
    # toolkit.ingest.feed_file.Bounds): megabytes it may expand to, kilobytes of one line, field or record.
    max_size_mb: float | None = None
    max_field_kb: float | None = None

    @property
    def is_zone(self) -> bool:
        return self.adapter == "zonediff"


_GODADDY = "https://inventory.auctions.godaddy.com/"
_NAMECHEAP = "https://nc-aftermarket-www-production.s3.amazonaws.com/reports/"
_DAY, _HOURS = timedelta(days=1), timedelta(hours=1)

FEEDS: dict[str, Feed] = by_name(
    Feed(
        "godaddy-ending",
        "godaddy",
        _GODADDY + "all_listings_ending_today.json.zip",
        "zipped JSON",
        "20 */3 * * *",
        3 * _HOURS,
        "GoDaddy auctions ending today: bids and prices several times a day",
        scope="type = 'auction' AND auction_end_date <= :observed_at",
    ),
    Feed(
        "godaddy-closeouts",
        "godaddy",
        _GODADDY + "closeout_listings.json.zip",
        "zipped JSON",
        "40 8 * * *",
        _DAY,
        "GoDaddy closeouts (fixed price)",
        scope="type = 'closeout'",
    ),
    Feed(
        "godaddy-all",
        "godaddy",
        _GODADDY + "all_listings.json.zip",
        "zipped JSON",
        "10 9 * * *",
        _DAY,
        "every GoDaddy Auctions listing (about 450 MB unzipped: enable it in the config)",
        scope="1",
        enabled=False,
    ),
    Feed(
        "namecheap-auctions",
        "namecheap",
        _NAMECHEAP + "Namecheap_Market_Sales.csv",
        "CSV",
        "25 */6 * * *",
        6 * _HOURS,
        "Namecheap Market auctions, with their appraisal and link columns",
        scope="type = 'auction'",
    ),
    Feed(
        "namecheap-buynow",
        "namecheap",
        _NAMECHEAP + "Namecheap_Market_Sales_Buy_Now.csv",
        "CSV",
        "35 9 * * *",
        _DAY,
        "Namecheap Market buy-now listings",
        scope="type != 'auction'",
    ),
    Feed(
        "bardate-se",
        "bardate",
        "https://data.internetstiftelsen.se/bardate_domains.json",
        "JSON",
        "10 6 * * *",
        _DAY,
        "Internetstiftelsen's .se release list (the day each name is freed)",
    ),
    Feed(
        "bardate-nu",
        "bardate",
        "https://data.internetstiftelsen.se/bardate_domains_nu.json",
        "JSON",
        "12 6 * * *",
        _DAY,
        "Internetstiftelsen's .nu release list",
    ),
    Feed(
        "nask-pl",
        "droplist",
        "https://dns.pl/deleted_domains.txt",
        "text, a name a line",
        "20 6 * * *",
        _DAY,
        "NASK's .pl names deleted today",
    ),
    Feed(
        "auda-au",
        "droplist",
        None,
        "CSV",
        "30 6 * * *",
        _DAY,
        "an .au purge list (set its url in the config: auDA names no fixed public address)",
        enabled=False,
    ),
    Feed(
        "zone-se",
        "zonediff",
        "axfr://zonedata.iis.se/se",
        "zone transfer",
        "0 5 * * *",
        _DAY,
        ".se zone by zone transfer: names that leave it get a drop window",
        options={"tld": "se"},
    ),
    Feed(
        "zone-nu",
        "zonediff",
        "axfr://zonedata.iis.se/nu",
        "zone transfer",
        "5 5 * * *",
        _DAY,
        ".nu zone by zone transfer",
        options={"tld": "nu"},
    ),
    Feed(
        "zone-ee",
        "zonediff",
        "axfr://zone.internet.ee/ee",
        "zone transfer",
        "10 5 * * *",
        _DAY,
        ".ee zone by zone transfer",
        options={"tld": "ee"},
    ),
    Feed(
        "zone-ch",
        "zonediff",
        "axfr://zonedata.switch.ch/ch",
        "zone transfer",
        "15 5 * * *",
        _DAY,
        ".ch zone by zone transfer (needs SWITCH's published TSIG key: tsig in the config)",
        options={"tld": "ch"},
        enabled=False,
    ),
    Feed(
        "zone-li",
        "zonediff",
        "axfr://zonedata.switch.ch/li",
        "zone transfer",
        "20 5 * * *",
        _DAY,
        ".li zone by zone transfer (needs SWITCH's published TSIG key: tsig in the config)",
        options={"tld": "li"},
        enabled=False,
    ),
)

_SETTABLE: dict[str, type | tuple[type, ...]] = {
    "url": str,
    "schedule": str,
    "enabled": bool,
    "adapter": str,
    "format": str,
    "description": str,
    "tsig": str,
    "keep": int,
    "every_hours": (int, float),
    "options": dict,
    "max_size_mb": (int, float),
    "max_field_kb": (int, float),
}


LIMIT_CEILINGS = {"max_size_mb": 1 << 20, "max_field_kb": 1 << 20}  # 1 TB a file, 1 GB a field


def limit_problem(key: str, value: Any) -> str | None:
    """What is wrong with `value` as the bound `key` (max_size_mb, max_field_kb), or None."""
    ceiling = LIMIT_CEILINGS[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "expected a number"
    if not 0 < value <= ceiling:  # NaN fails both
        return f"expected a number above 0 and at most {ceiling:,}"
    return None


def feed_table(config: Mapping[str, Any] | None = None) -> dict[str, Feed]:
    """`FEEDS` with the config file's `[feeds.NAME]` tables applied (see the module's text).
    A bad key or value raises ValueError naming `[feeds.NAME] key` and the fix."""
    if config is None:
        from ..config import config_file

        config = config_file()
    table = config.get("feeds", {}) or {}
    if not isinstance(table, Mapping):
        raise ValueError("[feeds]: expected tables like [feeds.nask-pl] (url, schedule, enabled)")
    out = dict(FEEDS)
    for name, given in table.items():
        where = f"[feeds.{name}]"
        if not isinstance(given, Mapping):
            raise ValueError(f"{where}: expected a table (url = ..., schedule = ..., enabled = ...)")
        for key, value in given.items():
            kind = _SETTABLE.get(key)
            if kind is None:
                raise ValueError(f"{where} {key}: not a feed setting; use {', '.join(_SETTABLE)}")
            if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
                raise ValueError(f"{where} {key} = {value!r}: expected {getattr(kind, '__name__', 'a number')}")
            if key.startswith("max_") and (problem := limit_problem(key, value)):
                raise ValueError(f"{where} {key} = {value!r}: {problem}")
        changes = {k: v for k, v in given.items() if k != "every_hours"}
        if "every_hours" in given:
            changes["every"] = timedelta(hours=given["every_hours"])
        if name in out:
            feed = replace(out[name], **changes)
        else:
            missing = [k for k in ("adapter", "url", "schedule") if k not in given]
            if missing:
                raise ValueError(
                    f"{where}: a feed of your own needs {', '.join(missing)} (adapter one of "
                    f"{', '.join(FEED_ADAPTERS)})"
                )
            feed = Feed(
                name,
                given["adapter"],
                given["url"],
                given.get("format", "as the adapter reads it"),
                given["schedule"],
                changes.pop("every", _DAY),
                given.get("description", "a feed from the config file"),
                **{
                    k: v for k, v in changes.items() if k not in ("adapter", "url", "format", "schedule", "description")
                },
            )
        if feed.adapter not in FEED_ADAPTERS:
            raise ValueError(f"{where} adapter = {feed.adapter!r}: choose one of {', '.join(FEED_ADAPTERS)}")
        if feed.url is not None and not feed.url.startswith(("https://", "http://", "axfr://", "file://")):
            raise ValueError(f"{where} url = {feed.url!r}: expected an https://, http://, file:// or axfr:// address")
        if feed.url is not None and feed.url.startswith("axfr://") and not feed.is_zone:
            raise ValueError(f"{where} url: a zone transfer (axfr://) feeds zonediff only")
        out[name] = feed
    return out


def feed_freshness(
    conn: sqlite3.Connection, now: datetime | None = None, feeds: Mapping[str, Feed] | None = None
) -> list[dict[str, Any]]:
    """Each feed that is enabled or has run: its last good run against how fresh its publisher
    keeps it (`kind` "feed"; the API jobs' rows are `toolkit.store.jobs.freshness`)."""
    now = now or datetime.now(timezone.utc)
    try:
        feeds = feeds if feeds is not None else feed_table()
    except ValueError:  # a bad config file is said by the commands that read it; here, the declared feeds
        feeds = FEEDS
    out = []
    for feed in feeds.values():
        last = last_ok(conn, feed.name)
        if feed.enabled or last is not None:
            row = run_freshness(feed.name, feed.schedule, feed.every, last, now)
            out.append({**row, "kind": "feed", "enabled": feed.enabled})
    return out
