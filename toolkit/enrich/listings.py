"""`enrich(mirror)`: Wayback, RDAP and language figures for the mirror's listings, politely.

    from toolkit import Mirror
    from toolkit.enrich.listings import enrich
    report = enrich(Mirror("data/mirror.db"), params={"tld": ".com"}, limit=500)
    print("\\n".join(report.lines()))

Rows are chosen through the query layer (`mirror.domains_df(params)`, the `/api/domains`
filters: live listings unless `include_closed=1`) and processed in id order.

`language=True` (the optional extra, `toolkit.enrich.language`) reads the latest archived
home page the Wayback step's CDX rows name and writes the detected language; it uses the
cached Wayback answer when it is fresh and names that page, else fetches the CDX rows (and
caches them) even when `wayback=False`, whose columns are then left alone.

Polite by default:
- a User-Agent naming the toolkit and its version, with `(+$EDT_CONTACT)` when you set an
  address the services can reach you at (`user_agent_header`; `EDT_USER_AGENT` replaces it);
- per-host pacing: at least `MIN_INTERVAL[host]` seconds (`DEFAULT_MIN_INTERVAL` for other
  hosts) between two requests to one host; requests are sent one at a time;
- httpx-retries with the project's retry policy (`toolkit.sync.remote.ContractRetry`): after a
  429 or 503 it waits `Retry-After` (60 s when absent), other 5xx, timeouts and bodies cut
  off in transit are retried with exponential backoff; after `retries` attempts the row's
  lookup is reported as an error and the run goes on (after `MAX_CONSECUTIVE_ERRORS`
  failures in a row a source is left alone for the rest of the run);
- a cache, the `enrich_cache` table (`toolkit.enrich.cache`; declared in the schema):
  `(kind, domain) -> fetched_at, outcome, value` with kind `wayback`, `rdap` or `language`,
  outcome `ok`, `available` (RDAP 404) or `undetermined` (language), value the parsed answer
  as JSON. An entry younger than `MAX_AGE[kind]` (Wayback 30 days, RDAP 2 days: registry
  statuses move daily near a drop; language 90 days: an archived page does not change) is
  used instead of a request, so a re-run makes no request for fresh data, and a name listed
  by several platforms is looked up once. Failures are not cached;
- resumable: after each batch (one transaction) the last id done is kept in `mirror_meta`
  under `enrich_progress` with the run's parameters; a run with the same parameters starts
  after it. A run that reaches the end of its rows clears it; `limit` stops early and keeps
  it, so `limit` runs walk the whole selection in steps.

Writing: see `_write_batch` for why this is a targeted UPDATE rather than `save_listings`.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import httpx

from ..sync.remote import Traffic
from ..signals.wayback_content import parking_service
from ..store.fields import LISTING_EXTRA_FIELDS, LISTING_FIELDS, to_db, utc_seconds
from ..store.lock import writer_lock
from ..store.writer import bump_generation
from ..store.meta import PROGRESS_KEY, enrich_signature
from .cache import cache_get, cache_put, cached_rdap
from .language import (
    PAGE_KEY,
    ArchivedPage,
    ArchiveFetchError,
    Detection,
    load_detector,
    page_language,
    wayback_summary_with_page,
)
from .rdap import BOOTSTRAP_MAX_AGE, Bootstrap, NoRdapService, RdapError, load_bootstrap
from .score import quality_score
from .wayback import CDX_URL, WaybackError, WaybackSummary
from .polite import (
    MAX_AGE,
    MAX_CONSECUTIVE_ERRORS,
    Clock,
    Sleep,
    describe_failure,
    polite_client,
)

__all__ = ["PROGRESS_KEY", "EnrichReport", "enrich"]


# -- the cache --------------------------------------------------------------------------


# -- the report -------------------------------------------------------------------------


@dataclass
class EnrichReport:
    selected: int = 0  # rows the filters chose, after the resume point
    processed: int = 0
    updated: int = 0  # rows written
    resumed_after: int | None = None  # the id a previous run stopped after
    finished: bool = False  # every selected row was processed (progress cleared)
    skipped_a_source: bool = False  # a source asked for was left alone for some rows: the next run looks again
    wayback_fetched: int = 0
    wayback_cached: int = 0
    rdap_fetched: int = 0
    rdap_cached: int = 0
    bootstrap: str | None = None  # cached | fetched | stale
    available: list[str] = field(default_factory=list)  # RDAP 404
    pending: Counter = field(default_factory=Counter)  # pending-delete status -> rows
    no_rdap: Counter = field(default_factory=Counter)  # ".de" -> rows
    language: bool = False  # the language step ran
    language_detected: Counter = field(default_factory=Counter)  # "EN" -> rows
    language_undetermined: Counter = field(default_factory=Counter)  # reason -> rows
    language_fetched: int = 0  # archived pages read
    language_cached: int = 0
    errors: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, domain, message)
    messages: list[str] = field(default_factory=list)
    traffic: Traffic = field(default_factory=Traffic)

    def lines(self) -> list[str]:
        t = self.traffic
        out = [
            f"enriched {self.updated} of {self.processed} rows"
            + (f" (resumed after id {self.resumed_after})" if self.resumed_after is not None else "")
            + (
                ""
                if self.finished
                else "; a source was left alone: the next run looks these rows up again"
                if self.skipped_a_source and self.processed == self.selected
                else f"; {self.selected - self.processed} left for the next run"
            ),
            f"wayback: {self.wayback_fetched} fetched, {self.wayback_cached} from cache",
            f"rdap: {self.rdap_fetched} fetched, {self.rdap_cached} from cache"
            + (f", bootstrap {self.bootstrap}" if self.bootstrap else ""),
            f"requests: {t.requests} ({t.throttled} throttled, {t.retried} retried, {t.waited:.0f} s waited)",
        ]
        if self.language:
            out.insert(3, self.language_line())
        if self.pending:
            out.append("pending delete: " + ", ".join(f"{s} {n}" for s, n in sorted(self.pending.items())))
        if self.available:
            out.append(
                f"available (RDAP 404): {len(self.available)}: "
                + ", ".join(self.available[:10])
                + (" ..." if len(self.available) > 10 else "")
            )
        for tld, n in sorted(self.no_rdap.items()):
            out.append(f"no RDAP service for {tld}: {n} row{'' if n == 1 else 's'}")
        out.extend(self.messages)
        for kind, domain, message in self.errors[:20]:
            out.append(f"error: {kind} {domain}: {message}")
        if len(self.errors) > 20:
            out.append(f"... and {len(self.errors) - 20} more errors")
        return out

    def language_line(self) -> str:
        """`language: 5 detected (EN 3, FR 2), 2 undetermined (too short 1, ...); 6 fetched, 1 from cache`"""

        def counts(counter: Counter) -> str:
            return f" ({', '.join(f'{k} {n}' for k, n in sorted(counter.items()))})" if counter else ""

        detected, undetermined = self.language_detected, self.language_undetermined
        return (
            f"language: {sum(detected.values())} detected{counts(detected)}, "
            f"{sum(undetermined.values())} undetermined{counts(undetermined)}; "
            f"{self.language_fetched} fetched, {self.language_cached} from cache"
        )


# -- writing ----------------------------------------------------------------------------

_SCORE_INPUTS = (
    "trust_flow",
    "citation_flow",
    "domain_authority",
    "referring_domains",
    "backlinks_count",
    "ref_domains_edu",
    "ref_domains_gov",
    "is_spammy",
    "age",
    "wayback_snapshots",
)


_KINDS = {**LISTING_FIELDS, **LISTING_EXTRA_FIELDS}


def _write_batch(conn: sqlite3.Connection, updates: dict[int, dict[str, Any]], progress: dict[str, Any] | None) -> int:
    """Write the enrichment columns of a batch, recompute each row's score, record progress:
    one transaction.

    Why an UPDATE and not `save_listings` (the writer of whole records): enrichment owns only
    a few columns, and writing whole records back would (1) set `last_seen_at` to now
    although the listing's source was not seen, (2) clear `closed_at`, reopening a closed
    listing enriched with `include_closed=1`, and (3) put back prices and bids read before
    the fetches, undoing a sync that ran meanwhile (and adding a false history row). So this
    UPDATE sets only the enrichment columns and `score`, with values normalised by the
    writer's own converters (`to_db`) and the writer's `age` rule, reads the score inputs
    inside the same transaction, and bumps the generation as the writer does. `language` is in
    a row's values only when detected, so an undetermined page never clears a known one."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        ids = list(updates)
        current: dict[int, dict[str, Any]] = {}
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            cursor = conn.execute(
                f"SELECT id, {', '.join(_SCORE_INPUTS)} FROM listings WHERE id IN ({','.join('?' * len(chunk))})", chunk
            )
            for row in cursor:
                current[row[0]] = dict(zip(_SCORE_INPUTS, row[1:]))
        written = 0
        for row_id, values in updates.items():
            if row_id not in current or not values:
                continue  # deleted meanwhile, or nothing learnt
            stored = {col: to_db(_KINDS[col], value) for col, value in values.items()}
            stored["score"] = quality_score(**{**current[row_id], **stored})
            conn.execute(
                f"UPDATE listings SET {', '.join(f'{c} = ?' for c in stored)} WHERE id = ?", [*stored.values(), row_id]
            )
            written += 1
        if progress is not None:
            conn.execute(
                "INSERT INTO mirror_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (PROGRESS_KEY, json.dumps(progress, separators=(",", ":"))),
            )
        bump_generation(conn)
        conn.commit()
    except BaseException:
        conn.rollback()
        raise
    return written


def _progress(conn: sqlite3.Connection) -> dict[str, Any] | None:
    row = conn.execute("SELECT value FROM mirror_meta WHERE key = ?", (PROGRESS_KEY,)).fetchone()
    try:
        return json.loads(row[0]) if row else None
    except ValueError:
        return None


def _clear_progress(conn: sqlite3.Connection) -> None:
    with conn:
        conn.execute("DELETE FROM mirror_meta WHERE key = ?", (PROGRESS_KEY,))


# -- the run ----------------------------------------------------------------------------


class _Run:
    """One enrichment run's state: the client, the bootstrap, the counters."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        client: httpx.Client,
        report: EnrichReport,
        *,
        now: datetime,
        max_age: Mapping[str, timedelta],
        cdx_output: str,
        cdx_url: str,
    ) -> None:
        self.conn, self.client, self.report, self.now = conn, client, report, now
        self.checked_at = utc_seconds(now)
        self.today: date = now.date()
        self.max_age = max_age
        self.cdx_output, self.cdx_url = cdx_output, cdx_url
        self.bootstrap: Bootstrap | None = None
        self.failures: Counter = Counter()  # consecutive failures per kind
        self.enabled = {"wayback": True, "rdap": True, "language": False}

    def _failed(self, kind: str, domain: str, message: str) -> None:
        self.report.errors.append((kind, domain, message))
        self.failures[kind] += 1
        if self.failures[kind] >= MAX_CONSECUTIVE_ERRORS:
            self.enabled[kind] = False
            self.report.messages.append(
                f"{kind}: {MAX_CONSECUTIVE_ERRORS} failures in a row, left alone for the rest of this run"
            )

    def wayback(self, domain: str, *, need_page: bool = False) -> tuple[dict[str, Any], ArchivedPage | None] | None:
        """(the listing's Wayback columns, the home page to read for its language), or None
        when the CDX API failed. `need_page`: a cached entry from before pages were kept
        (no `PAGE_KEY`) is not enough."""
        cached = cache_get(self.conn, "wayback", domain, now=self.now, max_age=self.max_age["wayback"])
        if cached and (not need_page or PAGE_KEY in cached[2]):
            self.report.wayback_cached += 1
            value = cached[2]
            return WaybackSummary.from_json(value).fields(self.today), ArchivedPage.from_json(value.get(PAGE_KEY))
        try:
            summary, page = wayback_summary_with_page(self.client, domain, output=self.cdx_output, url=self.cdx_url)
        except (WaybackError, httpx.HTTPError) as exc:
            self._failed("wayback", domain, describe_failure(exc))
            return None
        self.failures["wayback"] = 0
        self.report.wayback_fetched += 1
        if not summary.complete:
            self.report.messages.append(f"wayback: {domain} has more captures than were counted (a lower bound)")
        value = {**summary.to_json(), PAGE_KEY: page.to_json() if page else None}
        cache_put(self.conn, "wayback", domain, fetched_at=self.checked_at, outcome="ok", value=value)
        return summary.fields(self.today), page

    def cached_language(self, domain: str) -> Detection | None:
        cached = cache_get(self.conn, "language", domain, now=self.now, max_age=self.max_age["language"])
        if not cached:
            return None
        self.report.language_cached += 1
        return Detection.from_json(cached[2])

    def language(self, domain: str, page: ArchivedPage | None) -> Detection | None:
        """The language of `page` (None: no capture to read), cached; None when the archive failed."""
        try:
            detection = page_language(self.client, page)
        except (ArchiveFetchError, httpx.HTTPError) as exc:
            self._failed("language", domain, describe_failure(exc))
            return None
        self.failures["language"] = 0
        if page is not None:
            self.report.language_fetched += 1
        value = {**detection.to_json(), "page": page.to_json() if page else None}
        cache_put(
            self.conn,
            "language",
            domain,
            fetched_at=self.checked_at,
            outcome="ok" if detection.language else "undetermined",
            value=value,
        )
        return detection

    def language_fields(self, detection: Detection) -> dict[str, Any]:
        """Counted; only a detected language is written (an undetermined page never clears one)."""
        if detection.language:
            self.report.language_detected[detection.language] += 1
            return {"language": detection.language}
        self.report.language_undetermined[detection.reason or "unknown"] += 1
        return {}

    def row(self, domain: str, *, wayback: bool) -> dict[str, Any]:
        """The columns learnt for one row. `wayback`: write the Wayback columns (the CDX
        rows may be read for the language step alone)."""
        values: dict[str, Any] = {}
        detection = self.cached_language(domain) if self.enabled["language"] else None
        need_page = self.enabled["language"] and detection is None
        if self.enabled["wayback"] and (wayback or need_page):
            got = self.wayback(domain, need_page=need_page)
            if got is not None:
                if wayback:
                    values.update(got[0])
                if need_page:
                    detection = self.language(domain, got[1])
        if self.enabled["rdap"]:
            values.update(self.rdap(domain) or {})
        # nameservers at a parking service mark it parked with or without the archive's captures
        if values.get("archive_years") is not None or "archive_parked" in values or "whois_nameservers" in values:
            _mark_parking(values)
        if detection is not None:
            values.update(self.language_fields(detection))
        return values

    def rdap(self, domain: str) -> dict[str, Any] | None:
        assert self.bootstrap is not None
        try:
            checked_at, result, fetched = cached_rdap(
                self.conn, self.client, self.bootstrap, domain, now=self.now, max_age=self.max_age["rdap"]
            )
        except NoRdapService as exc:
            self.report.no_rdap[f".{exc.tld}"] += 1
            return None
        except (RdapError, httpx.HTTPError) as exc:
            self._failed("rdap", domain, describe_failure(exc))
            return None
        if fetched:
            self.failures["rdap"] = 0
            self.report.rdap_fetched += 1
        else:
            self.report.rdap_cached += 1
        if result.available:
            self.report.available.append(domain)
        elif result.pending_status:
            self.report.pending[result.pending_status] += 1
        return result.fields(checked_at)


def _mark_parking(values: dict[str, Any]) -> None:
    """Nameservers at a parking service (RDAP) make the archive's parked signal too."""
    service = parking_service(values.get("whois_nameservers"))
    if service and not values.get("archive_parked"):
        values["archive_parked"] = 1
        values["archive_parked_reason"] = f"nameservers at {service}"
    elif service and f"nameservers at {service}" not in (values.get("archive_parked_reason") or ""):
        values["archive_parked_reason"] = f"nameservers at {service}; {values['archive_parked_reason']}"


def _selected_rows(mirror: Any, params: Mapping[str, Any] | None) -> list[tuple[int, str]]:
    frame = mirror.domains_df(dict(params or {}), columns=["id", "name"])
    rows = sorted(zip(frame["id"].astype(int).tolist(), frame["name"].tolist()))
    return [(int(i), str(n).strip().lower()) for i, n in rows]


def enrich(
    mirror: Any,
    *,
    wayback: bool = True,
    rdap: bool = True,
    language: bool = False,
    limit: int | None = None,
    params: Mapping[str, Any] | None = None,
    transport: httpx.BaseTransport | None = None,
    sleep: Sleep = time.sleep,
    clock: Clock = time.monotonic,
    resume: bool = True,
    batch_size: int = 25,
    max_age: Mapping[str, timedelta] | None = None,
    cdx_output: str = "json",
    cdx_url: str = CDX_URL,
    bootstrap_url: str | None = None,
    retries: int = 4,
    user_agent: str | None = None,
    on_batch: Callable[[EnrichReport], None] | None = None,
    give_up_after: float | None = None,
    say: Callable[[str], None] | None = None,
) -> EnrichReport:
    """Enrich the listings `params` selects (the `/api/domains` filters), in id order.

    `wayback`: `wayback_snapshots`, `wayback_first_date`, `wayback_last_date`, `age`.
    `rdap`: `whois_status` (EPP names; `["available"]` after a 404), `whois_registrar`,
    `whois_registered_at`, `whois_expires_at`, `whois_last_changed_at`, `whois_nameservers`,
    `whois_checked_at`. `language`: `language` (ISO 639-1, upper case) from the latest archived
    home page, only when detected; needs the `language` extra (LanguageUnavailable, raised
    before any request, names it). `score` is recomputed (`toolkit.enrich.score.quality_score`).
    `limit`: at most this many rows this run (the next run resumes after them).
    `transport`: the innermost httpx transport (tests: `httpx.MockTransport`); `sleep` and
    `clock` serve the pacing and the retry waits. `on_batch` is called after each batch.
    A host that stays unreachable for `give_up_after` seconds raises `HostUnreachable`
    (the batches already written are kept; the next run resumes); `say` hears each retry."""
    if limit is not None and limit < 0:
        raise ValueError("limit must be >= 0")
    if batch_size < 1:
        raise ValueError("batch_size must be >= 1")
    if language:
        load_detector()  # fail before any request when the extra is missing
    ages = {**MAX_AGE, **(max_age or {})}
    report = EnrichReport(language=language)
    conn = mirror.connection()
    with writer_lock(conn, "edt enrich"):  # one load at a time (store/lock.py)
        rows = _selected_rows(mirror, params)
        signature = enrich_signature(params, wayback, rdap, language)
        saved = _progress(conn)
        if resume and saved and saved.get("signature") == signature and saved.get("after_id") is not None:
            report.resumed_after = int(saved["after_id"])
            rows = [r for r in rows if r[0] > report.resumed_after]
        report.selected = len(rows)
        todo = rows if limit is None else rows[:limit]
        now = mirror.now()
        with polite_client(
            transport,
            traffic=report.traffic,
            sleep=sleep,
            clock=clock,
            retries=retries,
            user_agent=user_agent,
            give_up_after=give_up_after,
            say=say,
        ) as client:
            run = _Run(conn, client, report, now=now, max_age=ages, cdx_output=cdx_output, cdx_url=cdx_url)
            # "wayback": the CDX API is consulted (the language step needs its rows)
            run.enabled = {"wayback": wayback or language, "rdap": rdap, "language": language}
            if rdap and todo:
                try:
                    run.bootstrap, report.bootstrap = load_bootstrap(
                        conn, client, now=now, url=bootstrap_url, max_age=BOOTSTRAP_MAX_AGE
                    )
                    if report.bootstrap == "stale":
                        report.messages.append(
                            "rdap: the IANA bootstrap could not be refreshed; an older copy was used"
                        )
                except (RdapError, httpx.HTTPError) as exc:
                    run.enabled["rdap"] = False
                    report.messages.append(
                        f"rdap: skipped, the IANA bootstrap is unavailable ({describe_failure(exc)})"
                    )
            asked = {kind for kind, on in run.enabled.items() if on}
            for start in range(0, len(todo), batch_size):
                batch = todo[start : start + batch_size]
                updates: dict[int, dict[str, Any]] = {}
                for row_id, name in batch:
                    updates[row_id] = run.row(name, wayback=wayback)
                # A source left alone (its bootstrap unavailable, failures in a row) did not look
                # these rows up: the resume point stays before them, so the next run does.
                whole = all(run.enabled[kind] for kind in asked) and not (rdap and run.bootstrap is None and todo)
                progress = (
                    {"signature": signature, "after_id": batch[-1][0], "updated_at": utc_seconds(mirror.now())}
                    if whole
                    else None
                )
                report.skipped_a_source = report.skipped_a_source or not whole
                report.updated += _write_batch(conn, updates, progress)
                report.processed += len(batch)
                if on_batch:
                    on_batch(report)
        if report.processed == report.selected and not report.skipped_a_source:
            _clear_progress(conn)
            report.finished = True
        return report
