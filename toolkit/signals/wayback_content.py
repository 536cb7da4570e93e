"""What the web archive's captures say about a domain's past content, from the CDX rows
`edt enrich` already reads (`toolkit.enrich.wayback`).

Signals (docs/guides/signals.md), all null when the domain has no dated capture:
- `archive_years`: calendar years with at least one capture;
- `archive_longest_gap`: the longest run of years without a capture between the first
  and the last captured year (0: archived every year of its span);
- `archive_redirect_share`: the share of captures answered with a redirect (3xx), among
  the captures that have a status (revisit records, status `-`, have none);
- `archive_parked` (0/1) and `archive_parked_reason`: one page (a content digest) in at
  least `PARKED_MIN_CAPTURES` successful captures spanning a year or more, making up
  `PARKED_DIGEST_SHARE` of them: the unchanging page a parking service shows; or the
  domain's nameservers at a parking service (`PARKING_SERVICES`);
- `archive_continuity` (0-100): round(100 * content_years / span_years * (1 -
  parked_share)): content_years the years with at least one successful (200) capture,
  span_years the years from the first to the last capture of any kind, inclusive, and
  parked_share the share of successful captures showing the parked page (0 when not
  parked). A site with content archived every year of its span scores 100; a 10-year span
  with 5 years of content, 50; a domain that only ever redirected (or answered 404), 0; a
  parked page, close to 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from datetime import timedelta
from typing import Any

__all__ = [
    "PARKED_MIN_CAPTURES",
    "PARKED_DIGEST_SHARE",
    "PARKING_SERVICES",
    "ARCHIVE_FIELDS",
    "ArchiveSignals",
    "archive_signals",
    "parking_service",
]

PARKED_MIN_CAPTURES = 10
PARKED_DIGEST_SHARE = 0.8
PARKED_MIN_SPAN = timedelta(days=365)
# Nameserver domains of parking and for-sale-lander services.
PARKING_SERVICES = (
    "sedoparking.com",
    "parkingcrew.net",
    "bodis.com",
    "above.com",
    "parklogic.com",
    "dan.com",
    "afternic.com",
    "hugedomains.com",
    "uniregistrymarket.link",
    "namebrightdns.com",
    "ztomy.com",
    "voodoo.com",
    "domainnamesales.com",
    "parked.com",
    "cashparking.com",
    "fabulous.com",
    "rookdns.com",
    "smartname.com",
    "dsredirection.com",
)
ARCHIVE_FIELDS = (
    "archive_years",
    "archive_longest_gap",
    "archive_redirect_share",
    "archive_parked",
    "archive_parked_reason",
    "archive_continuity",
)


@dataclass(frozen=True)
class ArchiveSignals:
    archive_years: int | None = None
    archive_longest_gap: int | None = None
    archive_redirect_share: float | None = None
    archive_parked: int | None = None
    archive_parked_reason: str | None = None
    archive_continuity: int | None = None

    def fields(self) -> dict[str, Any]:
        return asdict(self)


def parking_service(nameservers: Iterable[str] | None) -> str | None:
    """The parking service the nameservers belong to, or None."""
    for host in nameservers or ():
        host = str(host).strip().lower().rstrip(".")
        for service in PARKING_SERVICES:
            if host == service or host.endswith("." + service):
                return service
    return None


def archive_signals(captures: Iterable[Any], nameservers: Iterable[str] | None = None) -> ArchiveSignals:
    """The signals of one domain's captures (`toolkit.enrich.wayback.Capture`: `when`,
    `statuscode`, `digest`), already without duplicates; `nameservers` from RDAP or WHOIS."""
    years: set[int] = set()
    content_years: set[int] = set()
    with_status = redirects = 0
    pages: Counter[str] = Counter()
    first_seen: dict[str, Any] = {}
    last_seen: dict[str, Any] = {}
    for capture in captures:
        if capture.when is None:
            continue
        years.add(capture.when.year)
        status = capture.statuscode
        if len(status) == 3 and status.isdigit():
            with_status += 1
            redirects += status.startswith("3")
            if status == "200":
                content_years.add(capture.when.year)
            if status == "200" and capture.digest:
                pages[capture.digest] += 1
                first_seen.setdefault(capture.digest, capture.when)
                first_seen[capture.digest] = min(first_seen[capture.digest], capture.when)
                last_seen[capture.digest] = max(last_seen.get(capture.digest, capture.when), capture.when)
    service = parking_service(nameservers)
    if not years:
        if service:
            return ArchiveSignals(archive_parked=1, archive_parked_reason=f"nameservers at {service}")
        return ArchiveSignals()
    ordered = sorted(years)
    gap = max((b - a - 1 for a, b in zip(ordered, ordered[1:])), default=0)
    span = ordered[-1] - ordered[0] + 1
    redirect_share = round(redirects / with_status, 3) if with_status else 0.0
    ok = sum(pages.values())
    parked_share = 0.0
    reason = None
    if pages:
        digest, count = pages.most_common(1)[0]
        lasted = last_seen[digest] - first_seen[digest]
        if count >= PARKED_MIN_CAPTURES and count >= PARKED_DIGEST_SHARE * ok and lasted >= PARKED_MIN_SPAN:
            parked_share = count / ok
            reason = (
                f"the same page (digest {digest[:8]}) in {count} of {ok} captures from "
                f"{first_seen[digest].date()} to {last_seen[digest].date()}"
            )
    if service:
        reason = f"nameservers at {service}" + (f"; {reason}" if reason else "")
    continuity = round(100 * len(content_years) / span * (1 - parked_share))
    return ArchiveSignals(
        archive_years=len(years),
        archive_longest_gap=gap,
        archive_redirect_share=redirect_share,
        archive_parked=int(reason is not None),
        archive_parked_reason=reason,
        archive_continuity=continuity,
    )
