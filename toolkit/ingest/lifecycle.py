"""Registry lifecycle policies and the predicted drop date of a pending-delete domain.

A domain that is not renewed walks through registry states (docs/reference/semantics.md,
`/api/pending-delete`): grace, redemption, pending delete, then release. How long each state lasts is
the registry's policy, so the prediction is a table lookup: `POLICIES` maps a TLD (or the
generic `gtld` entry, ICANN's model) to the number of days from the *start* of a WHOIS
status to the day the name is released.

`predict_drop_date(tld, status, evidence)` takes `evidence`, the day the status was first
seen (the pending-delete feed's `first_disappeared_at`), assumes it is the first day of that
status, and adds the remaining days. A status the registry gives no fixed length (a
registrar hold, DENIC's TRANSIT, a TLD missing from the table) yields `(None, reason)`: the
reference schema's "null when the registry timeline is not computable".

`predict_drop_window(tld, status, first_seen, last_before=...)` is the honest form: a status
seen on a day began on that day *or earlier*. With `last_before`, the last day the name was
seen before the status (the last daily zone snapshot that still held it), the status began
between the two observations, so the release lies in `[last_before + days, first_seen +
days]`; the most likely day is `last_before + 1 + days` (the first day the name was not
observed). Measured on .nu (docs/benchmarks.md, "Drop-date backtest"): a name missing from the 12:05 UTC zone
snapshot was deactivated that same morning in 92% of cases, the afternoon before in the rest.
Without `last_before` the status may have begun up to `days` earlier: the window is
`[first_seen, first_seen + days]` and the estimate its last day (the registry's full timeline).

Every row cites where its numbers come from. The figures are the registries' published
defaults; registries change them rarely, and a change is one edit here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from types import MappingProxyType

from ..names import split_domain
from ..query.params import PENDING_STATUSES as STATUSES

__all__ = [
    "Policy",
    "POLICIES",
    "GTLD",
    "DropWindow",
    "policy_for",
    "predict_drop_date",
    "predict_drop_window",
    "name_drop_window",
    "pending_status",
    "is_gtld",
]


@dataclass(frozen=True)
class Policy:
    """One registry's timeline: days from the first day of a status to the release."""

    registry: str
    days: Mapping[str, int]
    release_weekday: int | None = None  # releases happen on this weekday only (0 = Monday)
    note: str = ""
    tlds: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "days", MappingProxyType(dict(self.days)))


GTLD = "gtld"

_POLICY_ROWS: tuple[Policy, ...] = (
    # ICANN model for gTLDs: 30-day Redemption Grace Period after the registrar's delete,
    # then 5 days pendingDelete, then the name is purged. Sources: ICANN Technical Steering
    # Group RGP proposal, http://archive.icann.org/en/meetings/bucharest/redemption-topic.htm ;
    # RFC 3915 (EPP Grace Period Mapping); registrar summary of the same rule,
    # http://www.webnames.ru/en/gtld_delete_renewal.pl . clientHold/serverHold precede the
    # registrar's delete (auto-renew grace, 0-45 days, registrar's choice): not computable.
    Policy("ICANN gTLD (RGP)", {"redemptionPeriod": 35, "pendingDelete": 5}, tlds=(GTLD,)),
    # Nominet .uk: suspended 30 days after expiry, renewable until day 90, then a 5-day
    # pending-deletion period (since 2022). Sources: https://expiry.org.uk/current-process/ ;
    # https://blog.2020media.com/tag/nominet
    Policy("Nominet", {"serverHold": 65, "pendingDelete": 5}, tlds=("uk",)),
    # EURid .eu: deleted names are quarantined 40 days, then released.
    # Source: https://help.eurid.eu/hc/en-gb/articles/9731562911261-Why-is-my-domain-name-in-quarantine-How-can-I-restore-it
    Policy("EURid", {"quarantine": 40}, tlds=("eu",)),
    # DNS Belgium .be: "On the day of the deletion, the domain name is put into a quarantine period
    # of 40 days. After the quarantine period the domain name is released".
    # Sources: https://docs.dnsbelgium.be/be/general/deletes.html (registry) ;
    # https://support.tppwholesale.com.au/hc/en-gb/articles/360009240798--BE ("Redemption Period 40 days")
    Policy("DNS Belgium", {"quarantine": 40}, tlds=("be",)),
    # SIDN .nl: a cancelled name is in quarantine 40 days, then generally available.
    # Source: https://www.sidn.nl/en/about-nl/updating-your-registration/redeeming-a-quarantined-domain-name/
    Policy("SIDN", {"quarantine": 40}, tlds=("nl",)),
    # DENIC .de: a deleted domain has a 30-day Redemption Grace Period, then it is free.
    # TRANSIT (`transition`) ends when DENIC's holder inquiry ends: no fixed length.
    # Source: https://denic.de/en/domains/de-domains/domain-deletion/redemption-grace-period
    Policy("DENIC", {"redemptionPeriod": 30}, note="TRANSIT has no fixed length", tlds=("de",)),
    # AFNIC .fr (and .re .pm .yt .wf .tf): 30-day redemption after deletion; the Whois shows
    # status "redemption" with "pending delete" for the whole period.
    # Sources: https://www.afnic.fr/fr/votre-nom-de-domaine/votre-nom-de-domaine-au-quotidien/supprimez-votre-nom-de-domaine-7.html ;
    # https://www.yumpu.com/fr/document/view/38418526/guide-des-procacdures-du-fr-afnic/16
    Policy("AFNIC", {"redemptionPeriod": 30, "pendingDelete": 30}, tlds=("fr", "re", "pm", "yt", "wf", "tf")),
    # Registro .it: pendingDelete/redemptionPeriod 30 days, then pendingDelete/pendingDelete
    # up to 5 days, then deleted. Sources: https://www.registrazionedomini.info/guide/domini/ciclo-vita-domini-it ;
    # https://guide.hosting.aruba.it/rinnovare-un-dominio/avvisi-e-domini-scaduti/stati-domini-it-mancato-rinnovo.aspx
    Policy("Registro .it", {"redemptionPeriod": 35, "pendingDelete": 5}, tlds=("it",)),
    # Internetstiftelsen .se/.nu: "Expired" 10 days, "Deactivated" (out of the zone) 60 days,
    # then quarantine 7 days, released from 04:00 UTC on the release date.
    # Sources: https://internetstiftelsen.se/en/domains/how-to-register-a-domain-name/se-and-nu-domains-that-may-soon-be-available/ ;
    # https://support.registry.se/en-US/kb/articles/hur-g-r-frisl-ppning-av-dom-ner-till
    Policy("Internetstiftelsen", {"serverHold": 67, "quarantine": 7}, tlds=("se", "nu")),
    # CZ.NIC .cz: 30 days after expiry the name leaves the zone (outzone), day 61 it is deleted.
    # Source: https://www.regzone.cz/novinka/uprava-pravidel-registrace-domeny-cz/
    Policy("CZ.NIC", {"serverHold": 30}, tlds=("cz",)),
    # auDA .au: Expired Hold (serverHold) 30 days, Expired Pending Delete 1 day, purged at the
    # next daily purge. Source: https://www.auda.org.au/au-domain-names/domain-name-help/what-happens-when-domain-name-expires
    Policy("auDA", {"serverHold": 31, "pendingDelete": 1}, tlds=("au",)),
    # CIRA .ca: 30-day redemption after the registrar's delete, then To Be Released for at
    # least 60 hours, released at the weekly Wednesday TBR session.
    # Sources: https://cira.ca/domain-name-life-cycle ;
    # https://domainhelpdesk.freshdesk.com/support/solutions/articles/6000151347-domains-what-happens-when-a-ca-domain-expires-
    Policy("CIRA", {"redemptionPeriod": 33, "pendingDelete": 3}, release_weekday=2, tlds=("ca",)),
    # NASK .pl: an unpaid name is BLOCKED 30 days (renewable), a cancelled one DELETE_BLOCKED
    # 5 days, then it drops. Sources: https://dns.pl/en/domain_name_life_cycle ;
    # https://www.expireddomains.net/article/new-domain-list-deleted-pl-domains-16199.html
    Policy("NASK", {"serverHold": 30, "pendingDelete": 5}, tlds=("pl",)),
    # SWITCH .ch/.li: deleted names wait 40 days before anyone may register them.
    # Source: https://politnet.ch/?p=1379
    Policy("SWITCH", {"quarantine": 40}, tlds=("ch", "li")),
    # NIXI .in: "it must complete the 30-day RGP and the five-day RHP ... released for
    # re-registration 35 days after it has been deleted by a registrar" (registrar's copy of the
    # registry FAQ; NIXI's own page not found). Route 53: restorable 30-60 days after expiry,
    # deleted from the registry on day 65. Sources: https://indomains.net/knowledge-base/domain/registration/ ;
    # https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/in.html ; https://wiki.hexonet.net/wiki/IN
    Policy("NIXI", {"redemptionPeriod": 35, "pendingDelete": 5}, tlds=("in",)),
    # PANDI .id: redemption 30 days, whose WHOIS status is already "pendingDelete" (so both count
    # from its start), then pending delete "1-7 days", then available; registrar pages (PANDI's own
    # page not found). HEXONET lists a 5-day hold; 7 is the latest release.
    # Sources: https://docs.rdash.id/en/domain/life-cycle ;
    # https://websekolah.net/siklus-masa-aktif-domain/ ; https://wiki.hexonet.net/wiki/ID
    Policy("PANDI", {"redemptionPeriod": 37, "pendingDelete": 37}, tlds=("id",)),
    # .us (registrar page; registry's not found): restorable 30-60 days after expiry, deleted from
    # the registry on day 65, i.e. 30 days redemption + 5 days pending delete.
    # Source: https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/us.html
    Policy(".us registry", {"redemptionPeriod": 35, "pendingDelete": 5}, tlds=("us",)),
    # doMEn .me (registrar pages; registry's not found): restorable 30-60 days after expiry, deleted
    # on day 65; RU-CENTER: "PendingDelete Restorable" 30 days, registry deletion takes 35 days.
    # Sources: https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/me.html ;
    # https://www.nic.ru/help/suspending-and-deleting-gtlds-new-gtlds-and-foreign-cctlds-domains_5651.html
    Policy("doMEn", {"redemptionPeriod": 35, "pendingDelete": 5}, tlds=("me",)),
    # NIC.IO .io (registrar page; registry's not found): restorable 45-75 days after expiry,
    # deleted from the registry on day 80 (30 + 5). An older OpenSRS page gives a 30-day quarantine.
    # Source: https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/io.html
    Policy("NIC.IO", {"redemptionPeriod": 35, "pendingDelete": 5}, tlds=("io",)),
    # Verisign .cc/.tv (registrar pages): RedemptionPeriod 30 days, registry deletion takes 35 days;
    # Route 53 .cc: restorable 30-60 days after expiry, deleted on day 65.
    # Sources: https://www.nic.ru/help/suspending-and-deleting-gtlds-new-gtlds-and-foreign-cctlds-domains_5651.html ;
    # https://docs.aws.amazon.com/Route53/latest/DeveloperGuide/cc.html
    Policy("Verisign (.cc, .tv)", {"redemptionPeriod": 35, "pendingDelete": 5}, tlds=("cc", "tv")),
    # InternetNZ .nz: "Pending release lasts 90 days from the date of cancellation", then the name
    # is released first-come-first-served. Source (Domain Name Commission, the .nz regulator):
    # https://dnc.org.nz/tools-and-services/how-do-i-2/register-a-domain-name-in-pending-release/
    Policy("InternetNZ", {"pendingDelete": 90}, note="only the 90-day pending release is published", tlds=("nz",)),
    # EIS (Estonian Internet Foundation) .ee: an expired name stays in the zone 15 days, then is out
    # of it (serverHold) the remaining 30 of its 45, renewable throughout; then it is deleted and goes
    # to the registry's 24-hour .ee auction (since 26 March 2019); a name nobody bids on is free
    # first-come-first-served after it. Sources (the registry's own pages):
    # https://www.internet.ee/eif/news-archive/how-can-you-prevent-your-ee-domain-from-being-unexpectedly-deleted-and-auctioned ;
    # https://inforuum.internet.ee/domain-regulation-and-registrar-contract/domain-name-expiry ;
    # https://www.internet.ee/eif/news/changes-to-release-of-ee-domains
    Policy("EIS", {"serverHold": 30}, note="the release is the day of the 24-hour .ee auction", tlds=("ee",)),
)


def _index(rows: tuple[Policy, ...]) -> dict[str, Policy]:
    table: dict[str, Policy] = {}
    for policy in rows:
        for tld in policy.tlds:
            table[tld] = policy
    return table


# TLD (no dot; `gtld` for every generic TLD without a row of its own) -> its policy.
POLICIES: dict[str, Policy] = _index(_POLICY_ROWS)


def is_gtld(tld: str) -> bool:
    """A generic TLD (an ICANN registry agreement), as opposed to a two-letter country code."""
    last = tld.strip().lower().lstrip(".").rpartition(".")[2]
    return len(last) != 2 and not last.startswith("xn--")


def policy_for(tld: str) -> Policy | None:
    """The policy of `tld` (`.co.uk` -> Nominet's `uk`, `shop` -> the gTLD model), or None."""
    bare = tld.strip().lower().lstrip(".")
    if bare in POLICIES:
        return POLICIES[bare]
    last = bare.rpartition(".")[2]
    if last in POLICIES:
        return POLICIES[last]
    if is_gtld(last):
        return POLICIES[GTLD]
    return None


def _as_date(evidence: date | datetime) -> date:
    if isinstance(evidence, datetime):
        if evidence.tzinfo is not None:
            evidence = evidence.astimezone(timezone.utc)
        return evidence.date()
    return evidence


def _timeline(tld: str, status: str) -> tuple[Policy, int] | str:
    """(the registry's policy, the days from the first day of `status` to the release), or
    why there is no fixed timeline."""
    if status not in STATUSES:
        return f"unknown status {status!r}; expected one of {', '.join(STATUSES)}"
    policy = policy_for(tld)
    bare = tld.strip().lower().lstrip(".")
    if policy is None:
        return f"no published lifecycle for .{bare} in toolkit.ingest.lifecycle.POLICIES"
    days = policy.days.get(status)
    if days is None:
        extra = f" ({policy.note})" if policy.note else ""
        return f"{policy.registry} gives {status} no fixed length for .{bare}{extra}"
    return policy, days


def predict_drop_date(tld: str, status: str, evidence: date | datetime) -> tuple[date | None, str]:
    """(predicted release day, reason), or (None, why it cannot be computed).

    `evidence` is the day `status` was first observed, taken as the first day of that
    status: the prediction is then the latest day the registry's timeline allows (a domain
    first seen in the middle of its redemption period drops earlier).
    """
    timeline = _timeline(tld, status)
    if isinstance(timeline, str):
        return None, timeline
    policy, days = timeline
    drop = _as_date(evidence) + timedelta(days=days)
    reason = f"{policy.registry}: {status} + {days} days"
    if policy.release_weekday is not None and drop.weekday() != policy.release_weekday:
        drop += timedelta(days=(policy.release_weekday - drop.weekday()) % 7)
        reason += ", then the next weekly release"
    return drop, reason


@dataclass(frozen=True)
class DropWindow:
    """The days a release can fall on (both ends included) and the most likely one."""

    start: date
    end: date
    estimate: date
    reason: str

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def as_fields(self) -> dict[str, str]:
        """The pending-delete record's fields."""
        return {
            "estimated_drop_date": self.estimate.isoformat(),
            "drop_window_start": self.start.isoformat(),
            "drop_window_end": self.end.isoformat(),
        }


def _next_weekday(day: date, weekday: int | None) -> date:
    return day if weekday is None else day + timedelta(days=(weekday - day.weekday()) % 7)


def predict_drop_window(
    tld: str, status: str, first_seen: date | datetime, last_before: date | datetime | None = None
) -> tuple[DropWindow | None, str]:
    """(the release window, reason), or (None, why it cannot be computed).

    `first_seen`: the first day the name was observed in `status` (for a zone diff: the first
    snapshot without it). `last_before`: the last earlier day it was observed *not* in that
    status (the last snapshot still holding it); None when unknown."""
    timeline = _timeline(tld, status)
    if isinstance(timeline, str):
        return None, timeline
    policy, days = timeline
    seen = _as_date(first_seen)
    step = timedelta(days=days)
    if last_before is not None:
        before = _as_date(last_before)
        if before >= seen:
            return None, f"last seen before ({before}) is not before first seen ({seen})"
        start, end, likely = before + step, seen + step, before + timedelta(days=1) + step
        reason = (
            f"{policy.registry}: {status} + {days} days; it began between {before} (last seen before) "
            f"and {seen} (first seen), most likely {before + timedelta(days=1)}"
        )
    else:
        start, end, likely = seen, seen + step, seen + step
        reason = (
            f"{policy.registry}: {status} + {days} days; first seen {seen}, it may have begun up to "
            f"{days} days earlier (no earlier observation): the latest day is given"
        )
    if policy.release_weekday is not None:
        start, end, likely = (_next_weekday(d, policy.release_weekday) for d in (start, end, likely))
        reason += ", then the next weekly release"
    return DropWindow(start, end, likely, reason), reason


def pending_status(status: str) -> str:
    """`status` when it is one of the API's pending-delete statuses; else `ValueError`."""
    if status not in STATUSES:
        raise ValueError(f"status: {status!r} is not one of {', '.join(STATUSES)}")
    return status


def name_drop_window(
    name: str, status: str, first_seen: date | datetime, last_before: date | datetime | None = None
) -> tuple[DropWindow | None, str]:
    """`predict_drop_window` for the TLD of `name`."""
    return predict_drop_window(split_domain(name)[1], status, first_seen, last_before)
