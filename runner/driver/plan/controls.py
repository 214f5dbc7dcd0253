"""A/A controls: each experiment family measures one configuration as two cells.

The twin is the experiment's first planned cell (PyTorch's default mode where planned),
measured again under the control suffix and interleaved with every other process. Its pair
must come out "no winner" in every release: the real-data check of the verdict rule's error
rate beside the simulation (benchmarks/verdict_calibration.py), and the noise floor below
which no difference is called meaningful (dlbench/core/judging/verdict_engine.py).
"""

from __future__ import annotations

from dataclasses import replace

from dlbench.core.declarations.modes import DEFAULT, mode_class
from dlbench.core.judging.verdict_engine import CONTROL_SUFFIX, QUESTIONS
from dlbench.runner.cell.spec import CellSpec

def control_source(cells: list[CellSpec]) -> CellSpec:
    """The cell an experiment's A/A control repeats: PyTorch in its default mode first."""
    def preference(cell: CellSpec) -> tuple[bool, bool]:
        default = mode_class(cell.experiment, cell.framework, cell.mode) == DEFAULT
        return (cell.framework != "pytorch", not default)

    return min(cells, key=preference)


def with_controls(cells: list[CellSpec], processes: int) -> list[CellSpec]:
    """The plan with one A/A twin per experiment that a home-page question judges (none
    with fewer than 2 processes per cell: one process has nothing to test)."""
    if processes < 2:
        return cells
    judged = {question.experiment for question in QUESTIONS}
    planned = list(cells)
    for experiment in dict.fromkeys(cell.experiment for cell in cells):
        mine = [c for c in cells if c.experiment == experiment and not c.control]
        if experiment not in judged or not mine:
            continue
        source = control_source(mine)
        planned.insert(planned.index(source) + 1, replace(source, control=CONTROL_SUFFIX))
    return planned
