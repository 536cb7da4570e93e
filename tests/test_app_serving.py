"""What `app.py` serves besides the page script: the CSV routes that stream every matching
row from the query layer, and the in-place links of the results tables."""

from __future__ import annotations

import asyncio
import csv
import html
import io
import json
import re
import urllib.request
from datetime import datetime, timedelta
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Route
from streamlit.testing.v1 import AppTest

from test_app import demo_db, demo_template  # noqa: F401 - the app tests' mirror (a small demo, copied per test)
from toolkit import Mirror
from toolkit.ui import asgi, assets, exports
from toolkit.ui.navigation import follow_link

ROOT = Path(__file__).resolve().parents[1]


def csv_rows(body: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(body.decode("utf-8"))))


def get(url: str, app: Starlette | None = None) -> httpx.Response:
    """A request in-process, through httpx's ASGI transport: to the export routes, or `app`."""

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=app or Starlette(routes=exports.ROUTES))
        async with httpx.AsyncClient(transport=transport, base_url="http://app") as client:
            return await client.get(url)

    return asyncio.run(go())


# -- the CSV routes ---------------------------------------------------------------------------


def test_the_listing_csv_holds_exactly_the_rows_counted_at_its_moment(demo_db):
    mirror = Mirror(demo_db, readonly=True)
    at = mirror.now()
    counted = mirror.search_domains({"tld": ".fr", "tf_min": "5", "sort": "-trust_flow"})["meta"]["total"]
    assert counted > 0
    response = get(
        exports.export_url(
            {"tld": ".fr", "tf_min": "5", "sort": "-trust_flow", "page": "3"}, plan="enterprise", at=at, pending=False
        )
    )
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/csv")
    assert 'filename="listings.csv"' in response.headers["content-disposition"]
    rows = csv_rows(response.content)
    assert len(rows) == counted  # every page, not the third
    assert {r["tld"] for r in rows} == {".fr"} and min(int(r["trust_flow"]) for r in rows) >= 5
    flows = [int(r["trust_flow"]) for r in rows]
    assert flows == sorted(flows, reverse=True)
    # The same file the REST replica's /api/export streams (one encoder for both).
    replica = list(mirror.export_rows({"tld": ".fr", "tf_min": "5", "sort": "-trust_flow"}, plan="enterprise"))
    assert [r["name"] for r in rows] == [r["name"] for r in replica]


def test_the_clock_of_the_export_stands_at_the_count(demo_db):
    """An auction that ends after the count is still in the file counted before it ended."""
    mirror = Mirror(demo_db, readonly=True)
    ending = mirror.search_domains({"sort": "auction_end_date", "per_page": "1"})["data"][0]
    end = ending["auction_end_date"]
    before_end = datetime.fromisoformat(end.replace("Z", "+00:00")) - timedelta(minutes=1)
    after_end = before_end + timedelta(minutes=2)
    names = {}
    for label, moment in (("before", before_end), ("after", after_end)):
        response = get(exports.export_url({"tld": ending["tld"]}, plan="enterprise", at=moment, pending=False))
        names[label] = {r["name"] for r in csv_rows(response.content)}
        counted = Mirror(demo_db, readonly=True, clock=lambda m=moment: m).search_domains({"tld": ending["tld"]})
        assert len(names[label]) == counted["meta"]["total"]
    assert ending["name"] in names["before"] and ending["name"] not in names["after"]


def test_the_pending_delete_csv_streams_its_filters(demo_db):
    mirror = Mirror(demo_db, readonly=True)
    counted = mirror.search_pending_delete({"tld": "uk"})["meta"]["total"]
    assert counted > 0
    response = get(exports.export_url({"tld": "uk"}, plan="enterprise", at=mirror.now(), pending=True))
    rows = csv_rows(response.content)
    assert response.status_code == 200 and len(rows) == counted
    assert all(r["domain"].endswith(".uk") for r in rows)


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("tf_min=lots", "tf_min"),
        ("at=yesterday", "at"),
        ("at=2026-11-23T10:00:00", "at"),
        ("plan=gold", "plan"),
        ("no_such_filter=1", "no_such_filter"),
    ],
)
def test_a_bad_export_request_is_a_422_naming_the_field(demo_db, query, field):
    response = get(f"/export/listings.csv?{query}")
    assert response.status_code == 422, response.text
    assert field in response.json()["errors"], response.json()


def test_an_export_beyond_the_plan_is_refused_as_the_api_refuses_it(demo_db):
    response = get("/export/listings.csv?plan=pro")
    assert response.status_code == 403 and "Business" in response.json()["message"]
    response = get("/export/pending-delete.csv?plan=authority")
    assert response.status_code == 403


def test_served_by_app_py_the_page_links_to_the_streamed_csv(demo_db, monkeypatch):
    """With the routes served (the app started from app.py), the button is a link to them."""
    monkeypatch.setattr(assets, "served", lambda: True)
    at = AppTest.from_file(asgi.SCRIPT, default_timeout=60)
    at.query_params["view"] = "explore"
    at.query_params["tld"] = ".de"
    at.run()
    assert not at.exception
    drawn = next(
        json.loads(e.proto.json)[0]["html"] for e in at.get("bidi_component") if e.proto.component_name == "edt_html"
    )
    url, label = re.search(r'<a class="edt-csv" href="([^"]+)" download>⬇ ([^<]+)</a>', drawn).groups()
    url = html.unescape(url)
    total = Mirror(demo_db, readonly=True).search_domains({"tld": ".de"})["meta"]["total"]
    assert label == f"Download all {total:,} rows (CSV)"  # a plain link the browser downloads (not followed in place)
    assert url.startswith("/export/listings.csv?") and "tld=.de" in url and "at=" in url
    assert not at.get("download_button") and not at.get("link_button")


def test_app_py_serves_the_script_and_the_csv_over_a_real_socket(demo_db, tmp_path):
    """`streamlit run app.py` finds the st.App, serves the page and the export route."""
    from toolkit.bench.browser import serve_app

    with serve_app(ROOT / "app.py", demo_db, tmp_path / "server.log") as base:
        with urllib.request.urlopen(f"{base}/export/listings.csv?tld=.fr") as response:
            body = response.read()
            disposition = response.headers["Content-Disposition"]
        with urllib.request.urlopen(f"{base}/") as response:
            page = response.read().decode()
            length = int(response.headers["Content-Length"])
        chunk = assets.page_chunks("explore")[0]
        with urllib.request.urlopen(f"{base}/{chunk}") as response:
            chunk_body, chunk_type = response.read(), response.headers["Content-Type"]
    counted = Mirror(demo_db, readonly=True).search_domains({"tld": ".fr"})["meta"]["total"]
    assert len(csv_rows(body)) == counted and 'filename="listings.csv"' in disposition
    assert '<div id="root"' in page or 'id="root"' in page
    # The page's element chunks named in its HTML (assets.PagePreload), the length told right.
    assert all(f'href="./{path}"' in page for path in assets.page_chunks("explore")) and length == len(page.encode())
    # Streamlit's front end from memory (assets.FromMemory), byte for byte, as JavaScript.
    assert chunk_body == module_file(chunk).read_bytes() and "javascript" in chunk_type


def test_the_servers_warm_up_says_nothing_of_a_missing_script_run_context(demo_db, tmp_path):
    """The warm-up thread fills the app's cached mirrors outside any script run: no Streamlit
    call of it may need one ("missing ScriptRunContext", twice at every start, before)."""
    import time

    from toolkit.bench.browser import serve_app
    from toolkit.query.columnar import index_path

    log = tmp_path / "server.log"
    assert not index_path(demo_db).exists()
    with serve_app(ROOT / "app.py", demo_db, log):
        deadline = time.monotonic() + 60
        while not index_path(demo_db).exists() and time.monotonic() < deadline:  # the warm-up's last step built it
            time.sleep(0.2)
        time.sleep(1)
        said = log.read_text()
    assert index_path(demo_db).exists(), said
    assert "ScriptRunContext" not in said and "Warning" not in said, said


def test_the_servers_run_on_uvloop_and_httptools():
    """Streamlit's server (app.py) and `edt serve` leave uvicorn its "auto" loop and HTTP
    parser, which take uvloop and httptools when they are installed (pyproject): on asyncio's
    own loop and h11, a cold page open was 0.3-0.5 s longer."""
    from uvicorn.loops.auto import auto_loop_factory
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    loop = auto_loop_factory()()
    try:
        assert type(loop).__module__.startswith("uvloop")
    finally:
        loop.close()
    assert AutoHTTPProtocol.__name__ == "HttpToolsProtocol"


def html_of(url: str) -> httpx.Response:
    """Streamlit's HTML page through app.py's middleware, in-process."""
    return get(url, Starlette(routes=[Route("/", StaticPage())], middleware=asgi.MIDDLEWARE))


class StaticPage:
    """Streamlit's own index.html, sent as its server sends it (a file response)."""

    async def __call__(self, scope, receive, send):  # noqa: ANN001 - the ASGI signature
        import streamlit
        from starlette.responses import FileResponse

        await FileResponse(Path(streamlit.__file__).parent / "static" / "index.html")(scope, receive, send)


def module_file(path: str) -> Path:
    """The file behind a module path of a page: Streamlit's chunk, or ours (`assets.OWN_MODULES`)."""
    import streamlit

    ours = {url: assets.ECHARTS_FILE for url in assets.OWN_MODULES.values()}
    return ours.get(path) or Path(streamlit.__file__).parent / "static" / path


def test_each_page_gets_its_element_chunks_named_in_its_html():
    explore, charts = html_of("/?view=explore"), html_of("/?view=trust-flow&tld=.fr")
    for response, view in ((explore, "explore"), (charts, "trust-flow")):
        assert response.status_code == 200 and int(response.headers["content-length"]) == len(response.content)
        links = re.findall(r'<link rel="modulepreload" crossorigin href="\./([^"]+)">', response.text)
        assert set(assets.page_chunks(view)) <= set(links) and all(module_file(link).is_file() for link in links)
        assert response.text.index(assets.page_chunks(view)[0]) < response.text.index("</head>")

    # The chart library preloaded only where a chart is drawn: ours, not Streamlit's ECharts
    # element (a page without a chart loads it later: assets.later_script).
    def preloaded(response: httpx.Response) -> list[str]:
        return re.findall(r'modulepreload" crossorigin href="\./([^"]+)"', response.text)

    assert assets.ECHARTS_URL in preloaded(charts) and assets.ECHARTS_URL not in preloaded(explore)
    assert assets.lazy_chunks()["EChartsChart"] not in charts.text
    assert "etag" not in explore.headers  # the body changed: no validator of the file's
    assert html_of("/?view=nonsense").text.count("modulepreload") == explore.text.count("modulepreload")


def test_every_name_in_the_pages_elements_is_a_chunk_of_the_installed_streamlit_or_ours():
    from toolkit.ui.pages import PAGES

    assert set(assets.ELEMENTS) == set(PAGES)
    names = {n for row in assets.ELEMENTS.values() for n in row} | set(assets.LATER)
    known = set(assets.lazy_chunks()) | set(assets.OWN_MODULES)
    assert names <= known, names - known


def test_app_py_serves_the_vendored_echarts_module_for_good():
    """The chart library is the parts of Apache ECharts the app draws, one ES module built from
    static/build/ (see static/README.md), under a name that carries its version (so a browser
    may keep it: `immutable`), the version its build pins."""
    response = get(f"/{assets.ECHARTS_URL}", Starlette(routes=asgi.ROUTES, middleware=asgi.MIDDLEWARE))
    assert response.status_code == 200 and response.content == assets.ECHARTS_FILE.read_bytes()
    assert "javascript" in response.headers["content-type"]  # a module script needs a JS type
    assert "immutable" in response.headers["cache-control"]
    version = re.search(r"echarts-(\d+\.\d+\.\d+)-app\.esm\.min\.js$", assets.ECHARTS_URL).group(1)
    build = assets.ECHARTS_FILE.parent / "build"
    assert json.loads((build / "package.json").read_text())["dependencies"]["echarts"] == version
    locked = json.loads((build / "package-lock.json").read_text())["packages"]["node_modules/echarts"]
    assert locked["version"] == version
    text = response.text
    assert text.startswith(f"/*! Apache ECharts {version} ") and f'="{version}"' in text  # its own version string
    exported = re.search(r"export\s*\{([^}]*)\}\s*;?\s*$", text).group(1)
    assert {"init", "getInstanceByDom"} <= {part.split(" as ")[-1].strip() for part in exported.split(",")}
    license_text = (assets.ECHARTS_FILE.parent / "echarts-LICENSE.txt").read_text()
    assert "Apache License" in license_text and "Apache ECharts" in license_text


def test_streamlits_front_end_is_sent_from_memory_as_its_own_handler_sends_it():
    """`assets.FromMemory` answers every file under Streamlit's /static/ with the body, type and
    caching Streamlit's handler gives it; anything else reaches the app behind it."""
    from streamlit import file_util
    from streamlit.web.server.starlette import starlette_static_routes as routes

    streamlits = routes.create_streamlit_static_handler(file_util.get_static_dir(), None)
    ours = Starlette(routes=[Route("/{path:path}", Fallback())], middleware=[Middleware(assets.FromMemory)])
    paths = [path for path in assets.static_files() if path.startswith("/static/")]
    assert len(paths) > 100 and any(path.endswith(".woff2") for path in paths)

    async def both() -> list[tuple[str, httpx.Response, httpx.Response]]:
        clients = [
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://app")
            for app in (ours, streamlits)
        ]
        async with clients[0] as mine, clients[1] as theirs:
            return [(path, await mine.get(path), await theirs.get(path)) for path in paths]

    for path, mine, theirs in asyncio.run(both()):
        assert (mine.status_code, theirs.status_code) == (200, 200), path
        assert mine.content == theirs.content, path
        for header in ("content-type", "content-length", "cache-control"):
            assert mine.headers[header] == theirs.headers[header], (path, header)
    # Not a file of the table: the app behind answers (here a plain 404 of the fallback route).
    for path in ("/static/js/nonexistent.js", "/static/js/../../index.html", "/index.html", "/static/js"):
        assert get(path, ours).text.startswith("fallback /"), path


class Fallback:
    """A route that says it was reached."""

    async def __call__(self, scope, receive, send):  # noqa: ANN001 - the ASGI signature
        from starlette.responses import PlainTextResponse

        await PlainTextResponse(f"fallback {scope['path']}", status_code=404)(scope, receive, send)


# -- in-place links ---------------------------------------------------------------------------


def test_a_link_followed_in_place_writes_its_query_over_the_url():
    current = {"view": "explore", "tld": ".fr", "sort": "-trust_flow", "page": "4", "cols": "name,tf"}
    # A column title: the next sort, back to page 1, the rest kept.
    assert follow_link("?view=explore&tld=.fr&sort=-effective_price&cols=name%2Ctf", current) == {
        "view": "explore",
        "tld": ".fr",
        "sort": "-effective_price",
        "cols": "name,tf",
    }
    # A name: its page, with the search's filters; the table's own settings (sort, page,
    # columns) stay with the table (in the browser's history for Back, in the session for the sidebar).
    assert follow_link("?view=detail&name=caf%C3%A9.fr", current) == {"view": "detail", "tld": ".fr", "name": "café.fr"}
    # A link to a table brings that table's own settings, never the page-before's.
    assert follow_link("?view=pending&tld=uk", current) == {"view": "pending", "tld": "uk"}
    # A blank value removes its key.
    assert follow_link("?sort=&view=explore", current) == {"view": "explore", "tld": ".fr", "cols": "name,tf"}


def test_every_page_has_the_browser_load_what_it_did_not_draw_later(monkeypatch):
    """The page's HTML carries the work left for after the page (assets.later_script): the code
    of what it did not draw, to preload, and on a page without a chart the small charts to draw
    out of sight; no component on the page for it."""
    import json

    later = {}
    for view in ("explore", "trust-flow"):
        script = assets.preload_links(view).decode().split("<script", 1)[1]
        later[view] = json.loads(re.search(r"const later = (\{.*?\});\n", script).group(1).replace("<\\/", "</"))
        modules = later[view]["modules"]
        assert later[view]["after"] == assets.LATER_MS and modules and all(module_file(m).is_file() for m in modules)
        assert not set(modules) & set(assets.page_chunks(view))  # what the HTML named is not fetched twice
    names = lambda modules: {m.rsplit("/", 1)[-1].split(".")[0] for m in modules}  # noqa: E731
    assert "NumberInput" in names(later["explore"]["modules"])  # the closed groups' widgets
    assert assets.ECHARTS_URL in later["explore"]["modules"]  # the charts, on a page without one
    assert assets.ECHARTS_URL not in later["trust-flow"]["modules"]
    # A page without charts has the browser run ECharts and draw the kinds of chart the pages
    # draw, out of sight; a chart page draws its own.
    assert later["trust-flow"]["warm"] is None and later["explore"]["warm"] == assets.ECHARTS_URL
    kinds = {series["type"] for option in later["explore"]["options"] for series in option["series"]}
    assert {"line", "bar", "heatmap"} <= kinds


# -- the charts, served ------------------------------------------------------------------------


def drawn_charts(at: AppTest) -> tuple[list[dict], list[dict]]:
    """What a run drew: Streamlit's ECharts elements' options, and our chart component's data."""
    import json

    streamlit_charts = [json.loads(e.proto.spec) for e in at.get("echarts_chart")]
    ours = [json.loads(e.proto.json)[0] for e in at.get("bidi_component") if e.proto.component_name == "edt_chart"]
    return streamlit_charts, ours


@pytest.mark.parametrize("view", ["trust-flow", "archive", "calendar"])
def test_served_by_app_py_the_charts_are_drawn_by_our_component_with_the_same_options(demo_db, monkeypatch, view):
    def run() -> AppTest:
        at = AppTest.from_file(asgi.SCRIPT, default_timeout=60)
        at.query_params["view"] = view
        at.query_params["tld"] = ".com,.de"
        at.run()
        assert not at.exception
        return at

    alone, none = drawn_charts(run())  # AppTest alone: no app.py routes, Streamlit's element
    monkeypatch.setattr(assets, "served", lambda: True)
    no_element, ours = drawn_charts(run())
    assert alone and not none and not no_element
    assert [chart["option"] for chart in ours] == alone  # the same option, whoever draws it
    assert all(chart["module"] == assets.ECHARTS_URL and chart["height"] >= 300 for chart in ours)
