"""`edt sync --feeds`: the free public feeds (`toolkit.store.feed_catalog`) downloaded and ingested.

Each feed's run is one step, all of its file or nothing:

1. download politely: a conditional request (`If-None-Match` / `If-Modified-Since` from the
   last answer, kept in `feed_state`); a 304 writes nothing. The client is the API's, as
   transports (toolkit/sync/remote.py): a pyrate-limiter bucket per host shared by every
   process, httpx-retries' `RetryTransport` with the project's `ContractRetry` (Retry-After
   on 429/503, backoff on 5xx and network errors). A download is written beside its place
   and renamed once whole: a cut connection leaves nothing to ingest.
   Zone feeds (`axfr://server/zone`) take the zone by transfer with dnspython and keep each
   day's names as a snapshot (the backtest replays them); `zonediff` compares it with the last.
2. ingest the file with its adapter (`ingest_file`): every good row in one transaction, with
   the feed's new validators, its `sync_runs` row and the closing of the listings the file
   vouches for and no longer lists (`Feed.scope`): they commit together or not at all.
3. after the feeds, the columnar index is rebuilt and the saved-search alerts run, as after
   an API job.

A feed that is down (a refused connection, a 5xx after the retries) is one line and the
next run tries again; a file the adapter cannot read (its format changed, a truncated
archive) is `format` naming the feed and the line, nothing written; the other feeds still run.
"""

from __future__ import annotations

import asyncio
import gzip
import os
import re
import shutil
import socket
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import format_datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
from httpx_retries import RetryTransport

from ..store.feed_catalog import Feed, feed_table
from ..store.fields import utc_seconds
from ..store.lock import writer_lock
from ..store.writer import close_listings
from ..store.picked import picked
from ..store.wal_checkpoint import deferred_checkpoints
from ..sync.remote import (
    ContractRetry,
    PacedTransport,
    RemoteFailed,
    Traffic,
    network_bound,
    request_timeout,
    shared_limiter,
)
from .common import IngestError
from .feed_file import DEFAULT_BOUNDS, Bounds
from .file_ingest import IngestReport, ingest_file
from .. import errors

__all__ = [
    "FeedReport",
    "FeedDown",
    "FeedClient",
    "run_feeds",
    "run_feed_job",
    "chosen_feeds",
    "feeds_folder",
    "transfer_zone",
    "FEED_REQUESTS_PER_MINUTE",
]

# Requests a minute to one host, shared by every process (a publisher's files are few and big).
FEED_REQUESTS_PER_MINUTE = 6
FEED_RETRIES = 2  # three tries in all; the next scheduled run tries again
USER_AGENT = "expired-domains-toolkit (edt sync --feeds)"


class FeedDown(errors.Unreachable):
    """The feed could not be downloaded this time (network, HTTP error, cut download)."""


@dataclass
class FeedReport:
    feed: str
    status: str  # ok | not_modified | down | format | skipped
    message: str = ""
    ingest: IngestReport | None = None
    closed: int = 0
    requests: int = 0

    @property
    def failed(self) -> bool:
        return self.status in ("down", "format")

    def line(self) -> str:
        if self.status == "ok" and self.ingest is not None:
            i = self.ingest
            closed = f", {self.closed:,} closed" if self.closed else ""
            n = len(i.skipped)
            skipped = f", {n:,} row{'s' if n != 1 else ''} skipped (`edt ingest` lists them)" if n else ""
            return f"{self.feed}: ok: {i.written:,} rows ({i.new:,} new, {i.updated:,} updated){closed}{skipped}" + (
                f"; {self.message}" if self.message else ""
            )
        return (
            f"{self.feed}: {self.status.replace('_', ' ')}: {self.message}"
            if self.message
            else f"{self.feed}: {self.status}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            **picked(self, "feed", "status", "message", "closed", "requests"),
            "ingest": self.ingest.to_dict() if self.ingest else None,
        }


def feeds_folder(db: str | os.PathLike[str]) -> Path:
    """Where the zone snapshots of the mirror `db` live: `data/mirror.feeds/` beside `data/mirror.db`."""
    path = Path(db)
    return path.with_name(path.stem + ".feeds")


def chosen_feeds(names: Iterable[str] | None, feeds: Mapping[str, Feed]) -> list[Feed]:
    """The feeds named (any, enabled or not), or every enabled one; ValueError names an unknown one."""
    if not names:
        return [f for f in feeds.values() if f.enabled]
    names = list(names)
    unknown = [n for n in names if n not in feeds]
    if unknown:
        raise ValueError(f"--feeds: unknown feed {', '.join(unknown)}; choose from {', '.join(feeds)}")
    return [feeds[n] for n in feeds if n in names]


# -- state ------------------------------------------------------------------------------------


def _state(conn: sqlite3.Connection, feed: Feed) -> dict[str, Any]:
    row = conn.execute(
        "SELECT url, etag, last_modified, snapshot FROM feed_state WHERE feed = ?", [feed.name]
    ).fetchone()
    if row is None or row[0] != feed.url:  # validators belong to one address
        return {"snapshot": row[3] if row else None}
    return {"etag": row[1], "last_modified": row[2], "snapshot": row[3]}


def _save_state(
    conn: Any,
    feed: Feed,
    *,
    checked_at: str,
    changed: bool,
    etag: str | None = None,
    last_modified: str | None = None,
    snapshot: str | None = None,
) -> None:
    conn.execute(
        "INSERT INTO feed_state (feed, url, etag, last_modified, checked_at, changed_at, snapshot) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(feed) DO UPDATE SET url = excluded.url, checked_at = excluded.checked_at, "
        "etag = coalesce(excluded.etag, etag), last_modified = coalesce(excluded.last_modified, last_modified), "
        "changed_at = coalesce(excluded.changed_at, changed_at), snapshot = coalesce(excluded.snapshot, snapshot)",
        [feed.name, feed.url, etag, last_modified, checked_at, checked_at if changed else None, snapshot],
    )


def _record_run(conn: Any, feed: Feed, report: FeedReport, started_at: str, finished_at: str) -> None:
    i = report.ingest
    status = "ok" if report.status in ("ok", "not_modified") else "failed"
    conn.execute(
        "INSERT INTO sync_runs (job, started_at, finished_at, status, requests, rows_seen, rows_new, rows_updated, "
        "rows_closed, throttled, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
        [
            feed.name,
            started_at,
            finished_at,
            status,
            report.requests,
            i.written if i else 0,
            i.new if i else 0,
            i.updated if i else 0,
            report.closed,
            None if status == "ok" else report.message,
        ],
    )


def _close_unlisted(conn: Any, feed: Feed, ingested: IngestReport) -> int:
    """The adapter's listings in the feed's scope that this file no longer lists have closed.
    A file that lists nothing vouches for nothing (a failed export, a header alone): it is
    refused whole rather than close every listing of the feed."""
    if feed.scope is None:
        return 0
    ids = [
        r[0]
        for r in conn.execute(
            f"SELECT id FROM listings WHERE origin = :origin AND closed_at IS NULL AND last_seen_at < :observed_at "
            f"AND ({feed.scope})",
            {"origin": f"ingest:{feed.adapter}", "observed_at": ingested.observed_at},
        )
    ]
    if ids and not ingested.written:
        raise IngestError(
            ingested.path,
            None,
            f"the file lists no listing, yet it would close the {len(ids):,} the mirror holds open from it",
            "the publisher's export failed (a header alone): the next run tries again",
        )
    return close_listings(conn, ids, closed_at=ingested.observed_at, commit=False) if ids else 0


# -- downloads --------------------------------------------------------------------------------


@dataclass
class Download:
    path: Path | None  # None: not modified
    etag: str | None = None
    last_modified: str | None = None
    requests: int = 0


@dataclass
class FeedClient:
    """How feeds are fetched: the transport (tests: a local server is real HTTP, so None), the
    pacing (`limiter` "shared": a bucket per host; None: unpaced), the retries' sleep."""

    transport: httpx.AsyncBaseTransport | None = None
    limiter: Any = "shared"
    sleep: Callable[[float], Any] | None = None
    retries: int = FEED_RETRIES
    timeout: float | None = None
    say: Callable[[str], None] | None = None
    zone_transfer: Callable[..., int] | None = None  # (url, dest, *, tsig, timeout) -> names; default transfer_zone
    traffic: Traffic = field(default_factory=Traffic)

    def _client(self, host: str) -> httpx.AsyncClient:
        limiter = shared_limiter(f"feed:{host}", FEED_REQUESTS_PER_MINUTE) if self.limiter == "shared" else self.limiter
        bound = network_bound(self.timeout)
        retry = ContractRetry.policy(
            retries=self.retries,
            backoff=2.0,
            methods=["GET"],
            traffic=self.traffic,
            sleep=self.sleep,
            give_up_after=bound,
            say=self.say,
        )
        paced = PacedTransport(self.transport or httpx.AsyncHTTPTransport(), limiter, self.traffic)
        return httpx.AsyncClient(
            transport=RetryTransport(transport=paced, retry=retry),
            timeout=request_timeout(bound),
            headers={"User-Agent": USER_AGENT},
            follow_redirects=True,
        )

    async def download(
        self, url: str, target: Path, *, etag: str | None, last_modified: str | None, bounds: Bounds = DEFAULT_BOUNDS
    ) -> Download:
        """Download `url` to `target` (conditional on the validators); a body past `bounds.size` is
        refused as it arrives (`IngestError`), whatever its Content-Length said."""
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        partial = target.with_name(target.name + ".partial")
        before = self.traffic.requests
        try:
            async with self._client(urlsplit(url).hostname or "") as client:
                async with client.stream("GET", url, headers=headers) as response:
                    if response.status_code == 304:
                        return Download(None, etag, last_modified, self.traffic.requests - before)
                    if response.status_code >= 400:
                        raise FeedDown(
                            f"{url} answered HTTP {response.status_code} "
                            f"{response.reason_phrase} after {self.traffic.requests - before} tries"
                        )
                    expected = response.headers.get("Content-Length")
                    if expected is not None and expected.isdigit() and int(expected) > bounds.size:
                        raise bounds.too_big(url, None)
                    written = 0
                    with open(partial, "wb") as out:
                        async for chunk in response.aiter_bytes():
                            out.write(chunk)
                            written += len(chunk)
                            if written > bounds.size:
                                raise bounds.too_big(url, None)
                    new_etag, new_modified = response.headers.get("ETag"), response.headers.get("Last-Modified")
        except (httpx.HTTPError, RemoteFailed) as exc:  # RemoteFailed: a host down past the --timeout bound
            partial.unlink(missing_ok=True)
            cut = isinstance(exc, httpx.RemoteProtocolError)
            what = "the download was cut off" if cut else f"{type(exc).__name__}"
            raise FeedDown(f"{url}: {what} ({exc}); nothing was ingested, the next run tries again") from None
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        if (
            expected is not None
            and expected.isdigit()
            and response.headers.get("Content-Encoding") is None
            and written != int(expected)
        ):
            partial.unlink(missing_ok=True)
            raise FeedDown(
                f"{url}: the download stopped at {written:,} of {int(expected):,} bytes; nothing was "
                "ingested, the next run tries again"
            )
        partial.replace(target)
        return Download(target, new_etag, new_modified, self.traffic.requests - before)


def _copy_file(url: str, target: Path, etag: str | None) -> Download:
    """A `file://` feed: copied when its modification time or size changed (its ETag)."""
    source = Path(unquote(urlsplit(url).path))
    try:
        info = source.stat()
    except OSError as exc:
        raise FeedDown(f"{url}: {exc.strerror or exc}") from None
    tag = f'"{info.st_mtime_ns:x}-{info.st_size:x}"'
    modified = format_datetime(datetime.fromtimestamp(int(info.st_mtime), timezone.utc), usegmt=True)
    if tag == etag:
        return Download(None, tag, modified)
    partial = target.with_name(target.name + ".partial")
    shutil.copyfile(source, partial)
    partial.replace(target)
    return Download(target, tag, modified)


def transfer_zone(url: str, dest: Path, *, tsig: str | None = None, timeout: float = 600.0) -> int:
    """Take the zone `axfr://server[:port]/zone` by transfer (dnspython) and write the names it
    delegates (owners of NS records below the apex), one a line, sorted, gzipped, to `dest`
    (beside it, then renamed). Returns how many. `tsig`: "algorithm:name:secret"."""
    import dns.exception
    import dns.query
    import dns.rdatatype
    import dns.tsigkeyring

    parts = urlsplit(url)
    zone = parts.path.strip("/").rstrip(".").lower()
    port = parts.port or 53
    if not parts.hostname or not zone:
        raise ValueError(f"{url}: expected axfr://server/zone (e.g. axfr://zonedata.iis.se/se)")
    keys: dict[str, Any] = {}
    if tsig:
        algorithm, _, rest = tsig.partition(":")
        name, _, secret = rest.partition(":")
        if not (algorithm and name and secret):
            raise ValueError(
                "tsig: expected algorithm:name:secret (e.g. hmac-sha512:tsig-zonedata-ch-public-21-01:...)"
            )
        keys = {"keyring": dns.tsigkeyring.from_text({name: secret}), "keyname": name, "keyalgorithm": algorithm}
    try:
        address = str(socket.getaddrinfo(parts.hostname, port, proto=socket.IPPROTO_TCP)[0][4][0])
        names: set[str] = set()
        for message in dns.query.xfr(address, zone, port=port, lifetime=timeout, relativize=False, **keys):
            for rrset in message.answer:
                if rrset.rdtype == dns.rdatatype.NS:
                    owner = rrset.name.to_text(omit_final_dot=True).lower()
                    if owner != zone:
                        names.add(owner)
    except (OSError, dns.exception.DNSException, EOFError) as exc:
        raise FeedDown(
            f"{url}: the zone transfer failed ({type(exc).__name__}: {exc}); the next run tries again"
        ) from None
    if not names:
        raise FeedDown(f"{url}: the transfer delegated no names; the next run tries again")
    partial = dest.with_name(dest.name + ".partial")
    with gzip.open(partial, "wt", encoding="ascii") as out:
        out.writelines(f"{n}\n" for n in sorted(names))
    partial.replace(dest)
    return len(names)


_SNAPSHOT = re.compile(r"_(\d{4}-\d{2}-\d{2})T(\d{6})\.")


def _prune_snapshots(folder: Path, keep: int, current: Path) -> None:
    """Keep the newest snapshot of each day, for the `keep` newest days (never `current`)."""
    by_day: dict[str, list[Path]] = {}
    for path in folder.iterdir():
        match = _SNAPSHOT.search(path.name)
        if match and not path.name.endswith(".partial"):
            by_day.setdefault(match.group(1), []).append(path)
    days = sorted(by_day, reverse=True)
    for rank, day in enumerate(days):
        files = sorted(by_day[day], reverse=True)
        for index, path in enumerate(files):
            if path != current and (index > 0 or rank >= max(keep, 1)):
                path.unlink(missing_ok=True)


# -- one feed ---------------------------------------------------------------------------------


def _suffix(url: str) -> str:
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    for suffix in (".json.zip", ".csv.zip", ".txt.gz", ".csv.gz", ".json.gz", ".zip", ".gz", ".json", ".csv", ".txt"):
        if name.lower().endswith(suffix):
            return suffix
    return ".txt"


def run_feed(conn: sqlite3.Connection, mirror: Any, feed: Feed, client: FeedClient, folder: Path) -> FeedReport:
    """Download and ingest one feed (the module's steps 1 and 2); never raises for the feed's own trouble."""
    # to the second, as every moment the mirror keeps (the columnar index holds them as such)
    moment = mirror.now().astimezone(timezone.utc).replace(microsecond=0)
    started, day = utc_seconds(moment), moment.strftime("%Y-%m-%d")
    report = FeedReport(feed.name, "ok")
    if not feed.url:
        report.status, report.message = "skipped", f"no address: set url in the config file's [feeds.{feed.name}]"
        return report
    state = _state(conn, feed)
    bounds = Bounds.of(
        feed.max_size_mb, feed.max_field_kb, setting=f"{{key}} in [feeds.{feed.name}] of the config file"
    )
    work = folder / feed.name
    work.mkdir(parents=True, exist_ok=True)
    if feed.is_zone:  # a snapshot a run, its day in its name (snapshot_files reads it; the backtest replays them)
        tld = feed.options.get("tld") or urlsplit(feed.url).path.strip("/") or "zone"
        suffix = ".txt.gz" if feed.url.startswith("axfr://") else _suffix(feed.url)
        target = work / f"{tld}_domains_{moment:%Y-%m-%dT%H%M%S}{suffix}"
    else:
        target = work / f"download{_suffix(feed.url)}"
    try:
        if feed.url.startswith("axfr://"):
            transfer = client.zone_transfer or transfer_zone
            transfer(feed.url, target, tsig=feed.tsig, timeout=network_bound(client.timeout) * 10)
            download = Download(target, requests=1)
        elif feed.url.startswith("file://"):
            download = _copy_file(feed.url, target, state.get("etag"))
        else:
            download = asyncio.run(
                client.download(
                    feed.url, target, etag=state.get("etag"), last_modified=state.get("last_modified"), bounds=bounds
                )
            )
    except IngestError as exc:  # a body past the bounds: refused as it arrived
        report.status, report.message = "format", f"{exc.file}: {exc.problem}; {exc.fix}; nothing of it was written"
        with conn:
            _record_run(conn, feed, report, started, utc_seconds(mirror.now()))
        return report
    except FeedDown as exc:
        report.status, report.message, report.requests = "down", str(exc), client.traffic.requests
        with conn:
            _record_run(conn, feed, report, started, utc_seconds(mirror.now()))
        return report
    except ValueError as exc:  # a bad axfr:// address or tsig in the config
        report.status, report.message = "format", f"[feeds.{feed.name}]: {exc}"
        return report
    report.requests = download.requests
    if download.path is None:
        report.status, report.message = "not_modified", "the publisher's file has not changed since the last run"
        with conn:
            _save_state(conn, feed, checked_at=started, changed=False)
            _record_run(conn, feed, report, started, utc_seconds(mirror.now()))
        return report

    options = dict(feed.options)
    previous = state.get("snapshot")

    def keep_download(writer: Any) -> None:
        """The feed's new validators (and snapshot) and this run, with what the download brought."""
        _save_state(
            writer,
            feed,
            checked_at=started,
            changed=True,
            etag=download.etag,
            last_modified=download.last_modified,
            snapshot=str(target) if feed.is_zone else None,
        )
        _record_run(writer, feed, report, started, utc_seconds(mirror.now()))

    if feed.is_zone:
        if not previous or not Path(previous).is_file():
            report.message = f"first snapshot ({target.name}); names that leave the zone are found from the next run"
            report.ingest = IngestReport(feed.adapter, str(target), f"ingest:{feed.adapter}", started)
            with conn:
                keep_download(conn)
            return report
        options.update(previous=previous, zone_date=day)

    def commit_with_rows(writer: Any, ingested: IngestReport) -> None:
        report.ingest = ingested
        report.closed = _close_unlisted(writer, feed, ingested)
        keep_download(writer)

    try:
        ingest_file(
            mirror, feed.adapter, target, observed_at=moment, on_commit=commit_with_rows, bounds=bounds, **options
        )
    except IngestError as exc:
        member = exc.file.partition("!")[2]  # the file inside a zip archive
        where = feed.url + (f"!{member}" if member else "") + (f": line {exc.line}" if exc.line is not None else "")
        report.status, report.message = "format", f"{where}: {exc.problem}; {exc.fix}; nothing of it was written"
        report.ingest = None
        with conn:
            _record_run(conn, feed, report, started, utc_seconds(mirror.now()))
        if feed.is_zone:
            target.unlink(missing_ok=True)
        return report
    except (TypeError, ValueError) as exc:  # the config's options for the adapter (an unknown one, a bad status)
        report.status, report.message = "format", f"[feeds.{feed.name}] options: {exc}; nothing was written"
        if feed.is_zone:
            target.unlink(missing_ok=True)
        return report
    finally:
        if not feed.is_zone:
            target.unlink(missing_ok=True)
    if feed.is_zone:
        _prune_snapshots(work, feed.keep, target)
    return report


def run_feeds(
    db: str | os.PathLike[str],
    names: Iterable[str] | None = None,
    *,
    config: Mapping[str, Any] | None = None,
    client: FeedClient | None = None,
    clock: Callable[[], datetime] | None = None,
    say: Callable[[str], None] | None = None,
    alerts: bool = True,
    alert_options: Mapping[str, Any] | None = None,
    before_alerts: Callable[[Any, list[FeedReport]], bool] | None = None,
) -> list[FeedReport]:
    """Run the named feeds (default: every enabled one) into the mirror `db`, one after another,
    holding its writer lock; then `before_alerts(mirror, reports)` (True when it wrote: the
    demo's removal once real rows came), rebuild the columnar index and run the alerts
    (`alerts`). `clock` stamps each run (a replay of days); `say` hears each feed's line as it ends."""
    from ..query import Mirror
    from ..sync.alerts import run_alerts

    feeds = chosen_feeds(names, feed_table(config))
    client = client or FeedClient(say=say)
    reports: list[FeedReport] = []
    Path(db).parent.mkdir(parents=True, exist_ok=True)
    with writer_lock(db, "edt sync --feeds"):
        mirror = Mirror(db, clock=clock, create=True)
        if mirror.readonly:
            raise ValueError(f"{mirror.path}: the mirror is open read-only; the feeds cannot be written")
        try:
            conn = mirror.connection()
            with deferred_checkpoints(conn, mirror.path) as checkpoint:  # each day's log copied beside the next step
                for feed in feeds:
                    checkpoint.wait()  # a first big load leaves WAL only with the file to itself
                    client.traffic.requests = 0
                    report = run_feed(conn, mirror, feed, client, feeds_folder(mirror.path))
                    reports.append(report)
                    checkpoint.start()
                    if say is not None:
                        say(report.line())
                wrote = False
                if before_alerts is not None:
                    checkpoint.wait()  # the demo's removal may be such a load too
                    wrote = before_alerts(mirror, reports)
                if wrote or any(
                    r.status == "ok" and r.ingest is not None and (r.ingest.written or r.closed) for r in reports
                ):
                    checkpoint.start()
                    try:
                        mirror.refresh_indexes()
                    except Exception as exc:  # noqa: BLE001 - queries are then answered by SQLite
                        if say is not None:
                            say(f"feeds: the columnar index was not rebuilt ({exc})")
            if alerts and reports:
                line = run_alerts(mirror, job="feeds", **dict(alert_options or {})).line()
                if say is not None:
                    say(line)
        finally:
            mirror.close()
    return reports


def run_feed_job(
    job: str,
    settings: Any,
    *,
    stop: Any = None,
    say: Callable[[str], None] = print,
    after: Callable[[Any, Callable[[str], None]], object] | None = None,
) -> list[FeedReport]:
    """A scheduled run of the feed `job` ("feeds": every enabled one), the scheduler's
    `feed_runner` (toolkit/sync/schedule.py): its lines said, the alerts after it, then
    `after(mirror, say)` when a feed brought rows."""
    from ..query import Mirror
    from ..store.lock import MirrorBusy

    try:
        reports = run_feeds(settings.db, None if job == "feeds" else [job], say=say)
    except MirrorBusy as exc:
        say(f"{job}: {exc}")
        return []
    if after is not None and any(r.status == "ok" and r.ingest is not None for r in reports):
        with Mirror(settings.db) as mirror:
            after(mirror, say)
    return reports
