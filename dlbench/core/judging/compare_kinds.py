"""Compare two result sets machine kind by machine kind (dlbench.core.machine.machines).

A release may hold runs of several machine kinds, and a cell once per run: its cells cannot
be matched one to one against another side. Ratios belong to one machine kind, so each kind
of B is compared with the same kind of A where A holds it, and otherwise with each kind of A
(named as another machine, so no speed is called a change of the code). Two runs of one kind
are replicates of that kind: their processes are pooled into one side for that kind.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from dlbench.core.judging.compare import ComparisonReport, Side, compare_sides, side_runs
from dlbench.core.storage.layout import RunData, run_tables
from dlbench.core.machine.machines import MachineKind, machine_kind


@dataclass(frozen=True)
class KindComparison:
    """One machine kind of A against one of B, and their comparison."""

    kind_a: MachineKind
    kind_b: MachineKind
    runs_a: tuple[str, ...]
    runs_b: tuple[str, ...]
    report: ComparisonReport


def runs_by_kind(runs: list[RunData]) -> dict[MachineKind, list[RunData]]:
    """The runs of each machine kind, kinds in the order their first run appears."""
    kinds: dict[MachineKind, list[RunData]] = {}
    for run in runs:
        kinds.setdefault(machine_kind(run.environment), []).append(run)
    return kinds


def kind_side(label: str, runs: list[RunData]) -> Side:
    """The runs of one machine kind as one side: each cell once, every run's processes."""
    cells, observations = run_tables(runs)
    return Side(label, tuple(run.run_id for run in runs),
                cells.drop_duplicates("cell_id").reset_index(drop=True), observations,
                {run.run_id: run.environment for run in runs})


def kind_pairs(kinds_a: list[MachineKind], kinds_b: list[MachineKind]
               ) -> list[tuple[MachineKind, MachineKind]]:
    """Each kind of B with the same kind of A, or with every kind of A where A lacks it."""
    keys_a = {kind.key: kind for kind in kinds_a}
    pairs = []
    for kind in kinds_b:
        pairs += [(other, kind) for other in ([keys_a[kind.key]] if kind.key in keys_a
                                              else kinds_a)]
    return pairs


def several_kinds(name: str, results_dir: Path = Path("results")) -> bool:
    """Whether a side holds a cell more than once (runs of several machines or replicates)."""
    _, runs = side_runs(name, results_dir)
    if len(runs) < 2:
        return False
    cells, _ = run_tables(runs)
    return bool(cells["cell_id"].duplicated().any())


def compare_by_kind(a_name: str, b_name: str, results_dir: Path = Path("results"),
                    metrics: list[str] | None = None,
                    across_machines: bool = False) -> list[KindComparison]:
    """The comparison of A and B, one per pair of machine kinds (kind_pairs)."""
    label_a, runs_a = side_runs(a_name, results_dir)
    label_b, runs_b = side_runs(b_name, results_dir)
    kinds_a, kinds_b = runs_by_kind(runs_a), runs_by_kind(runs_b)
    found = []
    for kind_a, kind_b in kind_pairs(list(kinds_a), list(kinds_b)):
        side_a = kind_side(f"{label_a} on {kind_a.words}", kinds_a[kind_a])
        side_b = kind_side(f"{label_b} on {kind_b.words}", kinds_b[kind_b])
        found.append(KindComparison(kind_a, kind_b, side_a.run_ids, side_b.run_ids,
                                    compare_sides(side_a, side_b, metrics, across_machines)))
    return found
