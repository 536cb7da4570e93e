"""The front end's code each page needs, named in the page's first response.

Streamlit's front end loads an element's code (a JavaScript chunk: the multiselect, the
metric, the charts' 1.2 MB of ECharts) only when the script's first message draws that
element. In a browser that has not opened the app before, the chunks are then fetched and
compiled after the script has run: 0.6 s on Explore, measured before this preload.

`PagePreload`, an ASGI middleware of `app.py`, writes the chunks of the page asked for
(`?view=`) into Streamlit's HTML page as `<link rel="modulepreload">`, so the browser fetches
and compiles them while it starts the app and the script runs. Streamlit's own lazy imports
then find them in the browser's module map.

`ELEMENTS` says which Streamlit elements each page draws, by the name of their chunk (and
`CHART_ELEMENT`, the chart library our chart component imports: `OWN_MODULES`); a
browser test (`tests/test_appcheck.py`) fails when a page loads one its row does not name,
and `tests/test_app_serving.py` when a name is neither a chunk of the installed Streamlit nor
one of ours.

`FromMemory`, the other middleware of `app.py`, sends those files (Streamlit's `/static/`
bundles and our chart library) from memory: Streamlit's own handler stats, opens and reads
every file through a worker thread, about a hundred on a first visit, while the server is
also importing the pages for the visitor's first run.
"""

from __future__ import annotations

import functools
import mimetypes
import re
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

__all__ = [
    "CHART_ELEMENT",
    "ECHARTS_FILE",
    "ECHARTS_URL",
    "ELEMENTS",
    "LATER",
    "OWN_MODULES",
    "WARM_OPTIONS",
    "LATER_MS",
    "FromMemory",
    "PagePreload",
    "later_chunks",
    "later_script",
    "lazy_chunks",
    "mark_served",
    "page_chunks",
    "preload_links",
    "served",
    "static_files",
    "warm_options",
]

# Apache ECharts, the parts the app draws as one ES module (built from static/build/, see static/README.md),
# which app.py serves (`FromMemory`) for the charts (`echarts.show`): without the 1 MB of
# Arrow and number formatting Streamlit's own ECharts element loads with it.
ECHARTS_FILE = Path(__file__).with_name("static") / "echarts-6.1.0-app.esm.min.js"
ECHARTS_URL = f"edt/static/{ECHARTS_FILE.name}"  # relative to the app's address
CHART_ELEMENT = "edt-echarts"
# The small charts the browser draws out of sight to warm the chart library up
# (`later_script`): `echarts.warm_options()` as JSON, kept equal by a test.
WARM_OPTIONS = Path(__file__).with_name("static") / "warm-charts.json"
# Modules of ours a page may need, by the name its `ELEMENTS` row uses: their paths.
OWN_MODULES = {CHART_ELEMENT: ECHARTS_URL}

_served = threading.Event()


@functools.cache
def warm_options() -> list[dict]:
    """The charts of `WARM_OPTIONS` (read once)."""
    import json

    return json.loads(WARM_OPTIONS.read_text(encoding="utf-8"))


def mark_served() -> None:
    """Called when app.py's server starts: its routes (the CSV exports) and its middleware
    (the chart library and Streamlit's files from memory, the HTML rewrite) are then in place."""
    _served.set()


def served() -> bool:
    """True when this process is app.py's server (`st.App`); false under AppTest and
    `streamlit run toolkit/ui/script/page_script.py`, where the pages use Streamlit's own elements instead."""
    return _served.is_set()


_MENU = ("Radio", "BidiComponent")  # the page menu; our components (the tables' links, the preload)
_FIRST_FILTERS = ("Selectbox", "TextInput")  # the plan, and the "Source and type" group (open at first)
# The count; the table, its pager, its CSV link and its rows' buttons are our component's HTML,
# and its settings (sort menu, rows per page, columns) are drawn when opened.
_RESULTS = ("Metric",)

# view -> the chunks of the elements its first render draws (views as in pages.PAGES).
ELEMENTS: dict[str, tuple[str, ...]] = {
    "explore": _MENU + _FIRST_FILTERS + _RESULTS,
    "pending": _MENU + _FIRST_FILTERS + _RESULTS,
    "detail": _MENU + ("TextInput", "Metric", "Button", CHART_ELEMENT),  # the buttons: shortlist, watch
    "trust-flow": _MENU + _FIRST_FILTERS + ("Checkbox", "Slider", CHART_ELEMENT),
    "archive": _MENU + _FIRST_FILTERS + (CHART_ELEMENT,),
    "calendar": _MENU + ("TextInput", "DateInput", "Selectbox", "DownloadButton", CHART_ELEMENT),
    # the forms (save a search, watch names); each saved search's counts and buttons, Check now
    "watchlist": _MENU + ("TextInput", "TextArea", "Metric", "Button"),
    "sync": _MENU + ("Multiselect", "Button"),  # the feeds: which, and fetch them
}
# Fetched once the page is drawn and the browser idle (`later_script`): the
# widgets of the closed filter groups, and the charts another page draws.
LATER = ("Multiselect", "NumberInput", "Checkbox", "DateInput", CHART_ELEMENT)
DEFAULT_VIEW = "explore"

_LAZY_IMPORT = re.compile(r"import\(`\./(([A-Za-z]+)\.[A-Za-z0-9_-]+\.js)`\)")
_STATIC_IMPORT = re.compile(r'(?:from|import)\s*"\./([A-Za-z0-9_.-]+\.js)"')
_HTML_MODULE = re.compile(r'(?:src|href)="\./static/js/([A-Za-z0-9_.-]+\.js)"')


def _js() -> Path:
    import streamlit

    return Path(streamlit.__file__).parent / "static" / "static" / "js"


@functools.cache
def lazy_chunks() -> dict[str, str]:
    """Chunk name -> file of every element Streamlit's front end loads on demand (read from
    its entry script; empty if the installed Streamlit is laid out otherwise)."""
    found: dict[str, str] = {}
    for entry in _js().glob("index.*.js"):
        for file, name in _LAZY_IMPORT.findall(entry.read_text(encoding="utf-8")):
            found.setdefault(name, file)
    return found


@functools.cache
def _imports(file: str) -> tuple[str, ...]:
    path = _js() / file
    return tuple(_STATIC_IMPORT.findall(path.read_text(encoding="utf-8"))) if path.is_file() else ()


@functools.cache
def _in_html() -> frozenset[str]:
    """The modules Streamlit's HTML page already loads or preloads."""
    html = _js().parent.parent / "index.html"
    return frozenset(_HTML_MODULE.findall(html.read_text(encoding="utf-8"))) if html.is_file() else frozenset()


def _closure(names: Iterable[str]) -> list[str]:
    """The paths of the named modules (ours and Streamlit's chunks) and of everything they
    import, minus what the HTML loads."""
    names = list(names)
    own = [OWN_MODULES[n] for n in names if n in OWN_MODULES]
    todo = [lazy_chunks()[n] for n in names if n in lazy_chunks()]
    seen: dict[str, None] = {}
    while todo:
        file = todo.pop(0)
        if file in seen or file in _in_html():
            continue
        seen[file] = None
        todo.extend(_imports(file))
    return [f"static/js/{file}" for file in seen] + own


@functools.cache
def page_chunks(view: str) -> tuple[str, ...]:
    """The modules (`static/js/...`, ours under `edt/static/`) page `view` needs beyond
    Streamlit's HTML, in load order."""
    return tuple(_closure(ELEMENTS.get(view, ELEMENTS[DEFAULT_VIEW])))


@functools.cache
def later_chunks(view: str) -> tuple[str, ...]:
    """The chunk files of the `LATER` elements, and of what they import, that page `view` does
    not load itself."""
    own = set(page_chunks(view))
    return tuple(path for path in _closure(LATER) if path not in own)


@functools.cache
def preload_links(view: str) -> bytes:
    """`<link rel="modulepreload">` tags for `page_chunks(view)`, and the work the browser does
    once the page is drawn (`later_script`)."""
    links = "".join(f'<link rel="modulepreload" crossorigin href="./{path}">' for path in page_chunks(view))
    return links.encode() + later_script(view)


# Work the browser leaves for after the page, once per document (the page's HTML carries it:
# no component on the page for it). When Streamlit has first drawn the page, `LATER_MS` more,
# then when the browser is idle: preload the code of what the page did not draw (the closed
# filter groups' widgets, the charts; Streamlit loads an element's code only when a page first
# draws it), so opening a group, a domain or a chart page does not wait for it (a
# `modulepreload` of the URL Streamlit's own lazy import resolves to, so both share one module;
# not an import, which would also run it: a long task in the way of the next click); and on a
# page without a chart, run ECharts' module and draw small charts of each kind out of sight
# (`WARM_OPTIONS`): the first chart opened later (a domain's history, a chart page) does not
# wait for the module to run nor for its first drawing (0.1-0.15 s of opening a domain).
LATER_MS = 1500
_LATER_JS = """<script type="module">
const later = %s;
const idle = (f, timeout) => (window.requestIdleCallback || ((g) => setTimeout(g, 500)))(f, { timeout });
const drawn = () => document.querySelector('[data-testid="stApp"][data-test-script-state="notRunning"]');
const start = () => drawn() ? setTimeout(run, later.after) : setTimeout(start, 200);
const run = () => {
  idle(() => later.modules.forEach((path) => {
    const href = new URL(path, document.baseURI).href;
    if (document.querySelector(`link[rel="modulepreload"][href="${CSS.escape(href)}"]`)) return;
    document.head.appendChild(Object.assign(document.createElement("link"), { rel: "modulepreload", href }));
  }), 4000);
  if (!later.warm) return;
  idle(() => import(new URL(later.warm, document.baseURI).href).then((echarts) => idle(() => {
    const box = document.createElement("div");
    box.style.cssText = "position: absolute; left: -10000px; top: 0; width: 480px; height: 320px";
    document.body.appendChild(box);
    for (const option of later.options) {
      const chart = echarts.init(box);
      chart.setOption(option);
      chart.dispose();
    }
    box.remove();
    window.__edtChartsWarmed = true;
  }, 5000)), 5000);
};
start();
</script>"""


@functools.cache
def later_script(view: str) -> bytes:
    """The script the page's HTML carries for the work left for after the page (`_LATER_JS`)."""
    import json

    modules = list(later_chunks(view))
    warm = ECHARTS_URL in modules  # a page that draws no chart
    data = {
        "after": LATER_MS,
        "modules": modules,
        "warm": ECHARTS_URL if warm else None,
        "options": warm_options() if warm else [],
    }
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return (_LATER_JS % text).encode()


class PagePreload:
    """ASGI middleware: Streamlit's HTML page, for any GET, with the requested page's chunks
    preloaded (see the module's docstring). Every other response passes untouched."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "GET":
            await self.app(scope, receive, send)
            return
        # The HTML page is a file: without this, a server that can send files by path
        # (ASGI's "pathsend") would not hand the body to `rewrite`.
        extensions = {k: v for k, v in (scope.get("extensions") or {}).items() if k != "http.response.pathsend"}
        scope = {**scope, "extensions": extensions}
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        links = preload_links((query.get("view") or [DEFAULT_VIEW])[0])
        start: dict | None = None
        body: list[bytes] = []

        async def rewrite(message: dict) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                sent = dict(message.get("headers") or [])
                if (
                    not links
                    or message.get("status") != 200
                    or b"content-encoding" in sent
                    or not sent.get(b"content-type", b"").startswith(b"text/html")
                ):
                    start = None
                    await send(message)
                    return
                start = message
                return
            if start is None:
                await send(message)
                return
            if message["type"] != "http.response.body":  # not a body after all: pass it on as it is
                await send(start)
                start = None
                await send(message)
                return
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            html = b"".join(body).replace(b"</head>", links + b"</head>", 1)
            # The body changed: a new length, and no validator for the old body.
            headers = [(k, v) for k, v in start.get("headers") or [] if k not in (b"content-length", b"etag")]
            await send({**start, "headers": headers + [(b"content-length", str(len(html)).encode())]})
            await send({"type": "http.response.body", "body": html})

        await self.app(scope, receive, rewrite)


# The files' names carry a hash (Streamlit's) or a version (ours): a browser may keep them for good.
_IMMUTABLE = b"public, immutable, max-age=31536000"


@functools.cache
def static_files() -> dict[str, Path]:
    """URL path -> file, for every file `FromMemory` sends: Streamlit's front end under
    `/static/` (all of it served `immutable` by Streamlit's own handler) and `OWN_MODULES`."""
    root = _js().parent.parent  # Streamlit's static folder, whose static/ holds js/, css/, media/
    found = {f"/{path.relative_to(root).as_posix()}": path for path in (root / "static").rglob("*") if path.is_file()}
    found.update({f"/{url}": ECHARTS_FILE for url in OWN_MODULES.values()})
    return found


@functools.cache
def _response(path: str) -> tuple[list[tuple[bytes, bytes]], bytes]:
    """The headers and body `FromMemory` sends for `path`, read once. The headers are those
    of Streamlit's handler (Starlette's file response): the type guessed from the name, text
    in UTF-8; no compression, as Streamlit sends its bundles (it gzips no `/static/` file)."""
    body = static_files()[path].read_bytes()
    kind = mimetypes.guess_type(path)[0] or "text/plain"  # Streamlit's server registers a JavaScript type for .js
    if kind.startswith("text/"):
        kind += "; charset=utf-8"
    headers = [
        (b"content-type", kind.encode()),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", _IMMUTABLE),
    ]
    return headers, body


class FromMemory:
    """ASGI middleware: a GET of one of `static_files()` answered from memory, each file read
    on its first request; every other request passes on (see the module's docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        path = scope.get("path")
        if scope["type"] != "http" or scope.get("method") != "GET" or path not in static_files():
            await self.app(scope, receive, send)
            return
        headers, body = _response(path)
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
