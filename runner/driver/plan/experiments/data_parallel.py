"""data-parallel: how well does each framework's data parallelism scale, and does it still
reach the same accuracy?

Each strategy is a cell `mode`; `workers` is the number of replicas (processes or devices).
Every cell with N > 1 workers first trains the same model on the same data with 1 worker
in the same process, so its scaling efficiency and accuracy delta come from a paired
measurement under identical conditions (see protocol.py). The global batch is the same for
every worker count; each replica gets an equal shard of it.
"""

from __future__ import annotations

import math

from dlbench.core.declarations.systems import SYSTEMS
from dlbench.runner.driver.plan.experiments import (Experiment, not_measured_params, suite_grid,
                                                    unsupported_params)
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import CellSpec

#: The data-parallel strategies each system offers, as cell modes
#: (dlbench.core.declarations.systems).
STRATEGIES: dict[str, tuple[str, ...]] = {s.name: s.data_parallel for s in SYSTEMS}

#: Per suite: workloads with epochs, and strategies left out (processes per cell:
#: dlbench.runner.driver.plan.repeats). Every N-worker cell
#: measures its own 1-worker baseline, so quick plans only N = 2; quick also leaves out
#: MultiWorkerMirroredStrategy, whose worker processes each pay TensorFlow's import.
GRID: dict[str, dict] = {
    "quick": {"epochs": {"mlp-digits": 2}, "skip": ("multi-worker-mirrored",)},
    # standard, and machine (README: "The machine suite"), which measures standard's cells:
    # on 2 CPU cores 1 worker of 2 threads and 2 of 1 (dlbench.core.judging.conditions: a physical
    # core per worker is a device), on the digits MLP; TensorFlow's multi-worker strategy
    # needs a cluster of processes, each paying TensorFlow's import, left to full
    "standard": {"epochs": {"mlp-digits": 8, "cnn-synthetic": 3}, "skip": (),
                 "cpu": {"epochs": {"mlp-digits": 8}, "skip": ("multi-worker-mirrored",)}},
    "full": {"epochs": {"mlp-digits": 15, "cnn-synthetic": 5}, "skip": ()},
}
MAX_CPU_WORKERS = 8


def worker_counts(suite: str, device: str) -> list[int]:
    """1 (unless quick), 2, 4, ... up to every GPU on a GPU machine or the cores on a CPU."""
    if device == "cuda":
        from dlbench.runner.driver.machine.environment import gpu_facts

        most = max(1, len(gpu_facts()))
    else:
        import os

        most = min(MAX_CPU_WORKERS, max(2, len(os.sched_getaffinity(0))))
    if suite == "quick":
        return [1] if most < 2 else [2]
    counts, n = [1], 2
    while n < most:
        counts.append(n)
        n *= 2
    if most > 1:
        counts.append(most)
    return counts


def global_batch(batch_size: int, counts: list[int]) -> int:
    """The workload's batch, rounded up to a multiple of every worker count (equal shards)."""
    step = math.lcm(*counts)
    return -(-batch_size // step) * step


def plan(request: RunRequest) -> list[CellSpec]:
    """One cell per workload, framework, strategy and worker count."""
    from dlbench.runner.workloads.catalog import get_workload

    grid = suite_grid(GRID, request)
    counts = worker_counts(request.suite, request.device)
    cells = []
    for name in request.workloads or list(grid["epochs"]):
        workload = get_workload(name)
        params = {"epochs": grid["epochs"].get(name, 4), "max_workers": max(counts)}
        for framework in request.systems:
            for mode in (m for m in STRATEGIES[framework.name] if m not in grid["skip"]):
                cells += [request.cell("data-parallel", name, framework, timeout_s=300.0,
                                       mode=mode, workers=workers,
                                       batch_size=global_batch(workload.batch_size, counts),
                                       params=params
                                       | unsupported_params(framework, "data-parallel", mode)
                                       | not_measured_params(request, framework, mode,
                                                             "data-parallel", name))
                          for workers in counts]
    return cells


EXPERIMENT = Experiment("data-parallel", plan)
