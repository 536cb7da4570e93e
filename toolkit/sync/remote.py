"""The client of the remote API (the live service, or an `edt serve` replica).

Behaviour is stacked as httpx transports, innermost first:

- the network (or, in tests, httpx's ASGI transport over our own replica);
- `PacedTransport`: takes a permit from a pyrate-limiter bucket before every request. The
  bucket lives in a small SQLite file shared by every process on the machine and is named
  after a digest of the API key, so a scheduled sync, a notebook and the app's button
  together stay within the key's requests per minute (docs/reference/plans.md);
- httpx-retries' `RetryTransport` with `ContractRetry`: after a 429 or a 503 it waits
  `Retry-After` seconds (60 when absent) and sends the same request again; timeouts,
  connection errors, other 5xx and unreadable JSON are retried with exponential backoff.

401 and 403 are final: `RemoteRefused` carries the service's own message.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from httpx_retries import Retry, RetryTransport
from pyrate_limiter import Limiter, Rate, SQLiteBucket

from ..plans import RATE_LIMITS
from .. import errors

__all__ = [
    "RemoteClient",
    "RemoteRefused",
    "RemoteFailed",
    "HostUnreachable",
    "WaitTooLong",
    "Traffic",
    "shared_limiter",
    "budget_path",
    "network_bound",
    "DEFAULT_GIVE_UP",
]

# The pacing window is a little longer than the service's minute, so that network jitter can
# never put one request too many into the service's own window (costs 1.6% of the ceiling).
PACING_WINDOW_MS = 61_000
WAIT_WITHOUT_RETRY_AFTER = 60.0  # docs/reference/errors.md, Retrying
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
# How long a host may fail at the network level (refused, no DNS, timeouts) before a run gives
# up on it: `--timeout` / EDT_TIMEOUT, in seconds. Throttling (429/503) is never cut short.
DEFAULT_GIVE_UP = 60.0
TIMEOUT_ENV = "EDT_TIMEOUT"


def network_bound(value: float | None = None) -> float:
    """The give-up bound in seconds: `value`, else EDT_TIMEOUT, else 60 (ValueError when not a
    positive number)."""
    raw: Any = value if value is not None else os.environ.get(TIMEOUT_ENV) or DEFAULT_GIVE_UP
    try:
        seconds = float(raw)
    except (TypeError, ValueError):
        raise ValueError(f"{TIMEOUT_ENV}: expected seconds, got {raw!r}") from None
    if not seconds > 0:
        raise ValueError(f"--timeout / {TIMEOUT_ENV}: must be more than 0 seconds, got {raw!r}")
    return seconds


def request_timeout(bound: float | None) -> httpx.Timeout:
    """httpx timeouts within the give-up bound (a connect never outlasts it)."""
    if bound is None:
        return DEFAULT_TIMEOUT
    return httpx.Timeout(min(30.0, bound), connect=min(10.0, max(bound / 4, 0.5)))


class RemoteRefused(errors.RunFailed):
    """401 or 403: the key or the plan does not allow this; retrying cannot help."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


class RemoteFailed(errors.Unreachable):
    """The remote kept failing (5xx, timeouts, unreadable answers) after every retry."""


class HostUnreachable(RemoteFailed):
    """A host failed at the network level (connection refused, no DNS answer, timeouts) for
    longer than the give-up bound: the run stops with one line naming the host."""

    def __init__(self, host: str, cause: str, seconds: float, attempts: int, bound: float):
        super().__init__(
            f"{host} unreachable ({cause}); gave up after {seconds:.0f} s and {attempts} attempts "
            f"(--timeout or {TIMEOUT_ENV}: {bound:g} s; check the network or the address)"
        )
        self.host = host


class WaitTooLong(RemoteFailed):
    """A 429 or 503 whose Retry-After asks for a longer wait than the client may spend
    (`longest_wait`): the request is left for a later run instead of holding this one."""

    def __init__(self, host: str, status: int, seconds: float, bound: float):
        super().__init__(f"{host}: HTTP {status} asking to wait {seconds:.0f} s (more than {bound:g} s)")
        self.host = host


class MalformedBody(httpx.DecodingError):
    """A 200 whose body is not the JSON object it should be (e.g. cut off in transit)."""


@dataclass
class Traffic:
    """What a client has sent and met; a sync copies it into `sync_runs`."""

    requests: int = 0  # every request that went out, retries included
    throttled: int = 0  # 429 answers
    retried: int = 0
    waited: float = 0.0  # seconds spent waiting before retries
    # host -> (monotonic time of its first network failure in a row, seconds waited since):
    # cleared by any answer from the host; the give-up bound is measured from there.
    down: dict[str, tuple[float, float]] = field(default_factory=dict)

    def snapshot(self) -> "Traffic":
        return Traffic(self.requests, self.throttled, self.retried, self.waited)

    def failed(self, host: str, started: float) -> None:
        """A request to `host` begun at `started` (monotonic) failed at the network level."""
        self.down.setdefault(host, (started, 0.0))

    def answered(self, host: str) -> None:
        """The host answered (any HTTP status): it is reachable again."""
        self.down.pop(host, None)

    @contextmanager
    def exchange(self, request: httpx.Request, started: float) -> Iterator[None]:
        """Counts one request sent by a transport, and whether its host answered or failed
        at the network level (the failure then names its request)."""
        self.requests += 1
        host = request.url.netloc.decode()
        try:
            yield
        except httpx.RequestError as exc:
            attach_request(exc, request)
            self.failed(host, started)
            raise
        self.answered(host)


def attach_request(exc: httpx.RequestError, request: httpx.Request) -> None:
    """A transport's exception names its request (httpx adds it only later), so that a retry
    line can say which host failed."""
    if getattr(exc, "_request", None) is None:
        exc.request = request


def _host(response: httpx.Response | Exception) -> str:
    if not isinstance(response, (httpx.Response, httpx.HTTPError)):
        return "the remote"
    try:
        request = response.request
    except RuntimeError:  # an exception raised without its request
        return "the remote"
    return request.url.netloc.decode() if request is not None else "the remote"


def _cause(response: httpx.Response | Exception) -> str:
    if isinstance(response, httpx.Response):  # a success retried: its body was not the JSON object it should be
        return f"HTTP {response.status_code}" + (
            " but no JSON object in the answer" if response.status_code < 400 else ""
        )
    text = str(response).strip()
    return f"{type(response).__name__}: {text}" if text else type(response).__name__


def budget_path() -> Path:
    """The machine-wide file of request budgets (env `EDT_BUDGET_FILE` to move it)."""
    if os.environ.get("EDT_BUDGET_FILE"):
        return Path(os.environ["EDT_BUDGET_FILE"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "edt" / "request-budget.sqlite"


def key_digest(api_key: str) -> str:
    """Names a key's budget without storing the key (a one-way digest)."""
    return hashlib.sha256(api_key.encode()).hexdigest()[:24]


def shared_limiter(
    api_key: str, per_minute: int, *, path: str | os.PathLike[str] | None = None, window_ms: int = PACING_WINDOW_MS
) -> Limiter:
    """A limiter whose bucket is shared, through a SQLite file and a file lock, by every
    process that paces requests for this key."""
    file = Path(path) if path else budget_path()
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        bucket = SQLiteBucket.init_from_file(
            [Rate(per_minute, window_ms)], table=f"key_{key_digest(api_key)}", db_path=str(file), use_file_lock=True
        )
    except (OSError, sqlite3.Error) as exc:  # a folder, a file of another kind, no permission
        where = "EDT_BUDGET_FILE" if os.environ.get("EDT_BUDGET_FILE") and not path else "the request budget file"
        raise errors.BadInput(
            f"{where}: {file} cannot hold the request budget ({exc}); name a file in a writable folder"
        ) from None
    return Limiter(bucket)


class PacedTransport(httpx.AsyncBaseTransport):
    """Waits for a permit from `limiter` before each request (None: no pacing)."""

    def __init__(self, inner: httpx.AsyncBaseTransport, limiter: Limiter | None, traffic: Traffic):
        self.inner = inner
        self.limiter = limiter
        self.traffic = traffic

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if self.limiter is not None:
            await self.limiter.try_acquire_async("requests")
        with self.traffic.exchange(request, time.monotonic()):
            response = await self.inner.handle_async_request(request)
        response.request = request  # so that a retry line names the host (httpx sets it only later)
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


Sleep = Callable[[float], Awaitable[None]]
RETRY_STATUSES = (429, 500, 502, 503, 504)
RETRY_EXCEPTIONS = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError, MalformedBody)
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)  # the request never left: safe to send again


class ContractRetry(Retry):
    """httpx-retries' policy with the API's waits (docs/reference/errors.md): `Retry-After`
    (else `default_wait`, 60 s) after a 429 or 503, exponential backoff otherwise. Serves async
    clients (`asleep`, through `sleep_with`) and sync ones (`sleep`, through `sync_sleep`);
    both sleeps and the `traffic` counters are injected (tests pass sleeps that do not wait)."""

    sleep_with: Sleep = staticmethod(asyncio.sleep)  # type: ignore[assignment]
    sync_sleep: Callable[[float], None] = staticmethod(time.sleep)  # type: ignore[assignment]
    traffic: Traffic | None = None
    default_wait: float | None = WAIT_WITHOUT_RETRY_AFTER  # None: backoff when Retry-After is absent
    give_up_after: float | None = None  # seconds a host may stay unreachable (None: only the retry count)
    say: Callable[[str], None] | None = None  # told of each retry as it is decided
    clock: Callable[[], float] = staticmethod(time.monotonic)  # type: ignore[assignment]
    longest_wait: float | None = None  # a longer Retry-After raises WaitTooLong (None: any is waited out)

    @classmethod
    def policy(
        cls,
        *,
        retries: int,
        backoff: float,
        validate: Callable[[httpx.Response], Any] | None = None,
        methods: list[str] | None = None,
        traffic: Traffic | None = None,
        sleep: Sleep | None = None,
        sync_sleep: Callable[[float], None] | None = None,
        default_wait: float | None = WAIT_WITHOUT_RETRY_AFTER,
        give_up_after: float | None = None,
        say: Callable[[str], None] | None = None,
        exceptions: tuple[type[Exception], ...] = RETRY_EXCEPTIONS,
        longest_wait: float | None = None,
    ) -> "ContractRetry":
        """The project's retry policy, built once for every client (the API, RDAP and
        Wayback, alert webhooks). `give_up_after`: a host that has failed at the network
        level for that long (across requests, until it answers) raises `HostUnreachable`
        instead of another retry; `say` gets one line per retry (host, which retry, wait);
        `exceptions`: the failures retried (a request that may have arrived is not, for a POST);
        `longest_wait`: a Retry-After above it raises `WaitTooLong` instead of waiting."""
        retry = cls(
            total=retries,
            backoff_factor=backoff,
            max_backoff_wait=120.0,
            allowed_methods=methods,
            status_forcelist=RETRY_STATUSES,
            retry_on_exceptions=exceptions,
            validate_response=validate,
        )
        retry.traffic, retry.default_wait = traffic if traffic is not None else Traffic(), default_wait
        retry.give_up_after, retry.say, retry.longest_wait = give_up_after, say, longest_wait
        if sleep is not None:
            retry.sleep_with = sleep
        if sync_sleep is not None:
            retry.sync_sleep = sync_sleep
        return retry

    def copy_with(self, *args: Any, **changes: Any) -> "ContractRetry":
        new = super().copy_with(*args, **changes)
        assert isinstance(new, ContractRetry)  # Retry.copy_with builds an instance of self's class
        new.sleep_with, new.sync_sleep, new.traffic = self.sleep_with, self.sync_sleep, self.traffic
        new.default_wait, new.give_up_after, new.say, new.clock = (
            self.default_wait,
            self.give_up_after,
            self.say,
            self.clock,
        )
        new.longest_wait = self.longest_wait
        return new

    def _wait_for(self, response: httpx.Response | Exception) -> float:
        if isinstance(response, httpx.Response) and response.status_code in (429, 503):
            header = response.headers.get("Retry-After", "").strip()
            try:
                if header:
                    return max(0.0, self.parse_retry_after(header))
            except ValueError:
                pass
            if self.default_wait is not None:
                return self.default_wait
        return min(self.backoff_strategy(), self.max_backoff_wait)

    def _account(self, response: httpx.Response | Exception) -> float:
        """The wait before the next attempt, counted in `traffic` and `elapsed_sleep`; said
        through `say`; `HostUnreachable` when the host has been down past `give_up_after`."""
        seconds = self._wait_for(response)
        host = _host(response)
        if self.longest_wait is not None and seconds > self.longest_wait and isinstance(response, httpx.Response):
            raise WaitTooLong(host, response.status_code, seconds, self.longest_wait)
        network = isinstance(response, Exception) and not isinstance(response, MalformedBody)
        until = ""
        if network and self.traffic is not None and self.give_up_after is not None:
            now = self.clock()
            since, waited = self.traffic.down.get(host, (now, 0.0))
            spent = max(now - since, waited)
            if spent + seconds > self.give_up_after:
                self.traffic.down.pop(host, None)
                raise HostUnreachable(host, _cause(response), spent, self.attempts_made, self.give_up_after)
            self.traffic.down[host] = (since, waited + seconds)
            until = f"; giving up {self.give_up_after - spent:.0f} s from now (--timeout or {TIMEOUT_ENV})"
        if self.say is not None:
            why = (
                "Retry-After"
                if isinstance(response, httpx.Response) and response.status_code in (429, 503)
                else "backoff"
            )
            self.say(
                f"{host}: {_cause(response)}; retry {self.attempts_made} of {self.total} in {seconds:.0f} s "
                f"({why}){until}"
            )
        if self.traffic is not None:
            self.traffic.retried += 1
            self.traffic.waited += seconds
            if isinstance(response, httpx.Response) and response.status_code == 429:
                self.traffic.throttled += 1
        self.elapsed_sleep += seconds
        return seconds

    async def asleep(self, response: httpx.Response | Exception) -> None:
        await self.sleep_with(self._account(response))

    def sleep(self, response: httpx.Response | Exception) -> None:
        self.sync_sleep(self._account(response))


async def _require_json_object(response: httpx.Response) -> None:
    await response.aread()
    try:
        body = json.loads(response.content)
    except ValueError:
        raise MalformedBody(
            f"unreadable JSON from {response.request.url.path} ({len(response.content)} bytes)"
        ) from None
    if not isinstance(body, dict):
        raise MalformedBody(f"{response.request.url.path} answered {type(body).__name__}, not an object")


class RemoteClient:
    """GETs JSON from the remote API with the key, paced and retried as described above.

    `transport`: the innermost transport (default: the network). `limiter`: default a
    `shared_limiter` for this key at `per_minute`; pass None to send unpaced (tests).
    `give_up_after`: seconds an unreachable host is retried before `HostUnreachable` (default
    EDT_TIMEOUT, else 60); `say` hears each retry (host, which retry, the wait).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        per_minute: int | None = None,
        plan: str = "pro",
        transport: httpx.AsyncBaseTransport | None = None,
        limiter: Limiter | None | str = "shared",
        sleep: Sleep = asyncio.sleep,
        retries: int = 8,
        backoff: float = 1.0,
        timeout: httpx.Timeout | None = None,
        give_up_after: float | None = None,
        say: Callable[[str], None] | None = None,
    ):
        if not api_key:
            raise ValueError("an API key is needed: set EDT_API_KEY or pass --api-key")
        self.per_minute = per_minute or RATE_LIMITS.get(plan) or 15
        self.traffic = Traffic()
        if limiter == "shared":
            limiter = shared_limiter(api_key, self.per_minute)
        give_up_after = network_bound(give_up_after)  # None: EDT_TIMEOUT, else 60 s
        retry = ContractRetry.policy(
            retries=retries,
            backoff=backoff,
            validate=_require_json_object,
            traffic=self.traffic,
            sleep=sleep,
            give_up_after=give_up_after,
            say=say,
        )
        paced = PacedTransport(transport or httpx.AsyncHTTPTransport(), limiter, self.traffic)  # type: ignore[arg-type]
        self._client = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={"Authorization": f"Bearer {api_key}", "Accept": "application/json"},
            transport=RetryTransport(transport=paced, retry=retry),
            timeout=timeout or request_timeout(give_up_after),
        )

    def __repr__(self) -> str:  # never the key
        return f"RemoteClient({str(self._client.base_url)!r}, {self.per_minute}/min)"

    async def get_json(self, path: str, params: Mapping[str, Any]) -> dict[str, Any]:
        try:
            response = await self._client.get(path, params={k: v for k, v in params.items() if v is not None})
        except httpx.HTTPError as exc:
            raise RemoteFailed(
                f"GET {path}: {type(exc).__name__}: {exc} (after {self.traffic.retried} retries)"
            ) from None
        if response.status_code == 401:
            host = response.request.url.netloc.decode()
            said = _message(response).split(". ")[0].rstrip(".")  # "Unauthenticated"; the replica's hint is for others
            raise RemoteRefused(
                401,
                f"{said}: {host} refused the API key; set the right one "
                "in EDT_API_KEY (or --api-key, or api_key in the config file, see EDT_CONFIG)",
            )
        if response.status_code == 403:
            raise RemoteRefused(response.status_code, _message(response))
        if response.status_code >= 400:
            raise RemoteFailed(f"GET {path}: HTTP {response.status_code}: {_message(response)}")
        try:
            body = response.json()
        except ValueError:  # still so after the retries: not the API at that address, or cut short each time
            raise RemoteFailed(
                f"GET {path}: {response.request.url.netloc.decode()} answered {len(response.content):,} bytes that "
                f"are not JSON (after {self.traffic.retried} retries): check --base-url (or EDT_BASE_URL)"
            ) from None
        return body

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> "RemoteClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()


def _message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if isinstance(body, dict):
        text = body.get("message") or body.get("error") or ""
        if body.get("required_plan"):
            text += f" (required plan: {body['required_plan']})"
        return str(text)
    return str(body)[:200]
