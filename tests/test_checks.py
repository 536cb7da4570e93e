"""The checks a change passes besides the tests, run as part of them (as sqlite-utils' lint
and httpx's scripts/check): the formatter owns the layout, the linter and the type checker
are clean. Their settings are in pyproject.toml."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *command], cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize(
    "command",
    [("ruff", "format", "--check", "."), ("ruff", "check", "."), ("mypy",)],
    ids=["ruff format", "ruff check", "mypy"],
)
def test_the_tree_passes(command):
    assert shutil.which("ruff") or command[0] != "ruff"
    done = _run(*command)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_a_formatter_marker_is_rare():
    """The formatter lays out everything but a few tables whose alignment carries meaning."""
    skips = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in [*ROOT.joinpath("toolkit").rglob("*.py"), *ROOT.joinpath("tests").rglob("*.py")]
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if "fmt: " + "skip" in line or "fmt: " + "off" in line
    ]
    assert len(skips) <= 10, skips
