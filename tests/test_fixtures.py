"""The repository stands alone: the real files the tests read are in tests/fixtures, each folder's
SOURCES.md says where every file came from and under which licence, no source points at the
folder beside the checkout that once held them, and a run fails on any skip but the browser's
(conftest's hooks, run here on small test files in a pytest of their own)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import BROWSER_SKIP_REASON, FIXTURES, OUTSIDE, REAL, REFERENCE, ROOT

# How a source would point at the folder beside the checkout (written so this file does not match).
OUTSIDE_POINTERS = re.compile(
    r"\.\./"
    + "shared"  # a path relative to the checkout
    + r"|parents\[\d+\]\s*/\s*['\"]"
    + "shared"
    + r"['\"]"  # the checkout's parent, then that folder
    + r"|['\"]"
    + "shared"
    + r"['\"]\s*/\s*['\"](fixtures|reference)"  # that folder, then what it held
    + r"|/work/"
    + "shared"  # an absolute path
)


def _sources() -> list[Path]:
    files = [*(ROOT / "tests").rglob("*.py"), *(ROOT / "toolkit").rglob("*.py"), ROOT / "app.py", ROOT / ".ci" / "run"]
    return sorted(p for p in files if p.is_file() and "__pycache__" not in p.parts)


def test_no_test_or_module_points_outside_the_repository():
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE_POINTERS.search(line)
    ]
    assert offenders == []
    assert OUTSIDE_POINTERS.search('X = Path(__file__).resolve().parents[2] / "' + 'shared"')
    assert OUTSIDE_POINTERS.search("read in place from ../" + "shared/fixtures/real")


def test_the_fixtures_are_inside_the_repository():
    for folder in (FIXTURES, REAL, REFERENCE):
        assert folder.is_dir() and folder.resolve().is_relative_to(ROOT)
    assert not OUTSIDE.resolve().is_relative_to(ROOT)


@pytest.mark.parametrize("folder", [REAL, REFERENCE], ids=["real", "reference"])
def test_every_fixture_file_is_named_in_its_sources_with_a_licence(folder):
    sources = (folder / "SOURCES.md").read_text(encoding="utf-8")
    files = [p for p in folder.rglob("*") if p.is_file() and p.name != "SOURCES.md"]
    assert files
    unnamed = [str(p.relative_to(folder)) for p in files if p.name not in sources]
    assert unnamed == [], f"add these to {folder.relative_to(ROOT)}/SOURCES.md: where from, which licence"
    assert "Licence" in sources
    # every top folder of fixtures has a licence line in its section (real) or one for all (reference)
    if folder == REAL:
        for top in sorted({p.relative_to(folder).parts[0] for p in files}):
            section = sources.split(f"\n## {top}", 1)[1].split("\n## ", 1)[0]
            assert "Licence:" in section, top


def test_the_nu_zone_snapshots_stay_gzipped_and_whole():
    import gzip

    zones = sorted((REAL / "nu_drops" / "zone").glob("nu_domains_*.txt.gz"))
    assert len(zones) == 21
    with gzip.open(zones[0], "rt", encoding="utf-8") as lines:
        assert sum(1 for _ in lines) > 100_000


# -- conftest's hooks: only the browser check may skip; nothing is opened beside the checkout ------


def _pytest_on(tmp_path: Path, source: str) -> subprocess.CompletedProcess:
    """pytest on one test file in a folder of its own, with this suite's conftest as a plugin."""
    (tmp_path / "test_tiny.py").write_text(textwrap.dedent(source))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    env_path = str(ROOT / "tests")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "conftest",
            "-p",
            "no:cacheprovider",
            "-c",
            str(tmp_path / "pytest.ini"),
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": env_path},
    )


def test_a_run_whose_only_skip_is_the_browsers_passes(tmp_path):
    result = _pytest_on(
        tmp_path,
        f"""
        import pytest

        def test_runs():
            pass

        @pytest.mark.skipif(True, reason={BROWSER_SKIP_REASON!r})
        def test_in_a_browser():
            pass
    """,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 1 skipped" in result.stdout


def test_any_other_skip_fails_the_run_and_is_named(tmp_path):
    result = _pytest_on(
        tmp_path,
        """
        import pytest

        def test_runs():
            pass

        def test_without_its_data():
            pytest.skip("real fixtures not available")

        @pytest.mark.skipif(True, reason="reference not beside this checkout")
        def test_marked():
            pass
    """,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed, 2 skipped" in result.stdout
    assert "test_tiny.py::test_without_its_data: Skipped: real fixtures not available" in result.stdout
    assert "test_tiny.py::test_marked: Skipped: reference not beside this checkout" in result.stdout
    assert "2 skipped for another reason than a missing browser" in result.stdout


def test_a_module_skipped_at_collection_fails_the_run(tmp_path):
    result = _pytest_on(
        tmp_path,
        """
        import pytest

        pytest.importorskip("a_module_that_is_not_installed")

        def test_never_collected():
            pass
    """,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "could not import 'a_module_that_is_not_installed'" in result.stdout
    assert "1 skipped for another reason than a missing browser" in result.stdout


def test_a_file_opened_beside_the_checkout_fails_the_run(tmp_path):
    result = _pytest_on(
        tmp_path,
        f"""
        def test_reads_beside_the_checkout():
            try:
                open({str(OUTSIDE / "fixtures" / "real" / "SOURCES.md")!r}).close()
            except OSError:
                pass
    """,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed" in result.stdout
    assert str(OUTSIDE / "fixtures" / "real" / "SOURCES.md") in result.stdout
