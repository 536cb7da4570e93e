"""Two zone files (or name lists) of one TLD -> the names that disappeared.

A name delegated in the earlier zone and absent from the later one has left the zone: the
registry holds it (expired, serverHold/clientHold), or it is in redemption, or it was
deleted. That is a *candidate*, not a free name, so each is yielded as a pending-delete
record (`source` "zonediff", `whois_status` the `status=` given, default serverHold: held
out of the zone; `first_disappeared_at` the later zone's day; `dns_status` NXDOMAIN: not
delegated in it; `estimated_drop_date` from `toolkit.lifecycle.predict_drop_date` for that
status, null when the registry gives it no fixed length, e.g. gTLD serverHold).

Only a name the caller's `is_available(name)` hook confirms as available (an RDAP lookup
answering 404, say) becomes a `regfree` listing. The hook returns True (available), False
(registered) or None (cannot tell); without a hook no name is confirmed.

Input: RFC 1035 master files (CZDS `.txt.gz`, `$ORIGIN`, relative and `@` owners, multi-line
records in parentheses; a name counts when it owns an NS record below the apex: glue and
other records are not registrations) or lists of one name a line; the two may be mixed.
The zone's day: `zone_date=`, else a date in the later file's name, else the observation
time. The whole zones are held in memory as sets of names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path
from typing import Any

from ..lifecycle import predict_drop_date
from ..names import split_domain
from ..params import PENDING_STATUSES
from .common import (
    LISTING,
    PENDING,
    BadRow,
    FeedText,
    IngestError,
    Row,
    Skipped,
    clean_domain,
    day_in_name,
    ingest_id,
    observed,
    parse_day,
    pending_record,
    read_feed,
    strict,
)

__all__ = ["zone_names", "zonediff_rows", "parse_zonediff"]

_CLASSES = {"IN", "CH", "HS", "CS"}


def _strip_comment(text: str) -> str:
    quoted = False
    for index, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == ";" and not quoted:
            return text[:index]
    return text


def _is_ttl(token: str) -> bool:
    return token[:1].isdigit() and token.rstrip("smhdwSMHDW").isdigit()


def zone_names(feed: FeedText, on_bad_row: Callable[[Skipped], None] = strict,
               tld: str | None = None) -> tuple[str, dict[str, tuple[int, str]]]:  # fmt: skip
    """(the zone's TLD, {name: (line, line text)}) of a zone file or a list of names."""
    origin: str | None = None
    apex: str | None = tld.strip(".").lower() if tld else None
    owner: str | None = None
    depth = 0
    is_zone = False
    names: dict[str, tuple[int, str]] = {}
    last: tuple[int, str, bool] | None = None

    def absolute(token: str) -> str:
        if token == "@":
            if origin is None:
                raise BadRow("@ used before any $ORIGIN")
            return origin
        if token.endswith("."):
            return token.rstrip(".").lower()
        if origin is None:
            raise BadRow(f"relative name {token!r} before any $ORIGIN")
        return f"{token}.{origin}".lower()

    for line, text, terminated in feed.lines():
        last = (line, text, terminated)
        body = _strip_comment(text)
        if depth > 0:  # inside a multi-line record (an SOA's parentheses)
            depth += body.count("(") - body.count(")")
            continue
        if not body.strip():
            continue
        tokens = body.split()
        depth += body.count("(") - body.count(")")
        try:
            if tokens[0].startswith("$"):
                is_zone = True
                if tokens[0].upper() == "$ORIGIN" and len(tokens) == 2:
                    origin = absolute(tokens[1]) if tokens[1] != "@" else origin
                    apex = apex or origin
                elif tokens[0].upper() != "$TTL":
                    raise BadRow(f"directive {tokens[0]} is not supported (only $ORIGIN and $TTL)")
                continue
            if body[:1].isspace():  # a record of the previous owner
                if owner is None:
                    raise BadRow("a record without an owner name")
                rest = tokens
            elif len(tokens) == 1:  # a name list's line
                name = clean_domain(tokens[0])
                names.setdefault(name, (line, text))
                continue
            else:
                owner, rest = absolute(tokens[0]), tokens[1:]
            while rest and (_is_ttl(rest[0]) or rest[0].upper() in _CLASSES):
                rest = rest[1:]
            if not rest or not rest[0][:1].isalpha() or not rest[0].isalnum():
                raise BadRow(f"not a resource record or a domain name: {text.strip()[:80]!r}")
            rtype = rest[0].upper()
            is_zone = True
            if rtype == "SOA":
                apex = apex or owner
                origin = origin or owner
            elif rtype == "NS" and owner != apex and owner != origin:
                names.setdefault(clean_domain(owner), (line, text))
        except BadRow as exc:
            if not terminated:
                raise IngestError(feed.name, line, f"the last line is incomplete ({exc})",
                                  "the file is truncated: download it again") from None  # fmt: skip
            on_bad_row(Skipped(feed.name, line, str(exc)))
    if depth > 0 or (is_zone and last is not None and not last[2]):
        raise IngestError(feed.name, last[0] if last else None, "the zone file stops in the middle of a record",
                          "the file is truncated: download it again")  # fmt: skip
    if not names:
        raise IngestError(feed.name, None, "no delegated names in the file",
                          "pass a zone file (NS records) or a list of one name a line")  # fmt: skip
    if apex is None:
        apex = next(iter(names)).rpartition(".")[2]
    under = [n for n in names if not n.endswith("." + apex)]
    for name in under:
        line, _ = names.pop(name)
        on_bad_row(Skipped(feed.name, line, f"{name} is not in .{apex}, the zone's TLD"))
    return apex, names


def zonediff_rows(path: str | Path, *, previous: str | Path, observed_at: Any = None,
                  is_available: Callable[[str], bool | None] | None = None, status: str = "serverHold",
                  zone_date: Any = None, tld: str | None = None,
                  on_bad_row: Callable[[Skipped], None] = strict) -> Iterator[Row]:  # fmt: skip
    """The names in `previous` that are gone from `path` (the later zone): pending-delete
    candidates, or regfree listings for those `is_available` confirms."""
    if status not in PENDING_STATUSES:
        raise ValueError(f"status: {status!r} is not one of {', '.join(PENDING_STATUSES)}")
    stamp = observed(observed_at)
    old_feed, new_feed = read_feed(previous), read_feed(path)
    old_tld, old = zone_names(old_feed, on_bad_row, tld)
    new_tld, new = zone_names(new_feed, on_bad_row, tld)
    if old_tld != new_tld:
        raise IngestError(new_feed.name, None, f"this zone is .{new_tld} but {old_feed.name} is .{old_tld}",
                          "diff two files of the same TLD")  # fmt: skip
    if zone_date is not None or day_in_name(path):
        try:
            day = parse_day(zone_date) if zone_date is not None else day_in_name(path)
        except BadRow as exc:
            raise ValueError(f"zone_date: {exc}") from None
        gone_at = f"{day}T00:00:00Z"
    else:
        gone_at = stamp
    evidence = date.fromisoformat(gone_at[:10])
    for name, (line, text) in old.items():
        if name in new:
            continue
        original = {"previous_file": Path(previous).name, "current_file": Path(path).name, "previous_line": text}
        if is_available is not None and is_available(name) is True:
            yield Row(LISTING, old_feed.name, line, {
                "id": ingest_id("regfree", name),
                "name": name,
                "source": "regfree",
                "type": "closeout",
                "currency": None,
                "whois_checked_at": stamp,
                "feed_record": original,
                "availability_check": f"gone from the .{new_tld} zone of {evidence}; is_available() confirmed it",
            })  # fmt: skip
            continue
        drop, reason = predict_drop_date(split_domain(name)[1], status, evidence)
        record = pending_record(name, "zonediff", observed_at=gone_at, status=status,
                                drop=drop.isoformat() if drop else None,
                                reason=f"predicted from leaving the zone on {evidence}: {reason}",
                                original=original, first_disappeared_at=gone_at, dns_status="NXDOMAIN")  # fmt: skip
        yield Row(PENDING, old_feed.name, line, record)


def parse_zonediff(path: str | Path, **options: Any) -> Iterator[dict[str, Any]]:
    """Records of the names gone from the later zone (options as `zonediff_rows`)."""
    for row in zonediff_rows(path, **options):
        yield row.record
