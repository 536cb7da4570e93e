"""The app in a real browser: `python -m toolkit.bench.browser --db PATH --out DIR [--port N] [--views v1,v2] [--timings]`.

Starts the Streamlit app (`streamlit run app.py`, headless, on 127.0.0.1) on the given
mirror, opens each page (`?view=...`) in headless Chromium, waits until Streamlit has
finished running the script, saves a screenshot `DIR/VIEW.png` and fails the page if it
shows an exception. Prints one line per page, writes the server's output to
`DIR/server.log`, and exits 1 if any page failed (2 if the check could not run at all).

With `--timings` it measures instead what an investor waits for, in headless Chromium at
1400x1000, medians of `--repeat` rounds (3): per page the *cold* open (a browser already
running but with empty caches, then the app started, the page opened the moment the server
answers, as `edt app` opens it: the server's warm-up is timed, Chromium's own start-up is
not), a *reload* (a new session on the warm server), a *change* (a sidebar or page filter, a
second after the page was drawn, timed from the input until the page has drawn again) and a
*restart* (the server started again on the same address, the page opened in the same
browser: a returning investor's first page of the day, Streamlit's code in the browser's
cache); then on Explore, a second after it was drawn, each filter change (TLD, min TF,
categories, next page, a column title) and opening a domain from the table, one after the
other. Peers are measured in the same rounds, cold, reload and restart: a blank Streamlit
page, and a page with one small chart drawn by ECharts and by Plotly (what Streamlit itself
costs on this machine at this moment); each page's cold, reload and restart are also printed
as a multiple of the blank page's, the median of each round's ratio (a round opens every
peer and page once, so the machine's drifting speed touches both alike). It prints the table
docs/benchmarks.md reports.

With `--timings --random SEED` the pages are bookmarks nobody chose: per round, one per page
of `RANDOM_VIEWS` with filters drawn from the mirror by a seeded generator (1-3 of its TLDs,
a minimum Trust Flow, a sort, a listing's name), each opened cold, reloaded and restarted
against the blank page of the same round. The seed and the URLs are printed.

Needs Debian's `chromium` and `chromium-driver` (/usr/bin/chromium, /usr/bin/chromedriver)
and the `selenium` package; nothing is downloaded (Selenium Manager is never asked).
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import toolkit

__all__ = [
    "VIEWS",
    "CHROMIUM",
    "CHROMEDRIVER",
    "AppCheckError",
    "ViewResult",
    "chromium_available",
    "find_app",
    "serve_app",
    "browser",
    "check_view",
    "page_failure",
    "Timing",
    "measure",
    "timing_table",
    "main",
]

VIEWS: tuple[str, ...] = ("explore", "pending", "detail", "trust-flow", "archive", "calendar", "watchlist", "sync")
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
HEALTH_TIMEOUT_S = 60.0
PAGE_TIMEOUT_S = 30.0
SETTLE_S = 0.5  # after Streamlit reports "not running": lets charts finish drawing
POLL_S = 0.2

# A line that ends a Python traceback: "ValueError: boom", "pkg.mod.SyncBusy: busy", "KeyboardInterrupt".
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*: .+|[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))$")

# The page is done when the script ran (state "notRunning"), the "Running..." widget is gone and
# the main block holds something; while charts or skeletons are still loading it is not.
_PAGE_STATE_JS = """
const app = document.querySelector('[data-testid="stApp"]');
const main = document.querySelector('[data-testid="stMainBlockContainer"]')
    || document.querySelector('[data-testid="stAppViewContainer"]');
const charts = Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'));
return {
  app: !!app,
  script: app ? app.getAttribute('data-test-script-state') : null,
  connection: app ? app.getAttribute('data-test-connection-state') : null,
  statusWidget: !!document.querySelector('[data-testid="stStatusWidget"]'),
  elements: main ? main.querySelectorAll('[data-testid="stElementContainer"]').length : 0,
  skeletons: document.querySelectorAll('[data-testid="stSkeleton"]').length,
  chartsPending: charts.filter(c => !c.querySelector('.main-svg')).length + Array.from(document.querySelectorAll('[data-testid="stEChartsChart"], .edt-chart')).filter(c => !c.querySelector('canvas')).length,
  exceptions: Array.from(document.querySelectorAll('[data-testid="stException"]')).map(e => e.innerText),
};
"""
# The page's whole text, read once it is drawn (reading it lays the page out: not while timing).
_TEXT_JS = "return document.body ? document.body.innerText : '';"


class AppCheckError(RuntimeError):
    """The check could not run: the app did not start (the message says why)."""


@dataclass
class ViewResult:
    """What one page did: `failure` is None when it rendered without an exception."""

    view: str
    seconds: float
    screenshot: Path | None
    failure: str | None = None

    @property
    def ok(self) -> bool:
        return self.failure is None

    def line(self) -> str:
        if self.failure:
            return f"{self.view}: {self.failure}"
        shot = self.screenshot.name if self.screenshot else "no screenshot"
        return f"{self.view}: ok, {self.seconds:.1f} s, {shot}"


def chromium_available() -> bool:
    """True when Debian's chromium and chromedriver are installed and selenium imports."""
    if not (os.access(CHROMIUM, os.X_OK) and os.access(CHROMEDRIVER, os.X_OK)):
        return False
    try:
        import selenium.webdriver  # noqa: F401
    except ImportError:
        return False
    return True


def find_app() -> Path:
    """The repository's app.py, beside the `toolkit` package."""
    return Path(toolkit.__file__).resolve().parents[1] / "app.py"


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "(no message)")


def page_failure(exception_texts: Sequence[str], page_text: str) -> str | None:
    """The failure line for a rendered page, or None if it shows no exception.

    `exception_texts` are the texts of Streamlit's exception boxes (`stException`), `page_text`
    the page's whole visible text. An exception box gives "EXCEPTION: <its first line>" (the
    exception's type and message); a bare "Traceback" in the text (one printed by the app)
    gives "EXCEPTION: <the line that ends the traceback>", or the Traceback line itself.
    """
    boxes = [t for t in exception_texts if t.strip()] or list(exception_texts)
    if boxes:
        more = f" (+{len(boxes) - 1} more)" if len(boxes) > 1 else ""
        return f"EXCEPTION: {_first_line(boxes[0])}{more}"
    lines = page_text.splitlines()
    for index, line in enumerate(lines):
        if "Traceback" in line:
            ending = next(
                (later.strip() for later in lines[index + 1 :] if _EXCEPTION_LINE.match(later.strip())), line.strip()
            )
            return f"EXCEPTION: {ending}"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(app: Path, db: Path, port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    from ..ui import streamlit_flags

    command = [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(app),
        "--server.headless",
        "true",
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.fileWatcherType",
        "none",
        *streamlit_flags(),
    ]
    env = {**os.environ, "EDT_DB": str(db)}
    return subprocess.Popen(
        command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=str(app.parent)
    )


def _wait_healthy(base: str, server: subprocess.Popen[bytes], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"{base}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(POLL_S)
    return False


def _stop_server(server: subprocess.Popen[bytes]) -> None:
    if server.poll() is not None:
        return
    server.terminate()
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait(timeout=10)


@contextmanager
def serve_app(app: Path, db: Path, log_path: Path, port: int = 0) -> Iterator[str]:
    """Runs `streamlit run APP` on the mirror DB (EDT_DB) until the block ends; yields its base URL.

    The server's output goes to `log_path`. Raises AppCheckError if it never answers on
    `/_stcore/health`. On leaving, the server is terminated, then killed if it lingers.
    """
    port = port or _free_port()
    base = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        server = _start_server(app, db.resolve(), port, log)
        try:
            if not _wait_healthy(base, server, HEALTH_TIMEOUT_S):
                how = f"exited with {server.returncode}" if server.poll() is not None else "did not answer"
                raise AppCheckError(f"the app {how} on {base}/_stcore/health; {log_path}:\n{_log_tail(log_path)}")
            yield base
        finally:
            _stop_server(server)


@contextmanager
def browser() -> Iterator[Any]:
    """Headless Chromium through chromedriver (Debian's binaries; Selenium Manager is skipped)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--window-size=1400,1000",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(argument)
    try:
        driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    except Exception as exc:  # selenium's errors carry chromedriver's reason in their message
        raise AppCheckError(f"Chromium did not start: {type(exc).__name__}: {_first_line(str(exc))}") from exc
    try:
        yield driver
    finally:
        driver.quit()


def _rendered(state: dict[str, Any]) -> bool:
    if not state.get("app"):
        return False
    if state.get("exceptions"):
        return state.get("script") == "notRunning"
    return (
        state.get("script") == "notRunning"
        and not state.get("statusWidget")
        and state.get("elements", 0) > 0
        and not state.get("skeletons")
        and not state.get("chartsPending")
    )


def check_view(driver: Any, base: str, view: str, out: Path, timeout: float = PAGE_TIMEOUT_S) -> ViewResult:
    """Opens `?view=VIEW`, waits until it has rendered, saves `out/VIEW.png`, and judges it."""
    started = time.monotonic()
    shot = out / f"{view}.png"
    shot.unlink(missing_ok=True)  # a screenshot left by an earlier run is no evidence of this one
    failure: str | None = None
    state: dict[str, Any] = {}
    try:
        driver.get(f"{base}/?view={view}")
        deadline = started + timeout
        done_twice = 0  # two polls in a row: a finished first run is not followed by a second one
        while time.monotonic() < deadline:
            state = driver.execute_script(_PAGE_STATE_JS) or {}
            done_twice = done_twice + 1 if _rendered(state) else 0
            if done_twice >= 2:
                break
            time.sleep(POLL_S)
        else:
            failure = (
                f"TIMEOUT: not rendered after {timeout:.0f} s (script {state.get('script')}, "
                f"connection {state.get('connection')})"
            )
        seconds = time.monotonic() - started
        time.sleep(SETTLE_S)
        state = driver.execute_script(_PAGE_STATE_JS) or state
        found = page_failure(state.get("exceptions") or [], driver.execute_script(_TEXT_JS) or "")
        failure = found or failure
        if not driver.save_screenshot(str(shot)):
            shot = None
            failure = failure or "ERROR: no screenshot"
    except Exception as exc:  # a browser that died or a page that never loaded fails this view, not the run
        seconds = time.monotonic() - started
        failure = f"ERROR: {type(exc).__name__}: {_first_line(str(exc))}"
        shot = shot if shot.exists() else None
    return ViewResult(view=view, seconds=seconds, screenshot=shot, failure=failure)


# -- timings ----------------------------------------------------------------------------------

# Watches the script state from before an action: a rerun is done when the state went to
# "running" and came back to "notRunning" with the page drawn.
_WATCH_JS = """
const app = document.querySelector('[data-testid="stApp"]');
window.__edtRuns = [];
if (window.__edtObserver) { window.__edtObserver.disconnect(); }
window.__edtObserver = new MutationObserver(() => window.__edtRuns.push(app.getAttribute('data-test-script-state')));
window.__edtObserver.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
"""
_RERAN_JS = "return (window.__edtRuns || []).join(',');"


def _wait_rendered(driver: Any, started: float, timeout: float, *, rerun: bool) -> float:
    """Seconds from `started` until the page has drawn (after a rerun, when `rerun`)."""
    deadline = started + timeout
    done_twice = 0
    finished = None
    while time.monotonic() < deadline:
        ran = (driver.execute_script(_RERAN_JS) or "") if rerun else "running,notRunning"
        state = driver.execute_script(_PAGE_STATE_JS) or {}
        if "running" in ran.split(",") and _rendered(state):
            if done_twice == 0:
                finished = time.monotonic()
            done_twice += 1
            if done_twice >= 2:
                return (finished or time.monotonic()) - started
        else:
            done_twice = 0
        time.sleep(0.05)
    raise AppCheckError(f"not drawn within {timeout:.0f} s")


def _open(driver: Any, url: str, timeout: float) -> float:
    started = time.monotonic()
    driver.get(url)
    return _wait_rendered(driver, started, timeout, rerun=False)


def _act(driver: Any, action: Any, timeout: float) -> float:
    """Seconds from the user's gesture (a key or a click) until the rerun has drawn the answer.
    `action(driver)` finds and readies the element (not timed) and returns the gesture."""
    gesture = action(driver)
    driver.execute_script(_WATCH_JS)
    started = time.monotonic()
    gesture()
    return _wait_rendered(driver, started, timeout, rerun=True)


def _center(driver: Any, element: Any) -> None:
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)


def _type_into(label: str, text: str, sidebar: bool = True, group: str | None = None) -> Any:
    """Type `text` into the input labelled `label`; the gesture is the Enter key. In a closed
    sidebar `group`, the group is opened first (not timed: its own step when timed)."""

    def action(driver: Any) -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.common.keys import Keys

        scope = '[data-testid="stSidebar"] ' if sidebar else ""
        selector = f'{scope}input[aria-label="{label}"]'
        if group and not driver.find_elements(By.CSS_SELECTOR, selector):
            _act(driver, _expand(group), PAGE_TIMEOUT_S)
        field = driver.find_element(By.CSS_SELECTOR, selector)
        _center(driver, field)
        field.click()
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(text)
        return lambda: field.send_keys(Keys.ENTER)

    return action


def _expand(title: str) -> Any:
    """Open the sidebar group `title`; the gesture is the click on its title (a rerun draws its widgets)."""

    def action(driver: Any) -> Any:
        from selenium.webdriver.common.by import By

        for summary in driver.find_elements(By.CSS_SELECTOR, '[data-testid="stSidebar"] summary'):
            if title in summary.text:
                if summary.find_element(By.XPATH, "..").get_attribute("open") is not None:
                    raise AppCheckError(f"the sidebar group {title!r} is open already")
                _center(driver, summary)
                return summary.click
        raise AppCheckError(f"no sidebar group {title!r}")

    return action


def _click_link(css: str) -> Any:
    def action(driver: Any) -> Any:
        from selenium.webdriver.common.by import By

        link = driver.find_element(By.CSS_SELECTOR, css)
        _center(driver, link)
        return link.click

    return action


# Per page: the URL's extra query, and the change a user makes (what it is, how it is made).
_PAGE_CHANGES: dict[str, tuple[str, str, Any]] = {
    "explore": ("", "sidebar: TLD .com", _type_into("TLDs", ".com", group="Source and type")),
    "pending": ("", "sidebar: TLD uk", _type_into("TLDs", "uk", group="Source and type")),
    "detail": ("&name={name}", "another name", _type_into("Domain name", "{other}", sidebar=False)),
    "trust-flow": ("", "sidebar: TLD .com", _type_into("TLDs", ".com", group="Source and type")),
    "archive": ("", "sidebar: TLD .com", _type_into("TLDs", ".com", group="Source and type")),
    "calendar": ("", "TLD .de", _type_into("TLD (comma-separated)", ".de", sidebar=False)),
    "watchlist": ("", "", None),  # opened only: its changes write to the mirror
    "sync": ("", "", None),
}


# Links of the results table that change the page in place (a rerun, not a new document),
# and what the URL then holds.
_IN_PLACE = {
    "next page": "page=2",
    "sort by a column title (Price)": "sort=-effective_price",
    "open a domain from the table": "view=detail",
}


@dataclass
class Timing:
    """One measured row: what, and the seconds of each repetition."""

    what: str
    seconds: list[float]

    @property
    def median(self) -> float:
        if not self.seconds:
            return math.nan
        ordered = sorted(self.seconds)
        middle = len(ordered) // 2
        return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _names(db: Path) -> tuple[str, str]:
    from ..query import Mirror

    mirror = Mirror(db, readonly=True, engine="auto")
    data = mirror.search_domains({"has_bids": "1", "sort": "-bids_count", "per_page": "2"})["data"]
    return data[0]["name"], data[1]["name"]


# The page's fetches: [url, started after the HTML was parsed]. What the HTML names starts
# while it is parsed; Streamlit's lazy imports start once the script's first message has
# arrived, later. (A fetch's `initiatorType` would not tell: Chrome reports some of the
# HTML's modulepreloads as "script".)
_FETCHED_JS = """
const parsed = performance.getEntriesByType('navigation')[0].domContentLoadedEventEnd;
return performance.getEntriesByType('resource').map(e => [e.name, e.startTime > parsed]);
"""


def chunks_not_preloaded(driver: Any) -> list[str]:
    """Names of the element chunks (`assets.lazy_chunks`, and our `assets.OWN_MODULES`) this
    document fetched on demand: none when the page's HTML named every element the page drew."""
    from ..ui.assets import OWN_MODULES, lazy_chunks

    names = {file: name for name, file in lazy_chunks().items()}
    names.update({path.rsplit("/", 1)[-1]: name for name, path in OWN_MODULES.items()})
    fetched = [(url.rsplit("/", 1)[-1], late) for url, late in driver.execute_script(_FETCHED_JS) or []]
    early = {file for file, late in fetched if not late}
    return sorted({names[file] for file, late in fetched if late and file in names and file not in early})


# Peers measured in the same run, so the app's figures read against what Streamlit itself
# costs on this machine at this moment: a page with nothing, and one with a single small
# chart, drawn by Streamlit's ECharts element (the library the app's own component draws with)
# and by Plotly (the notebooks' charts):
# Streamlit loads a chart library's code the first time a page draws a chart.
PEERS: dict[str, str] = {
    "(peer) a blank Streamlit page": 'import streamlit as st\n\nst.write("hello")\n',
    "(peer) one small ECharts chart": (
        'import streamlit as st\n\nst.write("hello")\nst.echarts_chart({"xAxis": {"type": '
        '"category", "data": ["a", "b", "c"]}, "yAxis": {}, "series": [{"type": "line", '
        '"data": [1, 3, 2]}]})\n'
    ),
    "(peer) one small Plotly chart": (
        'import plotly.graph_objects as go\nimport streamlit as st\n\nst.write("hello")\n'
        "st.plotly_chart(go.Figure(go.Scatter(x=[1, 2, 3], y=[1, 3, 2])))\n"
    ),
}


# Before the first change on a page just drawn: an investor reads it first. Without it the
# change would meet the work a page leaves for the browser's idle time (`assets.later_script`:
# preloads and the chart warm-up), which no one clicking by hand ever meets.
THINK_S = 1.0


def _open_page(driver: Any, url: str, row: Mapping[str, Timing], kind: str, what: str, timeout: float) -> None:
    try:
        row[kind].seconds.append(_open(driver, url, timeout))
    except AppCheckError as exc:
        raise AppCheckError(f"{what}, {kind} open: {exc}") from None


def _one_round(
    app: Path,
    db: Path,
    log_path: Path,
    path: str,
    row: Mapping[str, Timing],
    timeout: float,
    what: str,
    change: Any = None,
) -> None:
    """Open `path` in a fresh browser on a fresh server (cold), then again (reload), then time
    `change` if given; then stop the server, start it again on the same address and open the
    page in the same browser (restart: an investor's next morning, Streamlit's code cached).

    The browser starts first, as an investor's is already running: Chromium's own start-up
    (a second of background work on two cores) would otherwise overlap the cold open."""
    port = _free_port()
    with ExitStack() as session:
        driver = session.enter_context(browser())
        driver.get("about:blank")
        server = ExitStack()
        session.callback(server.close)
        base = server.enter_context(serve_app(app, db, log_path, port))  # the page opens as soon as it answers
        for kind in ("cold", "reload"):
            _open_page(driver, f"{base}{path}", row, kind, what, timeout)
        if change is not None:
            time.sleep(THINK_S)
            try:
                row["change"].seconds.append(_act(driver, change, timeout))
            except AppCheckError as exc:
                raise AppCheckError(f"{what}, {row['change'].what}: {exc}") from None
        server.close()
        with serve_app(app, db, log_path, port) as base:
            _open_page(driver, f"{base}{path}", row, "restart", what, timeout)


def _row(what: str = "") -> dict[str, Timing]:
    return {
        "cold": Timing("cold", []),
        "reload": Timing("reload", []),
        "restart": Timing("restart", []),
        "change": Timing(what, []),
    }


def measure(
    db: Path, log_path: Path, *, repeat: int = 3, views: Sequence[str] = tuple(_PAGE_CHANGES), timeout: float = 120.0
) -> tuple[dict[str, dict[str, Timing]], list[Timing]]:
    """Page timings ({view: {"cold", "reload", "restart", "change"}}, the peers first) and
    Explore's interactions. Measured in rounds: each round opens every peer and every page
    once, so a drift of the machine's speed during the run touches the peers and the pages alike."""
    import tempfile

    name, other = _names(db)
    app = find_app()
    pages: dict[str, dict[str, Timing]] = {label: _row() for label in PEERS}
    pages |= {view: _row(_PAGE_CHANGES[view][1]) for view in views}
    with tempfile.TemporaryDirectory() as folder:
        peers = {label: Path(folder) / f"peer{i}.py" for i, label in enumerate(PEERS)}
        for label, path in peers.items():
            path.write_text(PEERS[label])
        for _ in range(repeat):
            for label, path in peers.items():
                _one_round(path, db, log_path, "/", pages[label], timeout, label)
                print(
                    f"  {label}: "
                    + ", ".join(f"{k} {t.seconds[-1]:.2f} s" for k, t in pages[label].items() if t.seconds),
                    file=sys.stderr,
                    flush=True,
                )
            for view in views:
                extra, _what, change = _PAGE_CHANGES[view]
                if view == "detail":
                    change = _type_into("Domain name", other, sidebar=False)
                row = pages[view]
                _one_round(app, db, log_path, f"/?view={view}{extra.format(name=name)}", row, timeout, view, change)
                print(
                    f"  {view}: " + ", ".join(f"{k} {t.seconds[-1]:.2f} s" for k, t in row.items() if t.seconds),
                    file=sys.stderr,
                    flush=True,
                )
    steps = [
        ("next page", _click_link('.edt-pager a[href*="page=2"]')),
        ("sort by a column title (Price)", _click_link('th a[href*="effective_price"]')),
        ("open a domain from the table", _click_link("a.edt-name")),
        ("TLD .fr,.de", _type_into("TLDs", ".fr,.de", group="Source and type")),
        ("open the SEO metrics group", _expand("SEO metrics")),
        ("min Trust Flow 20", _type_into("Min Trust Flow", "20")),
        ("open the Names group", _expand("Names")),
        ("categories Business", _type_into("Categories", "Business")),
    ]
    interactions = [Timing(label, []) for label, _ in steps]
    for _ in range(repeat):
        with serve_app(app, db, log_path) as base, browser() as driver:
            try:
                _open(driver, f"{base}/?view=explore", timeout)
            except AppCheckError as exc:
                raise AppCheckError(f"Explore, first open: {exc}") from None
            time.sleep(THINK_S)
            for timing, (label, step) in zip(interactions, steps):
                expected = _IN_PLACE.get(label)
                table_url = driver.current_url
                driver.execute_script("window.__edtSameDocument = true;")
                try:
                    timing.seconds.append(_act(driver, step, timeout))
                except AppCheckError as exc:
                    raise AppCheckError(f"Explore, {label}: {exc}") from None
                if expected and (
                    expected not in driver.current_url
                    or not driver.execute_script("return window.__edtSameDocument === true;")
                ):
                    raise AppCheckError(
                        f"Explore, {label}: the link did not change the page in place (now {driver.current_url})"
                    )
                print(f"  Explore, {label}: {timing.seconds[-1]:.2f} s", file=sys.stderr, flush=True)
                if label.startswith("open a domain"):  # back to the sorted table (not timed; no
                    _open(driver, table_url, timeout)  # history.back: its cache keeps the old page)
    return pages, interactions


RANDOM_VIEWS = ("explore", "pending", "detail", "trust-flow", "archive", "calendar")


def random_bookmarks(db: Path, rng: random.Random) -> dict[str, str]:
    """One bookmark (its query string) per page of `RANDOM_VIEWS`, the filters drawn by `rng`
    from the mirror: 1-3 of its TLDs holding 50 listings or more, a minimum Trust Flow, a sort
    of the API's, and for the domain page a listing's name."""
    from urllib.parse import urlencode

    from ..query.params import DOMAIN_SORTS, PENDING_SORTS

    with sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True) as con:
        tlds = [t for (t,) in con.execute("SELECT tld FROM listings GROUP BY tld HAVING count(*) >= 50 ORDER BY tld")]
        count = con.execute("SELECT count(*) FROM listings").fetchone()[0]
        name = con.execute(
            "SELECT name FROM listings ORDER BY id LIMIT 1 OFFSET ?", (rng.randrange(count),)
        ).fetchone()[0]

    def some_tlds() -> str:
        return ",".join("." + t.lstrip(".") for t in rng.sample(tlds, rng.randint(1, min(3, len(tlds)))))

    def tf_min() -> str:
        return str(rng.choice([0, 5, 10, 20, 30]))

    queries = {
        "explore": {"tld": some_tlds(), "tf_min": tf_min(), "sort": rng.choice(["", "-"]) + rng.choice(DOMAIN_SORTS)},
        "pending": {"tld": some_tlds(), "sort": rng.choice(PENDING_SORTS)},
        "detail": {"name": name},
        "trust-flow": {"tld": some_tlds(), "tf_min": tf_min()},
        "archive": {"tld": some_tlds(), "tf_min": tf_min()},
        "calendar": {"cal_tld": some_tlds()},
    }
    return {view: urlencode({"view": view, **queries[view]}) for view in RANDOM_VIEWS}


def measure_random(
    db: Path, log_path: Path, seed: int, *, repeat: int = 3, timeout: float = 120.0
) -> tuple[dict[str, dict[str, Timing]], list[str]]:
    """Cold, reload and restart of `repeat` rounds of `random_bookmarks(seed)`, each round
    with the blank page's peer first; returns the rows (as `measure`) and the URLs opened."""
    import tempfile

    rng = random.Random(seed)
    app = find_app()
    blank = next(label for label in PEERS if label.startswith("(peer) a blank"))
    pages: dict[str, dict[str, Timing]] = {blank: _row(), **{view: _row() for view in RANDOM_VIEWS}}
    urls: list[str] = []
    with tempfile.TemporaryDirectory() as folder:
        peer = Path(folder) / "peer.py"
        peer.write_text(PEERS[blank])
        for _ in range(repeat):
            _one_round(peer, db, log_path, "/", pages[blank], timeout, blank)
            for view, query in random_bookmarks(db, rng).items():
                urls.append(f"/?{query}")
                _one_round(app, db, log_path, urls[-1], pages[view], timeout, urls[-1])
                print(
                    f"  {urls[-1]}: "
                    + ", ".join(f"{k} {t.seconds[-1]:.2f} s" for k, t in pages[view].items() if k != "change"),
                    file=sys.stderr,
                    flush=True,
                )
    return pages, urls


def timing_table(pages: Mapping[str, Mapping[str, Timing]], interactions: Sequence[Timing]) -> str:
    """The figures as docs/benchmarks.md's Markdown tables (medians, seconds); with the blank page's
    peer row, each page's cold, reload and restart also as a multiple of that page's: the median of
    each round's ratio when both were measured in the same rounds, else the medians' ratio."""
    blank = next((row for view, row in pages.items() if view.startswith("(peer) a blank")), None)

    def times(timing: Timing, peer: Timing | None) -> str:
        if math.isnan(timing.median):
            return "—"
        ratio = ""
        if peer and len(peer.seconds) == len(timing.seconds) and all(peer.seconds):
            ratio = f" ({Timing('', [t / p for t, p in zip(timing.seconds, peer.seconds)]).median:.1f}x)"
        elif peer and peer.median > 0:
            ratio = f" ({timing.median / peer.median:.1f}x)"
        return f"{timing.median:.2f} s{ratio}"

    lines = ["| page | cold | reload | restart | change | (the change) |", "|---|---:|---:|---:|---:|---|"]
    for view, row in pages.items():
        cold, reload, restart = (
            times(row.get(k) or Timing(k, []), (blank.get(k) if blank else None)) for k in ("cold", "reload", "restart")
        )
        lines.append(
            f"| {view} | {cold} | {reload} | {restart} | {times(row['change'], None)} | {row['change'].what} |"
        )
    if interactions:
        lines += ["", "| on Explore | median | runs |", "|---|---:|---|"]
    for timing in interactions:
        runs = ", ".join(f"{s:.2f}" for s in timing.seconds)
        lines.append(f"| {timing.what} | {timing.median:.2f} s | {runs} |")
    return "\n".join(lines)


def _log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m toolkit.bench.browser", description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, type=Path, help="the mirror the app opens (EDT_DB)")
    parser.add_argument("--out", required=True, type=Path, help="folder for VIEW.png screenshots and server.log")
    parser.add_argument("--port", type=int, default=0, help="the app's port (default: a free one)")
    parser.add_argument("--views", default=",".join(VIEWS), help=f"comma-separated, of: {', '.join(VIEWS)}")
    parser.add_argument("--timeout", type=float, default=PAGE_TIMEOUT_S, help="seconds each page may take")
    parser.add_argument("--timings", action="store_true", help="measure cold / reload / change per page instead")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (the median is printed)")
    parser.add_argument(
        "--random",
        type=int,
        metavar="SEED",
        default=None,
        help="with --timings: bookmarks with filters drawn by this seed instead of the fixed pages",
    )
    args = parser.parse_args(list(argv) if argv is not None else None)

    views = [v.strip() for v in args.views.split(",") if v.strip()]
    unknown = [v for v in views if v not in VIEWS]
    if unknown or not views:
        print(
            f"appcheck: unknown view(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(VIEWS)}",
            file=sys.stderr,
        )
        return 2
    app = find_app()
    if not app.is_file():
        print(f"appcheck: the app is missing: no {app} (it is looked for beside the toolkit package)", file=sys.stderr)
        return 2
    if not args.db.is_file():
        print(f"appcheck: no mirror at {args.db}", file=sys.stderr)
        return 2
    if not chromium_available():
        print(
            f"appcheck: needs {CHROMIUM}, {CHROMEDRIVER} (apt-get install chromium chromium-driver) "
            "and selenium (pip install selenium)",
            file=sys.stderr,
        )
        return 2

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "server.log"
    if args.timings and args.random is not None:
        try:
            pages, urls = measure_random(
                args.db, log_path, args.random, repeat=max(1, args.repeat), timeout=max(args.timeout, 60.0)
            )
        except AppCheckError as exc:
            print(f"appcheck: {exc}; server output in {log_path}", file=sys.stderr)
            return 1
        print(f"Random bookmarks, seed {args.random}:\n" + "\n".join(f"- `{url}`" for url in urls) + "\n")
        print(timing_table(pages, []))
        return 0
    if args.timings:
        measured = [v for v in views if v in _PAGE_CHANGES]
        try:
            pages, interactions = measure(
                args.db, log_path, repeat=max(1, args.repeat), views=measured, timeout=max(args.timeout, 60.0)
            )
        except AppCheckError as exc:
            print(f"appcheck: {exc}; server output in {log_path}", file=sys.stderr)
            return 1
        print(timing_table(pages, interactions))
        return 0
    results: list[ViewResult] = []
    try:
        with serve_app(app, args.db, log_path, port=args.port) as base, browser() as driver:
            for view in views:
                result = check_view(driver, base, view, out, timeout=args.timeout)
                results.append(result)
                print(result.line(), flush=True)
    except AppCheckError as exc:
        print(f"appcheck: {exc}", file=sys.stderr)
        return 2
    failed = [r for r in results if not r.ok]
    if failed:
        print(f"{len(failed)} of {len(results)} page(s) failed; server output in {log_path}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
