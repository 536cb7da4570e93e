"""The documents stay short, true and about the project: the README's budget, the docs site
built strictly (a broken link, a missing page or an unlisted page fails), the generated
reference pages current, and no document speaking of how it was written."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README_BUDGET = 260  # lines: what the toolkit is, two quickstart commands, a tour, links into docs/

# A work session named by its number or as "this/last/earlier ..." tells how the work went,
# not what the project is. A Streamlit session, an HTTP session or `requests.Session` are fine.
WORK_SESSION = re.compile(
    r"\bsessions? \d|\b(?:this|last|previous|earlier|next|later|work|our|a later) sessions?\b", re.IGNORECASE
)


def _generator():
    spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _documents() -> list[Path]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "notebooks").glob("*.ipynb"))]
    found += sorted((ROOT / "toolkit").rglob("*.py")) + [ROOT / "app.py", ROOT / "mkdocs.yml", ROOT / "pyproject.toml"]
    return found


def test_the_readme_stays_within_its_budget():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= README_BUDGET, (
        f"README.md has {len(lines)} lines; move detail into docs/ (budget {README_BUDGET})"
    )


def test_git_ignores_every_file_the_readme_says_lives_beside_the_mirror():
    """Each path of the README's "Where the data lives" table under data/ (the mirror and what
    sits beside it) is ignored, so `git status` stays clean after the README's tour."""
    table = (ROOT / "README.md").read_text().split("## Where the data lives", 1)[1].split("\n## ", 1)[0]
    paths = []
    for cells in re.findall(r"^\| (.+?) \| .+ \|$", table, flags=re.M):
        named = re.findall(r"`([^`]+)`", cells)
        for name in named:  # `data/mirror.db.colidx`, `.colidx-all`: a suffix of the path before it
            paths.append(paths[-1].rsplit(".", 1)[0] + name if name.startswith(".") and paths else name)
    beside = [p.rstrip("/") + ("/part.parquet" if p.endswith("/") else "") for p in paths if p.startswith("data/")]
    assert len(beside) >= 7, beside  # the mirror, its two index parts, archive, lock, price model, feed snapshots
    checked = subprocess.run(
        ["git", "check-ignore", "--no-index", "-v", "-n", *beside], cwd=ROOT, capture_output=True, text=True
    )
    missing = [line.split("\t")[-1] for line in checked.stdout.splitlines() if line.startswith("::")]
    assert not missing, f"add these to .gitignore: {missing}"


def test_the_readme_links_into_the_docs_and_every_link_resolves():
    text = (ROOT / "README.md").read_text()
    targets = re.findall(r"\]\(((?:docs/)[^)#\s]+)", text)
    assert len(targets) >= 10, "the README's tour points into docs/"
    missing = [t for t in targets if not (ROOT / t).is_file()]
    assert not missing, missing


def test_the_work_session_wording_detector_sees_what_it_should():
    word = "session"  # the examples are built, so this file does not read as what it forbids
    assert WORK_SESSION.search(f"measured as {word}s 1-9 measured it")
    assert WORK_SESSION.search(f"the ECharts module ({word} 9)")
    assert WORK_SESSION.search(f"until this {word}")
    assert not WORK_SESSION.search("a Streamlit session keeps its state; httpx sessions pool connections")


def test_no_project_document_speaks_of_work_sessions():
    offenders = []
    for path in _documents():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if WORK_SESSION.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:80]}")
    assert not offenders, "\n".join(offenders)


def test_nothing_a_reader_meets_points_outside_the_repository():
    outside = re.compile(r"\.\./shared|contract section|CONTRACT\.md|ARCHITECTURE\.md", re.IGNORECASE)
    offenders = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _documents()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if outside.search(line)
    ]
    assert not offenders, offenders


def test_the_generated_reference_pages_are_current():
    generator = _generator()
    stale = [
        name
        for name, (file, _) in generator.PAGES.items()
        if generator.render(name, (generator.DOCS / file).read_text()) != (generator.DOCS / file).read_text()
    ]
    assert not stale, f"stale: {stale}; run: python docs/generate.py"


def test_the_generator_notices_a_stale_page(tmp_path, monkeypatch):
    generator = _generator()
    (tmp_path / "reference").mkdir()
    page = tmp_path / "reference" / "parameters.md"
    current = generator.render("parameters", "# Query parameters\n")
    page.write_text(current.replace("`tf_min`", "`tf_minimum`"))
    monkeypatch.setattr(generator, "DOCS", tmp_path)
    monkeypatch.setattr(generator, "PAGES", {"parameters": generator.PAGES["parameters"]})
    assert generator.main(["--check"]) == 1
    assert generator.main([]) == 0 and page.read_text() == current
    assert "`tf_min`" in current and "| `tld` |" in current


def test_the_parameters_page_lists_every_parameter_and_the_commands_page_every_command():
    from toolkit import DOMAIN_PARAMS, PENDING_PARAMS
    from toolkit.cli import cli

    parameters = (ROOT / "docs" / "reference" / "parameters.md").read_text()
    assert all(f"| `{name}` |" in parameters for name in [*DOMAIN_PARAMS, *PENDING_PARAMS])
    commands = (ROOT / "docs" / "reference" / "commands.md").read_text()
    assert all(f"`edt {name}`" in commands for name in cli.commands)


def test_the_docs_site_builds_strictly_without_a_warning(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")]
    run = subprocess.run(build, check=False, cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "WARNING" not in output, output
    assert (tmp_path / "site" / "reference" / "parameters" / "index.html").is_file()
    built = (tmp_path / "site" / "guides" / "querying" / "index.html").read_text()
    assert "edt query" in built
