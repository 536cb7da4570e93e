"""Wayback Machine enrichment: how often, since when and until when a domain was archived.

The Internet Archive's CDX API (https://web.archive.org/cdx/search/cdx) lists the captures
of a URL, one per line in the text form or one per array in the JSON form (`output=json`,
whose first array names the fields). With `showResumeKey=true` a page that stops at `limit`
ends with a resume key: a blank line and the key (text), or `[]` and `["key"]` (JSON); the
next page is asked for with `resumeKey=<key>`.

Parsing is pure (`parse_cdx_json`, `parse_cdx_text`, `summarize`): no I/O, tested on recorded
answers. Fetching (`fetch_cdx_pages`, a generator of parsed pages, and `wayback_summary`)
takes an `httpx.Client` built by the caller (`toolkit.enrich.polite.polite_client`: user agent,
per-host pacing, retries), so this module never decides how polite to be.

What counts, for `url=<domain>` (an exact match on the home page: the CDX key drops the
scheme and `www.`, so http, https and www captures all count):
- `wayback_snapshots`: distinct captures. A row repeated verbatim (the CDX server sometimes
  lists one capture from two index shards) counts once (`duplicates` says how many were
  dropped). A capture with an impossible timestamp (month or day `00`, seen in real CDX
  data) still counts: the capture exists, only its date is unusable (`bad_timestamps`).
- `wayback_first_date` / `wayback_last_date`: the earliest and latest valid timestamps
  (`YYYY-MM-DD`, UTC). Bad timestamps are never repaired or guessed.
- `age`: whole years from `wayback_first_date` (docs/reference/fields.md), via the writer's rule.
- the archive signals (`archive_years`, `archive_longest_gap`, `archive_redirect_share`,
  `archive_parked`, `archive_parked_reason`, `archive_continuity`) of the distinct captures:
  `toolkit.signals.wayback_content` says how each is computed.
- Malformed rows are skipped and counted (`malformed`): a wrong number of fields, a
  timestamp that is not 4-14 digits, a `data:` URL glued into the key, an e-mail or
  `mailto:` address with `http://` pasted in front, an "original" that is not a URL.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import date, datetime, timezone
from typing import Any, NamedTuple
from urllib.parse import unquote_plus

import httpx

from ..signals.wayback_content import archive_signals
from ..store.fields import age_in_years
from .. import errors

__all__ = [
    "CDX_URL",
    "CDX_FIELDS",
    "Capture",
    "CdxPage",
    "WaybackSummary",
    "WaybackError",
    "parse_cdx_json",
    "parse_cdx_text",
    "parse_cdx",
    "check_cdx_body",
    "summarize",
    "fetch_cdx_pages",
    "wayback_walk",
    "wayback_summary",
]

CDX_URL = "https://web.archive.org/cdx/search/cdx"
CDX_FIELDS = ("urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length")
PAGE_SIZE = 5000  # rows per request
MAX_PAGES = 50  # then the count is a lower bound and the last date is asked for separately


class WaybackError(errors.Unreachable):
    """The CDX API answered something else than captures (an HTTP error, a body that is not CDX)."""


class Capture(NamedTuple):
    urlkey: str
    timestamp: str
    original: str
    mimetype: str
    statuscode: str
    digest: str
    length: int | None  # "-" in the index: unknown
    when: datetime | None  # None: an impossible timestamp (counted in `bad_timestamps`)

    @property
    def identity(self) -> tuple[str, ...]:
        """What makes two rows the same capture (the row as listed, but the parsed fields)."""
        return (
            self.urlkey,
            self.timestamp,
            self.original,
            self.mimetype,
            self.statuscode,
            self.digest,
            str(self.length),
        )


@dataclass
class CdxPage:
    """One CDX answer: its valid captures, the resume key if the walk goes on, what was skipped."""

    captures: list[Capture] = field(default_factory=list)
    resume_key: str | None = None  # as printed by the server (percent-encoded)
    malformed: int = 0
    bad_timestamps: int = 0


@dataclass
class WaybackSummary:
    """What the listing gets from the captures of one domain."""

    domain: str
    snapshots: int = 0
    first_date: str | None = None
    last_date: str | None = None
    pages: int = 0
    malformed: int = 0
    bad_timestamps: int = 0
    duplicates: int = 0
    complete: bool = True  # False: MAX_PAGES stopped the walk, `snapshots` is a lower bound
    archive: dict[str, Any] | None = (
        None  # the archive signals (toolkit.signals.wayback_content); None in older cache entries
    )

    def age(self, today: date | None = None) -> int | None:
        return age_in_years(self.first_date, today)

    def fields(self, today: date | None = None) -> dict[str, Any]:
        """The listing's columns (docs/reference/fields.md)."""
        return {
            "wayback_snapshots": self.snapshots,
            "wayback_first_date": self.first_date,
            "wayback_last_date": self.last_date,
            "age": self.age(today),
            **(self.archive or {}),
        }

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "WaybackSummary":
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


# -- parsing ----------------------------------------------------------------------------

_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+;base64", re.IGNORECASE)
_EMAILISH = re.compile(r"^https?://<*(mailto:|[^/@:]*@)", re.IGNORECASE)
_URLISH = re.compile(r'^https?://[^\s/?#:@"<>]+\.[^\s/?#:@"<>.]{2,}\.?(:\d+)?(/|$)', re.IGNORECASE)
_TIMESTAMP_PAD = "0101000000"  # month, day, hour, minute, second when a timestamp is shorter


def _when(timestamp: str) -> datetime | None:
    """A CDX timestamp (`YYYYMMDDhhmmss`, possibly shortened) as UTC, None when impossible."""
    full = timestamp + _TIMESTAMP_PAD[len(timestamp) - 4 :]
    try:
        return datetime.strptime(full, "%Y%m%d%H%M%S").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def _capture(values: list[str], fields: tuple[str, ...]) -> Capture | None:
    """A capture from one row's values, or None when the row is malformed."""
    if len(values) != len(fields) or not all(isinstance(v, str) for v in values):
        return None
    row = dict(zip(fields, values))
    urlkey, timestamp, original = row.get("urlkey", ""), row.get("timestamp", ""), row.get("original", "")
    if not (4 <= len(timestamp) <= 14 and timestamp.isascii() and timestamp.isdigit()):
        return None
    if '"' in urlkey or _DATA_URL.search(urlkey) or _DATA_URL.search(original):
        return None
    if "original" in row and (_EMAILISH.match(original) or not _URLISH.match(original)):
        return None
    raw_length = row.get("length", "-")
    length = int(raw_length) if raw_length.isascii() and raw_length.isdigit() else None
    return Capture(
        urlkey,
        timestamp,
        original,
        row.get("mimetype", ""),
        row.get("statuscode", ""),
        row.get("digest", ""),
        length,
        _when(timestamp),
    )


def _add(page: CdxPage, values: Any, fields: tuple[str, ...]) -> None:
    capture = _capture(values, fields) if isinstance(values, list) else None
    if capture is None:
        page.malformed += 1
        return
    if capture.when is None:
        page.bad_timestamps += 1
    page.captures.append(capture)


def _text(body: str | bytes) -> str:
    return body.decode("utf-8", errors="replace") if isinstance(body, bytes) else body


def parse_cdx_json(body: str | bytes) -> CdxPage:
    """Parse a CDX answer in the JSON form (`output=json`).

    The first array names the fields (`fl=` may choose others than the default seven). An
    empty array marks the end of the rows; the array after it holds the resume key. An
    empty body or `[]` is an answer with no captures. Raises WaybackError when the body is
    not a JSON array (a cut-off answer, an HTML error page)."""
    text = _text(body).strip()
    page = CdxPage()
    if not text:
        return page
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise WaybackError(f"CDX answer is not JSON ({exc.msg} at {exc.pos} of {len(text)} characters)") from None
    if not isinstance(data, list):
        raise WaybackError(f"CDX answer is a JSON {type(data).__name__}, not an array")
    rows = iter(data)
    fields = CDX_FIELDS
    first = next(rows, None)
    if isinstance(first, list) and first and all(isinstance(v, str) for v in first) and "timestamp" in first:
        fields = tuple(first)
    elif first is not None:
        rows = iter(data)  # no header row: the default fields
    for values in rows:
        if values == []:
            key_row = next(rows, None)
            if isinstance(key_row, list) and len(key_row) == 1 and isinstance(key_row[0], str) and key_row[0]:
                page.resume_key = key_row[0]
            elif key_row is not None:
                page.malformed += 1
            page.malformed += sum(1 for _ in rows)  # nothing belongs after the key
            break
        _add(page, values, fields)
    return page


def parse_cdx_text(body: str | bytes, fields: Iterable[str] = CDX_FIELDS) -> CdxPage:
    """Parse a CDX answer in the plain-text form: one capture per line, fields separated by
    spaces (`fields` in their order, the default seven unless `fl=` asked for others); a
    blank line (spaces allowed), then the resume key, when the walk goes on."""
    fields = tuple(fields)
    page = CdxPage()
    lines = iter(_text(body).splitlines())
    for line in lines:
        if not line.strip():
            rest = [x.strip() for x in lines if x.strip()]
            if rest:
                page.resume_key = rest[0]
                page.malformed += len(rest) - 1
            break
        _add(page, line.split(), fields)
    return page


def parse_cdx(body: str | bytes, output: str = "json") -> CdxPage:
    return parse_cdx_json(body) if output == "json" else parse_cdx_text(body)


def check_cdx_body(content: bytes, output: str) -> None:
    """Raise ValueError when a 200 answer was cut off in transit (the retry layer then asks
    again): JSON that does not parse as an array, or text whose last line has no newline
    (every line the CDX server writes ends with one)."""
    if output == "json":
        try:
            parse_cdx_json(content)
        except WaybackError as exc:
            raise ValueError(str(exc)) from None
    elif content and not content.endswith(b"\n"):
        raise ValueError(f"CDX text answer ends mid-line after {len(content)} bytes")


def summarize(domain: str, pages: Iterable[CdxPage]) -> WaybackSummary:
    """Fold parsed pages into the listing's figures (see the module's docstring)."""
    summary = WaybackSummary(domain=domain)
    seen: set[tuple[str, ...]] = set()
    unique: list[Capture] = []
    first: datetime | None = None
    last: datetime | None = None
    for page in pages:
        summary.pages += 1
        summary.malformed += page.malformed
        summary.bad_timestamps += page.bad_timestamps
        for capture in page.captures:
            identity = capture.identity
            if identity in seen:
                summary.duplicates += 1
                continue
            seen.add(identity)
            unique.append(capture)
            summary.snapshots += 1
            if capture.when is not None:
                first = capture.when if first is None or capture.when < first else first
                last = capture.when if last is None or capture.when > last else last
    summary.first_date = first.date().isoformat() if first else None
    summary.last_date = last.date().isoformat() if last else None
    summary.archive = archive_signals(unique).fields()
    return summary


# -- fetching ---------------------------------------------------------------------------


def _get(client: httpx.Client, url: str, params: dict[str, Any], output: str) -> CdxPage:
    response = client.get(url, params=params)
    if response.status_code != 200:
        hint = " (the site is excluded from the Wayback Machine)" if response.status_code == 403 else ""
        raise WaybackError(f"CDX API: HTTP {response.status_code}{hint}")
    page = parse_cdx(response.content, output)
    if page.malformed and not page.captures and page.resume_key is None:
        # Not one line a capture (a maintenance page sent with 200): an answer, not "no captures".
        raise WaybackError(
            f"CDX API: the answer is not a CDX index ({page.malformed} lines, none of them a capture: "
            f"{_text(response.content)[:60].strip()!r})"
        )
    return page


def fetch_cdx_pages(
    client: httpx.Client,
    domain: str,
    *,
    output: str = "json",
    page_size: int = PAGE_SIZE,
    max_pages: int | None = MAX_PAGES,
    url: str = CDX_URL,
) -> Iterator[CdxPage]:
    """The captures of `domain`'s home page, one parsed page per request, following resume
    keys until the server gives none (or `max_pages` pages were read)."""
    if output not in ("json", "text"):
        raise ValueError(f"output must be 'json' or 'text', not {output!r}")
    params: dict[str, Any] = {"url": domain, "limit": page_size, "showResumeKey": "true"}
    if output == "json":
        params["output"] = "json"
    pages = 0
    while True:
        page = _get(client, url, params, output)
        pages += 1
        yield page
        if not page.resume_key or (max_pages is not None and pages >= max_pages):
            return
        # The key is printed percent-encoded; httpx encodes the parameter again.
        params = {**params, "resumeKey": unquote_plus(page.resume_key)}


def wayback_walk(
    client: httpx.Client, domain: str, *, output: str = "json", url: str = CDX_URL, **paging: Any
) -> tuple[WaybackSummary, list[Capture]]:
    """The summary of every capture of `domain`, and the captures read (`paging`: `page_size`,
    `max_pages`, as `fetch_cdx_pages` takes them). When `max_pages` stops the walk, the count
    is a lower bound (`complete` False) and the last capture is asked for on its own
    (`limit=-1`), so `wayback_last_date` stays right."""
    pages = list(fetch_cdx_pages(client, domain, output=output, url=url, **paging))
    summary = summarize(domain, pages)
    captures = [c for page in pages for c in page.captures]
    if pages and pages[-1].resume_key:
        summary.complete = False
        params: dict[str, Any] = {"url": domain, "limit": -1, **({"output": "json"} if output == "json" else {})}
        last_page = _get(client, url, params, output)
        tail = summarize(domain, [last_page])
        if tail.last_date and (summary.last_date is None or tail.last_date > summary.last_date):
            summary.last_date = tail.last_date
        captures += last_page.captures
    return summary, captures


def wayback_summary(client: httpx.Client, domain: str, **options: Any) -> WaybackSummary:
    """`wayback_walk`'s summary (options as there)."""
    return wayback_walk(client, domain, **options)[0]
