"""The app in a real browser: `python -m toolkit.bench.browser --db PATH --out DIR [--port N] [--views v1,v2]`.

Starts the Streamlit app (`streamlit run app.py`, headless, on 127.0.0.1) on the given
mirror, opens each page (`?view=...`) in headless Chromium, waits until Streamlit has
finished running the script, saves a screenshot `DIR/VIEW.png` and fails the page if it
shows an exception. Prints one line per page, writes the server's output to
`DIR/server.log`, and exits 1 if any page failed (2 if the check could not run at all).

Needs Debian's `chromium` and `chromium-driver` (/usr/bin/chromium, /usr/bin/chromedriver)
and the `selenium` package; nothing is downloaded (Selenium Manager is never asked).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
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
    "main",
]

VIEWS: tuple[str, ...] = ("explore", "detail", "trust-flow", "archive", "calendar", "watchlist", "sync")
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
  chartsPending: charts.filter(c => !c.querySelector('.main-svg')).length,
  exceptions: Array.from(document.querySelectorAll('[data-testid="stException"]')).map(e => e.innerText),
  text: document.body ? document.body.innerText : '',
};
"""


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
            ending = next((later.strip() for later in lines[index + 1 :] if _EXCEPTION_LINE.match(later.strip())),
                          line.strip())  # fmt: skip
            return f"EXCEPTION: {ending}"
    return None


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_server(app: Path, db: Path, port: int, log: IO[bytes]) -> subprocess.Popen[bytes]:
    from ..ui import streamlit_flags

    command = [sys.executable, "-m", "streamlit", "run", str(app), "--server.headless", "true",
               "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none",
               *streamlit_flags()]  # fmt: skip
    env = {**os.environ, "EDT_DB": str(db)}
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            cwd=str(app.parent))  # fmt: skip


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
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000",
                     "--disable-dev-shm-usage", "--no-first-run", "--disable-extensions"):  # fmt: skip
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
    return (state.get("script") == "notRunning" and not state.get("statusWidget") and state.get("elements", 0) > 0
            and not state.get("skeletons") and not state.get("chartsPending"))  # fmt: skip


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
            failure = (f"TIMEOUT: not rendered after {timeout:.0f} s (script {state.get('script')}, "
                       f"connection {state.get('connection')})")  # fmt: skip
        seconds = time.monotonic() - started
        time.sleep(SETTLE_S)
        state = driver.execute_script(_PAGE_STATE_JS) or state
        found = page_failure(state.get("exceptions") or [], state.get("text") or "")
        failure = found or failure
        if not driver.save_screenshot(str(shot)):
            shot = None
            failure = failure or "ERROR: no screenshot"
    except Exception as exc:  # a browser that died or a page that never loaded fails this view, not the run
        seconds = time.monotonic() - started
        failure = f"ERROR: {type(exc).__name__}: {_first_line(str(exc))}"
        shot = shot if shot.exists() else None
    return ViewResult(view=view, seconds=seconds, screenshot=shot, failure=failure)


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
    args = parser.parse_args(list(argv) if argv is not None else None)

    views = [v.strip() for v in args.views.split(",") if v.strip()]
    unknown = [v for v in views if v not in VIEWS]
    if unknown or not views:
        print(f"appcheck: unknown view(s) {', '.join(unknown) or '(none given)'}; choose from {', '.join(VIEWS)}",
              file=sys.stderr)  # fmt: skip
        return 2
    app = find_app()
    if not app.is_file():
        print(f"appcheck: the app is missing: no {app} (it is looked for beside the toolkit package)", file=sys.stderr)
        return 2
    if not args.db.is_file():
        print(f"appcheck: no mirror at {args.db}", file=sys.stderr)
        return 2
    if not chromium_available():
        print(f"appcheck: needs {CHROMIUM}, {CHROMEDRIVER} (apt-get install chromium chromium-driver) "
              "and selenium (pip install selenium)", file=sys.stderr)  # fmt: skip
        return 2

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    log_path = out / "server.log"
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
