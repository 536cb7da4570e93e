"""Zone files (or name lists) of one TLD -> the names that disappeared, with a drop window.

A name delegated in the earlier zone and absent from the later one has left the zone: the
registry holds it (expired, serverHold/clientHold), or it is in redemption, or it was
deleted. That is a *candidate*, not a free name, so each is yielded as a pending-delete
record (`source` "zonediff", `whois_status` the `status=` given, default serverHold: held
out of the zone; `first_disappeared_at` the later zone's day; `dns_status` NXDOMAIN: not
delegated in it). A zone says only that the name left *between* two snapshots, so the drop
is a window: `toolkit.ingest.lifecycle.predict_drop_window` gives `drop_window_start`/`_end` and
`estimated_drop_date`, the most likely day (null when the registry gives the status no fixed
length, e.g. gTLD serverHold).

Two files (`previous=` the older): the window runs from the older file's day (the date in
its name; unknown without one) to the later one's. A replay (`path` a folder or a glob of
daily snapshots, `replay_rows`): each name that leaves and does not come back gets its last
day seen and first day absent; days may be missing (the window widens).

Only a name the caller's `is_available(name)` hook confirms as available (an RDAP lookup
answering 404, say) becomes a `regfree` listing. The hook returns True (available), False
(registered) or None (cannot tell); without a hook no name is confirmed.

Input: RFC 1035 master files (CZDS `.txt.gz`, `$ORIGIN`, relative and `@` owners, multi-line
records in parentheses; a name counts when it owns an NS record below the apex: glue and
other records are not registrations) or lists of one name a line; the two may be mixed.
The zone's day: `zone_date=`, else a date in the later file's name, else the observation
time. The zones are held in memory as sets of names (a replay holds two at a time).
"""

from __future__ import annotations

import glob as globbing
import re
from collections.abc import Callable, Iterator
from datetime import date
from functools import partial
from pathlib import Path
from typing import Any

from .lifecycle import name_drop_window, pending_status
from .common import LISTING, PENDING, BadRow, IngestError, OnBadRow, Row, Skipped, bad_line, ingest_id, observed, strict
from .common import clean_domain, day_in_name, parse_day, pending_record
from .feed_file import Bounds, DEFAULT_BOUNDS, FeedFile, read_feed

__all__ = ["zone_names", "zonediff_rows", "replay_rows", "snapshot_files", "is_replay"]

_CLASSES = {"IN", "CH", "HS", "CS"}
# A name list's line that `clean_domain` would return unchanged (lower case, ASCII, two
# labels or more): taken as is, the per-character parse is for everything else.
_LABEL_RE = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_PLAIN_NAME = re.compile(rf"(?:{_LABEL_RE}\.)+{_LABEL_RE}")


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


def _lines(
    feed: FeedFile, names: dict[str, tuple[int, str]], plain: Callable[[], bool]
) -> Iterator[tuple[int, str, bool]]:
    """`feed`'s lines as `FeedFile.lines` gives them, except that a name list's line that is
    already a clean name (while `plain()`: outside a record) goes straight into `names`."""
    fast = _PLAIN_NAME.fullmatch
    for number, lines, complete in feed.blocks():
        end = len(lines) - 1
        for offset, text in enumerate(lines):
            if fast(text) and len(text) <= 253 and plain():
                if text not in names:
                    names[text] = (number + offset, text)
                continue
            yield number + offset, text[:-1] if text.endswith("\r") else text, complete or offset < end
        if lines:
            last = lines[end]
            if fast(last):
                yield number + end, "", complete  # the last line's end, for the truncation checks


def zone_names(
    feed: FeedFile, on_bad_row: OnBadRow = strict, tld: str | None = None, *, whole: bool = False
) -> tuple[str, dict[str, tuple[int, str]]]:
    """(the zone's TLD, {name: (line, line text)}) of a zone file or a list of names, read a
    line at a time. `whole`: a last line without its line end is a truncated file."""
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

    for line, text, terminated in _lines(feed, names, lambda: depth == 0):
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
            bad_line(feed.name, line, exc, terminated, on_bad_row)
    if whole and last is not None and not last[2]:
        raise IngestError(
            feed.name,
            last[0],
            "the last line is incomplete (no line end)",
            "the file is truncated: download it again (nothing was written)",
        )
    if depth > 0 or (is_zone and last is not None and not last[2]):
        raise IngestError(
            feed.name,
            last[0] if last else None,
            "the zone file stops in the middle of a record",
            "the file is truncated: download it again",
        )
    if not names:
        raise IngestError(
            feed.name,
            None,
            "no delegated names in the file",
            "pass a zone file (NS records) or a list of one name a line",
        )
    if apex is None:
        apex = next(iter(names)).rpartition(".")[2]
    under = [n for n in names if not n.endswith("." + apex)]
    for name in under:
        line, _ = names.pop(name)
        on_bad_row(Skipped(feed.name, line, f"{name} is not in .{apex}, the zone's TLD"))
    return apex, names


def is_replay(path: str | Path) -> bool:
    """Whether `path` names a series of snapshots (a folder or a glob), not one file."""
    text = str(path)
    return Path(text).is_dir() or any(ch in text for ch in "*?[")


def snapshot_files(spec: str | Path) -> list[tuple[date, Path]]:
    """The snapshots a folder or a glob names, by day (the date in each file's name)."""
    text = str(spec)
    paths = (
        sorted(p for p in Path(text).iterdir() if p.is_file())
        if Path(text).is_dir()
        else sorted(Path(p) for p in globbing.glob(text) if Path(p).is_file())
    )
    if len(paths) < 2:
        raise IngestError(
            text,
            None,
            f"{len(paths)} snapshot file(s) there; a replay needs two or more",
            "pass a folder of daily snapshots or a glob such as 'zone/nu_domains_*.txt.gz'",
        )
    days: dict[str, Path] = {}
    for path in paths:
        day = day_in_name(path)
        if day is None:
            raise IngestError(
                str(path),
                None,
                "no date in the file name, so its day is unknown",
                "name each snapshot with its day (nu_domains_2025-12-20.txt.gz)",
            )
        if day in days:
            raise IngestError(
                str(path), None, f"a second snapshot of {day} (the first: {days[day].name})", "keep one snapshot a day"
            )
        days[day] = path
    return [(date.fromisoformat(d), days[d]) for d in sorted(days)]


def _gone_row(
    name: str,
    line: int,
    original: dict[str, Any],
    last: date | None,
    first_absent: date,
    gone_at: str,
    feed_name: str,
    *,
    tld: str,
    status: str,
    stamp: str,
    is_available: Callable[[str], bool | None] | None,
) -> Row:
    """The row of a name gone from the zone (last seen on `last`, absent on `first_absent`)."""
    if is_available is not None and is_available(name) is True:
        return Row(
            LISTING,
            feed_name,
            line,
            {
                "id": ingest_id("regfree", name),
                "name": name,
                "source": "regfree",
                "type": "closeout",
                "currency": None,
                "whois_checked_at": stamp,
                "feed_record": original,
                "availability_check": f"gone from the .{tld} zone of {first_absent}; is_available() confirmed it",
            },
        )
    window, reason = name_drop_window(name, status, first_absent, last)
    where = f"last in the zone on {last}, gone on {first_absent}" if last else f"gone from the zone on {first_absent}"
    fields = window.as_fields() if window else {}
    record = pending_record(
        name,
        "zonediff",
        observed_at=gone_at,
        status=status,
        drop=fields.get("estimated_drop_date"),
        reason=f"predicted from the zone ({where}): {reason}",
        original=original,
        first_disappeared_at=gone_at,
        dns_status="NXDOMAIN",
        window=(fields.get("drop_window_start"), fields.get("drop_window_end")),
    )
    return Row(PENDING, feed_name, line, record)


def zonediff_rows(
    path: str | Path,
    *,
    previous: str | Path | None = None,
    observed_at: Any = None,
    is_available: Callable[[str], bool | None] | None = None,
    status: str = "serverHold",
    zone_date: Any = None,
    tld: str | None = None,
    on_bad_row: OnBadRow = strict,
    bounds: Bounds = DEFAULT_BOUNDS,
) -> Iterator[Row]:
    """The names in `previous` that are gone from `path` (the later zone): pending-delete
    candidates, or regfree listings for those `is_available` confirms. Without `previous`,
    `path` is a folder or a glob of daily snapshots, replayed in order (`replay_rows`)."""
    if previous is None:
        if zone_date is not None:
            raise ValueError("zone_date: a replay takes each snapshot's day from its file name")
        yield from replay_rows(
            path, observed_at=observed_at, is_available=is_available, status=status, tld=tld, bounds=bounds
        )
        return
    pending_status(status)
    stamp = observed(observed_at)
    old_feed, new_feed = read_feed(previous, bounds), read_feed(path, bounds)
    old_tld, old = zone_names(old_feed, on_bad_row, tld)
    new_tld, new = zone_names(new_feed, on_bad_row, tld)
    if old_tld != new_tld:
        raise IngestError(
            new_feed.name,
            None,
            f"this zone is .{new_tld} but {old_feed.name} is .{old_tld}",
            "diff two files of the same TLD",
        )
    if zone_date is not None or day_in_name(path):
        try:
            day = parse_day(zone_date) if zone_date is not None else day_in_name(path)
        except BadRow as exc:
            raise ValueError(f"zone_date: {exc}") from None
        gone_at = f"{day}T00:00:00Z"
    else:
        gone_at = stamp
    evidence = date.fromisoformat(gone_at[:10])
    before = day_in_name(previous)
    last = date.fromisoformat(before) if before and before < evidence.isoformat() else None
    gone = partial(_gone_row, tld=new_tld, status=status, stamp=stamp, is_available=is_available)
    for name, (line, text) in old.items():
        if name in new:
            continue
        original = {"previous_file": Path(previous).name, "current_file": Path(path).name, "previous_line": text}
        yield gone(name, line, original, last, evidence, gone_at, old_feed.name)


def _snapshot_strict(problem: Skipped) -> None:
    raise IngestError(
        problem.file,
        problem.line,
        problem.reason,
        "a snapshot is a zone file or a list of one name a line: check that this file is one, "
        "and undamaged (nothing was written)",
    )


def replay_rows(
    spec: str | Path,
    *,
    observed_at: Any = None,
    is_available: Callable[[str], bool | None] | None = None,
    status: str = "serverHold",
    tld: str | None = None,
    bounds: Bounds = DEFAULT_BOUNDS,
) -> Iterator[Row]:
    """Replay daily snapshots (a folder or a glob; `.gz` read as is; days may be missing):
    each name that leaves the zone and does not come back is a candidate, with the last day
    it was seen (L) and the first day it was absent (A), so its release window is
    [L + days, A + days]. Every snapshot is read before anything is yielded, strictly: a
    line that is not a name, a truncated file, or a file of another TLD is an `IngestError`
    naming the file and the line. Two snapshots are held in memory at a time."""
    pending_status(status)
    stamp = observed(observed_at)
    files = snapshot_files(spec)
    gone: dict[str, tuple[date, date, Path, Path, int, str]] = {}  # name -> L, A, their files, L's line
    zone_tld: str | None = None
    prev: dict[str, tuple[int, str]] | None = None
    prev_day, prev_path = files[0]
    for day, path in files:
        this_tld, names = zone_names(read_feed(path, bounds), _snapshot_strict, tld or zone_tld, whole=True)
        if zone_tld is None:
            zone_tld = this_tld
        elif this_tld != zone_tld:
            raise IngestError(
                str(path),
                None,
                f"this zone is .{this_tld} but {files[0][1].name} is .{zone_tld}",
                "replay snapshots of one TLD",
            )
        if prev is not None:
            for name in [n for n in gone if n in names]:  # back in the zone: renewed, not dropping
                del gone[name]
            for name in prev.keys() - names.keys():
                line, _ = prev[name]
                gone[name] = (prev_day, day, prev_path, path, line, prev[name][1])
        prev, prev_day, prev_path = names, day, path
    row = partial(_gone_row, tld=zone_tld or "", status=status, stamp=stamp, is_available=is_available)
    for name in sorted(gone):
        last, absent, last_path, absent_path, line, text = gone[name]
        original = {"previous_file": last_path.name, "current_file": absent_path.name, "previous_line": text}
        yield row(name, line, original, last, absent, f"{absent}T00:00:00Z", str(last_path))
