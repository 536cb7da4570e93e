"""Registry deletion / drop lists -> pending-delete records.

Two shapes:
- a name a line (NASK's `deleted_domains.txt` for .pl, registrar drop lists), optionally
  with a timestamp header line and `#` comments;
- CSV with a header naming a domain column and date columns, such as auDA's
  `Date, Eligible purge time (UTC), Domain name`.

The drop date of each name, first found wins:
1. the row's own date column (`Date`, `Drop date`, `Purge date`, `Release date`, ...);
2. `list_date=` given by the caller;
3. a date or timestamp header line of a name-a-line list;
4. a date in the file name (`deleted_domains_2025-08-19.txt`, `20250819.csv`): registries
   name daily lists by the day they cover;
5. otherwise `toolkit.ingest.lifecycle.predict_drop_date(tld, status, evidence)`, with `evidence`
   the day this mirror first saw the name in this feed (so re-ingesting an undated list
   later predicts the same day). A TLD without a published lifecycle gets no date.
`drop_date_reason` (kept in `raw_records`) says which one, with the lifecycle's reason.
A list's date is the day its names are (or were) deleted: the list of names deleted on
2025-08-19 gives 2025-08-19, a past date (`include_past=1` shows such rows).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

from .lifecycle import name_drop_window, pending_status
from .common import PENDING, BadRow, IngestError, OnBadRow, Row, Skipped, bad_line, ingest_id, observed, strict
from .common import clean_domain, day_in_name, parse_day, pending_record
from .feed_csv import csv_table, header_key
from .feed_file import Bounds, DEFAULT_BOUNDS, FeedFile, read_feed

__all__ = ["NASK_DELETED_URL", "droplist_rows"]

NASK_DELETED_URL = "https://dns.pl/deleted_domains.txt"
_DOMAIN_COLUMNS = ("domainname", "domain", "name", "fqdn", "domena", "domeny")
# date columns, most specific first (compared as header_key, by prefix)
_DATE_COLUMNS = ("dropdate", "deletiondate", "deletedate", "deleteddate", "purgedate", "releasedate", "date")

FirstSeen = Callable[[int], "str | None"]
# A name's (drop date, why, (window start, window end)); no window: the drop date is a day the file gives.
Dated = tuple["str | None", str, "tuple[str | None, str | None] | None"]


def _pending(feed: str, line: int, domain: str, original: Any, stamp: str, status: str, dated: Dated) -> Row:
    drop, reason, window = dated
    record = pending_record(
        domain, "droplist", observed_at=stamp, status=status, drop=drop, reason=reason, original=original, window=window
    )
    return Row(PENDING, feed, line, record)


def _date_column(header: list[str]) -> int | None:
    keys = [header_key(h) for h in header]
    for wanted in _DATE_COLUMNS:
        for index, key in enumerate(keys):
            if key == wanted or (wanted != "date" and key.startswith(wanted)):
                return index
    return None


def _predicted(domain: str, status: str, observed_at: str, first_seen: FirstSeen | None) -> Dated:
    """(estimate, reason, window): no earlier observation, so the window spans the status's length."""
    seen = first_seen(ingest_id("droplist", domain)) if first_seen else None
    evidence = date.fromisoformat((seen or observed_at)[:10])
    window, reason = name_drop_window(domain, status, evidence)
    why = f"predicted from its first sighting in this feed ({evidence}): {reason}"
    if window is None:
        return None, why, (None, None)
    return window.estimate.isoformat(), why, (window.start.isoformat(), window.end.isoformat())


def _csv_rows(
    feed: FeedFile,
    stamp: str,
    status: str,
    list_day: tuple[str, str] | None,
    first_seen: FirstSeen | None,
    on_bad_row: OnBadRow,
) -> Iterator[Row]:
    header, rows = csv_table(feed)
    keys = [header_key(h) for h in header]
    domain_at = next((keys.index(k) for k in _DOMAIN_COLUMNS if k in keys), None)
    if domain_at is None:
        raise IngestError(
            feed.name,
            1,
            f"no domain column in the header ({', '.join(header)})",
            "name the column Domain or Domain name (or pass a list of one name a line)",
        )
    date_at = _date_column(header)
    for line, cells in rows:
        try:
            if len(cells) != len(header):
                raise BadRow(f"{len(cells)} fields, the header has {len(header)}")
            domain = clean_domain(cells[domain_at])
            dated: Dated  # a day the file gives: no window (a window of one day)
            if date_at is not None and cells[date_at].strip():
                dated = (parse_day(cells[date_at]), f"from the file: column {header[date_at]!r}", None)
            elif list_day:
                dated = (*list_day, None)
            else:
                dated = _predicted(domain, status, stamp, first_seen)
            yield _pending(feed.name, line, domain, dict(zip(header, cells)), stamp, status, dated)
        except BadRow as exc:
            on_bad_row(Skipped(feed.name, line, str(exc)))


_ZONE_NAME = re.compile(r"\s+[A-Z]{2,5}$")  # NASK's own lists end the stamp with its zone: `08:17:48 MEST`


def _header_day(text: str) -> str | None:
    """The date of a timestamp header line (`2025-08-19 08:11:02`, `2022-07-05 08:17:48 MEST`:
    the registry's local day), if the line is one."""
    if not text[:4].isdigit():
        return None
    try:
        return parse_day(_ZONE_NAME.sub("", text.strip()))
    except BadRow:
        return None


def _line_rows(
    feed: FeedFile,
    stamp: str,
    status: str,
    list_day: tuple[str, str] | None,
    name_day: str | None,
    first_seen: FirstSeen | None,
    on_bad_row: OnBadRow,
) -> Iterator[Row]:
    first = True
    for line, text, terminated in feed.lines():
        entry = text.strip()
        if not entry or entry.startswith(("#", ";", "//")):
            continue
        if first:
            first = False
            day = _header_day(entry)
            if day:
                list_day = list_day or (day, f"from the file: header line {line}")
                continue
            if name_day and not list_day:
                list_day = (name_day, "from the file name")
        try:
            domain = clean_domain(entry)
        except BadRow as exc:
            bad_line(feed.name, line, exc, terminated, on_bad_row)
            continue
        dated = (*list_day, None) if list_day else _predicted(domain, status, stamp, first_seen)
        yield _pending(feed.name, line, domain, text, stamp, status, dated)


def _looks_delimited(feed: FeedFile) -> bool:
    first = next((t.strip() for t in feed.head.splitlines() if t.strip() and not t.lstrip().startswith("#")), "")
    return any(d in first for d in ",;\t|") and _header_day(first) is None


def droplist_rows(
    path: str | Path,
    *,
    observed_at: Any = None,
    status: str = "pendingDelete",
    list_date: Any = None,
    first_seen: FirstSeen | None = None,
    on_bad_row: OnBadRow = strict,
    bounds: Bounds = DEFAULT_BOUNDS,
) -> Iterator[Row]:
    """The pending-delete records of one deletion / drop list, with their lines.

    `status`: the WHOIS status the names are in (one of the API's six, docs/reference/fields.md; it also picks
    the lifecycle prediction). `list_date`: the day the list covers, when neither its rows
    nor its name say. `first_seen(id)`: when the mirror first saw that row (ingest_file
    passes it), the evidence of a prediction."""
    pending_status(status)
    stamp = observed(observed_at)
    list_day = None
    if list_date is not None:
        try:
            list_day = (parse_day(list_date), "the list's date, given on import")
        except BadRow as exc:
            raise ValueError(f"list_date: {exc}") from None
    feed = read_feed(path, bounds)
    if feed.starts_json():
        raise IngestError(
            feed.name,
            1,
            "this is JSON; a drop list is text, a name a line, or CSV with a header",
            "ingest it with the feed it belongs to (godaddy, bardate)",
        )
    if _looks_delimited(feed):
        if list_day is None and (name_day := day_in_name(path)):
            list_day = (name_day, "from the file name")
        yield from _csv_rows(feed, stamp, status, list_day, first_seen, on_bad_row)
    else:
        yield from _line_rows(feed, stamp, status, list_day, day_in_name(path), first_seen, on_bad_row)
