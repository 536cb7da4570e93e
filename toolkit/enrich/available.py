"""Is a name free to register? The registry's RDAP answer, for names that left a zone.

    from toolkit.enrich.available import rdap_availability
    with rdap_availability(mirror) as is_available:
        report = ingest_file(mirror, "zonediff", new, previous=old, is_available=is_available)
    print(is_available.summary())

`edt ingest zonediff --check-rdap` asks about each name gone from the zone. Only a 404 (not
registered: RFC 9082's "404 means available") makes it a `regfree` listing; an answer with a
record (`False`) keeps it a pending-delete candidate, and a TLD without an RDAP service or a
lookup that failed says nothing (`None`): the name stays a candidate, never guessed free.

The lookups go through the enrichment's polite client (user agent, per-host pacing,
Retry-After) and its cache (`enrich_cache`, kind `rdap`): a name checked in the last two
days is not asked again, by this or by `edt enrich`.
"""

from __future__ import annotations

import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import httpx

from ..sync.remote import Traffic
from .rdap import Bootstrap, NoRdapService, RdapError, load_bootstrap
from .cache import cached_rdap
from .polite import MAX_AGE, MAX_CONSECUTIVE_ERRORS, Clock, Sleep, polite_client

__all__ = ["AvailabilityCheck", "rdap_availability"]


class AvailabilityCheck:
    """`check(name)` -> True (RDAP 404: available), False (registered) or None (cannot tell)."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        client: httpx.Client,
        bootstrap: Bootstrap | None,
        *,
        now: datetime,
        max_age: timedelta = MAX_AGE["rdap"],
        traffic: Traffic | None = None,
        problem: str | None = None,
    ):
        self.conn, self.client, self.bootstrap, self.now, self.max_age = conn, client, bootstrap, now, max_age
        self.traffic = traffic or Traffic()
        self.counts: Counter = Counter()  # available, registered, cached, failed
        self.no_rdap: Counter = Counter()  # ".xx" -> names
        self.problems: list[str] = [problem] if problem else []
        self._failures_in_a_row = 0

    def __call__(self, name: str) -> bool | None:
        if self.bootstrap is None or self._failures_in_a_row >= MAX_CONSECUTIVE_ERRORS:
            self.counts["unchecked"] += 1
            return None
        try:
            _, answer, fetched = cached_rdap(
                self.conn, self.client, self.bootstrap, name, now=self.now, max_age=self.max_age
            )
        except NoRdapService as exc:
            self.no_rdap[f".{exc.tld}"] += 1
            return None
        except (RdapError, httpx.HTTPError) as exc:
            self._failures_in_a_row += 1
            self.counts["failed"] += 1
            self.problems.append(f"{name}: {exc or type(exc).__name__}")
            if self._failures_in_a_row == MAX_CONSECUTIVE_ERRORS:
                self.problems.append(f"{MAX_CONSECUTIVE_ERRORS} failures in a row: the other names were not checked")
            return None
        self._failures_in_a_row = 0
        self.counts["fetched" if fetched else "cached"] += 1
        self.counts["available" if answer.available else "registered"] += 1
        return answer.available

    def summary(self) -> str:
        """One line: how the names fared (for the CLI)."""
        c = self.counts
        parts = [
            f"{c['available']:,} available (regfree)",
            f"{c['registered']:,} still registered",
            f"{c['fetched']:,} asked, {c['cached']:,} from the cache",
        ]
        if c["failed"] or c["unchecked"]:
            parts.append(f"{c['failed'] + c['unchecked']:,} not checked")
        line = "rdap: " + ", ".join(parts)
        for tld, names in sorted(self.no_rdap.items()):
            line += f"; no RDAP service for {tld} ({names:,} names stay candidates)"
        return line


@contextmanager
def rdap_availability(
    mirror_or_conn: Any,
    *,
    transport: httpx.BaseTransport | None = None,
    sleep: Sleep = time.sleep,
    clock: Clock = time.monotonic,
    retries: int = 4,
    url: str | None = None,
    now: datetime | None = None,
    say: Callable[[str], None] | None = None,
) -> Iterator[AvailabilityCheck]:
    """An `AvailabilityCheck` over a polite client, with the IANA bootstrap loaded (cached in
    the mirror, as `edt enrich` does). When the bootstrap cannot be had, every answer is
    None and `problems` says why. `transport`: tests pass `httpx.MockTransport`."""
    conn = mirror_or_conn.connection() if hasattr(mirror_or_conn, "connection") else mirror_or_conn
    if now is None:
        now = mirror_or_conn.now() if hasattr(mirror_or_conn, "now") else datetime.now().astimezone()
    traffic = Traffic()
    with polite_client(transport, traffic=traffic, sleep=sleep, clock=clock, retries=retries, say=say) as client:
        try:
            bootstrap, _ = load_bootstrap(conn, client, now=now, url=url)
            problem = None
        except (RdapError, httpx.HTTPError) as exc:
            bootstrap, problem = None, f"the IANA RDAP bootstrap is unavailable ({exc or type(exc).__name__})"
        yield AvailabilityCheck(conn, client, bootstrap, now=now, traffic=traffic, problem=problem)
