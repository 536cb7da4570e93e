"""RDAP enrichment: a domain's registry status, expiration date and registrar.

RDAP (RFC 9082 queries, RFC 9083 answers) replaces WHOIS with JSON over HTTPS. Which server
answers for a TLD is published by IANA in the bootstrap file https://data.iana.org/rdap/dns.json
(RFC 9224): `services` is a list of `[[labels...], [base URLs...]]`. The file is cached in the
mirror's `mirror_meta` table under `rdap_bootstrap` (`{"fetched_at": ..., "data": {...}}`)
and fetched again when older than 30 days. A TLD the file does not list has no RDAP
service: it is reported as such ("no RDAP service for .de"), never guessed.

A domain answer maps to the listing's `whois_*` columns:
- `status`: RDAP status words (RFC 8056 section 2, "client transfer prohibited") become EPP
  names ("clientTransferProhibited"; RDAP "active" is EPP "ok"), stored as they come;
- `pending_status`: the one of the six pending-delete statuses (docs/reference/fields.md) the
  statuses show, by precedence `PENDING_PRECEDENCE` (a gTLD in redemption shows both
  redemptionPeriod and pendingDelete: it is in redemption, whose timeline is the longer);
  `active` or *Prohibited-only statuses mean not dropping;
- events `registration`, `expiration`, `last changed` -> `whois_registered_at`,
  `whois_expires_at`, `whois_last_changed_at`;
- the entity with role `registrar`: its vCard `fn`, else its handle (CZ.NIC gives only the
  handle, e.g. `REG-INTERNET-CZ`);
- `nameservers[].ldhName`, lower case.

A 404 from the registry's RDAP server means the name is not registered: `available`. The
listing's `whois_status` then holds the toolkit's marker `["available"]` (not an EPP status).

Parsing (`parse_rdap_domain`, `Bootstrap.from_json`) is pure; fetching (`fetch_rdap_domain`,
`fetch_bootstrap`) takes an `httpx.Client` built by the caller (`toolkit.enrich.polite`).
"""

from __future__ import annotations

import json
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import httpx

from ..errors import BadInput
from ..query.params import PENDING_STATUSES
from ..store.fields import iso_timestamp, utc_seconds
from .. import errors
from ..config import is_web_address

__all__ = [
    "BOOTSTRAP_URL",
    "BOOTSTRAP_URL_ENV",
    "bootstrap_url",
    "BOOTSTRAP_META_KEY",
    "BOOTSTRAP_MAX_AGE",
    "AVAILABLE",
    "PENDING_PRECEDENCE",
    "Bootstrap",
    "RdapDomain",
    "RdapError",
    "NoRdapService",
    "epp_status",
    "pending_status",
    "parse_rdap_domain",
    "check_rdap_body",
    "read_cached_bootstrap",
    "store_bootstrap",
    "fetch_bootstrap",
    "load_bootstrap",
    "fetch_rdap_domain",
    "rdap_lookup",
]

BOOTSTRAP_URL = "https://data.iana.org/rdap/dns.json"
BOOTSTRAP_URL_ENV = "EDT_RDAP_BOOTSTRAP_URL"  # a local copy or mirror of IANA's file
BOOTSTRAP_META_KEY = "rdap_bootstrap"
BOOTSTRAP_MAX_AGE = timedelta(days=30)
AVAILABLE = "available"  # the listing's whois_status marker after an RDAP 404

# Most specific first: what the registry is doing to the name right now.
PENDING_PRECEDENCE = ("quarantine", "redemptionPeriod", "pendingDelete", "transition", "serverHold", "clientHold")
assert set(PENDING_PRECEDENCE) == set(PENDING_STATUSES)

RDAP_ACCEPT = "application/rdap+json, application/json;q=0.9"


class RdapError(errors.Unreachable):
    """The RDAP server answered something else than a domain or a 404."""


class NoRdapService(errors.ToolkitError, LookupError):
    """The IANA bootstrap lists no RDAP server for this TLD."""

    def __init__(self, tld: str):
        super().__init__(f"no RDAP service for .{tld}")
        self.tld = tld


# -- bootstrap --------------------------------------------------------------------------


@dataclass(frozen=True)
class Bootstrap:
    """The IANA DNS bootstrap: TLD label (lower case, A-label) -> RDAP base URLs."""

    services: dict[str, tuple[str, ...]]
    publication: str | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Bootstrap":
        if not isinstance(data, dict) or not isinstance(data.get("services"), list):
            raise RdapError("the RDAP bootstrap has no `services` list")
        services: dict[str, tuple[str, ...]] = {}
        for entry in data["services"]:
            if not (isinstance(entry, list) and len(entry) == 2 and all(isinstance(x, list) for x in entry)):
                continue
            labels, urls = entry
            urls = tuple(u for u in urls if isinstance(u, str) and u.startswith(("https://", "http://")))
            # RFC 9224 section 3: prefer HTTPS when both are given.
            urls = tuple(sorted(urls, key=lambda u: not u.startswith("https://")))
            for label in labels:
                if isinstance(label, str) and urls:
                    services[label.strip(".").lower()] = urls
        if not services:
            raise RdapError("the RDAP bootstrap lists no service")
        return cls(services, data.get("publication"))

    def entry_for(self, domain: str) -> tuple[str, tuple[str, ...]]:
        """(the matching entry, its base URLs): the longest label suffix of `domain` the
        file lists. Raises NoRdapService naming the TLD when none matches."""
        labels = _ascii(domain).split(".")
        for i in range(1, len(labels)):  # longest suffix first, never the whole name
            suffix = ".".join(labels[i:])
            if suffix in self.services:
                return suffix, self.services[suffix]
        if len(labels) == 1 and labels[0] in self.services:  # a bare TLD
            return labels[0], self.services[labels[0]]
        raise NoRdapService(labels[-1])

    def base_url(self, domain_or_tld: str) -> str:
        """The RDAP base URL for a domain (`example.cz`) or a TLD (`.cz`, `cz`)."""
        name = domain_or_tld.strip().lower()
        if name.startswith("."):
            name = name[1:]
        return self.entry_for(name)[1][0]

    def domain_url(self, domain: str) -> str:
        """The RDAP URL of a domain query (RFC 9082 section 3.1.3)."""
        base = self.entry_for(domain)[1][0]
        return f"{base if base.endswith('/') else base + '/'}domain/{_ascii(domain)}"


def _ascii(domain: str) -> str:
    """The LDH (A-label) form RDAP queries use; names already ASCII are only lower-cased."""
    name = domain.strip().strip(".").lower()
    if name.isascii():
        return name
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:
        return name


def bootstrap_url() -> str:
    """Where the IANA bootstrap is fetched from: `$EDT_RDAP_BOOTSTRAP_URL` (an http(s) address,
    or a local copy: a file's path or file:// address; else BadInput naming it), else IANA."""
    url = os.environ.get(BOOTSTRAP_URL_ENV) or BOOTSTRAP_URL
    if not is_web_address(url) and not os.path.isfile(_local_path(url)):
        raise BadInput(
            f"{BOOTSTRAP_URL_ENV}: {url!r} is neither an http(s) address nor a file (a local copy of IANA's "
            "dns.json); fix it, or unset it for IANA's"
        )
    return url


_MOST_BOOTSTRAP_BYTES = 16 * 2**20  # IANA's file is about 30 KB


def _local_path(url: str) -> str:
    return url.removeprefix("file://")


def read_cached_bootstrap(conn: sqlite3.Connection) -> tuple[dict[str, Any], datetime, str | None] | None:
    """(the bootstrap JSON, when it was fetched, from where) from `mirror_meta`, or None."""
    row = conn.execute("SELECT value FROM mirror_meta WHERE key = ?", (BOOTSTRAP_META_KEY,)).fetchone()
    if not row:
        return None
    try:
        stored = json.loads(row[0])
        fetched = datetime.fromisoformat(stored["fetched_at"].replace("Z", "+00:00"))
        return stored["data"], fetched, stored.get("url")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # unreadable: fetched again


def store_bootstrap(
    conn: sqlite3.Connection, data: dict[str, Any], fetched_at: datetime, url: str | None = None
) -> None:
    value = json.dumps({"fetched_at": utc_seconds(fetched_at), "url": url, "data": data}, separators=(",", ":"))
    with conn:
        conn.execute(
            "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (BOOTSTRAP_META_KEY, value),
        )


def fetch_bootstrap(client: httpx.Client, url: str = BOOTSTRAP_URL) -> dict[str, Any]:
    if not is_web_address(url):  # a local copy
        try:
            with open(_local_path(url), "rb") as handle:
                data = json.loads(handle.read(_MOST_BOOTSTRAP_BYTES + 1)[:_MOST_BOOTSTRAP_BYTES])
        except (OSError, ValueError) as exc:
            raise RdapError(f"RDAP bootstrap {url}: cannot be read as JSON ({exc})") from None
        Bootstrap.from_json(data)
        return data
    response = client.get(url, headers={"Accept": "application/json"})
    if response.status_code != 200:
        raise RdapError(f"RDAP bootstrap {url}: HTTP {response.status_code}")
    try:
        data = response.json()
    except ValueError:
        raise RdapError(f"RDAP bootstrap {url}: not JSON") from None
    Bootstrap.from_json(data)  # validate before it is cached
    return data


def load_bootstrap(
    conn: sqlite3.Connection,
    client: httpx.Client,
    *,
    now: datetime,
    max_age: timedelta = BOOTSTRAP_MAX_AGE,
    url: str | None = None,
) -> tuple[Bootstrap, str]:
    """The bootstrap (from `url`, default `bootstrap_url()`) and where it came from: `cached` (younger than `max_age`), `fetched`
    (and cached), or `stale` (the fetch failed: the older copy is used). Raises RdapError
    (or an httpx error) when there is neither a copy nor an answer."""
    url = url or bootstrap_url()
    cached = read_cached_bootstrap(conn)
    if cached and now - cached[1] < max_age and cached[2] in (url, None if url == BOOTSTRAP_URL else url):
        try:  # the copy of the address in use (another address set since: fetched from it)
            return Bootstrap.from_json(cached[0]), "cached"
        except RdapError:
            pass
    try:
        data = fetch_bootstrap(client, url)
    except (RdapError, httpx.HTTPError):
        if cached:
            return Bootstrap.from_json(cached[0]), "stale"
        raise
    store_bootstrap(conn, data, now, url)
    return Bootstrap.from_json(data), "fetched"


# -- domain answers ---------------------------------------------------------------------


def epp_status(status: str) -> str:
    """An RDAP status (RFC 8056 section 2: `client transfer prohibited`) as its EPP name
    (`clientTransferProhibited`); `active` is EPP `ok`; EPP names pass unchanged."""
    words = status.strip().replace("_", " ").split()
    if not words:
        return ""
    if len(words) == 1:
        word = words[0]
        return "ok" if word.lower() == "active" else word[0].lower() + word[1:]
    return words[0].lower() + "".join(w[:1].upper() + w[1:].lower() for w in words[1:])


def pending_status(statuses: list[str]) -> str | None:
    """The pending-delete status (one of the six) that EPP `statuses` show, or None when the
    name is not dropping (`ok`, *Prohibited, periods of a live name, nothing at all)."""
    present = set(statuses)
    return next((s for s in PENDING_PRECEDENCE if s in present), None)


@dataclass
class RdapDomain:
    """What one RDAP domain answer (or a 404) says about a name."""

    name: str
    statuses: list[str] = field(default_factory=list)  # EPP names
    rdap_statuses: list[str] = field(default_factory=list)  # as received
    registrar: str | None = None
    registered_at: str | None = None
    expires_at: str | None = None
    last_changed_at: str | None = None
    nameservers: list[str] = field(default_factory=list)
    available: bool = False

    @property
    def pending_status(self) -> str | None:
        return None if self.available else pending_status(self.statuses)

    @property
    def dropping(self) -> bool:
        return self.pending_status is not None

    def fields(self, checked_at: str) -> dict[str, Any]:
        """The listing's `whois_*` columns (`whois_ns_category` is not RDAP's: left alone). An
        available name clears them all; a registered one's answer gives only what it holds: a
        registry that publishes no expiry, status or nameservers (Norid, some ccTLDs, a trimmed
        answer) leaves the known values as they were."""
        found = {
            "whois_status": [AVAILABLE] if self.available else list(self.statuses),
            "whois_registrar": self.registrar,
            "whois_registered_at": self.registered_at,
            "whois_expires_at": self.expires_at,
            "whois_last_changed_at": self.last_changed_at,
            "whois_nameservers": list(self.nameservers),
        }
        if not self.available:
            found = {column: value for column, value in found.items() if value not in (None, [])}
        return {**found, "whois_checked_at": checked_at}

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "RdapDomain":
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def _vcard_fn(entity: dict[str, Any]) -> str | None:
    card = entity.get("vcardArray")
    if not (isinstance(card, list) and len(card) == 2 and isinstance(card[1], list)):
        return None
    for prop in card[1]:
        if isinstance(prop, list) and len(prop) >= 4 and prop[0] == "fn" and isinstance(prop[3], str):
            return prop[3].strip() or None
    return None


def _registrar(entities: Any) -> str | None:
    for entity in entities if isinstance(entities, list) else []:
        if isinstance(entity, dict) and "registrar" in (entity.get("roles") or []):
            handle = entity.get("handle")
            return _vcard_fn(entity) or (handle.strip() if isinstance(handle, str) and handle.strip() else None)
    return None


_EVENTS = {"registration": "registered_at", "expiration": "expires_at", "last changed": "last_changed_at"}


def parse_rdap_domain(data: dict[str, Any] | str | bytes) -> RdapDomain:
    """An RFC 9083 domain object as an RdapDomain. Raises RdapError when it is not one."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except ValueError:
            raise RdapError("RDAP answer is not JSON") from None
    if not isinstance(data, dict):
        raise RdapError(f"RDAP answer is a JSON {type(data).__name__}, not an object")
    if data.get("objectClassName") not in ("domain", None) or not isinstance(data.get("ldhName"), str):
        kind = data.get("objectClassName")
        said = f"its objectClassName is {kind!r}" if kind not in ("domain", None) else "it has no ldhName"
        raise RdapError(f"RDAP answer is not a domain object: {said}")
    raw_statuses = [s for s in data.get("status") or [] if isinstance(s, str)]
    domain = RdapDomain(name=data["ldhName"].lower().rstrip("."), rdap_statuses=raw_statuses)
    domain.statuses = [s for s in (epp_status(x) for x in raw_statuses) if s]
    for event in data.get("events") or []:
        if not isinstance(event, dict):
            continue
        attr = _EVENTS.get(str(event.get("eventAction", "")).strip().lower())
        if attr and getattr(domain, attr) is None:
            setattr(domain, attr, iso_timestamp(event.get("eventDate")))
    domain.registrar = _registrar(data.get("entities"))
    domain.nameservers = [
        ns["ldhName"].lower().rstrip(".")
        for ns in data.get("nameservers") or []
        if isinstance(ns, dict) and isinstance(ns.get("ldhName"), str)
    ]
    return domain


def check_rdap_body(content: bytes) -> None:
    """Raise ValueError when a 200 answer is not a JSON object (cut off in transit)."""
    try:
        data = json.loads(content)
    except ValueError as exc:
        raise ValueError(f"JSON answer cut off or unreadable ({len(content)} bytes): {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"JSON answer is a {type(data).__name__}, not an object")


def fetch_rdap_domain(client: httpx.Client, bootstrap: Bootstrap, domain: str) -> dict[str, Any] | None:
    """The registry's RDAP answer for `domain` as JSON, or None for a 404 (not registered).
    Raises NoRdapService (no request made) or RdapError."""
    url = bootstrap.domain_url(domain)
    response = client.get(url, headers={"Accept": RDAP_ACCEPT})
    if response.status_code == 404:
        return None
    if response.status_code != 200:
        raise RdapError(f"RDAP {httpx.URL(url).host}: HTTP {response.status_code}")
    try:
        return response.json()
    except ValueError:
        raise RdapError(f"RDAP {httpx.URL(url).host}: not JSON") from None


def rdap_lookup(client: httpx.Client, bootstrap: Bootstrap, domain: str) -> RdapDomain:
    """Fetch and parse; a 404 gives an `available` RdapDomain."""
    data = fetch_rdap_domain(client, bootstrap, domain)
    if data is None:
        return RdapDomain(name=_ascii(domain), available=True)
    return parse_rdap_domain(data)
