"""Shared worker processes: the quick suite measures several cells of one framework in one
process, so a preview on 2 cores pays each framework's import (2.6 s for PyTorch, 8-9 s for
TensorFlow and Keras) once per worker instead of once per cell.

Worker k of a framework measures process k of each of its cells that may share: a cell's
processes stay in distinct workers, so they remain independent (they are its interval),
and the cells compared with each other are measured by different frameworks' workers
anyway. Cells share only when nothing one leaves behind can change the next one's numbers:
- the same framework, backend, device and threads: the process environment is the same;
- not data-parallel: its workers and logical devices are set before the framework starts;
- not a fastest mode: a compile in a process that already compiled would find the earlier
  one's caches, so its compile time would be a cache hit, not a cold compile;
- not a cell planned as not measured on this device or as unsupported (no process
  starts for it);
- an A/A control shares only with other controls, never with its twin: the two cells must
  be as independent as two frameworks' cells are;
- not a cell whose params say it compiles (a user's model's compiled modes say so).

The standard and full suites never share: each of their processes measures one cell. A
shared cell's outcome says so (`shared_process`: the worker's pid, the cell's position, how
many cells the process measured and the cell's own slice of its time; the cells table
repeats it in details_json), and each worker's first cell pays the framework's one-time
warm-up, so a quick run is a preview, not a result.
"""

from __future__ import annotations

from dlbench.core.declarations.modes import FASTEST, mode_class
from dlbench.runner.driver.plan.schedule import process_label
from dlbench.runner.cell.spec import CellSpec

#: The cell param saying its mode compiles, for cells whose mode no system declares.
COMPILES = "compiles"
#: Suites whose cells may share a worker process.
SHARING_SUITES = ("quick",)
#: Experiments whose cells always get a process of their own, and why.
OWN_PROCESS_EXPERIMENTS: dict[str, str] = {
    "data-parallel": "its workers and logical devices are set up before the framework starts",
}


def suite_shares(suite: str) -> bool:
    """Whether cells of `suite` may share worker processes (process k of each with process k
    of the others), whatever their number of processes."""
    return suite in SHARING_SUITES


def may_share(spec: CellSpec, suite: str) -> bool:
    """True when `spec` may share its worker process with other cells of its framework."""
    return (suite_shares(suite) and spec.experiment not in OWN_PROCESS_EXPERIMENTS
            and mode_class(spec.experiment, spec.framework, spec.mode) != FASTEST
            and spec.runs and not spec.params.get(COMPILES))


def share_key(spec: CellSpec) -> tuple:
    """Processes with equal keys share a worker: the same process environment, the same
    process index, and controls apart from the cells they repeat."""
    return (spec.framework, spec.backend, spec.device, spec.threads, spec.repeat_index,
            bool(spec.control))


def worker_batches(order: list[CellSpec], suite: str) -> list[list[CellSpec]]:
    """The processes of `order` grouped into worker processes: in a sharing suite, every
    shareable cell joins the batch of its framework (placed where its first cell was in the
    order); everything else, and every cell of other suites, runs alone."""
    batches: list[list[CellSpec]] = []
    shared: dict[tuple, list[CellSpec]] = {}
    for spec in order:
        if not may_share(spec, suite):
            batches.append([spec])
        elif share_key(spec) in shared:
            shared[share_key(spec)].append(spec)
        else:
            shared[share_key(spec)] = [spec]
            batches.append(shared[share_key(spec)])
    return batches


def batch_label(batch: list[CellSpec]) -> str:
    """How the progress bar names a worker process: its first cell, and how many more."""
    more = f" and {len(batch) - 1} more cells in one process" if len(batch) > 1 else ""
    return process_label(batch[0]) + more
