"""The polite HTTP client every outside lookup uses (`edt enrich`, the watched names' RDAP
checks, the zone diff's availability checks): a User-Agent naming the toolkit and its version
(with `$EDT_CONTACT` when set, `user_agent_header`), per-host pacing (`HostPacer`:
`MIN_INTERVAL[host]` seconds between two requests to one host), and the project's retry policy
(`toolkit.sync.remote.ContractRetry`: `Retry-After` waited out, 5xx and cut bodies retried);
`describe_failure` says in one line why a lookup failed.
"""

import os
import time
from collections.abc import Callable, Mapping
from datetime import timedelta

import httpx
from httpx_retries import RetryTransport

from .. import __version__
from ..sync.remote import ContractRetry, MalformedBody, Traffic, network_bound, request_timeout
from .language import (
    ArchiveFetchError,
    check_page_body,
)
from .rdap import RdapError, check_rdap_body
from .wayback import WaybackError, check_cdx_body

__all__ = [
    "USER_AGENT",
    "CONTACT_ENV",
    "MIN_INTERVAL",
    "DEFAULT_MIN_INTERVAL",
    "MAX_AGE",
    "MAX_CONSECUTIVE_ERRORS",
    "Sleep",
    "Clock",
    "HostPacer",
    "user_agent_header",
    "polite_client",
    "describe_failure",
]

USER_AGENT = f"expired-domains-toolkit/{__version__}"
CONTACT_ENV = "EDT_CONTACT"  # an address or URL the services can reach you at, added to the User-Agent

# Seconds between two requests to one host. The Wayback CDX API allows about 60 requests a
# minute before it throttles; we stay well below (archived pages, same host, share the pace).
# Registries' RDAP servers publish no common limit: one a second each.
MIN_INTERVAL: dict[str, float] = {"web.archive.org": 1.5, "data.iana.org": 1.0}
DEFAULT_MIN_INTERVAL = 1.0
MAX_AGE: dict[str, timedelta] = {
    "wayback": timedelta(days=30),
    "rdap": timedelta(days=2),
    "language": timedelta(days=90),
}
MAX_CONSECUTIVE_ERRORS = 10

Sleep = Callable[[float], None]
Clock = Callable[[], float]


class HostPacer(httpx.BaseTransport):
    """Keeps at least `min_interval[host]` seconds between two requests to one host, and
    counts the requests that go out (retries included) in `traffic`."""

    def __init__(
        self,
        inner: httpx.BaseTransport,
        traffic: Traffic,
        *,
        min_interval: Mapping[str, float] | None = None,
        default: float = DEFAULT_MIN_INTERVAL,
        sleep: Sleep = time.sleep,
        clock: Clock = time.monotonic,
    ):
        self.inner = inner
        self.traffic = traffic
        self.min_interval = dict(MIN_INTERVAL if min_interval is None else min_interval)
        self.default = default
        self.sleep = sleep
        self.clock = clock
        self.paced = 0.0  # seconds waited for pacing
        self._last: dict[str, float] = {}

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host = request.url.host
        last = self._last.get(host)
        if last is not None:
            wait = last + self.min_interval.get(host, self.default) - self.clock()
            if wait > 0:
                self.paced += wait
                self.sleep(wait)
        self._last[host] = self.clock()
        with self.traffic.exchange(request, self.clock()):
            response = self.inner.handle_request(request)
        response.request = request  # so that a retry line names the host (httpx sets it only later)
        return response

    def close(self) -> None:
        self.inner.close()


def _check_body(response: httpx.Response) -> None:
    """A 200 cut off in transit is retried like a 5xx (`MalformedBody`)."""
    if response.status_code != 200:
        return
    response.read()
    url = response.request.url
    try:
        if url.path.rstrip("/").endswith("/cdx/search/cdx"):
            check_cdx_body(response.content, "json" if url.params.get("output") == "json" else "text")
        elif url.host == "web.archive.org" and url.path.startswith("/web/"):  # an archived page
            check_page_body(response)
        else:  # RDAP answers and the bootstrap are JSON objects
            check_rdap_body(response.content)
    except ValueError as exc:
        raise MalformedBody(f"{url.host}: {exc}") from None


def user_agent_header() -> str:
    """`$EDT_USER_AGENT` when set, else `USER_AGENT` with `(+$EDT_CONTACT)` when that is set."""
    contact = os.environ.get(CONTACT_ENV, "").strip()
    return os.environ.get("EDT_USER_AGENT") or (f"{USER_AGENT} (+{contact})" if contact else USER_AGENT)


def polite_client(
    transport: httpx.BaseTransport | None = None,
    *,
    traffic: Traffic | None = None,
    sleep: Sleep = time.sleep,
    clock: Clock = time.monotonic,
    retries: int = 4,
    backoff: float = 2.0,
    min_interval: Mapping[str, float] | None = None,
    user_agent: str | None = None,
    give_up_after: float | None = None,
    say: Callable[[str], None] | None = None,
) -> httpx.Client:
    """An httpx client for third-party services: user agent, per-host pacing, retries.

    Transports, innermost first (as `toolkit.sync.remote`): `transport` (default the network;
    tests pass `httpx.MockTransport`), `HostPacer`, httpx-retries' `RetryTransport` with
    `ContractRetry`. `sleep` serves both the pacing and the retry waits (tests pass a no-op).
    A host unreachable for `give_up_after` seconds (default EDT_TIMEOUT, else 60) raises
    `HostUnreachable` (the run stops);
    `say` is told of each retry (host, which retry, the wait)."""
    traffic = traffic if traffic is not None else Traffic()
    give_up_after = network_bound(give_up_after)
    retry = ContractRetry.policy(
        retries=retries,
        backoff=backoff,
        validate=_check_body,
        traffic=traffic,
        sync_sleep=sleep,
        give_up_after=give_up_after,
        say=say,
    )
    retry.clock = clock
    paced = HostPacer(transport or httpx.HTTPTransport(), traffic, min_interval=min_interval, sleep=sleep, clock=clock)
    return httpx.Client(
        headers={"User-Agent": user_agent or user_agent_header()},
        transport=RetryTransport(transport=paced, retry=retry),
        timeout=request_timeout(give_up_after),
        follow_redirects=True,  # RDAP servers may redirect (RFC 9224 section 5)
    )


def describe_failure(exc: BaseException) -> str:
    if isinstance(exc, httpx.HTTPError) and not str(exc):
        return type(exc).__name__
    return str(exc) if isinstance(exc, (WaybackError, RdapError, ArchiveFetchError)) else f"{type(exc).__name__}: {exc}"
