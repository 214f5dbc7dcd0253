"""defaults-accuracy: does the framework you use change accuracy? Each system trains one small
MLP with BatchNorm with its framework's own defaults (initialisers, Adam's constants,
BatchNorm's, its own shuffling), process k seeded with k, on a generated task whose best
accuracy is well below 1.0 (protocol.py); dlbench.core.judging.defaults_accuracy judges the answer,
paired by seed, with the test set's sampling error in every interval.

The standard, full and machine suites plan it (not quick's preview). A process
takes seconds, and the answer needs seeds more than anything: each cell is measured by the
suite's SEEDS processes (`--repeats N` sets N), not by the timing design's looks.
"""

from __future__ import annotations

from dataclasses import replace

from dlbench.runner.cell.spec import UNSUPPORTED, CellSpec
from dlbench.runner.driver.plan.experiments import Experiment, suite_grid
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.workloads.defaults_task import (BATCH_SIZE, NO_DEFAULTS, TASK,
                                                    TASKS)  # noqa: F401 - read by name

NAME = "defaults-accuracy"
#: TASKS (imported above) stays an attribute here: the run reads its task's words from the
#: plan module (dlbench.runner.driver.commands.run.own_task_words).
#: Per suite: processes (seeds) per system and epochs per process.
GRID: dict[str, dict] = {
    "quick": {"seeds": 3, "epochs": 10},
    "standard": {"seeds": 10, "epochs": 10},
    "full": {"seeds": 20, "epochs": 10},
}


def plan(request: RunRequest) -> list[CellSpec]:
    """One cell per system, each measured by the suite's seeds (or --repeats); a system
    without defaults of its own is a cell that says why."""
    if request.workloads and TASK not in request.workloads:
        return []
    grid = suite_grid(GRID, request)
    cells = []
    for framework in request.systems:
        reason = NO_DEFAULTS.get(framework.name, "")
        cell = request.cell(NAME, TASK, framework, timeout_s=300.0, batch_size=BATCH_SIZE,
                            params={"epochs": grid["epochs"]}
                            | ({UNSUPPORTED: reason} if reason else {}))
        cells.append(cell if request.repeats else replace(cell, repeats=grid["seeds"]))
    return cells


EXPERIMENT = Experiment(NAME, plan)
