"""The shape of the package: a few shared facts at the root, rooms that import one way only,
and the measuring tools standing apart from the product."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import toolkit

PACKAGE = Path(toolkit.__file__).resolve().parent

# What the root of toolkit/ holds: the public API's door (`__init__`, lazy), `python -m
# toolkit`, and the small facts every room shares. Everything else lives in a room.
ROOT_MODULES = {"__init__", "__main__", "config", "errors", "formats", "names", "plans", "sources"}

# The rooms, lowest first. A module imports from its own room and from rooms on earlier lines
# only (imports inside functions count too); rooms on one line stand side by side and import
# nothing from each other. The shells (serve, ui, cli) and the measuring tools are on top.
ROOMS: list[tuple[str, ...]] = [
    ("root",),  # ROOT_MODULES: settings, errors, names, sources, formats, plans
    ("signals",),  # judging signals derived from a record (fx, spam words, inflation, archive)
    ("store",),  # the mirror's file: schema, the one write path, locks, archive, the sync jobs' declaration
    ("query",),  # every read: Mirror, parameters and conditions, the planners
    ("sync",),  # the remote API brought in on schedule: client, sync, schedule, alerts, watchlist
    ("ingest", "enrich"),  # public feed files; outside lookups (enrich uses the sync's client)
    ("demo",),  # the demo source (it plays the sync's schedules and uses ingest's lifecycle, enrich's score)
    ("analysis",),  # frames, charts and the backtest (the backtest reads feed files through ingest)
    ("serve",),  # the REST replica and the MCP server
    ("ui",),  # the app (its CSV routes answer as the replica does)
    ("bench",),  # the measuring tools
    ("cli",),  # `edt` (`edt bench` starts the tools)
]
RANK = {room: rank for rank, line in enumerate(ROOMS) for room in line}


def _module_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _lazy_table(tree: ast.Module) -> dict[str, str]:
    """A package's `_LAZY` table (public name -> relative module it is imported from when first used)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["_LAZY"]:
            return ast.literal_eval(node.value)
    return {}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> set[str]:
    """The toolkit modules a file imports, as absolute dotted names (a package's lazy names too)."""
    module = _module_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]

    def absolute(level: int, name: str | None) -> str:
        base = package
        for _ in range(max(level - 1, 0)):
            base = base.rpartition(".")[0]
        return f"{base}.{name}" if level and name else (base if level else name or "")

    tree = ast.parse(path.read_text())
    for block in [n for n in ast.walk(tree) if isinstance(n, ast.If) and _type_checking_only(n)]:
        block.body = []  # names for the type checker alone: no import at run time, no climb, no cycle
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            name = absolute(node.level, node.module)
            found.add(name)
            found.update(f"{name}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    for name, target in _lazy_table(tree).items():
        dots = len(target) - len(target.lstrip("."))
        found.add(f"{absolute(dots, target[dots:])}.{name}")
    return {n for n in found if n == "toolkit" or n.startswith("toolkit.")}


def _room(dotted: str) -> str | None:
    """The room of a toolkit module (or of a name imported from one); None for the public
    API's door and `python -m toolkit`, which stand outside the rooms."""
    parts = dotted.split(".")[1:]
    if parts and parts[0] in _FACADE:  # `from toolkit import Mirror`: where the name comes from
        return _room(_FACADE[parts[0]])
    if not parts or parts[0] == "__version__":
        return "root"
    if parts[0] in ("__init__", "__main__"):
        return None
    return parts[0] if (PACKAGE / parts[0]).is_dir() else "root"


_FACADE = {
    name: importlib.util.resolve_name(target, "toolkit")
    for name, target in _lazy_table(ast.parse((PACKAGE / "__init__.py").read_text())).items()
}


def test_the_root_holds_only_the_small_shared_facts():
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert modules == ROOT_MODULES, f"move {sorted(modules - ROOT_MODULES)} into a room"
    rooms = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    assert rooms == set(RANK) - {"root"}, "every room has its place in ROOMS, and every place a room"


def test_no_room_imports_a_higher_one():
    modules = {_module_of(p) for p in PACKAGE.rglob("*.py")}
    offenders = set()
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent == PACKAGE and path.stem in ("__init__", "__main__"):
            continue  # the door and `python -m toolkit` stand outside the rooms
        room = "root" if path.parent == PACKAGE else path.relative_to(PACKAGE).parts[0]
        for imported in _imports(path):
            target = _room(imported)
            if target is not None and target != room and RANK[target] >= RANK[room]:
                while imported not in modules and "." in imported:  # the module, not each name from it
                    imported = imported.rpartition(".")[0]
                offenders.add(f"{path.relative_to(PACKAGE)} ({room}) imports {imported} ({target})")
    assert not offenders, "\n".join(sorted(offenders))


def test_the_room_check_sees_a_climb():
    assert _room("toolkit.config") == "root" and _room("toolkit.Mirror") == "query"
    assert _room("toolkit.sync.engine.sync") == "sync" and _room("toolkit.__version__") == "root"
    assert RANK["query"] < RANK["sync"] < RANK["serve"] < RANK["cli"]
    # store/jobs.py holds the jobs because Mirror.status (query) reports their freshness: the sync
    # itself is a higher room, which the query layer may not import
    assert "toolkit.store.jobs.freshness" in _imports(PACKAGE / "query" / "mirror_status.py")
    assert not any(n.startswith("toolkit.sync") for n in _imports(PACKAGE / "query" / "mirror_status.py"))


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
    assert "toolkit.serve.server" in seen and "toolkit.sync.engine" in seen
    seen = _imports(PACKAGE / "ingest" / "file_ingest.py")  # a package's own relative imports
    assert "toolkit.query" in seen and "toolkit.ingest.adapters" in seen
    seen = _imports(PACKAGE / "ingest" / "__init__.py")  # a package's names imported when first used
    assert "toolkit.ingest.adapters.parse_droplist" in seen
    seen = _imports(PACKAGE / "sync" / "__init__.py")  # names imported when first used
    assert "toolkit.store.jobs.JOBS" in seen and "toolkit.sync.engine.sync" in seen


def test_the_lazy_names_resolve():
    """Each package that imports its names when first used offers every name in `__all__`,
    and `toolkit.analysis` offers what `frames.py` does (`from toolkit.analysis import X`)."""
    import toolkit.analysis.frames

    assert toolkit.analysis.__all__ == toolkit.analysis.frames.__all__
    for name in ("toolkit", "toolkit.query", "toolkit.sync", "toolkit.analysis", "toolkit.demo", "toolkit.ingest"):
        package = importlib.import_module(name)
        assert sorted(package.__all__) == sorted(package._LAZY), name
        for attribute in package.__all__:
            assert getattr(package, attribute) is not None, f"{name}.{attribute}"
        assert set(package.__all__) <= set(dir(package))


def test_importing_the_toolkit_loads_nothing_else():
    script = "import sys, toolkit\nprint(sorted(m for m in sys.modules if m.startswith('toolkit')))\n"
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "['toolkit']"


def test_the_command_line_starts_without_the_heavy_libraries():
    """`edt --help` and a query on an upgraded mirror import no library they do not use."""
    heavy = (
        "pandas",
        "pyarrow",
        "plotly",
        "sqlite_utils",
        "tldextract",
        "httpx",
        "starlette",
        "mcp",
        "streamlit",
        "numpy",
    )
    script = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from toolkit.cli import cli\n"
        "assert CliRunner().invoke(cli, ['--help']).exit_code == 0\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"edt --help imported {out}"


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
                cycles.append(trail[trail.index(nxt) :] + [nxt] if nxt in trail else [node, nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert not cycles, cycles


# -- a house a newcomer reads: sizes, names, what a package's door holds ---------------------

MAX_MODULE_LINES, MAX_CLASS_LINES = 800, 400


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


def test_no_module_nor_class_is_too_long_to_read_in_one_sitting():
    long_modules = [
        f"{p.relative_to(PACKAGE)}: {n}"
        for p in _modules()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    ]
    long_classes = [
        f"{p.relative_to(PACKAGE)}: {node.name} {node.end_lineno - node.lineno + 1}"
        for p in _modules()
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ClassDef) and (node.end_lineno or 0) - node.lineno + 1 > MAX_CLASS_LINES
    ]
    assert not long_modules and not long_classes, (long_modules, long_classes)


def test_no_module_imports_another_modules_private_name():
    """A name another module needs is public (in its module's `__all__`), or moves to where it is used."""
    found = []
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("toolkit")):
                found += [
                    f"{path.relative_to(PACKAGE)}: {node.module or '.'}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert not found, found


def test_no_two_modules_share_a_name_outside_the_command_shells():
    """`archive.py` is one thing in the package: the command line's shells are named for their commands."""
    by_name: dict[str, list[str]] = {}
    for path in _modules():
        if path.name in ("__init__.py", "__main__.py") or path.parent.name == "cli":
            continue
        by_name.setdefault(path.name, []).append(str(path.relative_to(PACKAGE)))
    assert not {name: paths for name, paths in by_name.items() if len(paths) > 1}


def test_a_packages_door_hands_names_on_and_holds_no_machinery():
    """A sub-package's `__init__.py`: its docstring, imports, `__all__` and the lazy table; the
    work is in modules named for it (the root's door, `toolkit/__init__.py`, makes the lazy names)."""
    allowed = (ast.Expr, ast.ImportFrom, ast.Import, ast.Assign, ast.AnnAssign)
    doors = [p for p in _modules() if p.name == "__init__.py" and p.parent != PACKAGE]
    busy = {
        str(p.relative_to(PACKAGE)): sorted(
            {type(n).__name__ for n in ast.parse(p.read_text()).body if not isinstance(n, allowed)}
        )
        for p in doors
    }
    assert not {door: kinds for door, kinds in busy.items() if kinds}


def test_every_error_raised_on_purpose_is_a_toolkit_error():
    """One hierarchy (errors.py): the command line maps each by type to its line and exit status.
    Outside it only signals between two parts of the code that never reach a user (an index that
    cannot hold a filter, a refresh that must rebuild), click's own exceptions in the shell, an
    httpx error the transports retry on, and the browser check's own failure in the bench."""
    import inspect
    import pkgutil

    from toolkit.errors import ToolkitError

    outside = {
        "toolkit.query.conditions.Unsupported",
        "toolkit.query.columnar._Moved",
        "toolkit.query.columnar._Unpatchable",
        "toolkit.cli.shell._Said",
        "toolkit.cli.load.Interrupted",
        "toolkit.sync.remote.MalformedBody",
        "toolkit.bench.app_server.AppCheckError",
    }
    found = set()
    for info in pkgutil.walk_packages(toolkit.__path__, "toolkit."):
        if info.name.endswith(("__main__", "page_script", "store.archive")):  # scripts; a deprecated alias
            continue
        module = importlib.import_module(info.name)
        found |= {
            f"{module.__name__}.{name}"
            for name, value in vars(module).items()
            if inspect.isclass(value)
            and issubclass(value, BaseException)
            and value.__module__ == module.__name__
            and not issubclass(value, ToolkitError)
        }
    assert found == outside


SHELLS = ("cli", "ui", "serve")  # the front ends: they call the library, which holds every statement


def _sql_in_shells(paths: list[Path], root: Path) -> list[str]:
    found = []
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            called = isinstance(node, ast.Call) and getattr(node.func, "attr", None) in ("execute", "executemany")
            text = isinstance(node, ast.Constant) and isinstance(node.value, str)
            statement = text and re.match(r"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|PRAGMA)\s", node.value)
            if called or statement:
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    return sorted(found)


def test_the_front_ends_hold_no_sql():
    """The command line, the app and the server read and write through the library (datasette's
    views build URLs, its `Database` runs the SQL): a statement in a shell is a rule in two places."""
    shells = [p for p in _modules() if p.relative_to(PACKAGE).parts[0] in SHELLS]
    assert not _sql_in_shells([*shells, PACKAGE.parent / "app.py"], PACKAGE.parent)


def test_the_sql_check_sees_a_statement(tmp_path):
    shell = tmp_path / "toolkit" / "cli" / "x.py"
    shell.parent.mkdir(parents=True)
    shell.write_text('conn.execute("SELECT 1")\nquery = "SELECT name FROM listings"\n')
    assert _sql_in_shells([shell], tmp_path) == ["toolkit/cli/x.py:1", "toolkit/cli/x.py:1", "toolkit/cli/x.py:2"]
