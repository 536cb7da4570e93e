"""What an investor waits for, in a real browser (`python -m toolkit.bench.browser --timings`):
each page's cold open, reload, filter change and restart, the peers (a blank Streamlit page,
one chart by ECharts and by Plotly) measured in the same rounds, and the interactions on
Explore; `timing_table` prints what docs/benchmarks.md reports."""

from __future__ import annotations

import math
import random
import sqlite3
import sys
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .app_server import PAGE_STATE_JS, PAGE_TIMEOUT_S, AppCheckError, browser, find_app, free_port, rendered, serve_app

__all__ = [
    "PAGE_CHANGES",
    "Timing",
    "PEERS",
    "RANDOM_VIEWS",
    "chunks_not_preloaded",
    "measure",
    "measure_random",
    "random_bookmarks",
    "timing_table",
]

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
    ran, state = "", dict[str, Any]()
    while time.monotonic() < deadline:
        ran = (driver.execute_script(_RERAN_JS) or "") if rerun else "running,notRunning"
        state = driver.execute_script(PAGE_STATE_JS) or {}
        if "running" in ran.split(",") and rendered(state):
            if done_twice == 0:
                finished = time.monotonic()
            done_twice += 1
            if done_twice >= 2:
                return (finished or time.monotonic()) - started
        else:
            done_twice = 0
        time.sleep(0.05)
    seen = f"script states seen since the gesture: {ran or 'none'}; " if rerun else ""
    raise AppCheckError(f"not drawn within {timeout:.0f} s ({seen}the page: {state}; {driver.current_url})")


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
        field = _ready(driver, selector)
        field.send_keys(Keys.CONTROL, "a")
        field.send_keys(text)
        return lambda: field.send_keys(Keys.ENTER)

    return action


def _ready(driver: Any, selector: str, patience: float = 5.0) -> Any:
    """The input `selector` finds, scrolled to and clicked into: a widget the rerun just drew may
    still be taking its place (not interactable yet, or drawn again), so it is asked again for a
    few seconds (not timed: the gesture comes after)."""
    from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + patience
    while True:
        try:
            field = driver.find_element(By.CSS_SELECTOR, selector)
            _center(driver, field)
            field.click()
            return field
        except (ElementNotInteractableException, StaleElementReferenceException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


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
PAGE_CHANGES: dict[str, tuple[str, str, Any]] = {
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
    "sort by a column title (Price)": "sort=-effective_price_eur",
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
    port = free_port()
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
    db: Path,
    log_path: Path,
    *,
    repeat: int = 3,
    views: Sequence[str] = tuple(PAGE_CHANGES),
    timeout: float = 120.0,
    chart_peers: bool = True,
) -> tuple[dict[str, dict[str, Timing]], list[Timing]]:
    """Page timings ({view: {"cold", "reload", "restart", "change"}}, the peers first) and
    Explore's interactions. Measured in rounds: each round opens every peer and every page
    once, so a drift of the machine's speed during the run touches the peers and the pages alike.
    Without `chart_peers`, the blank page is the only peer."""
    import tempfile

    name, other = _names(db)
    app = find_app()
    labels = [label for label in PEERS if chart_peers or label.startswith("(peer) a blank")]
    pages: dict[str, dict[str, Timing]] = {label: _row() for label in labels}
    pages |= {view: _row(PAGE_CHANGES[view][1]) for view in views}
    with tempfile.TemporaryDirectory() as folder:
        peers = {label: Path(folder) / f"peer{i}.py" for i, label in enumerate(labels)}
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
                extra, _what, change = PAGE_CHANGES[view]
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
        ("sort by a column title (Price)", _click_link('th a[href*="effective_price_eur"]')),
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
