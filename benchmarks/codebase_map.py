"""How a new maintainer finds their way: the figures of the layout, computed from the files.

Prints, for runner/ (each side's subpackages and modules, and the ground's packages, as
nodes): imports from a node to one above it in the layout's order, pairs of nodes that import
each other, and imports between the driver and the worker sides; the places that filter
per-process observations by hand; Python files and lines under results/; README lines.
No timing: the files alone decide every figure.

    .venv/bin/python benchmarks/codebase_map.py
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: runner/'s nodes from the top (the cluster executor, then the commands) to the ground (the cell): an import of
#: an earlier one from a later one goes upward. A side's node is its subpackage or module
#: (driver/plan, worker/entry); the ground both sides read is cell/, workloads/ and models/.
RUNNER_ORDER = ("driver/cluster", "driver/commands", "driver/user_model", "driver/launch",
                "driver/store", "driver/plan", "driver/machine",
                "worker/entry", "worker/user_model", "worker/experiments", "worker/harness",
                "worker/adapters", "worker/epochs", "worker/timed_window", "worker/measure",
                "workloads", "models", "cell")
SIDES = ("driver", "worker")
PER_PROCESS_FILTER = re.compile(r"""\[["']step["']\]\.isna\(\)""")


def runner_node(module: str) -> str | None:
    """The runner node of a dotted module name (a side's subpackage or module, or a ground
    package), or None outside runner/."""
    parts = module.split(".")
    if parts[:2] != ["dlbench", "runner"] or len(parts) < 3:
        return None
    if parts[2] in SIDES:
        return "/".join(parts[2:4])
    return parts[2]


def runner_imports() -> dict[str, set[str]]:
    """Node -> the other runner nodes its modules import."""
    edges: dict[str, set[str]] = defaultdict(set)
    for path in sorted((ROOT / "runner").rglob("*.py")):
        parts = path.relative_to(ROOT / "runner").with_suffix("").parts
        source = runner_node(".".join(["dlbench", "runner", *parts[:-1],
                                       *([] if parts[-1] == "__init__" else parts[-1:])]))
        if not source or source in SIDES:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                target = runner_node(name)
                if target and target != source:
                    edges[source].add(target)
    return edges


def side_crossings(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(from, to) where one side imports the other, or the ground imports a side."""
    def side(node: str) -> str:
        return node.split("/")[0] if node.split("/")[0] in SIDES else ""

    return sorted((a, b) for a, targets in edges.items() for b in targets
                  if side(b) and side(a) != side(b))


def upward(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """(from, to) where `to` sits above `from` in RUNNER_ORDER."""
    rank = {name: index for index, name in enumerate(RUNNER_ORDER)}
    return sorted((a, b) for a, targets in edges.items() for b in targets
                  if a in rank and b in rank and rank[b] < rank[a])


def mutual(edges: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Pairs of subpackages that import each other."""
    return sorted({tuple(sorted((a, b))) for a, targets in edges.items() for b in targets
                   if a in edges.get(b, set())})


def filter_places() -> list[str]:
    """Project modules (not tests) that filter per-process observations by hand."""
    found = []
    for folder in ("dlbench", "runner", "report"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if PER_PROCESS_FILTER.search(path.read_text()):
                found.append(path.relative_to(ROOT).as_posix())
    return found


def results_python() -> tuple[int, int]:
    """Python files and lines kept under results/ (code records)."""
    files = list((ROOT / "results").rglob("*.py"))
    return len(files), sum(len(f.read_text(errors="replace").splitlines()) for f in files)


def main() -> int:
    edges = runner_imports()
    up, pairs = upward(edges), mutual(edges)
    print(f"runner/ upward imports: {len(up)}: " + ", ".join(f"{a}->{b}" for a, b in up))
    print(f"runner/ mutual pairs: {len(pairs)}: " + ", ".join(f"{a}<->{b}" for a, b in pairs))
    crossings = side_crossings(edges)
    print(f"runner/ imports between the driver and the worker sides: {len(crossings)}: "
          + ", ".join(f"{a}->{b}" for a, b in crossings))
    places = filter_places()
    print(f"modules filtering per-process observations by hand: {len(places)}: "
          + ", ".join(places))
    files, lines = results_python()
    print(f"Python under results/: {files} files, {lines} lines")
    print(f"README.md: {len((ROOT / 'README.md').read_text().splitlines())} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
