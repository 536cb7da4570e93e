"""The `names` job: ask each watched name's registry over RDAP what stage it is at.

    from toolkit import Mirror
    from toolkit.enrich.name_checks import check_names
    from toolkit.ingest.lifecycle import predict_drop_window
    report = check_names(Mirror("data/mirror.db"), predict=predict_drop_window)
    print("\\n".join(report.lines()))

The lookups are `edt enrich`'s (`toolkit.enrich.polite.polite_client`: a user agent naming the
toolkit, one request a second per registry, retries with `Retry-After` waited out, a host
given up on after `EDT_TIMEOUT`; the IANA bootstrap and the `enrich_cache`). An answer
younger than `MAX_AGE` (20 hours: a daily run always asks again) is taken from the cache.
What each answer means is `toolkit.sync.watched_names.stage_of`; the days the next stage is
expected come from the registry lifecycle table (`predict`: the CLI and the scheduler hand
in `toolkit.ingest.lifecycle.predict_drop_window`, which this room does not import).

A name whose TLD has no RDAP service is said so once and watched through the mirror's own
sources only (listed anywhere, a drop list); a registry that refuses, throttles past the
retries or answers something else leaves the name's stage as it was, with the error on the
name and in the report. Nothing is guessed. The lookups are made from this machine to the
registry only: no registrar or drop-catcher learns which names are watched.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import httpx

from ..query import Mirror
from ..store.lock import writer_lock
from ..sync.alerts import AlertConfig, alert_config, deliver_alerts, queue_listed_alerts
from ..sync.remote import RemoteFailed
from ..sync.watched_names import (
    STAGE_WORDS,
    Observation,
    Predict,
    name_key,
    record_failure,
    record_observation,
)
from .cache import cached_rdap
from .rdap import BOOTSTRAP_MAX_AGE, NoRdapService, RdapError, load_bootstrap
from .polite import describe_failure, polite_client

__all__ = ["MAX_AGE", "NamesReport", "check_names", "run_names_job"]

MAX_AGE = timedelta(hours=20)


@dataclass
class NamesReport:
    checked: int = 0
    fetched: int = 0  # asked of a registry now (the rest from the cache)
    changed: list[tuple[str, str]] = field(default_factory=list)  # (name, new stage)
    listed: int = 0  # new places a watched name is listed
    no_rdap: list[str] = field(default_factory=list)  # "example.de: no RDAP service for .de"
    errors: list[str] = field(default_factory=list)
    alerts: str = ""
    asked: int = 0  # the watched names this run was to check

    @property
    def failed(self) -> bool:
        """Names were to be checked and not one registry answered (offline, IANA down)."""
        # Every name in a TLD without RDAP is no failure: those are watched through the mirror's own sources.
        asked_none = not self.fetched and len(self.errors) >= self.checked - len(self.no_rdap)
        return bool(self.asked and self.errors) and asked_none

    def lines(self) -> list[str]:
        out = [
            f"names: {self.checked} checked ({self.fetched} asked of their registries), {len(self.changed)} changed "
            f"stage, {self.listed} newly listed"
        ]
        out += [f"  {name}: {STAGE_WORDS.get(stage, stage)}" for name, stage in self.changed]
        out += [f"  {line}; watched through the mirror's listings and drop lists only" for line in self.no_rdap]
        out += [f"  {line}" for line in self.errors]
        if self.alerts:
            out.append(self.alerts)
        return out


def check_names(
    mirror: Mirror,
    names: Iterable[str] | None = None,
    *,
    predict: Predict | None = None,
    transport: httpx.BaseTransport | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    bootstrap_url: str | None = None,
    alerts: AlertConfig | None = None,
    alert_transport: httpx.BaseTransport | None = None,
    say: Callable[[str], None] | None = None,
    give_up_after: float | None = None,
) -> NamesReport:
    """Check every watched name (or `names`), record each change of stage, note where the
    mirror lists them, then deliver the alerts queued (`alerts`: default the config's). A
    registry down past `give_up_after` seconds (default EDT_TIMEOUT, else 60) is given up on."""
    report = NamesReport()
    conn = mirror.connection()
    wanted = [r[0] for r in conn.execute("SELECT name FROM watched_names ORDER BY name")]
    if names is not None:
        chosen = {name_key(n) for n in names}
        unknown = sorted(chosen - set(wanted))
        if unknown:
            raise ValueError(f"not watched: {', '.join(unknown)} (`edt watch name NAME` watches a name)")
        wanted = [n for n in wanted if n in chosen]
    now = mirror.now()
    report.asked = len(wanted)
    with (
        writer_lock(conn, "edt watch names --check"),
        polite_client(transport, sleep=sleep, clock=clock, say=say, give_up_after=give_up_after) as client,
    ):
        bootstrap = None
        if wanted:
            try:
                bootstrap, _ = load_bootstrap(conn, client, now=now, url=bootstrap_url, max_age=BOOTSTRAP_MAX_AGE)
            except (RdapError, httpx.HTTPError, RemoteFailed) as exc:
                report.errors.append(
                    f"the IANA RDAP bootstrap is unavailable ({describe_failure(exc)}): no name was checked"
                )
        if bootstrap is not None:
            for name in wanted:
                report.checked += 1
                try:
                    checked_at, answer, fetched = cached_rdap(conn, client, bootstrap, name, now=now, max_age=MAX_AGE)
                except NoRdapService as exc:
                    record_failure(mirror, name, str(exc), rdap=str(exc))
                    report.no_rdap.append(f"{name}: {exc}")
                    continue
                except (RdapError, httpx.HTTPError, RemoteFailed, ValueError) as exc:
                    record_failure(mirror, name, describe_failure(exc))
                    report.errors.append(f"{name}: {describe_failure(exc)} (its stage is left as it was)")
                    continue
                report.fetched += fetched
                seen = Observation(
                    name,
                    checked_at,
                    answer.available,
                    list(answer.statuses),
                    answer.registered_at,
                    answer.expires_at,
                    answer.registrar,
                    answer.pending_status,
                )
                stage = record_observation(mirror, seen, predict=predict)
                if stage is not None:
                    report.changed.append((name, stage))
    listed = queue_listed_alerts(mirror, job="names")
    report.listed = listed.matches
    delivered = deliver_alerts(mirror, alerts or alert_config(), transport=alert_transport, sleep=sleep)
    delivered.queued, delivered.matches = listed.queued, listed.matches
    report.alerts = delivered.line()
    return report


def run_names_job(
    job: str, settings: Any, *, stop: Any = None, say: Callable[[str], None] = print, predict: Predict | None = None
) -> NamesReport | None:
    """One scheduled `names` run (`edt schedule`, `--once names`): every watched name checked,
    its lines said. None when the mirror is busy (the next run checks)."""
    from ..store.lock import MirrorBusy

    mirror = Mirror(settings.db, create=True)
    try:
        report = check_names(mirror, predict=predict, say=say)
    except MirrorBusy as exc:
        say(f"{job}: {exc}")
        return None
    finally:
        mirror.close()
    for line in report.lines():
        say(line)
    return report
