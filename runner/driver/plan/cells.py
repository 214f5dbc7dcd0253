"""Turn what the user asked for into a validated list of cells."""

from __future__ import annotations

import os

from dlbench.runner.cell import frameworks
from dlbench.runner.driver.plan.controls import with_controls
from dlbench.runner.driver.plan.experiments import (SUITES, experiment_names, get_experiment,
                                        suite_experiments)
from dlbench.runner.driver.plan.repeats import process_count
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import LOCAL_DATA_WORKLOADS, WORKLOADS

DEVICES = ("auto", "cpu", "cuda")


class PlanError(ValueError):
    """A request naming something that does not exist, with the valid values."""


def _check(kind: str, values: list[str], valid: list[str] | tuple[str, ...]) -> None:
    for value in values:
        if value not in valid:
            raise PlanError(f"unknown {kind} {value!r}; valid: {', '.join(valid)}")


def validate(request: RunRequest) -> None:
    """Raise PlanError naming the first bad value and listing the valid ones."""
    for step in request.steps():
        validate(step)
    _check("suite", [request.suite], SUITES)
    _check("experiment", request.experiments, experiment_names())
    _check("workload", request.workloads, list(WORKLOADS))
    _check("framework", request.frameworks, frameworks.framework_names() + ["keras"])
    _check("device", [request.device], DEVICES)
    if request.repeats is not None and request.repeats < 1:
        raise PlanError(f"--repeats must be at least 1, got {request.repeats}")
    if request.threads is not None and not 1 <= request.threads <= os.cpu_count():
        raise PlanError(f"--threads must be between 1 and {os.cpu_count()}, got {request.threads}")
    _check_data_dir(request)
    if request.timeout_s is not None and request.timeout_s <= 0:
        raise PlanError(f"--timeout must be positive, got {request.timeout_s}")


def _check_data_dir(request: RunRequest) -> None:
    local = [w for w in request.workloads if w in LOCAL_DATA_WORKLOADS]
    if local and not request.data_dir:
        raise PlanError(f"workload {local[0]!r} reads local files: pass --data-dir DIR")
    if request.data_dir and not os.path.isdir(request.data_dir):
        raise PlanError(f"--data-dir {request.data_dir!r} is not a directory")


def resolve_device(device: str) -> str:
    """'auto' becomes cuda where an NVIDIA GPU is visible, else cpu."""
    if device != "auto":
        return device
    from dlbench.runner.driver.machine.environment import gpu_facts

    return "cuda" if gpu_facts() else "cpu"


def plan_cells(request: RunRequest, device: str) -> list[CellSpec]:
    """Every cell of the requested experiments, in suite order, with the number of processes
    the harness's repeat policy gives it and each experiment's A/A control (a device plan:
    every step's cells, each once, and no controls)."""
    validate(request)
    if request.plan:
        unique: dict[str, CellSpec] = {}
        for step in request.steps():
            for cell in plan_cells(step, device):
                unique.setdefault(cell.cell_id, cell)
        return list(unique.values())
    resolved = request.resolved(device)
    names = request.experiments or suite_experiments(request.suite)
    cells: list[CellSpec] = []
    for name in experiment_names():
        if name in names:
            cells.extend(get_experiment(name).plan(resolved))
    if not cells:
        raise PlanError(nothing_planned(request, names, device))
    if request.repeats is None:  # the suite's design; --repeats N measures what it names
        cells = with_controls(cells, process_count(request.suite, "training"))
    return cells


def nothing_planned(request: RunRequest, experiments: list[str], device: str) -> str:
    """Why a request plans no cell (a suite that leaves an experiment out on this device, or
    a workload or framework the experiment does not measure), and where to look."""
    chosen = ", ".join(experiments)
    narrowed = [f"{flag} {', '.join(values)}" for flag, values in
                (("workload", request.workloads), ("framework", request.frameworks)) if values]
    return (f"nothing to measure: the {request.suite} suite has no {chosen} cell on {device}"
            + (f" for {'; '.join(narrowed)}" if narrowed else "")
            + " (`dlbench list` shows what each suite measures; --suite full measures most)")

