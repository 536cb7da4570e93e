"""The analysts' notebooks, executed top to bottom by nbclient against a `small` demo mirror
built in a temporary folder; each ends in a cell of assertions against the query layer."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from conftest import feeds_only_mirror, small_demo
from nbclient import NotebookClient


NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def demo_mirror(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("notebooks") / "mirror.db"
    small_demo(path, 21)
    return path


def test_the_six_notebooks_are_there():
    assert [p.name for p in NOTEBOOKS] == [
        "01_quickstart.ipynb",
        "02_trust_flow_citation_flow.ipynb",
        "03_archive_age.ipynb",
        "04_drop_calendar.ipynb",
        "05_history.ipynb",
        "06_judging_a_name.ipynb",
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_are_committed_without_outputs(path):
    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, (
                f"{path.name}: strip the outputs before committing"
            )


def project_with(mirror: Path, folder: Path) -> Path:
    """A project folder as a clone holds it after `edt demo`: `data/mirror.db` (and its archive,
    if any) and `notebooks/`."""
    project = folder / "project"
    (project / "data").mkdir(parents=True)
    shutil.copy(mirror, project / "data" / "mirror.db")
    if Path(f"{mirror}.archive").is_dir():
        shutil.copytree(f"{mirror}.archive", project / "data" / "mirror.db.archive")
    shutil.copytree(NOTEBOOKS[0].parent, project / "notebooks")
    return project


def run_as_the_readme_starts_it(path: Path, project: Path, monkeypatch) -> nbformat.NotebookNode:
    """`jupyter notebook notebooks/`: the kernel starts in the notebooks' folder, with no EDT_DB."""
    monkeypatch.delenv("EDT_DB", raising=False)
    monkeypatch.delenv("EDT_PLAN", raising=False)
    monkeypatch.setenv("EDT_CONFIG", str(project / "none.toml"))
    notebook = nbformat.read(project / "notebooks" / path.name, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(project / "notebooks")}}
    )
    try:
        client.execute()
    finally:
        assert not (project / "notebooks" / "data").exists(), "a reader made a mirror in the notebooks' folder"
    return notebook


def test_notebook_runs_top_to_bottom_and_its_checks_hold(path, demo_mirror, tmp_path, monkeypatch):
    notebook = run_as_the_readme_starts_it(path, project_with(demo_mirror, tmp_path), monkeypatch)
    last = notebook.cells[-1]
    printed = "".join(out.get("text", "") for out in last.outputs if out.get("output_type") == "stream")
    assert "checked" in printed or "all routes agree" in printed
    assert not any(
        out.get("output_type") == "error" for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs
    )
    assert str(notebook.cells[1].outputs[0]["text"]).startswith("../data/mirror.db")  # the project's mirror, found


test_notebook_runs_top_to_bottom_and_its_checks_hold = pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)(
    test_notebook_runs_top_to_bottom_and_its_checks_hold
)


def test_without_a_mirror_a_notebook_says_so_in_one_line_and_makes_none(tmp_path, monkeypatch):
    from nbclient.exceptions import CellExecutionError

    project = tmp_path / "project"
    shutil.copytree(NOTEBOOKS[0].parent, project / "notebooks")
    with pytest.raises(CellExecutionError) as failed:
        run_as_the_readme_starts_it(NOTEBOOKS[0], project, monkeypatch)
    said = re.sub(r"\x1b\[[0-9;]*m", "", str(failed.value))  # the traceback's colours
    assert "MirrorMissing: data/mirror.db: no mirror there; `edt demo` makes one" in said
    assert not (project / "data").exists()


@pytest.fixture(scope="module")
def odd_mirrors(tmp_path_factory) -> dict[str, Path]:
    from toolkit import Mirror

    feeds = feeds_only_mirror(tmp_path_factory.mktemp("feeds"))
    empty = tmp_path_factory.mktemp("empty") / "mirror.db"
    Mirror(empty, create=True).close()
    return {"feeds": feeds, "empty": empty}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_on_a_mirror_without_the_demo_s_data(path, odd_mirrors, tmp_path, monkeypatch):
    """The stories hold on a mirror of the free feeds alone, and on an empty one: every cell
    runs, and the checks that close each notebook hold there too."""
    for kind, mirror in odd_mirrors.items():
        notebook = run_as_the_readme_starts_it(path, project_with(mirror, tmp_path / kind), monkeypatch)
        printed = "".join(
            out.get("text", "") for out in notebook.cells[-1].outputs if out.get("output_type") == "stream"
        )
        assert "checked" in printed or "all routes agree" in printed, kind
