"""HTML whose links change the page in place.

A plain link in a Streamlit page loads the page anew: a new session, the script run from
the start, every widget rebuilt (1-2 s on the full demo). The results tables' links (a
column title sorts, a name opens its detail page) are drawn through one small component
(`st.components.v2`, no iframe) that turns a plain left click into a rerun carrying the
link's query; `follow_link` writes that query into the URL, and the pages read the URL as
they do for a bookmark. A middle or modified click still opens the link itself, so "open in a
new tab" and copying a link work as before.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

import streamlit as st

from . import assets

__all__ = ["OWN_KEYS", "LATER_MS", "payload", "show_html", "follow_link", "preload_later", "warm_charts_later", "move_to"]

# What each page keeps in the URL beside the filters, the plan and `view` (views as in
# pages.PAGES): its own settings, which no other page reads or carries. Explore and
# Pending-delete name theirs alike (`cols`, `sort`, ...) with other meanings. A page left for
# another keeps them in the session, and finds them again when opened from the sidebar.
OWN_KEYS: dict[str, tuple[str, ...]] = {
    "explore": ("cols", "sort", "page", "per_page"),
    "pending": ("cols", "sort", "page", "per_page"),
    "detail": ("name", "id", "comps_sort"),
    "trust-flow": ("tf_range", "cf_range", "zone_by", "points", "color_by"),
    "calendar": ("dates", "month", "cal_tld", "cal_status", "day"),
}
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

# Work a page leaves for later waits until the page has been drawn and read a moment
# (`LATER_MS`), then for the browser to be idle: it never competes with the page's own drawing.
LATER_MS = 1500
_LATER = f"""
const later = (f, timeout) => setTimeout(
  () => (window.requestIdleCallback || ((g) => setTimeout(g, 500)))(f, {{ timeout }}), {LATER_MS});
"""

# Once per document, later: fetch and compile the code of what this page did not draw (a
# closed filter group's widgets, the charts; Streamlit loads an element's code only when a page
# first draws it), so opening a group, a domain or a chart page does not wait for it. A
# `modulepreload` of the URL Streamlit's own lazy import resolves to, so both share one module;
# not an import, which would also run it: a long task (Plotly's took a second) that would hold
# up the user's next click.
_PRELOAD_JS = _LATER + """
export default function ({ data: [data] }) {
  if (window.__edtPreloaded) return;
  window.__edtPreloaded = true;
  later(() => data.modules.forEach((path) => {
    const href = new URL(path, document.baseURI).href;
    if (document.querySelector(`link[rel="modulepreload"][href="${CSS.escape(href)}"]`)) return;
    document.head.appendChild(Object.assign(document.createElement("link"), { rel: "modulepreload", href }));
  }), 4000);
}
"""

# Once per document, on a page that drew no chart, later: run ECharts' module and draw small
# charts of each kind out of sight (`assets.WARM_OPTIONS`), then drop them. The first chart a
# user then opens (a domain's price history, a chart page) does not wait for the module to run
# nor for its first drawing, which is slower than any later one (the browser compiles the
# drawing code then): 0.1-0.15 s of opening a domain from Explore. Two idle steps, so neither
# is a long task in the way of a click.
_WARM_JS = _LATER + """
export default function ({ data: [data] }) {
  if (window.__edtChartsWarm) return;
  window.__edtChartsWarm = true;
  const idle = (f) => (window.requestIdleCallback || ((g) => setTimeout(g, 500)))(f, { timeout: 5000 });
  later(() => import(new URL(data.module, document.baseURI).href).then((echarts) => idle(() => {
    const box = document.createElement("div");
    box.style.cssText = "position: absolute; left: -10000px; top: 0; width: 480px; height: 320px";
    document.body.appendChild(box);
    for (const option of data.options) {
      const chart = echarts.init(box);
      chart.setOption(option);
      chart.dispose();
    }
    box.remove();
    window.__edtChartsWarmed = true;
  })), 5000);
}
"""

# name -> (html, js): registered with Streamlit once, on first use.
_COMPONENTS = {"edt_html": ('<div class="edt-html"></div>', _JS), "edt_preload": (None, _PRELOAD_JS),
               "edt_charts_warm": (None, _WARM_JS)}


def payload(data: dict[str, Any]) -> list[dict[str, Any]]:
    """A component's data, sent as a list of one dict: Streamlit looks through a dict's values
    for DataFrames (importing pandas, a second on a loaded machine, on a page with no table of
    pandas' at all), not through a list's."""
    return [data]


@functools.cache
def _component(name: str) -> Any:
    html, js = _COMPONENTS[name]
    return st.components.v2.component(name, html=html, js=js, isolate_styles=False)


def preload_later(view: str) -> None:
    """Have the browser fetch, while idle, the code page `view` has not drawn (see `_PRELOAD_JS`)."""
    # Our own modules (the chart library) come from app.py's server (`assets.FromMemory`): only where it serves.
    modules = [m for m in assets.later_chunks(view) if assets.served() or m not in assets.OWN_MODULES.values()]
    if modules:  # none if Streamlit's layout changes: the preload is then skipped, nothing else
        _component("edt_preload")(data=payload({"modules": list(modules)}), key="edt_preload")


def warm_charts_later(view: str) -> None:
    """On a page that draws no chart, served by app.py: have the browser run the chart library
    and draw small charts out of sight, later (see `_WARM_JS`)."""
    if not assets.served() or assets.ECHARTS_URL not in assets.later_chunks(view):
        return  # not served, or the page loads the chart library itself
    _component("edt_charts_warm")(data=payload({"module": assets.ECHARTS_URL, "options": assets.warm_options()}),
                                  key="edt_charts_warm")  # fmt: skip


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
    _component("edt_html")(data=payload({"html": html}), key=key, on_navigate_change=lambda: _navigate(key),
                           on_act_change=lambda: _act(key))
