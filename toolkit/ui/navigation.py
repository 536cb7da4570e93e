"""The URL a page is drawn from: HTML whose links change the page in place, and the
settings each page keeps in the URL.

A plain link in a Streamlit page loads the page anew: a new session, the script run from
the start, every widget rebuilt (1-2 s on the full demo). The results tables' links (a
column title sorts, a name opens its detail page) are drawn through one small component
(`st.components.v2`, no iframe) that turns a plain left click into a rerun carrying the
link's query; `follow_link` writes that query into the URL, and the pages read the URL as
they do for a bookmark. A middle or modified click still opens the link itself, so "open in a
new tab" and copying a link work as before. A row's shortlist and watch buttons become the
trigger `act` (`ui/actions.py` does what they ask).

The URL also keeps each page's own settings (`OWN_KEYS`, from the pages' table): a page left
for another keeps them in the session and finds them again when opened from the sidebar
(`move_to`); a page's widgets follow the URL and write to it (`widget_from_url`,
`widget_to_url`), so any view is a bookmark.
"""

from __future__ import annotations

import functools
import html
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode

import streamlit as st

from .pages import PAGES

__all__ = [
    "OWN_KEYS",
    "payload",
    "show_html",
    "follow_link",
    "move_to",
    "open_all_link",
    "url_choice",
    "put_in_url",
    "follow_url",
    "url_now_holds",
    "widget_from_url",
    "widget_to_url",
]

# view -> what the page keeps in the URL beside the filters, the plan and `view` (`Page.own_keys`).
OWN_KEYS: dict[str, tuple[str, ...]] = {view: page.own_keys for view, page in PAGES.items() if page.own_keys}
_ALL_OWN = frozenset(key for keys in OWN_KEYS.values() for key in keys)

# Plain left clicks on the drawn HTML's `?query` links become the trigger `navigate`.
_JS = """
export default function ({ parentElement, data: [data], setTriggerValue }) {
  const root = parentElement.querySelector(".edt-html");
  root.innerHTML = data.html;
  const onClick = (event) => {
    const button = event.target.closest("button[data-edt-act]");
    if (button) {  // a row's shortlist or watch button (ui/actions.py)
      event.preventDefault();
      setTriggerValue("act", button.getAttribute("data-edt-act"));
      return;
    }
    const link = event.target.closest("a[href^='?']");
    if (!link || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    setTriggerValue("navigate", link.getAttribute("href"));
  };
  root.addEventListener("click", onClick);
  return () => root.removeEventListener("click", onClick);
}
"""

# name -> (html, js): registered with Streamlit once, on first use.
_COMPONENTS = {"edt_html": ('<div class="edt-html"></div>', _JS)}


def payload(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A component's data, sent as a list of one dict: Streamlit looks through a dict's values
    for DataFrames (importing pandas, a second on a loaded machine, on a page with no table of
    pandas' at all), not through a list's."""
    return [data]


@functools.cache
def _component(name: str) -> Any:
    html, js = _COMPONENTS[name]
    return st.components.v2.component(name, html=html, js=js, isolate_styles=False)


def follow_link(href: str, current: Mapping[str, str] | None = None) -> dict[str, str]:
    """The URL's query after following `href` (`?sort=-tf&view=explore`) in place: the link's
    keys over the current ones (a blank value removes its key); a link that changes the sort
    restarts at page 1 unless it names a page; a link to another page leaves this page's own
    settings behind (`OWN_KEYS`: the filters and the plan go with it)."""
    query = dict(current if current is not None else st.query_params.to_dict())
    link = dict(parse_qsl(href.lstrip("?"), keep_blank_values=True))
    if link.get("view", query.get("view")) != query.get("view"):
        query = {k: v for k, v in query.items() if k not in _ALL_OWN}
    if "sort" in link and "page" not in link:
        query.pop("page", None)
    for name, value in link.items():
        if value:
            query[name] = value
        else:
            query.pop(name, None)
    return query


def _navigate(key: str) -> None:
    from .state import redraw_filters

    href = (st.session_state.get(key) or {}).get("navigate")
    if not href:
        return
    before = st.query_params.to_dict()
    after = follow_link(href, before)
    if after.get("view") != before.get("view"):
        _keep(before)
    redraw_filters(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    st.query_params.from_dict(after)


def _keep(query: Mapping[str, str]) -> None:
    """Keep the own settings of the page `query` shows, for when it is opened again."""
    view = query.get("view", "explore")
    st.session_state[f"_kept:{view}"] = {k: query[k] for k in OWN_KEYS.get(view, ()) if k in query}


def move_to(view: str) -> None:
    """The page chosen in the sidebar: the URL loses the page-before's own settings and gets
    back the ones `view` had when it was left (the filters and the plan stay)."""
    before = st.query_params.to_dict()
    _keep(before)
    after = {k: v for k, v in before.items() if k not in _ALL_OWN}
    after.update(st.session_state.get(f"_kept:{view}", {}))
    after["view"] = view
    st.query_params.from_dict(after)


def _act(key: str) -> None:
    from .actions import apply

    action = (st.session_state.get(key) or {}).get("act")
    if action:
        apply(action)


def show_html(html: str, *, key: str) -> None:
    """Draw `html`; its `?query` links change the page in place (see the module's docstring),
    its row buttons shortlist or watch (`ui/actions.py`)."""
    _component("edt_html")(
        data=payload({"html": html}),
        key=key,
        on_navigate_change=lambda: _navigate(key),
        on_act_change=lambda: _act(key),
    )


def open_all_link(view: str, search: Mapping[str, str]) -> str:
    """A link that opens `search` in page `view` (Explore, Pending-delete), the plan kept."""
    query = {k: v for k, v in st.query_params.to_dict().items() if k == "plan"} | {"view": view, **search}
    return f'<a href="?{html.escape(urlencode(query))}">open them all in {PAGES[view].title} →</a>'


# -- a page's settings kept in the URL ---------------------------------------------------------


def url_choice(name: str, options: list[Any], default: Any) -> Any:
    """The URL's `name` when it is one of `options`, else `default`."""
    value = st.query_params.get(name, default)
    return value if value in options else default


def put_in_url(name: str, value: Any, default: Any = "") -> None:
    """`name=value` in the URL; no `name` at all when the value is blank or the default."""
    if value in (None, "", default):
        st.query_params.pop(name, None)
    else:
        st.query_params[name] = str(value)


def follow_url(key: str, follows: str, raw: str, value: Callable[[str], Any]) -> None:
    """Before widget `key` is drawn: `value(raw)` as its value on a new session or when the
    URL's text it `follows` changed under it (a bookmark, a link) to `raw`.

    The value goes through the session state, never passed to the widget: a browser keeps a
    widget's own value over a new one passed to it, and sends that stale value with the next
    click, while a value set through the session state reaches the browser."""
    if key not in st.session_state or st.session_state.get(f"_url:{follows}") != raw:
        st.session_state[key] = value(raw)
        st.session_state[f"_url:{follows}"] = raw


def url_now_holds(follows: str, text: str) -> None:
    """After a widget is drawn: the URL's text it follows is now `text` (its own value)."""
    st.session_state[f"_url:{follows}"] = text


def widget_from_url(key: str, name: str, parse: Callable[[str], Any], default: Any) -> None:
    """Before widget `key` is drawn: take its value from the URL's `name` (`follow_url`); a
    value that does not parse is the default."""

    def value(raw: str) -> Any:
        try:
            return parse(raw) if raw else default
        except (ValueError, KeyError):
            return default

    follow_url(key, name, st.query_params.get(name, ""), value)


def widget_to_url(name: str, text: str) -> None:
    """After a widget is drawn: its value, as `text`, in the URL's `name` (none when blank)."""
    put_in_url(name, text)
    url_now_holds(name, text)
