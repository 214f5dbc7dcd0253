"""Import rules, read from the source: which package may import which, and no cycles.

    dlbench.core     the shared model: imports only itself (the leaf)
    runner, report   each imports dlbench.core and itself, never the other nor the CLI
    dlbench.cli      the commands: the only top; nothing imports it
Within report/ the packages are layered (LAYERS). runner/ has two sides, the driver (the
parent process) and the worker (the measured process), that never import each other: both
read only the ground (the cell's format and what a spec names); planning measures nothing,
and the commands are the top.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The checkout's package folders, and the names runner/ and report/ install as.
FOLDERS = ("dlbench", "runner", "report")
INSTALLED_AS = {"runner": "dlbench.runner", "report": "dlbench.report"}
CLI = "dlbench.cli"
CORE = "dlbench.core"
#: report/'s packages, lowest first: each imports only those before it (and report itself).
LAYERS = ("dlbench.report.render", "dlbench.report.inputs", "dlbench.report.verdicts",
          "dlbench.report.notes", "dlbench.report.claims", "dlbench.report.pages",
          "dlbench.report.site")
#: runner/'s two sides: the parent process (plans, launches, stores, reads the machine, runs
#: the commands) and the measured process (entry point, harness, adapters, framework code).
DRIVER, WORKER = "dlbench.runner.driver", "dlbench.runner.worker"
#: What both sides read and nothing else: the cell's format, and what a spec names.
GROUND = ("dlbench.runner.cell", "dlbench.runner.workloads", "dlbench.runner.models")
#: The code that runs inside a worker process to measure a cell.
MEASURED = (WORKER, *GROUND)


def _module_name(path: Path, root: Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    parts[:1] = INSTALLED_AS.get(parts[0], parts[0]).split(".")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(root: Path = ROOT) -> dict[str, Path]:
    return {_module_name(p, root): p for package in FOLDERS for p in (root / package).rglob("*.py")}


def _imported(tree: ast.AST, module: str, is_package: bool, known: set[str]) -> set[str]:
    """Project modules imported anywhere in a module, function bodies included."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join(anchor + ([base] if base else []))
            found |= {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                      for alias in node.names}
    return {name for name in found if name in known and name != module}


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Each project module (of the checkout at `root`) and the project modules it imports."""
    modules = _modules(root)
    known = set(modules)
    return {name: _imported(ast.parse(path.read_text()), name, path.name == "__init__.py", known)
            for name, path in modules.items()}


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(f"{package}.")


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while not group or group[-1] != node:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _imports(importer: str, imported: str) -> set[tuple[str, str]]:
    """Each (module, target) where a module of `importer` imports one of `imported`."""
    return {(m, t) for m, targets in import_graph().items() if _in(m, importer)
            for t in targets if _in(t, imported)}


def test_the_model_imports_only_itself():
    outside = {(m, t) for m, targets in import_graph().items() if _in(m, CORE)
               for t in targets if not _in(t, CORE)}
    assert not outside


def test_the_model_packages_hold_no_module_outside_core_and_cli():
    graph = import_graph()
    assert {m for m in graph if _in(m, "dlbench") and not _in(m, CORE) and not _in(m, CLI)
            and not any(_in(m, name) for name in INSTALLED_AS.values())} == {"dlbench"}


@pytest.mark.parametrize(("importer", "imported"), [
    ("dlbench.runner", "dlbench.report"), ("dlbench.runner", CLI), ("dlbench.report", "dlbench.runner"), ("dlbench.report", CLI),
])
def test_runner_and_report_never_import_each_other_nor_the_cli(importer, imported):
    assert not _imports(importer, imported)


@pytest.mark.parametrize("layer", LAYERS)
def test_each_report_package_imports_only_those_below_it(layer):
    above = LAYERS[LAYERS.index(layer) + 1:]
    assert not {(m, t) for above_layer in above for m, t in _imports(layer, above_layer)}


def test_every_report_module_is_in_a_layer():
    graph = import_graph()
    assert {m for m in graph if _in(m, "dlbench.report") and not any(_in(m, p) for p in LAYERS)} \
        == {"dlbench.report"}


def test_the_cell_is_the_runners_ground():
    assert {t for _, t in _imports("dlbench.runner.cell", "dlbench.runner")} <= {
        m for m in import_graph() if _in(m, "dlbench.runner.cell")}


def side_crossings(graph: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Each (module, target) that crosses runner/'s sides: the driver importing the worker,
    the worker importing the driver, or the ground (GROUND) importing either."""
    def side(module: str) -> str:
        return next((s for s in (DRIVER, WORKER) if _in(module, s)), "")

    def ground(module: str) -> bool:
        return any(_in(module, g) for g in GROUND)

    return {(m, t) for m, targets in graph.items() for t in targets
            if (side(m) and side(t) and side(m) != side(t))
            or (ground(m) and side(t))}


def test_the_driver_and_the_worker_meet_only_through_the_ground():
    graph = import_graph()
    assert any(_in(m, DRIVER) for m in graph) and any(_in(m, WORKER) for m in graph)
    assert side_crossings(graph) == set()


@pytest.mark.parametrize(("importer", "source", "crossing"), [
    ("driver/plan/a.py", "def f():\n    from dlbench.runner.worker.harness import b\n", True),
    ("worker/entry2.py", "from dlbench.runner.driver.launch import stop\n", True),
    ("cell/extra.py", "import dlbench.runner.worker.measure\n", True),
    ("driver/plan/a.py", "from dlbench.runner.cell.spec import CellSpec\n", False),
    ("worker/entry2.py", "from dlbench.runner.workloads.catalog import Workload\n", False),
])
def test_the_side_checker_finds_a_crossing_in_a_tree(tmp_path, importer, source, crossing):
    """A tiny tree of the same shape: one module on a side importing across is found, one
    importing the ground is not."""
    for relative in ("driver/plan/__init__.py", "driver/launch/stop.py", "worker/measure.py",
                     "worker/harness/__init__.py", "worker/harness/b.py", "cell/spec.py",
                     "workloads/catalog.py"):
        (tmp_path / "runner" / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "runner" / relative).write_text("")
    (tmp_path / "dlbench").mkdir()
    (tmp_path / "report").mkdir()
    (tmp_path / "runner" / importer).write_text(source)
    assert bool(side_crossings(import_graph(tmp_path))) is crossing


@pytest.mark.parametrize("imported", ["dlbench.runner.driver.launch", "dlbench.runner.driver.store", "dlbench.runner.driver.commands",
                                      "dlbench.runner.driver.cluster"])
def test_planning_measures_and_stores_nothing(imported):
    assert not _imports("dlbench.runner.driver.plan", imported)


@pytest.mark.parametrize("measured", MEASURED)
@pytest.mark.parametrize("imported", ["dlbench.runner.driver.store", "dlbench.runner.driver.commands", "dlbench.runner.driver.cluster"])
def test_the_measured_code_neither_stores_nor_runs_commands(measured, imported):
    assert not _imports(measured, imported)


def test_only_the_cli_and_the_cluster_executor_import_the_runners_commands():
    importers = {m for m, targets in import_graph().items() if not _in(m, "dlbench.runner.driver.commands")
                 for t in targets if _in(t, "dlbench.runner.driver.commands")}
    assert importers and all(_in(m, "dlbench.runner.driver.cluster") or _in(m, CLI) for m in importers)


def test_nothing_imports_the_cli():
    graph = import_graph()
    assert not {(m, t) for m, targets in graph.items() if not _in(m, CLI)
                for t in targets if _in(t, CLI)}


def test_no_import_cycle():
    assert cycles(import_graph()) == []


@pytest.mark.parametrize(("graph", "expected"), [
    ({"a": {"b"}, "b": {"a"}, "c": set()}, [["a", "b"]]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])
def test_cycle_finder_finds_cycles(graph, expected):
    assert cycles(graph) == expected


def test_the_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "dlbench.runner.driver.commands.run" in graph[CLI]


#: A quoted annotation naming a Namespace, e.g. "argparse.Namespace".
QUOTED_NAMESPACE = re.compile(r"\s*(\w+\.)*Namespace\s*")


def mentions_argparse(tree: ast.AST) -> bool:
    """Whether a module imports argparse, names a Namespace (argparse's or any other) or
    reads a flag that may be missing, `getattr(args, ...)`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            if any(alias.name.split(".")[0] == "argparse" for alias in node.names):
                return True
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] == "argparse":
                return True
        elif isinstance(node, ast.Name):
            if node.id == "Namespace":
                return True
        elif isinstance(node, ast.Attribute):
            if node.attr == "Namespace":
                return True
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if QUOTED_NAMESPACE.fullmatch(node.value):
                return True
        elif isinstance(node, ast.Call) and _is_getattr_of_args(node):
            return True
    return False


def _is_getattr_of_args(call: ast.Call) -> bool:
    return (isinstance(call.func, ast.Name) and call.func.id == "getattr" and bool(call.args)
            and isinstance(call.args[0], ast.Name) and call.args[0].id == "args")


def test_argparse_stops_at_the_cli():
    """runner/, report/ and the model take typed values; only dlbench/cli/ parses flags."""
    leaking = sorted(str(path.relative_to(ROOT)) for name, path in _modules().items()
                     if not _in(name, CLI) and mentions_argparse(ast.parse(path.read_text())))
    assert not leaking, f"argparse or Namespace below the CLI in: {', '.join(leaking)}"


@pytest.mark.parametrize(("source", "leaks"), [
    ("import argparse", True),
    ("from argparse import Namespace", True),
    ("def f(args: 'argparse.Namespace'): ...", True),
    ("from __future__ import annotations\ndef f(args: argparse.Namespace): ...", True),
    ("def f(args: Namespace): ...", True),
    ("import argparser_like\ndef f(request: RunArguments): ...", False),
    ("def f(args): return getattr(args, 'seed', None)", True),
    ("def f(error): return getattr(error, 'strerror', None)", False),
    ('def f(request):\n    """Not an argparse Namespace: a typed value."""', False),
])
def test_the_argparse_finder_finds_argparse(source, leaks):
    assert mentions_argparse(ast.parse(source)) is leaks


def test_every_package_folder_installs_under_dlbench():
    """setup.py's package list names every folder by its installed name: runner/ and report/
    under dlbench (pyproject's package-dir), with the data folders templates/ and listings/
    and every folder below them; pyproject writes no list of its own to fall behind."""
    import importlib.util
    import tomllib

    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    installed_as = {folder: name for name, folder in setuptools["package-dir"].items()}
    assert installed_as == INSTALLED_AS | {"templates": "dlbench.templates",
                                           "listings": "dlbench.listings"}
    assert "packages" not in setuptools
    folders = {".".join([installed_as.get(top, top), *p.relative_to(ROOT / top).parts])
               for top in ("dlbench", *installed_as)
               for p in [ROOT / top, *(ROOT / top).rglob("*")]
               if p.is_dir() and "__pycache__" not in p.parts}
    spec = importlib.util.spec_from_file_location("project_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    assert set(setup.installed_packages()) == folders


def test_no_code_imports_the_folders_by_their_bare_names():
    """`import runner` works only from a checkout's root (the folder is on sys.path there);
    installed, the packages are dlbench.runner and dlbench.report, so no code may name the
    bare folders (frozen copies under results/ and tests/data/golden/ excepted)."""
    bare = re.compile(r"^\s*(?:from|import) (?:runner|report)\b", re.MULTILINE)
    frozen = {"results", "build", "site", "site_src", "node_modules"}
    tops = [top for top in ROOT.iterdir()
            if top.is_dir() and top.name not in frozen and not top.name.startswith(".")]
    offenders = [str(path.relative_to(ROOT)) for top in tops for path in top.rglob("*.py")
                 if "golden" not in path.relative_to(ROOT).parts
                 and bare.search(path.read_text())]
    assert offenders == []
