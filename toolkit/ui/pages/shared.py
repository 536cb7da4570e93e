"""What several pages draw alike: a refused query said in words, and a chart page's top."""

from __future__ import annotations

import re
from typing import Any

import streamlit as st

from ...errors import ApiError
from ...plans import PLAN_LABELS
from .. import state
from ..filters import sidebar_filters

__all__ = ["show_error", "chart_page", "in_words"]


def show_error(exc: ApiError) -> None:
    """A refused query (a filter out of range, a plan that may not read it) as one line,
    naming the field at fault by its label in the sidebar and plans by their names."""
    field = _labelled(exc.field) if exc.field else ""
    message = str(exc.body.get("message", exc))
    if exc.field and message.startswith(exc.field + " "):  # "tf_min must be ..." names it already
        message = message[len(exc.field) + 1 :]
    st.error(f"{field + ': ' if field else ''}{in_words(message)}")


def in_words(text: str) -> str:
    """A message of the query layer as the app speaks: `tf_min=20` as `Min Trust Flow 20`, a
    field's name as its label, `authority_plus` as `Authority+`."""
    text = re.sub(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+|tld|contains|page|source)=(\S+?)(?=[\s,;)]|$)", _pair, text)
    text = re.sub(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b", lambda m: _labelled(m[0]), text)
    return re.sub(r"\b(the plan in force is |the )(\w+)( plan)?\b", _plan, text)


def _pair(found: re.Match[str]) -> str:
    return f"{_labelled(found[1])} {found[2]}"


def _labelled(name: str) -> str:
    from ...query.params import DOMAIN_PARAMS, PENDING_PARAMS

    param = DOMAIN_PARAMS.get(name) or PENDING_PARAMS.get(name)
    return param.caption if param is not None and param.caption else PLAN_LABELS.get(name, name)


def _plan(found: re.Match[str]) -> str:
    named = PLAN_LABELS.get(found[2])
    return f"{found[1]}{named}{found[3] or ''}" if named else found[0]


def chart_page(title: str) -> tuple[dict[str, str], Any]:
    """A chart page's header, its sidebar filters and the counts of every match (None, with
    the error shown, when a filter is refused)."""
    st.header(title)
    filters = sidebar_filters()
    try:
        return filters, state.chart_counts(filters)
    except ApiError as exc:
        show_error(exc)
        return filters, None
