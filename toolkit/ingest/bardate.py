"""Internetstiftelsen's .se/.nu release lists ("bardate") -> pending-delete records.

Internetstiftelsen publishes the .se and .nu names that will be released, with the day each
becomes free (from 04:00 UTC), as JSON `{"data": [{"name": "example.se", "release_at":
"2025-08-20"}, ...]}` and as TXT, one `domain<TAB>YYYY-MM-DD` a line. Archived copies of
those lists also come as CSV with a header `domain,tld,release_date,...` (the form of the
real lists in `tests/fixtures/real/nu_drops/release_lists/`): `domain` (or `name`) and
`release_date` (or `release_at`) are read, every other column is ignored.

Each name becomes a pending-delete row: `whois_status` pendingDelete, `estimated_drop_date`
the official release day (not a prediction: `drop_date_reason` says so), `source` "bardate"
(the API's `oi-diff`/`czds-daily` name the live service's own pipelines; see
`pending_record`). Only .se and .nu names are accepted: anything else is a skipped row.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

from .common import PENDING, BadRow, IngestError, OnBadRow, Row, Skipped, bad_line, pending_record
from .common import clean_domain, parse_day
from .feed_csv import csv_table, header_key
from .feed_file import FeedFile, file_rows, json_items, look_ahead

__all__ = ["BARDATE_URL", "BARDATE_TLDS", "bardate_rows"]

BARDATE_URL = "https://data.internetstiftelsen.se/bardate_domains.json"
BARDATE_TLDS = ("se", "nu")
_REASON = "Internetstiftelsen's release date (bardate list)"


def _record(name: Any, release_at: Any, original: Any, observed_at: str) -> dict[str, Any]:
    domain = clean_domain(name)
    if domain.rpartition(".")[2] not in BARDATE_TLDS:
        raise BadRow(f"{domain} is not a .se or .nu name (Internetstiftelsen's lists hold only those)")
    if release_at in (None, ""):
        raise BadRow(f"{domain}: no release date")
    return pending_record(
        domain,
        "bardate",
        observed_at=observed_at,
        status="pendingDelete",
        drop=parse_day(release_at),
        reason=_REASON,
        original=original,
    )


def _json_rows(feed: FeedFile, observed_at: str, on_bad_row: OnBadRow) -> Iterator[Row]:
    _, items = json_items(feed, "data")
    ahead, found = look_ahead(items, lambda i: isinstance(i, dict) and "name" in i and "release_at" in i)
    if ahead and not found:
        raise IngestError(
            feed.name,
            None,
            'no item has both "name" and "release_at"',
            "check that this is Internetstiftelsen's bardate JSON (or pick the right feed)",
        )
    for number, item in itertools.chain(ahead, items):
        try:
            if not isinstance(item, dict):
                raise BadRow(f"expected an object, got {type(item).__name__}")
            record = _record(item.get("name"), item.get("release_at"), item, observed_at)
            yield Row(PENDING, feed.name, number, record, "record")
        except BadRow as exc:
            on_bad_row(Skipped(feed.name, number, str(exc), "record"))


def _txt_rows(feed: FeedFile, observed_at: str, on_bad_row: OnBadRow) -> Iterator[Row]:
    for line, text, terminated in feed.lines():
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        try:
            parts = text.split("\t") if "\t" in text else text.split()
            if len(parts) != 2:
                raise BadRow(f"expected domain<TAB>YYYY-MM-DD, got {text.strip()!r}")
            yield Row(PENDING, feed.name, line, _record(parts[0], parts[1].strip(), text, observed_at))
        except BadRow as exc:
            bad_line(feed.name, line, exc, terminated, on_bad_row)


_CSV_DOMAIN = ("domain", "name", "domainname")
_CSV_DAY = ("releasedate", "releaseat")


def _csv_header(feed: FeedFile) -> bool:
    first = feed.first_line()
    keys = {header_key(cell) for cell in first.replace(";", ",").replace("\t", ",").split(",")}
    return "," in first and bool(keys & set(_CSV_DOMAIN)) and bool(keys & set(_CSV_DAY))


def _csv_rows(feed: FeedFile, observed_at: str, on_bad_row: OnBadRow) -> Iterator[Row]:
    header, rows = csv_table(feed)
    keys = [header_key(h) for h in header]
    at_name = next(keys.index(k) for k in _CSV_DOMAIN if k in keys)
    at_day = next(keys.index(k) for k in _CSV_DAY if k in keys)
    for line, cells in rows:
        try:
            if len(cells) <= max(at_name, at_day):
                raise BadRow(f"{len(cells)} cells, the header has {len(header)}")
            original = dict(zip(header, cells))
            yield Row(PENDING, feed.name, line, _record(cells[at_name], cells[at_day].strip(), original, observed_at))
        except BadRow as exc:
            bad_line(feed.name, line, exc, line != rows.cut_line, on_bad_row)


def _rows(feed: FeedFile, stamp: str, on_bad_row: OnBadRow) -> Iterator[Row]:
    """The pending-delete records of one release list (JSON, TXT or an archived CSV), with their lines."""
    reader = _json_rows if feed.starts_json() else _csv_rows if _csv_header(feed) else _txt_rows
    return reader(feed, stamp, on_bad_row)


bardate_rows = file_rows(_rows)
