"""The Watchlist page: saved searches (said as sentences) with their new matches, the
shortlist, and the watched names with their stage, checked now when asked."""

from __future__ import annotations

import html
from typing import Any

import streamlit as st

from ...errors import ApiError
from ...sync.saved_searches import search_words
from .. import actions, navigation, state, table

__all__ = ["watchlist"]


def _said_read_only(mirror: Any, exc: Exception) -> bool:
    words = state.read_only_words(mirror, exc)
    if words:
        st.error(words)
    return words is not None


def watchlist() -> None:
    from ...sync import saved_searches as saved

    st.header("Watchlist")
    actions.say_done()
    mirror = state.writable_mirror(state.db_path())
    filters = state.current_filters()
    st.subheader("Saved searches")
    with st.form("save_search"):
        name = st.text_input("Save the current filters as", key="search_name")
        st.caption(
            f"Current filters: {search_words(filters)}"
            if filters
            else "No filter now: set filters on Explore, then save them here."
        )
        if st.form_submit_button("Save"):
            try:
                saved.save_search(mirror, name, filters)
                st.success(f"Saved “{name.strip()}”.")
            except (ValueError, ApiError) as exc:
                st.error(str(exc.body.get("message")) if isinstance(exc, ApiError) else str(exc))
            except Exception as exc:
                if not _said_read_only(mirror, exc):
                    raise
    try:
        searches = saved.saved_searches(mirror)
    except ApiError as exc:  # a search saved under older rules no longer validates
        st.error(str(exc.body.get("message", exc)))
        searches = []
    if not searches:
        st.caption("No saved search yet: set filters on Explore, then save them here.")
    for entry in searches:
        cols = st.columns([3, 1, 1, 1, 1])
        cols[0].markdown(f"**{entry['name']}**  \n{search_words(entry['params'])}")
        cols[1].metric("New", f"{entry['new_matches']:,}", help="first seen since you last marked them seen")
        cols[2].metric("Matches now", f"{entry['matches']:,}")
        if cols[3].button("Open in Explore", key=f"open:{entry['name']}"):
            state.set_filters(saved.search_params(mirror, entry["name"]))  # its new matches stay new
            st.query_params["view"] = "explore"
            st.rerun()
        if cols[4].button("Delete", key=f"delete:{entry['name']}"):
            try:
                saved.delete_search(mirror, entry["name"])
            except Exception as exc:
                if not _said_read_only(mirror, exc):
                    raise
            else:
                st.rerun()
        if entry["new_matches"]:  # drawn when opened (a hundred rows a search would slow the page)
            box = st.expander(
                f"The {entry['new_matches']:,} new matches of “{entry['name']}”",
                key=f"new:{entry['name']}",
                on_change="rerun",
            )
            if box.open:
                with box:
                    _new_matches(mirror, entry)
    _shortlist(mirror)
    _watched_names(mirror)


_SHORTLIST_COLUMNS = ("name", "price", "eur", "value", "bids", "ends", "tf", "source", "keep")
_NOTE = table.Column("note", "Note", lambda r, now: html.escape(r.get("_note") or ""))
_ADDED = table.Column("added_at", "Added", lambda r, now: html.escape(table.moment(r.get("_added_at"))))


def _shortlist(mirror: Any) -> None:
    """The shortlisted listings as Explore's table (★ takes one off), with their notes."""
    from ...sync import saved_searches as saved

    st.subheader("Shortlist")
    items = saved.shortlist(mirror)
    if not items:
        st.caption("Nothing on the shortlist yet: ☆ on a row of Explore, or on a domain's page, puts it here.")
        return
    plan = state.plan_in_force()
    records = []
    for item in items:
        try:
            record = state.reader().get_domain(item["listing_id"], plan=plan)["data"]
        except ApiError:
            record = {"id": item["listing_id"], "name": item["name"] or f"listing {item['listing_id']}"}
        records.append({**record, "_note": item["note"], "_added_at": item["added_at"]})
    columns = [*table.chosen_columns(table.LISTING_TABLE, _SHORTLIST_COLUMNS), _NOTE, _ADDED]
    navigation.show_html(
        table.render(columns, columns, actions.marked(records), {}, state.reader().now(), sortable=False),
        key="shortlist",
    )
    with st.form("shortlist_note"):
        left, right = st.columns([1, 2])
        names = {f"{r['name']} ({table.platform(r.get('source'))})": r["id"] for r in records}
        picked = left.selectbox("Note for", list(names), key="note_for")
        note = right.text_input("Note", key="short_note")
        if st.form_submit_button("Save the note"):
            try:
                saved.shortlist_note(mirror, names[picked], note)
            except Exception as exc:
                if not _said_read_only(mirror, exc):
                    raise
            else:
                st.rerun()


_WATCHED_TABLE: tuple[table.Column, ...] = (
    table.Column("name", "Name", lambda r, now: table.name_link(r["name"])),
    table.Column("stage", "Stage", lambda r, now: html.escape(r["_stage"])),
    table.Column("since", "Since", lambda r, now: html.escape(r["_since"])),
    table.Column("next", "Next", lambda r, now: html.escape(r["_next"])),
    table.Column("expected", "Expected", lambda r, now: html.escape(r["_expected"])),
    table.Column("listed", "Listed", lambda r, now: html.escape(r["_listed"])),
    table.Column("checked", "Last checked", lambda r, now: html.escape(r["_checked"])),
    table.Column("problem", "Problem", lambda r, now: html.escape(r["_problem"])),
    table.Column("note", "Note", lambda r, now: html.escape(r["note"] or "")),
    table.Column(
        "keep", "Watch", table.keep_cell("name", shortlist=False), help="◉ watched: click to stop watching it"
    ),
)


def _watched_names(mirror: Any) -> None:
    """Names watched through their registration lifecycle (`edt watch name`): their stage, what
    comes next and when, where the mirror lists them; add, stop watching, check now."""
    from ...sync import watched_names as watched

    st.subheader("Watched names")
    with st.form("watch_names"):
        typed = st.text_area("Names to watch, one a line or comma-separated", key="watch_names_input")
        note = st.text_input("Note", key="watch_names_note")
        if st.form_submit_button("Watch"):
            names = [n.strip() for n in typed.replace(",", "\n").splitlines() if n.strip()]
            try:
                added = watched.watch_names(mirror, names, note=note or None)
                st.success(
                    f"Watching {', '.join(added)}: each registry is asked by the daily names job, or now "
                    "(Check now, below)."
                )
            except ValueError as exc:
                st.error(f"{exc}; nothing was added.")
            except Exception as exc:
                if not _said_read_only(mirror, exc):
                    raise
    for failed, line in st.session_state.pop("_checked_lines", []):  # the last check's, said after its rerun
        (st.error if failed else st.caption)(line)
    rows = watched.watched_names(mirror)
    if not rows:
        st.caption(
            "No watched name yet: any name, listed or not, followed through expiry, redemption, pending "
            "delete and release, with an alert at each stage. Only the registries' RDAP servers are "
            "asked."
        )
        return
    shown = []
    for row in rows:
        shown.append(
            {
                **row,
                table.WATCHED: True,
                "_stage": watched.STAGE_WORDS.get(row["stage"] or "", "not checked yet"),
                "_since": table.moment(row["stage_since"]).removesuffix(" 00:00 UTC"),
                "_next": watched.STAGE_WORDS.get(row["next_stage"] or "", ""),
                "_expected": watched.window_text(row["expected_from"], row["expected_to"], sep=" – ") or "",
                "_listed": "; ".join(e["where"] for e in row["listed"]),
                "_checked": table.moment(row["checked_at"]),
                "_problem": row["last_error"] or (row["rdap"] if row["rdap"] not in (None, "ok") else ""),
            }
        )
    navigation.show_html(
        table.render(_WATCHED_TABLE, _WATCHED_TABLE, shown, {}, state.reader().now(), sortable=False),
        key="watched_names",
    )
    names = [r["name"] for r in rows]
    if st.button(
        f"Check now: ask the registries about {'this name' if len(names) == 1 else f'these {len(names):,} names'}",
        key="check_names",
        help="What the daily names job does (edt watch names --check), for the names above: one request "
        "a second per registry, from this machine only",
    ):
        _check_now(mirror, names)


def _check_now(mirror: Any, names: list[str]) -> None:
    """The names job now, for `names` (`toolkit.enrich.name_checks.check_names`): the same polite
    lookups, then the page again with what changed."""
    from ...enrich.name_checks import check_names
    from ...ingest.lifecycle import predict_drop_window
    from ...store.lock import MirrorBusy

    with st.spinner(f"Asking the registries about {len(names):,} names…"):
        try:
            report = check_names(mirror, names, predict=predict_drop_window)
        except (MirrorBusy, ValueError) as exc:
            st.error(str(exc))
            return
        except Exception as exc:
            if not _said_read_only(mirror, exc):
                raise
            return
    st.session_state["_checked_lines"] = [
        (report.failed and i == 0, line.strip()) for i, line in enumerate(report.lines())
    ]
    st.rerun()


def _new_matches(mirror: Any, entry: dict[str, Any]) -> None:
    """The new matches as a table (the first 100 by first-seen time), and the one action that
    marks them seen: up to the moment they were listed, so later arrivals stay new."""
    from ...sync import saved_searches as saved

    listed_at = mirror.now().replace(microsecond=0).isoformat()
    params = {**saved.new_matches_params(entry), "sort": "-first_seen_at", "per_page": "100"}
    try:
        found = mirror.search_domains(params)
    except ApiError as exc:
        st.error(str(exc.body.get("message", exc)))
        return
    columns = table.chosen_columns(table.LISTING_TABLE, None)
    navigation.show_html(
        table.render(table.LISTING_TABLE, columns, actions.marked(found["data"]), {}, mirror.now(), sortable=False),
        key=f"new_matches:{entry['name']}",
    )
    if found["meta"]["total"] > len(found["data"]):
        st.caption(f"The 100 most recent of {found['meta']['total']:,}.")
    if st.button(f"Mark these {found['meta']['total']:,} seen", key=f"seen:{entry['name']}"):
        try:
            saved.mark_seen(mirror, entry["name"], upto=listed_at)
        except Exception as exc:
            if not _said_read_only(mirror, exc):
                raise
        else:
            st.rerun()
