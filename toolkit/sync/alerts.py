"""Saved-search alerts: after every sync job, each saved search (the app's watchlist) finds
the listings new to it and delivers them to the log, to a file and to a webhook.

Nothing is lost and nothing is sent twice: finding the matches and queueing them in
`alert_outbox` happen in one transaction that also moves the search's `alerted_until`; each
channel then stamps the row when it delivered. A webhook that is down keeps its rows pending
until a later run delivers them. Webhook bodies are signed as GitHub signs its webhooks: an
HMAC-SHA256 of the body with your secret, hex, in `X-EDT-Signature-256: sha256=...`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import csv
import hashlib
import hmac
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from httpx_retries import RetryTransport

from ..config import config_file, config_path, is_web_address, user_path
from ..errors import BadInput
from ..query import Mirror
from ..store.fields import iso_timestamp
from ..store.lock import mirror_file
from .outbox import MATCH_FIELDS, outbox_add
from .remote import NOT_SENT, RETRY_STATUSES, ContractRetry, WaitTooLong

__all__ = [
    "AlertConfig",
    "AlertReport",
    "alert_config",
    "queue_alerts",
    "replay_alerts",
    "deliver_alerts",
    "run_alerts",
    "sign",
]

log = logging.getLogger("toolkit.sync.alerts")
SIGNATURE_HEADER = "X-EDT-Signature-256"
LOG_LINES = 10  # alerts said one line each in one run's log; the rest in one line


@dataclass(frozen=True)
class AlertConfig:
    file: str | None = None  # .csv or .jsonl: every match appended
    webhook_url: str | None = None
    webhook_secret: str | None = field(default=None, repr=False)  # never shown
    retries: int = 3

    def __repr__(self) -> str:
        return f"AlertConfig(file={self.file!r}, webhook_url={self.webhook_url!r}, secret={'set' if self.webhook_secret else 'unset'})"


def alert_config() -> AlertConfig:
    """From the config file's `[alerts]` table (`file`, `webhook_url`, `webhook_secret`) and the
    environment (`EDT_ALERT_FILE`, `EDT_WEBHOOK_URL`, `EDT_WEBHOOK_SECRET`, which win); a `~`
    in the file's path is the home folder."""
    conf = config_file().get("alerts", {})
    url, where = (
        (os.environ["EDT_WEBHOOK_URL"], "EDT_WEBHOOK_URL")
        if os.environ.get("EDT_WEBHOOK_URL")
        else (conf.get("webhook_url"), f"[alerts] webhook_url in {config_path()}")
    )
    if url and not is_web_address(str(url)):  # else every run fails to post, forever
        raise BadInput(
            f"{where}: {url!r} is not an http:// or https:// address; write it as https://hooks.example.com/edt "
            "or remove it"
        )
    return AlertConfig(
        file=user_path(os.environ.get("EDT_ALERT_FILE") or conf.get("file")),
        webhook_url=str(url) if url else None,
        webhook_secret=os.environ.get("EDT_WEBHOOK_SECRET") or conf.get("webhook_secret"),
    )


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class AlertReport:
    queued: int = 0  # new outbox rows (one per search with new matches)
    matches: int = 0
    logged: int = 0
    filed: int = 0
    posted: int = 0
    pending: int = 0  # rows still waiting for a channel (e.g. the webhook was down)
    errors: list[str] = field(default_factory=list)

    def line(self) -> str:
        text = (
            f"alerts: {self.queued} new ({self.matches} listings), {self.logged} logged, {self.filed} filed, "
            f"{self.posted} posted, {self.pending} pending"
        )
        return text + (f"; {self.errors[-1]}" if self.errors else "")


def queue_alerts(mirror: Mirror, *, job: str = "") -> AlertReport:
    """For each saved search, the listings first seen since it last alerted: queued in the
    outbox with the search's watermark moved, in one transaction per search. The mirror's
    clock is the moment of the run: listings first seen after it are not news yet."""
    report = AlertReport()
    conn = mirror.connection()
    until = iso_timestamp(mirror.now().replace(microsecond=0))  # stored timestamps have whole seconds
    for name, params, since in _searches(conn):
        if since >= until:
            continue
        try:
            frame = mirror.domains_df({**params, "seen_after": since}, columns=MATCH_FIELDS)
        except Exception as exc:  # a search saved under older rules: report it, alert the others
            report.errors.append(f"saved search {name!r}: {exc}")
            continue
        _queue(conn, report, name, params, since, frame[frame["first_seen_at"] <= until], job, until)
    return report


def _searches(conn: Any) -> list[tuple[str, dict[str, Any], str]]:
    """Each saved search: its name, parameters and the moment its news start after."""
    rows = conn.execute("SELECT name, params, created_at, alerted_until FROM saved_searches ORDER BY name").fetchall()
    return [(name, json.loads(params), alerted_until or created_at) for name, params, created_at, alerted_until in rows]


def _queue(
    conn: Any,
    report: AlertReport,
    name: str,
    params: dict[str, Any],
    since: str,
    frame: Any,
    job: str,
    now: str,
    *,
    logged: bool = False,
) -> str:
    """One outbox row for `frame`'s matches and the search's watermark moved to the newest,
    in one transaction; returns the watermark (`since` when there was nothing). `logged`:
    the row counts as already said in the log (a replayed run's)."""
    if frame.empty:
        return since
    matches = json.loads(frame[MATCH_FIELDS].sort_values("id").to_json(orient="records"))
    newest = max(m["first_seen_at"] for m in matches)
    payload = {
        "event": "new_domains",
        "search": name,
        "params": params,
        "job": job,
        "since": since,
        "until": newest,
        "created_at": now,
        "matches": matches,
    }
    with conn:
        outbox_add(conn, name, payload, now, logged=logged)
        conn.execute("UPDATE saved_searches SET alerted_until = ? WHERE name = ?", [newest, name])
    report.queued += 1
    report.matches += len(matches)
    return newest


def _log_line(search: str, matches: int, payload: dict[str, Any]) -> str:
    if payload.get("event") == "name_stage":
        return f"watched name {payload['name']}: {payload['said']}"
    if payload.get("event") == "name_listed":
        return f"watched name {payload['name']}: listed: " + "; ".join(m["where"] for m in payload["matches"])
    names = ", ".join(m["name"] for m in payload["matches"][:10])
    more = f" and {matches - 10} more" if matches > 10 else ""
    return f"saved search {search!r}: {matches} new listing(s): {names}{more}"


def _append_file(path: str, payload: dict[str, Any]) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"search": payload["search"], **m} for m in payload["matches"]]
    if target.suffix.lower() == ".csv":
        new = not target.exists() or target.stat().st_size == 0
        with target.open("a", newline="", encoding="utf-8") as fh:
            writer = csv.DictWriter(fh, fieldnames=["search", *MATCH_FIELDS], extrasaction="ignore")
            if new:
                writer.writeheader()
            writer.writerows(rows)
    else:
        with target.open("a", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _file_problem(path: str, exc: OSError) -> str:
    """One line for an alerts file that cannot be written (no errno numbers)."""
    from ..formats import file_in_the_way, not_a_folder

    if file_in_the_way(path) is not None:
        said = not_a_folder("alerts file", path)
    else:
        said = f"alerts file {path}: cannot write it ({exc.strerror or exc}); fix [alerts] file or EDT_ALERT_FILE"
    return f"{said} (the alerts are kept and filed by the next run)"


def _webhook_client(
    retries: int, transport: httpx.BaseTransport | None, sleep: Callable[[float], None] | None
) -> httpx.Client:
    # A receiver's 429/503 is waited out as its Retry-After says; without one, backoff.
    # Only a post that never left is sent again: one the receiver may have taken is not (at most once).
    # A receiver asking for more than a minute gets the alert on the next run: a run never sleeps for a day.
    retry = ContractRetry.policy(
        retries=retries,
        backoff=0.5,
        methods=["POST"],
        sync_sleep=sleep,
        default_wait=None,
        exceptions=NOT_SENT,
        longest_wait=_LONGEST_WAIT_S,
    )
    return httpx.Client(
        transport=RetryTransport(transport=transport or httpx.HTTPTransport(), retry=retry),
        timeout=httpx.Timeout(10.0, connect=5.0),
    )


def deliver_alerts(
    mirror: Mirror,
    config: AlertConfig,
    *,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] | None = None,
) -> AlertReport:
    """Deliver every outbox row to each configured channel not yet stamped for it. One run
    delivers at a time per mirror (a second waits for the first, then finds its rows
    stamped): two jobs ending together never post an alert twice."""
    from filelock import FileLock, Timeout

    path = mirror_file(mirror.connection())
    if not path:  # an in-memory mirror: one process
        return _deliver(mirror, config, transport=transport, sleep=sleep)
    try:
        with FileLock(f"{path}.alerts.lock", timeout=_DELIVERY_WAIT_S):
            return _deliver(mirror, config, transport=transport, sleep=sleep)
    except Timeout:
        report = AlertReport()
        report.errors.append(f"another run has been delivering alerts for {_DELIVERY_WAIT_S} s; it delivers these")
        return report


_DELIVERY_WAIT_S = 300
_LONGEST_WAIT_S = 60.0


def _deliver(
    mirror: Mirror,
    config: AlertConfig,
    *,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] | None = None,
) -> AlertReport:
    report = AlertReport()
    conn = mirror.connection()
    # A search registered through POST /api/webhooks posts to its own URL; others to the configured one.
    rows = conn.execute(
        "SELECT o.id, o.search, o.matches, o.payload, o.logged_at, o.filed_at, o.posted_at, "
        "coalesce(s.webhook_url, ?), CASE WHEN s.webhook_url IS NOT NULL THEN s.webhook_secret ELSE ? END "
        "FROM alert_outbox o LEFT JOIN saved_searches s ON s.name = o.search "
        "WHERE o.logged_at IS NULL OR (? AND o.filed_at IS NULL) "
        "OR (o.posted_at IS NULL AND coalesce(s.webhook_url, ?) IS NOT NULL) ORDER BY o.id",
        [config.webhook_url, config.webhook_secret, bool(config.file), config.webhook_url],
    ).fetchall()
    client = _webhook_client(config.retries, transport, sleep) if any(r[7] for r in rows) else None
    file_failed = False
    down: set[str] = set()  # hosts whose receiver refused this run's post
    try:
        for outbox_id, search, matches, payload_json, logged_at, filed_at, posted_at, url, secret in rows:
            payload = json.loads(payload_json)
            now = iso_timestamp(mirror.now())
            if logged_at is None:
                if report.logged < LOG_LINES:
                    log.warning("%s", _log_line(search, matches, payload))
                elif report.logged == LOG_LINES:
                    waiting = sum(1 for r in rows if r[4] is None) - LOG_LINES
                    log.warning(
                        "... and %d more alert(s): `edt watch show SEARCH` lists a saved search's, `edt watch names` "
                        "the watched names'",
                        waiting,
                    )
                with conn:
                    conn.execute("UPDATE alert_outbox SET logged_at = ? WHERE id = ?", [now, outbox_id])
                report.logged += 1
            if config.file and filed_at is None and not file_failed:
                try:
                    _append_file(config.file, payload)
                except OSError as exc:  # kept in the outbox: filed by the next run that can write there
                    file_failed = True
                    report.errors.append(_file_problem(config.file, exc))
                else:
                    with conn:
                        conn.execute("UPDATE alert_outbox SET filed_at = ? WHERE id = ?", [now, outbox_id])
                    report.filed += 1
            if client is not None and url and posted_at is None and urlsplit(url).netloc in down:
                continue  # its receiver did not take the run's earlier post: kept for the next run
            if client is not None and url and posted_at is None:
                body = payload_json.encode()
                headers = {
                    "Content-Type": "application/json",
                    "User-Agent": "edt-alerts",
                    "X-EDT-Event": payload.get("event", "new_domains"),
                    "X-EDT-Delivery": str(outbox_id),
                }
                if secret:
                    headers[SIGNATURE_HEADER] = sign(secret, body)
                unanswered = None
                try:
                    response = client.post(url, content=body, headers=headers)
                    ok, error = response.is_success, f"HTTP {response.status_code}"
                    if response.status_code in RETRY_STATUSES:  # still busy after the retries: the rest wait too
                        down.add(urlsplit(url).netloc)
                except NOT_SENT as exc:
                    ok, error = False, f"{type(exc).__name__}: {exc}"
                    down.add(urlsplit(url).netloc)  # one wait for a receiver that is down, not one an alert
                except WaitTooLong as exc:  # answered "not now": not taken, so sent again next run
                    ok, error = False, str(exc)
                    down.add(urlsplit(url).netloc)
                except httpx.HTTPError as exc:  # sent, no answer: it may have arrived, so it is not sent again
                    ok, error = True, None
                    unanswered = f"{type(exc).__name__}: {exc}".rstrip(": ")
                with conn:
                    if unanswered:
                        report.errors.append(
                            f"webhook: alert {outbox_id} was sent and {urlsplit(url).netloc} did not answer ({unanswered}); "
                            "counted as delivered, not sent again (its X-EDT-Delivery header is its number)"
                        )
                    if ok:
                        conn.execute(
                            "UPDATE alert_outbox SET posted_at = ?, attempts = attempts + 1, last_error = NULL "
                            "WHERE id = ?",
                            [now, outbox_id],
                        )
                        report.posted += 1
                    else:
                        conn.execute(
                            "UPDATE alert_outbox SET attempts = attempts + 1, last_error = ? WHERE id = ?",
                            [error, outbox_id],
                        )
                        report.errors.append(f"webhook: {error} (kept; retried on the next run)")
    finally:
        if client is not None:
            client.close()
    report.pending = conn.execute(
        "SELECT count(*) FROM alert_outbox o LEFT JOIN saved_searches s ON s.name = o.search "
        "WHERE (? AND o.filed_at IS NULL) OR (o.posted_at IS NULL AND coalesce(s.webhook_url, ?) IS NOT NULL)",
        [bool(config.file), config.webhook_url],
    ).fetchone()[0]
    return report


def replay_alerts(path: str, runs: list[tuple[str, str]]) -> AlertReport:
    """Queue the alerts as they would have been queued after each of `runs`, (moment as
    ISO 8601 UTC, job) oldest first: a mirror filled at once with what several runs would
    have brought (`edt demo --days N`) gets the outbox of those runs. Each run's news are
    the matches first seen since the search's last alert and live at the run (on the rows'
    values now). Each counts as said in the log at its run (those runs are the past: the next
    job does not print them again); `edt watch show` lists them, and the next run files and
    posts them where an alerts file or webhook is set."""
    report = AlertReport()
    if not runs:
        return report
    last = datetime.fromisoformat(runs[-1][0].replace("Z", "+00:00"))
    mirror = Mirror(path, clock=lambda: last)
    try:
        conn = mirror.connection()
        for name, params, since in _searches(conn):
            try:  # every match since, once (closed ones too): each run then takes its own
                frame = mirror.domains_df(
                    {**params, "seen_after": since, "include_closed": "1"}, columns=[*MATCH_FIELDS, "closed_at"]
                )
            except Exception as exc:  # noqa: BLE001
                report.errors.append(f"saved search {name!r}: {exc}")
                continue
            live_until = frame["closed_at"].fillna(frame["auction_end_date"]).fillna("9999-12-31T23:59:59Z")
            for moment, job in runs:
                if since >= moment:
                    continue
                seen = frame["first_seen_at"]
                chosen = frame[(seen > since) & (seen <= moment) & (live_until > moment)]
                since = _queue(conn, report, name, params, since, chosen, job, moment, logged=True)
    finally:
        mirror.close()
    return report


def queue_listed_alerts(mirror: Mirror, *, job: str = "") -> AlertReport:
    """`watched_names.queue_listed`, counted as alerts: one per watched name newly listed
    (`queued`), its new places (`matches`)."""
    from .watched_names import queue_listed

    conn = mirror.connection()
    before = conn.execute("SELECT count(*) FROM alert_outbox").fetchone()[0]
    places = queue_listed(mirror, job=job)
    return AlertReport(queued=conn.execute("SELECT count(*) FROM alert_outbox").fetchone()[0] - before, matches=places)


def run_alerts(
    mirror: Mirror,
    config: AlertConfig | None = None,
    *,
    job: str = "",
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] | None = None,
) -> AlertReport:
    """Queue then deliver: what runs after every sync job (the saved searches' new matches,
    and the watched names the mirror now lists)."""
    queued = queue_alerts(mirror, job=job)
    names = queue_listed_alerts(mirror, job=job)
    delivered = deliver_alerts(mirror, config or alert_config(), transport=transport, sleep=sleep)
    delivered.queued, delivered.matches = queued.queued + names.queued, queued.matches + names.matches
    delivered.errors = queued.errors + delivered.errors
    return delivered
