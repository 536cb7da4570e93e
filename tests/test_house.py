"""The shape of the package: the measuring tools stand apart from the product."""

from __future__ import annotations

import ast
from pathlib import Path

import toolkit

PACKAGE = Path(toolkit.__file__).resolve().parent


def _imports(path: Path) -> set[str]:
    """The toolkit modules a file imports, as absolute dotted names."""
    module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rpartition(".")[0]
            name = f"{base}.{node.module}" if node.level and node.module else (base if node.level else node.module)
            found.add(name or "")
            found.update(f"{name}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {n for n in found if n.startswith("toolkit")}


def test_the_product_imports_nothing_from_the_measuring_tools():
    offenders = {}
    for path in PACKAGE.rglob("*.py"):
        if "bench" in path.relative_to(PACKAGE).parts or path.relative_to(PACKAGE).parts == ("cli", "tools.py"):
            continue  # the tools themselves; `edt bench` (cli/tools.py) starts them when asked
        bad = {n for n in _imports(path) if n == "toolkit.bench" or n.startswith("toolkit.bench.")}
        if bad:
            offenders[str(path.relative_to(PACKAGE))] = sorted(bad)
    assert not offenders, offenders
    assert (PACKAGE / "bench" / "query.py").is_file() and not (PACKAGE / "bench.py").exists()


def test_the_import_scan_sees_relative_imports():
    seen = _imports(PACKAGE / "bench" / "sync.py")
    assert "toolkit.server" in seen and "toolkit.sync" in seen


def test_the_command_line_starts_without_the_heavy_libraries():
    """`edt --help` and a query on an upgraded mirror import no library they do not use."""
    import subprocess
    import sys

    heavy = ("pandas", "pyarrow", "plotly", "sqlite_utils", "tldextract", "httpx", "starlette", "mcp", "streamlit")
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from toolkit.cli import cli\n"
        "assert CliRunner().invoke(cli, ['--help']).exit_code == 0\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"edt --help imported {out}"


def _module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycles_between_modules():
    """Every module can be read alone: no two toolkit modules import each other, directly
    or through others (imports inside functions count too)."""
    modules = {_module_of(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in modules.items():
        targets = set()
        for imported in _imports(path):
            while imported and imported not in modules:  # `from .x import name`: the module x
                imported = imported.rpartition(".")[0]
            if imported and imported != name and not name.startswith(imported + "."):
                targets.add(imported)  # a package's __init__ imported by its own modules is not a cycle
        graph[name] = targets
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, cycles
