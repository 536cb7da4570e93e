"""The app served for a measurement and a browser to open it: `serve_app` starts `streamlit
run app.py` headless on a loopback port (stopped on leaving), `browser` a headless Chromium
through Selenium (Debian's chromium and chromium-driver; nothing is downloaded), and
`rendered` says when a Streamlit page has finished drawing."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import toolkit

__all__ = [
    "CHROMIUM",
    "CHROMEDRIVER",
    "PAGE_STATE_JS",
    "AppCheckError",
    "chromium_available",
    "find_app",
    "free_port",
    "serve_app",
    "stop_process",
    "browser",
    "rendered",
    "first_line",
    "log_tail",
    "TEXT_JS",
    "PAGE_TIMEOUT_S",
    "POLL_S",
    "SETTLE_S",
]

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
HEALTH_TIMEOUT_S = 60.0
PAGE_TIMEOUT_S = 30.0
SETTLE_S = 0.5  # after Streamlit reports "not running": lets charts finish drawing
POLL_S = 0.2

# The page is done when the script ran (state "notRunning"), the "Running..." widget is gone and
# the main block holds something; while charts or skeletons are still loading it is not.
PAGE_STATE_JS = """
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
TEXT_JS = "return document.body ? document.body.innerText : '';"


class AppCheckError(RuntimeError):
    """The check could not run: the app did not start (the message says why)."""


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


def free_port() -> int:
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


def stop_process(process: subprocess.Popen, timeout: float = 10) -> None:
    """A server the bench started, ended: terminated, killed when still there after `timeout` s."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


@contextmanager
def serve_app(app: Path, db: Path, log_path: Path, port: int = 0) -> Iterator[str]:
    """Runs `streamlit run APP` on the mirror DB (EDT_DB) until the block ends; yields its base URL.

    The server's output goes to `log_path`. Raises AppCheckError if it never answers on
    `/_stcore/health`. On leaving, the server is terminated, then killed if it lingers.
    """
    port = port or free_port()
    base = f"http://127.0.0.1:{port}"
    with log_path.open("wb") as log:
        server = _start_server(app, db.resolve(), port, log)
        try:
            if not _wait_healthy(base, server, HEALTH_TIMEOUT_S):
                how = f"exited with {server.returncode}" if server.poll() is not None else "did not answer"
                raise AppCheckError(f"the app {how} on {base}/_stcore/health; {log_path}:\n{log_tail(log_path)}")
            yield base
        finally:
            stop_process(server)


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
        raise AppCheckError(f"Chromium did not start: {type(exc).__name__}: {first_line(str(exc))}") from exc
    try:
        yield driver
    finally:
        driver.quit()


def rendered(state: dict[str, Any]) -> bool:
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


def first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "(no message)")


def log_tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""
