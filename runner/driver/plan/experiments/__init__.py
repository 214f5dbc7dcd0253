"""The experiments' plans, the driver's side of each experiment: each is declared once in
dlbench.core.declarations.experiments (its question, metrics, estimate and page sections) and has a
module here, named as its worker package's folder (runner/driver/plan/experiments/<folder>.py),
holding its grid and plan. The code each framework runs lives on the worker side
(dlbench.runner.worker.experiments); planning never imports it, so the driver only ever names
a framework module (for the code record of old runs: framework_code_path)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dlbench.core.declarations import experiments as declared
from dlbench.core.declarations.modes import FASTEST, mode_class
from dlbench.core.declarations.systems import SYSTEMS, unsupported_reason
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import NOT_MEASURED, UNSUPPORTED, CellSpec, FrameworkId
from dlbench.runner.driver.plan.experiments.standard_cpu_cuts import standard_cpu_cut

SUITES = ("quick", "standard", "machine", "full")

#: A suite an experiment's grid does not name takes the grid of its base suite: the machine
#: suite is standard's measurement (its sizes, calls and cuts) narrowed to what a machine
#: answers (`--suite machine --experiment execution-mode` measures standard's cells).
BASE_SUITE: dict[str, str] = {"machine": "standard"}

#: The experiments a suite measures when none is named (--experiment names any of them in
#: any suite). Quick is a preview that fits a few minutes on 2 cores with 3 processes per
#: cell: the digits MLP's training, inference and parity for every system, enough for the
#: home page to decide its training and inference questions where the difference is large.
#: It leaves to standard the model families, precision, execution modes, data parallelism
#: and export (README: "The quick suite").
QUICK_EXPERIMENTS: tuple[str, ...] = ("training", "inference", "parity")
#: The machine suite: what one machine answers, alone on 2 cores in at most 120 minutes
#: (README: "The machine suite"): real-size serving, runtimes and training steps, compiled
#: against plain training steps at real size, bf16 against fp32 at real size, the small
#: models' training to target and per-call overhead, and data parallelism over the cores
#: (2 workers of 1 thread against 1 worker of 2 threads).
MACHINE_EXPERIMENTS: tuple[str, ...] = ("training", "inference", "parity", "precision",
                                        "execution-mode", "data-parallel", "export")
#: Accuracy that can differ: each system trained with its own defaults on a task below its
#: ceiling, 10 seeds (the standard grid's; seconds a process, about 8 minutes in all).
MACHINE_EXPERIMENTS += ("defaults-accuracy",)
SUITE_EXPERIMENTS: dict[str, tuple[str, ...]] = {"quick": QUICK_EXPERIMENTS,
                                                 "machine": MACHINE_EXPERIMENTS}


def suite_experiments(suite: str) -> list[str]:
    """The experiments `suite` measures when none is named: quick's preview, the machine
    suite's, else every declared experiment in suite order."""
    if suite in SUITE_EXPERIMENTS:
        return [name for name in experiment_names() if name in SUITE_EXPERIMENTS[suite]]
    return experiment_names()


@dataclass(frozen=True)
class Experiment:
    """A declared experiment (dlbench.core.declarations.experiments) and how it expands into
    cells."""

    name: str
    plan: Callable[[RunRequest], list[CellSpec]]

    @property
    def question(self) -> str:
        return declared.by_name(self.name).question

    @property
    def metrics(self) -> tuple[str, ...]:
        return declared.by_name(self.name).metrics


#: The model families of dlbench.runner.models that the precision, execution-mode and export grids
#: add in full and in standard on a GPU (standard on 2 CPU cores has no time for them there;
#: training and inference measure them on the CPU).
MODEL_WORKLOADS = ("resnet-synthetic", "transformer-tokens", "lstm-tokens")

#: (system, mode) pairs that only the full suite measures on a CPU, with the measured cost
#: that keeps them out of the others (each system's declaration in
#: dlbench.core.declarations.systems).
SLOW_ON_CPU: dict[tuple[str, str], str] = {
    (system.name, mode): cost for system in SYSTEMS for mode, cost in system.slow_on_cpu.items()}


def _slow_cost(request: RunRequest, framework: FrameworkId, mode: str) -> str:
    if request.device != "cpu" or request.suite == "full":
        return ""
    return SLOW_ON_CPU.get((framework.name, mode), "")


def not_measured_params(request: RunRequest, framework: FrameworkId, mode: str,
                        experiment: str = "", workload: str = "") -> dict:
    """{NOT_MEASURED: why} for a cell this suite shows as not measured on its device, with
    the cost that excluded it: one of the standard CPU suite's cuts (standard_cpu_cuts, for
    `experiment` and `workload`) or a mode its system declares too slow on a CPU; {} for a
    cell it measures."""
    cost = (standard_cpu_cut(request, experiment, workload, framework, mode)
            or _slow_cost(request, framework, mode))
    return {NOT_MEASURED: f"not measured on this device in the {request.suite} suite: {cost}; "
                          f"the full suite measures it"} if cost else {}


def unsupported_params(framework: FrameworkId, experiment: str, mode: str) -> dict:
    """{UNSUPPORTED: why} for a mode its system declares it does not implement
    (dlbench.core.declarations.systems), so the cell is recorded as unsupported, never run; {}
    else."""
    reason = unsupported_reason(framework.name, experiment, mode)
    return {UNSUPPORTED: reason} if reason else {}


def outside_fastest_workloads(grid: dict, workload: str, experiment: str, framework: str,
                              mode: str) -> bool:
    """Whether `mode` is a fastest mode on a workload the grid's "fastest_workloads" leaves
    out (a grid that names none measures fastest modes on every workload)."""
    fastest_on = grid.get("fastest_workloads")
    return (fastest_on is not None and workload not in fastest_on
            and mode_class(experiment, framework, mode) == FASTEST)


def suite_grid(grids: dict[str, dict], request: RunRequest) -> dict:
    """An experiment's grid for the requested suite, with its CPU overrides on a CPU.

    A grid may hold a "cpu" entry: the sizes that keep a suite within its time on a
    2-core CPU (realistic sizes are meant for a GPU). Its "params" merge into the grid's.
    A suite the grids do not name takes its BASE_SUITE's grid.
    """
    grid = dict(grids.get(request.suite) or grids[BASE_SUITE[request.suite]])
    overrides = grid.pop("cpu", {})
    if request.device != "cpu":
        return grid
    merged = grid | overrides
    if "params" in grid and "params" in overrides:
        merged["params"] = grid["params"] | overrides["params"]
    return merged


def experiment_names() -> list[str]:
    """Every declared experiment, in suite order."""
    return declared.experiment_names()


def get_experiment(name: str) -> Experiment:
    """The experiment called `name`, from its declared package; ValueError listing valid
    names otherwise."""
    return importlib.import_module(declared.by_name(name).plans).EXPERIMENT


def code_module(experiment: str, framework: str) -> str:
    """The worker module of `framework`'s code for `experiment` (a FrameworkCode)."""
    return declared.by_name(experiment).code_module(framework)


def framework_code_path(spec: CellSpec) -> Path:
    """The source file of `spec`'s framework module, relative to the project root (found
    from its name: the driver never imports it)."""
    return Path(*_checkout_parts(code_module(spec.experiment, spec.framework))).with_suffix(".py")


def _checkout_parts(module: str) -> list[str]:
    """A module's path parts in the checkout: dlbench.runner.x lives in runner/x (pyproject's
    package-dir installs runner/ and report/ under dlbench)."""
    parts = module.split(".")
    return parts[1:] if parts[:2] in (["dlbench", "runner"], ["dlbench", "report"]) else parts
