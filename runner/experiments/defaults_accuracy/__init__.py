"""defaults-accuracy: does the framework you use change accuracy? Each system trains one small
MLP with BatchNorm with its framework's own defaults (initialisers, Adam's constants,
BatchNorm's, its own shuffling), process k seeded with k, on a generated task whose best
accuracy is well below 1.0 (protocol.py); dlbench.core.defaults_accuracy judges the answer,
paired by seed, with the test set's sampling error in every interval.

The standard and full suites plan it (not quick's preview, nor the machine suite). A process
takes seconds, and the answer needs seeds more than anything: each cell is measured by the
suite's SEEDS processes (`--repeats N` sets N), not by the timing design's looks.
"""

from __future__ import annotations

from dataclasses import replace

from dlbench.runner.cell.spec import UNSUPPORTED, CellSpec
from dlbench.runner.experiments import Experiment, suite_grid
from dlbench.runner.plan.request import RunRequest

NAME = "defaults-accuracy"
#: The task's name in cell IDs (protocol.py declares the task; planning imports no measuring
#: code).
TASK = "mlp-bn-noisy"
#: The tasks this experiment declares for itself, in words (the run records them for its pages:
#: dlbench.runner.commands.run.planned_words).
TASKS: dict[str, str] = {TASK: "MLP with BatchNorm, noisy 4-class task"}
#: The step batch: Keras fit's default (PyTorch's DataLoader is given it; its own is 1).
BATCH_SIZE = 32

#: Per suite: processes (seeds) per system and epochs per process.
GRID: dict[str, dict] = {
    "quick": {"seeds": 3, "epochs": 10},
    "standard": {"seeds": 10, "epochs": 10},
    "full": {"seeds": 20, "epochs": 10},
}

#: Systems that cannot be trained with their own defaults, and why (recorded as unsupported
#: cells, shown on the pages, never dropped). TensorFlow's own API (tf.Module, tf.Variable,
#: tf.GradientTape) declares none: tf.nn.batch_normalization takes its epsilon from the caller
#: too, and tf.keras is Keras 3, which the Keras systems measure.
NO_DEFAULTS: dict[str, str] = {
    "tensorflow": ("TensorFlow's own API has no training defaults: a tf.Variable takes its "
                   "initial value from its caller; the initialisers, optimisers and BatchNorm "
                   "it documents are Keras'"),
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
