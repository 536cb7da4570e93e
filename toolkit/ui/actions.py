"""Shortlist and watch where one reads: on each row of a results table and on a domain page.

A row's buttons are drawn in the table's HTML (`table.py`'s "Keep" column, with a `data-edt-act` attribute
the table's component turns into the trigger `act`, see `navigation`); the domain page draws
Streamlit buttons (`page_buttons`). Both end in `apply`, which writes through the watchlist's
own functions (`toolkit.sync.saved_searches`, `toolkit.sync.watched_names`) to the writable mirror,
and says what it did at the top of the next run (`say_done`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import streamlit as st

from . import state
from .table import KEPT, WATCHED

__all__ = ["marked", "apply", "page_buttons", "watch_button", "say_done"]

_SAID = "_action_said"


def marked(records: Sequence[Mapping[str, Any]], *, name_field: str = "name") -> list[dict[str, Any]]:
    """The records with their marks (`KEPT`, `WATCHED`), read in two small queries."""
    from ..sync.watched_names import name_key, watching
    from ..sync.saved_searches import shortlisted

    mirror = state.reader()
    ids = [r["id"] for r in records if name_field == "name" and r.get("id") is not None]
    kept = shortlisted(mirror, ids)
    watched = watching(mirror, (r[name_field] for r in records))
    return [
        {**r, KEPT: r.get("id") in kept and name_field == "name", WATCHED: name_key(r[name_field]) in watched}
        for r in records
    ]


def apply(action: str) -> None:
    """Do `action`: `shortlist:on|off:<id>:<name>` or `watch:on|off:<name>` (what the button
    showed: doing it twice does it once); what was done is said at the top of the next run."""
    from ..sync import watched_names as watched
    from ..sync import saved_searches as saved

    kind, _, rest = action.partition(":")
    wanted, _, rest = rest.partition(":")
    mirror = state.writable_mirror(state.db_path())
    try:
        if kind == "shortlist":
            listing_id, _, name = rest.partition(":")
            if wanted == "off":
                saved.shortlist_remove(mirror, int(listing_id))
                said = f"{name} is off your shortlist."
            else:
                saved.shortlist_add(mirror, int(listing_id))
                said = f"{name} is on your shortlist (the Watchlist page lists it)."
        elif kind == "watch":
            name = rest
            if wanted == "off":
                watched.unwatch_names(mirror, [name])
                said = f"{name} is no longer watched."
            else:
                added = watched.watch_names(mirror, [name])
                said = (
                    f"Watching {', '.join(added)}: its registry is asked daily, or now from the Watchlist page "
                    "(Check now)."
                )
        else:
            return
    except ValueError as exc:
        st.session_state[_SAID] = ("error", f"{rest.rpartition(':')[2] or rest}: {exc}")
        return
    except Exception as exc:
        words = state.read_only_words(mirror, exc)
        if words is None:
            raise
        st.session_state[_SAID] = ("error", words)
        return
    st.session_state[_SAID] = ("success", said)


def page_buttons(record: Mapping[str, Any], where: Any = st) -> None:
    """The domain page's buttons: shortlist this listing, watch its name."""
    name, listing_id = record["name"], record["id"]
    (marks,) = marked([record])
    left, right = where.columns(2)
    left.button(
        "★ On your shortlist" if marks[KEPT] else "☆ Shortlist",
        key="page_shortlist",
        help="Take it off your shortlist" if marks[KEPT] else "Keep this listing on your shortlist",
        on_click=apply,
        args=(f"shortlist:{'off' if marks[KEPT] else 'on'}:{listing_id}:{name}",),
    )
    watch_button(name, bool(marks[WATCHED]), right)


def watch_button(name: str, watched: bool, where: Any = st) -> None:
    """A page's button that watches a name (or stops watching it)."""
    where.button(
        "◉ Watched" if watched else "◎ Watch",
        key="page_watch",
        help="Stop watching it"
        if watched
        else "Follow the name through expiry, redemption, pending delete and release (asked of its registry daily)",
        on_click=apply,
        args=(f"watch:{'off' if watched else 'on'}:{name}",),
    )


def say_done() -> None:
    """What the last action did, once."""
    said = st.session_state.pop(_SAID, None)
    if said:
        (st.success if said[0] == "success" else st.error)(said[1])
