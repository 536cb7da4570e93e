"""The sidebar: one widget per `/api/domains` filter, built from `params.DOMAIN_PARAMS`
(its kind, range, choices, caption and group), kept in the URL so a search is a bookmark."""

from __future__ import annotations

from datetime import date
from typing import Any

import streamlit as st

from collections.abc import Mapping

from ..query.params import DOMAIN_PARAMS, PENDING_PARAMS, Param
from ..plans import PLAN_LABELS, PLANS, plan_allows
from ..sources import REGFREE, source_by_slug
from ..store.labels import FILTER_HELP, pipeline_name, status_words
from .navigation import follow_url, url_now_holds
from .state import FILTER_GROUPS, NOT_FILTERS, current_filters, keep_filters_of, plan_in_force, reader

__all__ = ["choice_words", "group_key", "sidebar_filters", "plan_picker"]


def plan_picker() -> str:
    """The plan in force, said in the title of a group that draws its picker when opened (to see
    what a subscription of another plan would get)."""
    plan = plan_in_force()
    box = st.sidebar.expander(f"Answers as the {PLAN_LABELS[plan]} plan", key="plan_group", on_change="rerun")
    if not box.open:
        return plan
    return box.selectbox(
        "Plan in force",
        PLANS,
        index=PLANS.index(plan),
        format_func=PLAN_LABELS.__getitem__,
        key="plan",
        on_change=_plan_chosen,
        help="Your own mirror answers as the top plan unless EDT_PLAN says otherwise; "
        "pick a plan to see what a subscription gets.",
    )


def _plan_chosen() -> None:
    """The plan picked, kept in the URL (the group's title names it, so the group is drawn anew)."""
    chosen = st.session_state["plan"]
    if chosen == reader().plan:  # the mirror's own plan: no need to say it in the URL
        st.query_params.pop("plan", None)
    else:
        st.query_params["plan"] = chosen


def choice_words(param: Param, value: str, *, pending: bool = False) -> str:
    """A choice of a filter as a person reads it: a platform's or a pipeline's name, a status
    in words; other choices as they are."""
    if param.name == "source":
        found = source_by_slug(value)
        return pipeline_name(value) if pending else (found.name if found else value)
    if param.name == "status":
        return status_words(value)
    return value


def _widget(param: Param, value: str | None, plan: str, prefix: str) -> Any:
    """The filter's widget, holding the URL's value whenever the URL changed under it
    (`navigation.follow_url`: passed to the widget, a link's "Ending in the next 24 h" went
    back to 6 h on the next page)."""
    key = f"{prefix}{param.name}"
    kind = "pending" if prefix == "p:" else "listing"
    label, help_text = param.caption, FILTER_HELP.get((kind, param.name), param.description)
    options = _options(param, plan)
    follow_url(key, key, value or "", lambda raw: _from_url(param, raw, options))
    if param.kind == "flag":
        return st.checkbox(label, key=key, help=help_text)
    if param.kind in ("int", "number"):
        cast = int if param.kind == "int" else float  # streamlit wants one numeric type throughout
        bound = lambda b: None if b is None else cast(b)  # noqa: E731
        return st.number_input(
            label,
            value=None,
            min_value=bound(param.minimum),
            max_value=bound(param.maximum),
            step=cast(param.step or 1),
            key=key,
            help=help_text,
        )
    pending = prefix == "p:"
    if param.kind == "choice":
        return st.selectbox(
            label,
            ["", *options],
            key=key,
            help=help_text,
            format_func=lambda c: choice_words(param, c, pending=pending) if c else "any",
        )
    if param.kind == "list" and param.choices:
        return st.multiselect(
            label, options, key=key, help=help_text, format_func=lambda c: choice_words(param, c, pending=pending)
        )
    if param.kind == "date":
        return st.date_input(label, value=None, key=key, help=help_text)
    return st.text_input(label, key=key, help=help_text)


def _options(param: Param, plan: str) -> list[str]:
    """A filter's choices the plan in force may use (the deleted-ccTLD source from Authority)."""
    return [c for c in (param.choices or ()) if param.name != "source" or c != REGFREE or plan_allows(plan, "regfree")]


def _from_url(param: Param, raw: str, options: list[str]) -> Any:
    """The URL's text of a filter as its widget holds it; a value that does not parse is blank."""
    if param.kind == "flag":
        return raw in ("1", "true", "True")
    if param.kind in ("int", "number"):
        cast = int if param.kind == "int" else float
        try:
            return None if raw == "" else cast(float(raw))
        except ValueError:
            return None
    if param.kind == "choice":
        return raw if raw in options else ""
    if param.kind == "list" and param.choices:
        return [v for v in raw.split(",") if v in options]
    if param.kind == "date":
        try:
            return date.fromisoformat(raw) if raw else None
        except ValueError:
            return None
    return raw


def _as_text(param: Param, value: Any) -> str:
    if value is None or value == "" or value == [] or value is False:
        return ""
    if value is True:
        return "1"
    if isinstance(value, list):
        return ",".join(str(v) for v in value)
    if isinstance(value, float) and value.is_integer() and param.kind == "int":
        return str(int(value))
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def sidebar_filters(table: Mapping[str, Param] = DOMAIN_PARAMS) -> dict[str, str]:
    """Draw the filters of `table` (the listing or the pending-delete parameters; values from
    the URL), write the chosen ones back to the URL and return them as API parameters.

    Each group's widgets are drawn only while its expander is open (its open state is a
    widget: opening it reruns the page): a browser builds each widget slowly (a select box
    about 30 ms on a loaded machine), so every group starts closed, and a closed group's filters
    stay in force from the URL. A group opens by itself when a filter of it arrives from
    outside the sidebar (a bookmark, a link)."""
    keep_filters_of(table)
    plan = plan_picker()
    prefix = _prefix(table)
    in_url = current_filters(table)
    seen_key = f"{prefix}filters_seen"
    seen = st.session_state.get(seen_key, {})
    arrived = {name for name, value in in_url.items() if seen.get(name) != value}
    chosen: dict[str, str] = {}
    if not plan_allows(plan, "regfree"):
        st.sidebar.caption("The deleted-ccTLD database needs the Authority plan.")
    for group, title in FILTER_GROUPS.items():
        params = [p for p in table.values() if p.group == group and p.name not in NOT_FILTERS]
        if not params:
            continue
        key = group_key(table, group)
        if any(p.name in arrived for p in params):
            st.session_state[key] = True
        box = st.sidebar.expander(title, key=key, on_change="rerun")
        if not box.open:
            kept = {p.name: in_url[p.name] for p in params if p.name in in_url}
            chosen.update(kept)
            if kept:  # what the closed group holds, said under its title
                st.sidebar.caption(
                    " · ".join(
                        f"{table[name].caption}: {_value_words(table[name], value, prefix)}"
                        for name, value in kept.items()
                    )
                )
            continue
        with box:
            for param in params:
                text = _as_text(param, _widget(param, in_url.get(param.name), plan, prefix))
                url_now_holds(f"{prefix}{param.name}", text)
                if text:
                    chosen[param.name] = text
    if chosen != in_url:
        for name in in_url.keys() - chosen.keys():
            del st.query_params[name]
        for name, value in chosen.items():
            st.query_params[name] = value
    st.session_state[seen_key] = chosen
    return chosen


def _value_words(param: Param, value: str, prefix: str) -> str:
    if not param.choices:
        return value
    return ", ".join(choice_words(param, v, pending=prefix == "p:") for v in value.split(","))


def group_key(table: Mapping[str, Param], group: str) -> str:
    """The session-state key of a sidebar group's open state (True opens it on the next run)."""
    return f"{_prefix(table)}group:{group}"


def _prefix(table: Mapping[str, Param]) -> str:
    """The session-state prefix of a table's sidebar: its widgets, groups and last filters."""
    return "p:" if table is PENDING_PARAMS else "f:"
