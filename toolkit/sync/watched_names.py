"""Names watched through their registration lifecycle: the `watched_names` and `name_stages`
tables (schema v16), of which this module is the only writer.

A watched name is any registrable name, listed anywhere or not. Each observation of its
registry state (`Observation`, made by `toolkit.enrich.name_checks` from RDAP) is read as a
*stage*; a change of stage is kept as history (`name_stages`) and queued as an alert in the
same transaction, so each is told once. The stages, in the order a name that is not renewed
walks them:

| stage | read from |
|---|---|
| `registered` | a registry answer with none of the statuses below and an expiry date ahead |
| `expired` | `autoRenewPeriod` (a gTLD in its auto-renew grace), or the expiry date passed (with or without a registry hold: .se/.nu "deactivated", .cz outzone, .pl blocked) |
| `redemption` | `redemptionPeriod` (gTLDs show `pendingDelete` beside it for the whole period) |
| `pending_delete` | `pendingDelete`, `quarantine` (EURid, SIDN, SWITCH, DNS Belgium) or `transition` (DENIC) |
| `available` | the registry's RDAP answers 404: not registered |
| `renewed` | registered again after `expired` / `redemption` / `pending_delete`, the same registration date: its holder kept it |
| `re_registered` | registered after `available`, or with a newer registration date: someone else has it (caught before it was ever seen available) |

Registries that give no `status` at all (Norid .no) or no expiry event read as
`registered` until their answer changes. The next stage and the days it is expected come
from the registry's lifecycle (`predict`, `toolkit.ingest.lifecycle.predict_drop_window`,
handed in by the caller), recomputed at every observation from the first day the current
pending status was seen and the observation before it.

    from toolkit.sync.watched_names import watch_names, watched_names
    watch_names(mirror, ["kettleharbor.com"], note="for the shop")
    watched_names(mirror)         # each name: stage, since, next stage, window, where listed
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

from ..names import ascii_name, registrable_name, split_domain
from ..query import Mirror
from ..store.fields import utc_stamp
from ..store.held import held
from .outbox import MATCH_FIELDS, outbox_add

__all__ = [
    "STAGES",
    "STAGE_WORDS",
    "Observation",
    "name_key",
    "window_text",
    "watch_names",
    "unwatch_names",
    "watched_names",
    "name_stages",
    "watching",
    "stage_of",
    "record_observation",
    "record_failure",
    "queue_listed",
    "Predict",
]

STAGES = ("registered", "expired", "redemption", "pending_delete", "available", "renewed", "re_registered")
STAGE_WORDS = {
    "registered": "registered",
    "expired": "expired",
    "redemption": "in redemption",
    "pending_delete": "pending delete",
    "available": "available (not registered)",
    "renewed": "renewed by its holder",
    "re_registered": "re-registered",
}
_DROPPING = ("expired", "redemption", "pending_delete")
_HELD = ("renewed", "re_registered")  # registered, with news: a later plain "registered" is no change
# (tld, pending status, first day seen, the observation before it) -> (window or None, reason)
Predict = Callable[..., tuple[Any, str]]


@dataclass
class Observation:
    """What the registry said of a name at `checked_at` (UTC ISO 8601)."""

    name: str
    checked_at: str
    available: bool = False
    statuses: list[str] = field(default_factory=list)  # EPP names
    registered_at: str | None = None
    expires_at: str | None = None
    registrar: str | None = None
    pending: str | None = None  # the pending-delete status the statuses show (toolkit.enrich.rdap.pending_status)


def _now(mirror: Mirror) -> str:
    return utc_stamp(mirror.now())


def name_key(text: Any) -> str:
    """A watched name as stored: trimmed, lower case, without a final dot, an IDN in its xn--
    form (`registrable_name`'s form, without its checks)."""
    try:
        return ascii_name(str(text))
    except ValueError:
        return str(text).strip().lower().rstrip(".")


def window_text(start: str | None, end: str | None, sep: str = " - ") -> str | None:
    """The days a stage is expected: one day, or `start - end`; None when not known."""
    if not start:
        return None
    return start if start == end else f"{start}{sep}{end}"


def stage_of(seen: Observation, previous: dict[str, Any] | None = None) -> str:
    """The stage an observation shows, given the name's stored row (None: first seen)."""
    if seen.available:
        return "available"
    statuses = set(seen.statuses)
    if "redemptionPeriod" in statuses:
        return "redemption"
    if statuses & {"pendingDelete", "quarantine", "transition"}:
        return "pending_delete"
    if "autoRenewPeriod" in statuses or (seen.expires_at and seen.expires_at <= seen.checked_at):
        return "expired"
    before, earlier = (previous or {}).get("stage"), (previous or {}).get("registered_at")
    newer = bool(seen.registered_at and earlier and seen.registered_at > earlier)  # a new holder's registration
    if before == "available" or (before in (*_DROPPING, *_HELD) and newer):
        return "re_registered"
    if before in _DROPPING:
        return "renewed"
    return before if before in _HELD else "registered"


# -- the watch list ---------------------------------------------------------------------------


def watch_names(mirror: Mirror, names: Iterable[str], note: str | None = None) -> list[str]:
    """Watch each name (checked: a registrable name, else ValueError naming it); a name watched
    already keeps its history and gets the note when one is given. Returns the names, cleaned."""
    cleaned = list(dict.fromkeys(registrable_name(n) for n in names))
    if note is not None and not isinstance(note, str):
        raise ValueError(f"note must be a text (got {type(note).__name__})")
    now = _now(mirror)
    conn = mirror.connection()
    with conn:
        for name in cleaned:
            # Where it is listed as it is watched is said at once (the Watchlist's "Listed"), not
            # alerted: only a place it appears at later is news.
            listed = None
            if not conn.execute("SELECT 1 FROM watched_names WHERE name = ?", [name]).fetchone():
                listed = json.dumps(
                    [{"key": p["key"], "where": p["where"], "seen_at": now} for p in _places(conn, name, now)]
                )
            conn.execute(
                "INSERT INTO watched_names (name, note, added_at, listed) VALUES (?, ?, ?, ?) ON CONFLICT(name) DO "
                "UPDATE SET note = coalesce(excluded.note, watched_names.note)",
                [name, note, now, listed],
            )
    return cleaned


def unwatch_names(mirror: Mirror, names: Iterable[str]) -> list[str]:
    """Stop watching; returns those that were watched (their history goes with them)."""
    conn = mirror.connection()
    gone = []
    with conn:
        for name in names:
            cleaned = name_key(name)
            if conn.execute("DELETE FROM watched_names WHERE name = ?", [cleaned]).rowcount:
                conn.execute("DELETE FROM name_stages WHERE name = ?", [cleaned])
                gone.append(cleaned)
    return gone


def watching(mirror: Mirror, names: Iterable[str]) -> set[str]:
    """Those of `names` that are watched (a page's rows, to mark them), as name_key gives them."""
    wanted = list({name_key(n) for n in names})
    return held(mirror.connection(), "watched_names", "name", wanted) if wanted else set()


def watched_names(mirror: Mirror) -> list[dict[str, Any]]:
    """Every watched name, its stage and what is expected next, in name order."""
    cursor = mirror.connection().execute("SELECT * FROM watched_names ORDER BY name")
    columns = [d[0] for d in cursor.description]
    rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
    for row in rows:
        row["statuses"] = json.loads(row["statuses"]) if row["statuses"] else []
        row["listed"] = json.loads(row["listed"]) if row["listed"] else []
    return rows


def name_stages(mirror: Mirror, name: str | None = None) -> list[dict[str, Any]]:
    """The stages each watched name (or `name`) went through, oldest first."""
    where, args = ("WHERE name = ?", [name]) if name else ("", [])
    cursor = mirror.connection().execute(f"SELECT * FROM name_stages {where} ORDER BY name, observed_at, id", args)
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


# -- observations -----------------------------------------------------------------------------


def _expectation(
    name: str,
    stage: str,
    seen: Observation,
    pending: str | None,
    since: str | None,
    after: str | None,
    predict: Predict | None,
) -> tuple[str | None, str | None, str | None, str]:
    """(next stage, expected from, expected to, why) for a name in `stage`."""
    if stage == "available":
        return None, None, None, "not registered: anyone may register it now"
    if stage in ("registered", *_HELD):
        if not seen.expires_at:
            return "expired", None, None, "the registry publishes no expiry date"
        day = seen.expires_at[:10]
        return "expired", day, day, f"expires {day} unless renewed"
    if pending is None:  # expired without a registry status of the lifecycle (a gTLD's auto-renew grace)
        return (
            "redemption",
            None,
            None,
            (
                "the registrar decides when it deletes an expired name (0-45 days for "
                "gTLDs); the redemption period follows"
            ),
        )
    if predict is None:
        return "available", None, None, "no lifecycle table given"
    tld = split_domain(name)[1].lstrip(".")
    first = date.fromisoformat((since or seen.checked_at)[:10])
    window, reason = predict(
        tld, pending, first, date.fromisoformat(after[:10]) if after and after[:10] < (since or "")[:10] else None
    )
    if window is None:
        return "available", None, None, reason
    # Not before the status was first seen: the drop cannot come before what announces it.
    start = min(max(window.start, first), window.end)
    return "available", start.isoformat(), window.end.isoformat(), reason


def _said(stage: str, previous: str | None, expected: tuple[Any, ...]) -> str:
    text = STAGE_WORDS[stage] if previous is None else f"{STAGE_WORDS[previous]} -> {STAGE_WORDS[stage]}"
    next_stage, start, end, _ = expected
    when = window_text(start, end)
    if next_stage and when:
        text += f"; {STAGE_WORDS[next_stage]} expected {when}"
    return text


def record_observation(mirror: Mirror, seen: Observation, *, predict: Predict | None = None) -> str | None:
    """Keep what the registry said of a watched name: its stage (history and an alert when it
    changed; a first observation is alerted only when the name is already on its way out),
    its pending status and the next stage expected. One transaction. Returns the new stage
    when it changed (or on the first observation), else None."""
    conn = mirror.connection()
    cursor = conn.execute("SELECT * FROM watched_names WHERE name = ?", [seen.name])
    row = cursor.fetchone()
    if row is None:
        raise ValueError(f"{seen.name} is not watched")
    previous = dict(zip([d[0] for d in cursor.description], row))
    stage = stage_of(seen, previous)
    pending = None if seen.available else seen.pending
    if pending and pending == previous["pending"]:
        since, after = previous["pending_since"], previous["pending_after"]
    else:
        since, after = (seen.checked_at, previous["checked_at"]) if pending else (None, None)
    expected = _expectation(seen.name, stage, seen, pending, since, after, predict)
    changed = stage != previous["stage"]
    now = _now(mirror)
    with conn:
        conn.execute(
            "UPDATE watched_names SET stage = ?, stage_since = ?, statuses = ?, pending = ?, pending_since = ?, "
            "pending_after = ?, registered_at = ?, expires_at = ?, registrar = ?, checked_at = ?, next_stage = ?, "
            "expected_from = ?, expected_to = ?, expected_reason = ?, rdap = 'ok', last_error = NULL WHERE name = ?",
            [
                stage,
                seen.checked_at if changed else previous["stage_since"],
                json.dumps(seen.statuses),
                pending,
                since,
                after,
                seen.registered_at,
                seen.expires_at,
                seen.registrar,
                seen.checked_at,
                *expected,
                seen.name,
            ],
        )
        if not changed:
            return None
        conn.execute(
            "INSERT INTO name_stages (name, stage, previous, observed_at, statuses, expires_at, registered_at, "
            "expected_from, expected_to) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                seen.name,
                stage,
                previous["stage"],
                seen.checked_at,
                json.dumps(seen.statuses),
                seen.expires_at,
                seen.registered_at,
                expected[1],
                expected[2],
            ],
        )
        if previous["stage"] is not None or stage in (*_DROPPING, "available"):
            said = _said(stage, previous["stage"], expected)
            row = {
                **dict.fromkeys(MATCH_FIELDS),
                "name": seen.name,
                "source": "rdap",
                "type": stage,
                "auction_end_date": expected[2],
                "first_seen_at": seen.checked_at,
                "stage": stage,
                "previous": previous["stage"],
                "statuses": seen.statuses,
                "expires_at": seen.expires_at,
                "expected_from": expected[1],
                "expected_to": expected[2],
                "expected_reason": expected[3],
            }
            outbox_add(
                conn,
                f"watch:{seen.name}",
                {
                    "event": "name_stage",
                    "search": f"watch:{seen.name}",
                    "name": seen.name,
                    "stage": stage,
                    "previous": previous["stage"],
                    "said": said,
                    "job": "names",
                    "created_at": now,
                    "matches": [row],
                },
                now,
            )
    return stage


def record_failure(mirror: Mirror, name: str, error: str, *, rdap: str | None = None) -> None:
    """A check that gave no answer: said on the name, its stage left as it was (never a guess).
    `rdap`: why the registry cannot be asked at all (a TLD without RDAP)."""
    conn = mirror.connection()
    with conn:
        conn.execute(
            "UPDATE watched_names SET last_error = ?, rdap = coalesce(?, rdap) WHERE name = ?",
            [None if rdap else error, rdap, name],
        )


# -- listed anywhere ----------------------------------------------------------------------------


def listed_words(source: str | None, kind: str | None, end: str | None) -> str:
    """Where a watched name is listed, in words: `NameSilo auction, ends 27 Nov 2026 22:55 UTC`,
    `pending delete (ccTLD weekly list), drops 3 Dec 2026`."""
    from ..sources import source_by_slug
    from ..store.labels import TYPE_WORDS, pipeline_name

    at = datetime.fromisoformat(end.replace("Z", "+00:00")) if end else None
    if kind == "pending_delete":
        return f"pending delete ({pipeline_name(source)}), drops " + (
            f"{at.day} {at:%b %Y}" if at else "on a day not known"
        )
    found = source_by_slug(source or "")
    said = f"{found.name if found else source} {TYPE_WORDS.get(kind or '', ('listing', ''))[0]}"
    return said + (f", ends {at.day} {at:%b %Y %H:%M} UTC" if at else "")


def _places(conn: Any, name: str, now: str) -> list[dict[str, Any]]:
    """Where the mirror lists `name` now: its live listings of any platform, its pending-delete rows."""
    places = [
        {
            "key": f"listing:{r[0]}",
            "where": listed_words(r[2], r[3], r[6]),
            "id": r[0],
            "name": name,
            "source": r[2],
            "type": r[3],
            "effective_price": r[4],
            "currency": r[5],
            "auction_end_date": r[6],
            "purchase_url": r[7],
            "first_seen_at": r[8],
            "score": None,
            "trust_flow": None,
            "citation_flow": None,
        }
        for r in conn.execute(
            "SELECT id, name, source, type, effective_price, currency, auction_end_date, purchase_url, "
            "first_seen_at FROM listings WHERE name = ? AND closed_at IS NULL AND live_until > ? ORDER BY id",
            [name, now],
        )
    ]
    places += [
        {
            "key": f"pending:{r[0]}",
            "where": listed_words(r[2], "pending_delete", r[3]),
            "id": r[0],
            "name": name,
            "source": r[2],
            "type": "pending_delete",
            "effective_price": None,
            "currency": None,
            "auction_end_date": r[3],
            "purchase_url": None,
            "first_seen_at": r[1],
            "score": None,
            "trust_flow": None,
            "citation_flow": None,
        }
        for r in conn.execute(
            "SELECT id, first_seen_at, source, estimated_drop_date FROM pending_delete "
            "WHERE domain = ? COLLATE NOCASE ORDER BY id",
            [name],
        )
    ]
    return places


def queue_listed(mirror: Mirror, *, job: str = "") -> int:
    """Each watched name the mirror now lists (a live listing of any platform, a pending-delete
    row) where it had not been seen listed: kept on the name and queued as one alert per name,
    in one transaction each. Returns how many places were new."""
    conn = mirror.connection()
    now = _now(mirror)
    found = 0
    for name, listed in conn.execute("SELECT name, listed FROM watched_names ORDER BY name").fetchall():
        known = json.loads(listed) if listed else []
        keys = {entry["key"] for entry in known}
        places = _places(conn, name, now)
        new = [p for p in places if p["key"] not in keys]
        if not new:
            continue
        with conn:
            conn.execute(
                "UPDATE watched_names SET listed = ? WHERE name = ?",
                [json.dumps([*known, *({"key": p["key"], "where": p["where"], "seen_at": now} for p in new)]), name],
            )
            outbox_add(
                conn,
                f"watch:{name}",
                {
                    "event": "name_listed",
                    "search": f"watch:{name}",
                    "name": name,
                    "job": job,
                    "created_at": now,
                    "matches": new,
                },
                now,
            )
        found += len(new)
    return found
