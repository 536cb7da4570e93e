"""The analysts' notebooks, executed top to bottom by nbclient against a `small` demo mirror
built in a temporary folder; each ends in a cell of assertions against the query layer."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from conftest import small_demo
from nbclient import NotebookClient


NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def demo_mirror(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("notebooks") / "mirror.db"
    small_demo(path, 21)
    return path


def test_the_six_notebooks_are_there():
    assert [p.name for p in NOTEBOOKS] == ["01_quickstart.ipynb", "02_trust_flow_citation_flow.ipynb",
                                           "03_archive_age.ipynb", "04_drop_calendar.ipynb", "05_history.ipynb",
                                           "06_judging_a_name.ipynb"]  # fmt: skip


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: strip the outputs before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_top_to_bottom_and_its_checks_hold(path, demo_mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("EDT_DB", str(demo_mirror))
    monkeypatch.delenv("EDT_PLAN", raising=False)
    monkeypatch.setenv("EDT_CONFIG", str(tmp_path / "none.toml"))
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    last = notebook.cells[-1]
    printed = "".join(out.get("text", "") for out in last.outputs if out.get("output_type") == "stream")
    assert "checked" in printed or "all routes agree" in printed
    assert not any(out.get("output_type") == "error" for cell in notebook.cells if cell.cell_type == "code"
                   for out in cell.outputs)  # fmt: skip
