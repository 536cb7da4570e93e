"""Saved searches and a shortlist, for the app's Watchlist page.

Two small tables of the mirror (schema v5): `saved_searches` keeps named `/api/domains`
parameter sets, `shortlist` keeps listing ids with a note. This module is the only writer
of those two tables (store/writer.py writes everything else); each write is one
transaction on `mirror.connection()`.

A saved search counts its *new matches*: listings it matches that the mirror first saw
after the search was last opened (or saved, if never opened), through the `seen_after`
filter. Timestamps come from `mirror.now()`, so a mirror with a fixed clock stamps fixed
times. Watchlist writes do not change `mirror.generation()` (no listing changed), so do
not cache these reads by it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from ..config import is_web_address
from ..errors import ApiError
from ..query import Mirror
from ..store.fields import iso_timestamp
from ..store.held import held
from .. import errors

__all__ = [
    "has_search",
    "register_webhook",
    "shortlisted",
    "search_words",
    "NAME_MAX_LENGTH",
    "save_search",
    "save_searches_at",
    "saved_searches",
    "open_search",
    "search_params",
    "new_matches_params",
    "mark_seen",
    "delete_search",
    "shortlist_add",
    "shortlist_note",
    "shortlist_remove",
    "shortlist",
]

NAME_MAX_LENGTH = 80


def _stamp(mirror: Mirror) -> str:
    """Now as the mirror stores timestamps: UTC, whole seconds."""
    return iso_timestamp(mirror.now().replace(microsecond=0))


def _name(name: Any) -> str:
    text = name.strip() if isinstance(name, str) else ""
    if not text:
        raise ValueError("name must be a non-empty text")
    if len(text) > NAME_MAX_LENGTH:
        raise ValueError(f"name must be at most {NAME_MAX_LENGTH} characters (got {len(text)})")
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text):
        raise ValueError("name must be one line of text, without control characters")
    return text


def _as_text(value: Any) -> str:
    """A parameter value as its query-string text."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (list, tuple, set)):
        return ",".join(map(str, value))
    return str(value)


def _listing_id(listing_id: Any) -> int:
    if isinstance(listing_id, bool):
        raise ValueError(f"listing_id must be a positive whole number (got {listing_id!r})")
    try:
        value = int(str(listing_id).strip())
    except ValueError:
        raise ValueError(f"listing_id must be a positive whole number (got {listing_id!r})") from None
    if value <= 0:
        raise ValueError(f"listing_id must be a positive whole number (got {listing_id!r})")
    return value


def _note(note: Any) -> str:
    if note is None:
        return ""
    if not isinstance(note, str):
        raise ValueError(f"note must be a text (got {type(note).__name__})")
    return note


# -- saved searches -------------------------------------------------------------------


class SearchExists(errors.BadInput):
    """`save_search(..., replace=False)` on a name already saved."""


def save_search(mirror: Mirror, name: str, params: Mapping[str, str], *, replace: bool = True) -> None:
    """Save `params` (`/api/domains` query parameters) under `name`.

    The name is stripped and must have 1 to 80 characters (else ValueError). The
    parameters are checked by running the search first, so a bad filter raises the query
    layer's ApiError (422 naming the field) and nothing is saved. Saving an existing name
    replaces its parameters and keeps its `created_at` and `last_opened_at`; with
    `replace=False` it raises `SearchExists` instead (what `edt watch add` does without
    `--replace`).
    """
    name = _name(name)
    mirror.search_domains({**params, "per_page": "1"})  # a bad filter (or one given twice) raises here
    stored = {str(k): _as_text(v) for k, v in params.items() if v is not None and _as_text(v).strip()}
    conn = mirror.connection()
    with conn:
        if not replace:
            row = conn.execute("SELECT params FROM saved_searches WHERE name = ?", [name]).fetchone()
            if row is not None:
                saved = " ".join(f"{k}={v}" for k, v in json.loads(row[0]).items()) or "all listings"
                raise SearchExists(
                    f"a saved search is already named {name!r} ({saved}); "
                    "pass --replace to replace it, or choose another name"
                )
        conn.execute(
            "INSERT INTO saved_searches (name, params, created_at, last_opened_at) VALUES (?, ?, ?, NULL) "
            "ON CONFLICT(name) DO UPDATE SET params = excluded.params",
            [name, json.dumps(stored, ensure_ascii=False, sort_keys=True), _stamp(mirror)],
        )


def save_searches_at(path: str, searches: Mapping[str, Mapping[str, str]], at: datetime) -> None:
    """Save `searches` ({name: params}) as if saved at `at` (a mirror filled with several
    days at once, `edt demo --days N`): new matches are those first seen after it. A search
    of the same name is replaced whole, its creation moved to `at`."""
    mirror = Mirror(path, clock=lambda: at, create=True)
    try:
        for name in searches:
            delete_search(mirror, name)
        for name, params in searches.items():
            save_search(mirror, name, params)
    finally:
        mirror.close()


def saved_searches(mirror: Mirror) -> list[dict[str, Any]]:
    """Every saved search by name: `name`, `params` (a dict), `created_at`,
    `last_opened_at` (None until opened), `new_matches`, the listings it matches
    that were first seen after it was last opened (else saved), and `matches`, every
    listing it matches now.

    A saved filter the query layer no longer accepts raises its ApiError."""
    conn = mirror.connection()
    rows = conn.execute("SELECT name, params, created_at, last_opened_at FROM saved_searches ORDER BY name").fetchall()
    out = []
    for name, params_json, created_at, last_opened_at in rows:
        params = json.loads(params_json)
        since = last_opened_at or created_at
        total = mirror.search_domains({**params, "seen_after": since, "per_page": "1"})["meta"]["total"]
        matches = mirror.search_domains({**params, "per_page": "1"})["meta"]["total"]
        out.append(
            {
                "name": name,
                "params": params,
                "created_at": created_at,
                "last_opened_at": last_opened_at,
                "new_matches": int(total),
                "matches": int(matches),  # every live listing it matches now, new or not
            }
        )
    return out


def search_params(mirror: Mirror, name: str) -> dict[str, str]:
    """The saved parameters of `name`, changing nothing. KeyError if no search has that name."""
    row = mirror.connection().execute("SELECT params FROM saved_searches WHERE name = ?", [_name(name)]).fetchone()
    if row is None:
        raise KeyError(f"no saved search named {name!r}")
    return json.loads(row[0])


def has_search(mirror: Mirror, name: str) -> bool:
    """Whether a search is saved under `name` (spaces around it ignored)."""
    text = name.strip() if isinstance(name, str) else ""
    return mirror.connection().execute("SELECT 1 FROM saved_searches WHERE name = ?", [text]).fetchone() is not None


def new_matches_params(entry: Mapping[str, Any]) -> dict[str, str]:
    """The `/api/domains` parameters of a saved search's new matches (an entry of
    `saved_searches`): its filters, first seen after it was last marked seen (else saved)."""
    return {**entry["params"], "seen_after": entry["last_opened_at"] or entry["created_at"]}


def mark_seen(mirror: Mirror, name: str, upto: str | None = None) -> None:
    """Mark the new matches of `name` seen: those first seen up to `upto` (an ISO timestamp,
    default now) stop counting as new. The app passes the moment it listed them, so a listing
    that arrived after the user looked stays new. KeyError if no search has that name."""
    name = _name(name)
    stamp = _stamp(mirror) if upto is None else iso_timestamp(upto)
    if stamp is None:
        raise ValueError(f"upto must be an ISO 8601 timestamp (got {upto!r})")
    stamp = stamp[:19] + "Z"
    conn = mirror.connection()
    with conn:
        if not conn.execute("UPDATE saved_searches SET last_opened_at = ? WHERE name = ?", [stamp, name]).rowcount:
            raise KeyError(f"no saved search named {name!r}")


def open_search(mirror: Mirror, name: str) -> dict[str, str]:
    """The saved parameters of `name`, marking its new matches seen now (what `edt watch
    show` does once it has printed them). KeyError if no search has that name."""
    params = search_params(mirror, name)
    mark_seen(mirror, name)
    return params


def delete_search(mirror: Mirror, name: str) -> bool:
    """Forget the saved search `name` and its alerts not yet delivered (a search registered
    over HTTP took its webhook with it: they would go to the configured one); False if there
    was none."""
    forgotten = _forget(mirror, "saved_searches", "name", name, _name)
    if forgotten:
        conn = mirror.connection()
        with conn:
            conn.execute("DELETE FROM alert_outbox WHERE search = ?", [_name(name)])
    return forgotten


def _forget(mirror: Mirror, table: str, column: str, key: Any, clean: Callable[[Any], Any]) -> bool:
    """Delete the row of `key` (as `clean` gives it); False when there was none, or `key` is
    not one at all (`clean` raises ValueError)."""
    try:
        key = clean(key)
    except ValueError:
        return False
    conn = mirror.connection()
    with conn:
        return conn.execute(f"DELETE FROM {table} WHERE {column} = ?", [key]).rowcount > 0


# -- shortlist ------------------------------------------------------------------------


def shortlist_add(mirror: Mirror, listing_id: int, note: str = "") -> bool:
    """Put a listing on the shortlist; True if it was not there yet. Adding one already
    there keeps its `added_at` and, when `note` is given, replaces its note."""
    listing_id, note = _listing_id(listing_id), _note(note)
    now = _stamp(mirror)
    conn = mirror.connection()
    with conn:
        added = (
            conn.execute(
                "INSERT INTO shortlist (listing_id, note, added_at, updated_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT(listing_id) DO NOTHING",
                [listing_id, note, now, now],
            ).rowcount
            > 0
        )
        if not added and note:
            conn.execute("UPDATE shortlist SET note = ?, updated_at = ? WHERE listing_id = ?", [note, now, listing_id])
    return added


def shortlist_note(mirror: Mirror, listing_id: int, note: str) -> None:
    """Replace the note of a shortlisted listing. KeyError if it is not on the shortlist."""
    listing_id, note = _listing_id(listing_id), _note(note)
    conn = mirror.connection()
    with conn:
        changed = conn.execute(
            "UPDATE shortlist SET note = ?, updated_at = ? WHERE listing_id = ?", [note, _stamp(mirror), listing_id]
        ).rowcount
    if not changed:
        raise KeyError(f"listing {listing_id} is not on the shortlist")


def shortlist_remove(mirror: Mirror, listing_id: int) -> bool:
    """Take a listing off the shortlist; False if it was not on it."""
    return _forget(mirror, "shortlist", "listing_id", listing_id, _listing_id)


def search_words(params: Mapping[str, str]) -> str:
    """A saved search's filters as a sentence (`French names, Trust Flow 15+`): what the app
    and `edt watch list` call it."""
    from ..query.params import DOMAIN_PARAMS, caption, parse_params

    try:
        return caption(DOMAIN_PARAMS, parse_params(DOMAIN_PARAMS, params, strict=False))
    except ApiError:
        return "filters this version no longer reads"


def shortlisted(mirror: Mirror, listing_ids: Iterable[int]) -> set[int]:
    """Those of `listing_ids` on the shortlist (a page's rows, to mark them)."""
    wanted = [int(i) for i in listing_ids]
    return held(mirror.connection(), "shortlist", "listing_id", wanted) if wanted else set()


def shortlist(mirror: Mirror) -> list[dict[str, Any]]:
    """The shortlist, most recently added first: `listing_id`, `note`, `added_at`,
    `updated_at`, and the listing's `name` and `source` (None when the mirror has no such
    listing, or the plan may not read it)."""
    rows = (
        mirror.connection()
        .execute("SELECT listing_id, note, added_at, updated_at FROM shortlist ORDER BY added_at DESC, listing_id DESC")
        .fetchall()
    )
    out = []
    for listing_id, note, added_at, updated_at in rows:
        try:
            record = mirror.get_domain(listing_id)["data"]
        except ApiError:
            record = {}
        out.append(
            {
                "listing_id": listing_id,
                "note": note or "",
                "added_at": added_at,
                "updated_at": updated_at,
                "name": record.get("name"),
                "source": record.get("source"),
            }
        )
    return out


def register_webhook(
    mirror: Mirror, url: str, params: Mapping[str, str], *, secret: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """A saved search whose new matches are POSTed to `url` after each sync job (the served
    replica's `POST /api/webhooks`; delivered by `toolkit.sync.alerts`, signed with `secret`)."""
    from urllib.parse import urlsplit

    parts = urlsplit(str(url or "").strip())
    if not is_web_address(parts.geturl()):
        raise ValueError("url: give an http:// or https:// address for the webhook")
    conn = mirror.connection()
    if name is None:  # the first free "webhook N"
        taken = {row[0] for row in conn.execute("SELECT name FROM saved_searches WHERE name LIKE 'webhook %'")}
        name = next(f"webhook {n}" for n in itertools.count(1) if f"webhook {n}" not in taken)
    try:
        name = _name(name)
    except ValueError as exc:
        raise ValueError(f"name: {exc}") from None
    try:
        save_search(mirror, name, params, replace=False)  # never another's search, nor its URL
    except SearchExists:
        raise ValueError(f"name: a saved search is already named {name!r}: choose another name") from None
    with conn:
        conn.execute(
            "UPDATE saved_searches SET webhook_url = ?, webhook_secret = ? WHERE name = ?",
            [parts.geturl(), secret or None, _name(name)],
        )
    stored = conn.execute("SELECT params FROM saved_searches WHERE name = ?", [_name(name)]).fetchone()[0]
    return {"name": _name(name), "url": parts.geturl(), "filters": json.loads(stored), "signed": bool(secret)}
