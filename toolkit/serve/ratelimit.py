"""API keys and per-minute rate limits for the HTTP replica (docs/reference/plans.md).

Keys are secrets: a `KeyStore` keeps only their SHA-256 digests and compares a presented
key with every stored digest in constant time (`hmac.compare_digest`, no early exit). A
key's rate-limit bucket is named by a short prefix of its digest, never by the key.

`SlidingWindow` counts requests per bucket over the last 60 seconds (a true sliding
window, as docs/reference/plans.md says): a request is allowed while fewer than `limit`
requests of that bucket were allowed in the window; a refused request does not count.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..plans import PLANS, RATE_LIMITS, normalize_plan

__all__ = [
    "KeyStore",
    "Identity",
    "SlidingWindow",
    "Decision",
    "WINDOW_SECONDS",
    "RETRY_AFTER_SECONDS",
    "ENTERPRISE_DEFAULT",
    "hash_key",
    "parse_rates",
    "effective_limits",
]

WINDOW_SECONDS = 60.0
RETRY_AFTER_SECONDS = 60  # "wait 60 seconds, then retry" (docs/reference/errors.md)
# Enterprise is "configurable" (RATE_LIMITS has None): unless --rate enterprise=N says
# otherwise, it gets the highest limit another plan has, and the server says so.
ENTERPRISE_DEFAULT = max(v for v in RATE_LIMITS.values() if v is not None)
_HASH_PREFIX = "sha256:"


def hash_key(key: str) -> str:
    """The hex SHA-256 digest a keys file may hold instead of the key (`sha256:<hex>=PLAN`)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Identity:
    """Who a valid key belongs to: its plan and its rate-limit bucket (not the key)."""

    plan: str
    bucket: str

    def __repr__(self) -> str:
        return f"Identity(plan={self.plan!r}, bucket={self.bucket!r})"


class KeyStore:
    """API keys -> plans, held as SHA-256 digests only."""

    def __init__(self, keys: Mapping[str, str] | None = None):
        self._digests: list[tuple[bytes, Identity]] = []
        for key, plan in (keys or {}).items():
            self.add(key, plan)

    def __len__(self) -> int:
        return len(self._digests)

    def __repr__(self) -> str:  # never the keys, nor their digests
        return f"KeyStore({len(self)} keys)"

    def add(self, key: str, plan: str, *, hashed: bool = False) -> None:
        """Add a key (or, with `hashed`, the hex SHA-256 digest of one) for `plan`."""
        plan = normalize_plan(plan)
        if hashed:
            text = key.strip().lower()
            if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
                raise ValueError("a hashed key must be 64 hexadecimal characters (sha256:<hex>=PLAN)")
            digest = bytes.fromhex(text)
        else:
            if not key or key != key.strip() or any(c.isspace() for c in key):
                raise ValueError("an API key must be non-empty and hold no spaces")
            digest = hashlib.sha256(key.encode("utf-8")).digest()
        identity = Identity(plan, "key:" + digest.hex()[:16])
        held = next((i.plan for d, i in self._digests if d == digest), plan)
        if held != plan:  # never the key itself in the message
            raise ValueError(f"this key was given already, for {held}: give each key one plan")
        self._digests = [(d, i) for d, i in self._digests if d != digest] + [(digest, identity)]

    def lookup(self, key: str | None) -> Identity | None:
        """The identity of `key`, or None. Constant time in the key: every digest is compared."""
        if not key:
            return None
        presented = hashlib.sha256(key.encode("utf-8", "surrogatepass")).digest()
        found = None
        for digest, identity in self._digests:
            if hmac.compare_digest(presented, digest):
                found = identity
        return found

    def plans(self) -> dict[str, int]:
        """How many keys each plan has (for the startup summary)."""
        counts: dict[str, int] = {}
        for _, identity in self._digests:
            counts[identity.plan] = counts.get(identity.plan, 0) + 1
        return {p: counts[p] for p in PLANS if p in counts}

    # -- loading -------------------------------------------------------------------------
    @classmethod
    def from_pairs(cls, pairs: Iterable[str]) -> "KeyStore":
        """From `KEY=PLAN` strings (the `--key` option)."""
        store = cls()
        for pair in pairs:
            store._add_pair(pair, where="--key")
        return store

    def _add_pair(self, pair: str, *, where: str) -> None:
        key, sep, plan = pair.strip().rpartition("=")  # a key may end in '=' (base64), a plan never holds one
        if not sep or not key or not plan.strip():
            raise ValueError(f"{where}: expected KEY=PLAN (e.g. my-team-key=pro)")
        try:
            if key.startswith(_HASH_PREFIX):
                self.add(key[len(_HASH_PREFIX) :], plan, hashed=True)
            else:
                self.add(key, plan)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None

    def load_file(self, path: str | os.PathLike[str]) -> None:
        """Add the keys of a keys file.

        Either JSON (an object `{"KEY": "PLAN"}` or a list of `{"key": ..., "plan": ...}`)
        or text: one `KEY=PLAN` a line, `#` comments and blank lines ignored. A key written
        as `sha256:<hex digest>` is stored as given, so the file need not hold the key itself.
        """
        path = Path(path)
        text = path.read_text(encoding="utf-8")
        stripped = text.strip()
        if stripped.startswith(("{", "[")):
            try:
                data = json.loads(stripped)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno})") from None
            entries: list[tuple[str, str]]
            if isinstance(data, dict):
                entries = [(str(k), str(v)) for k, v in data.items()]
            elif isinstance(data, list) and all(isinstance(e, dict) and "key" in e and "plan" in e for e in data):
                entries = [(str(e["key"]), str(e["plan"])) for e in data]
            else:
                raise ValueError(f'{path}: JSON keys file must be {{"KEY": "PLAN"}} or [{{"key": ..., "plan": ...}}]')
            for number, (key, plan) in enumerate(entries, 1):
                self._add_pair(f"{key}={plan}", where=f"{path}: entry {number}")
            return
        for number, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if line and not line.startswith("#"):
                self._add_pair(line, where=f"{path}: line {number}")


@dataclass(frozen=True)
class Decision:
    allowed: bool
    limit: int
    remaining: int

    def headers(self) -> dict[str, str]:
        headers = {"X-RateLimit-Limit": str(self.limit), "X-RateLimit-Remaining": str(self.remaining)}
        if not self.allowed:
            headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return headers


class SlidingWindow:
    """Requests per bucket over the last `window` seconds; thread-safe."""

    def __init__(self, window: float = WINDOW_SECONDS, clock: Callable[[], float] = time.monotonic):
        self.window = window
        self._clock = clock
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()
        self._calls = 0

    def hit(self, bucket: str, limit: int) -> Decision:
        """Count a request of `bucket` if it is within `limit`; say whether it was."""
        now = self._clock()
        start = now - self.window
        with self._lock:
            self._calls += 1
            if self._calls % 1024 == 0:
                self._forget(start)
            hits = self._hits.get(bucket)
            if hits is None:
                hits = self._hits[bucket] = deque()
            while hits and hits[0] <= start:
                hits.popleft()
            if len(hits) >= limit:
                return Decision(False, limit, 0)
            hits.append(now)
            return Decision(True, limit, limit - len(hits))

    def _forget(self, start: float) -> None:
        """Drop buckets with no request in the window (client addresses come and go)."""
        for bucket in [b for b, hits in self._hits.items() if not hits or hits[-1] <= start]:
            del self._hits[bucket]


def parse_rates(pairs: Iterable[str]) -> dict[str, int]:
    """`PLAN=N` strings (the `--rate` option) -> {plan: requests per minute}."""
    rates: dict[str, int] = {}
    for pair in pairs:
        plan, sep, value = pair.partition("=")
        if not sep:
            raise ValueError(f"--rate: expected PLAN=N (e.g. pro=600), got {pair!r}")
        try:
            number = int(value.strip())
        except ValueError:
            raise ValueError(f"--rate: {value!r} is not a whole number of requests per minute") from None
        if number < 1:
            raise ValueError(f"--rate: {plan}={number}: a limit must be at least 1 request per minute")
        rates[normalize_plan(plan)] = number
    return rates


def effective_limits(rates: Mapping[str, int] | None = None) -> dict[str, int]:
    """Requests per minute per plan: the plans' own (docs/reference/plans.md), then the
    overrides (`free` also limits the free endpoint per client address)."""
    limits = {plan: (RATE_LIMITS[plan] or ENTERPRISE_DEFAULT) for plan in PLANS}
    for plan, value in (rates or {}).items():
        plan = normalize_plan(plan)
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"rate for {plan}: expected a whole number of requests per minute >= 1, got {value!r}")
        limits[plan] = value
    return limits
