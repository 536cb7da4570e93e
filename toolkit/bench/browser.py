"""The app in a real browser: `python -m toolkit.bench.browser --db PATH --out DIR [--port N] [--views v1,v2] [--timings]`.

Starts the Streamlit app (`streamlit run app.py`, headless, on 127.0.0.1) on the given
mirror, opens each page (`?view=...`) in headless Chromium, waits until Streamlit has
finished running the script, saves a screenshot `DIR/VIEW.png` and fails the page if it
shows an exception, a table wider than the page or a figure cut short (at 1400x1000). Prints
one line per page, writes the server's output to `DIR/server.log`, and exits 1 if any page
failed (2 if the check could not run at all).

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
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .app_server import (
    PAGE_TIMEOUT_S,
    POLL_S,
    SETTLE_S,
    TEXT_JS,
    first_line,
    CHROMEDRIVER,
    CHROMIUM,
    PAGE_STATE_JS,
    AppCheckError,
    browser,
    chromium_available,
    find_app,
    rendered,
    serve_app,
)
from .browser_timings import PAGE_CHANGES, RANDOM_VIEWS, Timing, measure, measure_random, random_bookmarks, timing_table

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
    "CUT_FIGURES_JS",
    "page_failure",
    "RANDOM_VIEWS",
    "Timing",
    "measure",
    "measure_random",
    "random_bookmarks",
    "timing_table",
    "main",
]

VIEWS: tuple[str, ...] = ("explore", "pending", "detail", "trust-flow", "archive", "calendar", "watchlist", "sync")

# A line that ends a Python traceback: "ValueError: boom", "pkg.mod.SyncBusy: busy", "KeyboardInterrupt".
_EXCEPTION_LINE = re.compile(r"^(?:[A-Za-z_][\w.]*: .+|[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning))$")


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
        return f"EXCEPTION: {first_line(boxes[0])}{more}"
    lines = page_text.splitlines()
    for index, line in enumerate(lines):
        if "Traceback" in line:
            ending = next(
                (later.strip() for later in lines[index + 1 :] if _EXCEPTION_LINE.match(later.strip())), line.strip()
            )
            return f"EXCEPTION: {ending}"
    return None


# Streamlit's own page list: shown when a `pages/` folder stands beside the script it runs.
_STREAMLIT_NAV_JS = "return !!document.querySelector('[data-testid=\"stSidebarNav\"]')"
# Tables wider than the page, as [their width, the page's]: their last columns (the row's
# actions among them) would be out of sight until scrolled to.
_WIDE_TABLES_JS = (
    "return [...document.querySelectorAll('.edt-wrap')].filter(e => e.scrollWidth > e.clientWidth + 1)"
    ".map(e => [e.scrollWidth, e.clientWidth])"
)
# Figures (st.metric values) wider than their column: Streamlit ends them with "…".
CUT_FIGURES_JS = (
    "return [...document.querySelectorAll('[data-testid=\"stMetricValue\"] *')]"
    ".filter(e => e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"
)


def check_view(driver: Any, base: str, view: str, out: Path, timeout: float = PAGE_TIMEOUT_S) -> ViewResult:
    """Opens `?view=VIEW`, waits until it has rendered, saves `out/VIEW.png`, and judges it."""
    started = time.monotonic()
    path = out / f"{view}.png"
    path.unlink(missing_ok=True)  # a screenshot left by an earlier run is no evidence of this one
    shot: Path | None = path
    failure: str | None = None
    state: dict[str, Any] = {}
    try:
        driver.get(f"{base}/?view={view}")
        deadline = started + timeout
        done_twice = 0  # two polls in a row: a finished first run is not followed by a second one
        while time.monotonic() < deadline:
            state = driver.execute_script(PAGE_STATE_JS) or {}
            done_twice = done_twice + 1 if rendered(state) else 0
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
        state = driver.execute_script(PAGE_STATE_JS) or state
        found = page_failure(state.get("exceptions") or [], driver.execute_script(TEXT_JS) or "")
        if driver.execute_script(_STREAMLIT_NAV_JS):
            found = found or "ERROR: the sidebar lists Streamlit's own pages (a pages/ folder beside the page script)"
        for width, room in driver.execute_script(_WIDE_TABLES_JS) or []:
            found = (
                found or f"ERROR: a table {width:,} px wide in a page of {room:,} px: its last columns are out of sight"
            )
        for figure in driver.execute_script(CUT_FIGURES_JS) or []:
            found = found or f"ERROR: a figure drawn cut short: {figure!r}"
        failure = found or failure
        if not driver.save_screenshot(str(path)):
            shot = None
            failure = failure or "ERROR: no screenshot"
    except Exception as exc:  # a browser that died or a page that never loaded fails this view, not the run
        seconds = time.monotonic() - started
        failure = f"ERROR: {type(exc).__name__}: {first_line(str(exc))}"
        shot = path if path.exists() else None
    return ViewResult(view=view, seconds=seconds, screenshot=shot, failure=failure)


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
        "--blank-peer-only",
        action="store_true",
        help="with --timings: the blank Streamlit page as the only peer (not the one-chart pages too)",
    )
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
        measured = [v for v in views if v in PAGE_CHANGES]
        try:
            pages, interactions = measure(
                args.db,
                log_path,
                repeat=max(1, args.repeat),
                views=measured,
                timeout=max(args.timeout, 60.0),
                chart_peers=not args.blank_peer_only,
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
