"""The experiments: each is a package whose __init__ declares its grid and metrics, a
protocol.py with what every framework shares, and one small sibling module per framework
(pytorch.py, tensorflow.py, keras.py) holding the code that framework runs. Framework
modules reach their framework through runner.adapters and the process through
runner.harness; no experiment imports another experiment's code. Only the worker imports a
framework module, so a process only ever imports the framework it measures."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from dlbench.core.modes import FASTEST, mode_class
from dlbench.core.systems import SYSTEMS
from runner.cell.outcome import CellOutcome
from runner.plan.repeats import process_count
from runner.cell.spec import NOT_MEASURED, CellSpec, FrameworkId

#: Experiment name -> package name under runner.experiments, in the order suites run them.
EXPERIMENT_PACKAGES: dict[str, str] = {
    "training": "training",
    "inference": "inference",
    "precision": "precision",
    "execution-mode": "execution_mode",
    "parity": "parity",
    "data-parallel": "data_parallel",
    "export": "export",
}

SUITES = ("quick", "standard", "full")

#: Experiments no suite plans, only a request that names them (a user's own model,
#: runner/user_model/plan.py): experiment name -> package, for the worker to find its code.
REQUESTED_ONLY_PACKAGES: dict[str, str] = {
    "model-parity": "user_model", "model-inference": "user_model",
    "model-training": "user_model",
}

#: The experiment each requested-only one is estimated as (runner.plan.estimate).
ESTIMATED_AS: dict[str, str] = {"model-parity": "parity", "model-inference": "inference",
                                "model-training": "training"}


@dataclass(frozen=True)
class PlanRequest:
    """What the user asked for, resolved to concrete values."""

    suite: str
    workloads: list[str]  # empty: the experiment's own choice for the suite
    frameworks: list[FrameworkId]
    device: str
    repeats: int | None  # --repeats N; None: the suite's processes (runner.plan.repeats)
    threads: int
    timeout_s: float | None
    data_dir: str

    def cell(self, experiment: str, workload: str, framework: FrameworkId, *,
             timeout_s: float, device: str = "", **variant: Any) -> CellSpec:
        """A cell of this request: the settings every experiment shares, the processes its
        suite gives `experiment` (runner.plan.repeats, the one owner of process counts), and the
        user's timeout, else the experiment's own `timeout_s`. `device` overrides the
        request's (export measures its artifacts on the CPU)."""
        return CellSpec(experiment=experiment, workload=workload, framework=framework.framework,
                        backend=framework.backend, device=device or self.device,
                        repeats=process_count(self.suite, experiment, self.repeats),
                        threads=self.threads, timeout_s=self.timeout_s or timeout_s,
                        data_dir=self.data_dir, **variant)


class FrameworkCode(Protocol):
    """What `runner/experiments/<experiment>/<framework>.py` offers the worker: a function
    that measures one process of a cell (the worker imports the module and calls it)."""

    def run(self, spec: CellSpec) -> CellOutcome: ...


@dataclass(frozen=True)
class Experiment:
    """One question, its metrics, and how it expands into cells."""

    name: str
    question: str
    metrics: tuple[str, ...]
    plan: Callable[[PlanRequest], list[CellSpec]]


#: The model families of runner.models that the precision, execution-mode and export grids
#: add in full and in standard on a GPU (standard on 2 CPU cores has no time for them there;
#: training and inference measure them on the CPU).
MODEL_WORKLOADS = ("resnet-synthetic", "transformer-tokens", "lstm-tokens")

#: (system, mode) pairs that only the full suite measures on a CPU, with the measured cost
#: that keeps them out of the others (each system's declaration in dlbench.core.systems).
SLOW_ON_CPU: dict[tuple[str, str], str] = {
    (system.name, mode): cost for system in SYSTEMS for mode, cost in system.slow_on_cpu.items()}


def too_slow_here(request: PlanRequest, framework: FrameworkId, mode: str) -> bool:
    """Whether `mode` of `framework` is left out of this request's suite on its device."""
    return bool(_slow_cost(request, framework, mode))


def _slow_cost(request: PlanRequest, framework: FrameworkId, mode: str) -> str:
    if request.device != "cpu" or request.suite == "full":
        return ""
    return SLOW_ON_CPU.get((framework.name, mode), "")


def not_measured_params(request: PlanRequest, framework: FrameworkId, mode: str) -> dict:
    """{NOT_MEASURED: why} for a mode this suite shows as not measured on its device, with
    the measured cost that excluded it; {} for a mode it measures."""
    cost = _slow_cost(request, framework, mode)
    return {NOT_MEASURED: f"not measured on this device in the {request.suite} suite: {cost}; "
                          f"the full suite measures it"} if cost else {}


def outside_fastest_workloads(grid: dict, workload: str, experiment: str, framework: str,
                              mode: str) -> bool:
    """Whether `mode` is a fastest mode on a workload the grid's "fastest_workloads" leaves
    out (a grid that names none measures fastest modes on every workload)."""
    fastest_on = grid.get("fastest_workloads")
    return (fastest_on is not None and workload not in fastest_on
            and mode_class(experiment, framework, mode) == FASTEST)


def suite_grid(grids: dict[str, dict], request: PlanRequest) -> dict:
    """An experiment's grid for the requested suite, with its CPU overrides on a CPU.

    A grid may hold a "cpu" entry: the sizes that keep a suite within its time on a
    2-core CPU (realistic sizes are meant for a GPU). Its "params" merge into the grid's.
    """
    grid = dict(grids[request.suite])
    overrides = grid.pop("cpu", {})
    if request.device != "cpu":
        return grid
    merged = grid | overrides
    if "params" in grid and "params" in overrides:
        merged["params"] = grid["params"] | overrides["params"]
    return merged


def experiment_names() -> list[str]:
    return list(EXPERIMENT_PACKAGES)


def get_experiment(name: str) -> Experiment:
    """The experiment called `name`; ValueError listing valid names otherwise."""
    if name not in EXPERIMENT_PACKAGES:
        raise ValueError(f"unknown experiment {name!r}; valid: {', '.join(EXPERIMENT_PACKAGES)}")
    module = importlib.import_module(f"runner.experiments.{EXPERIMENT_PACKAGES[name]}")
    return module.EXPERIMENT


def framework_module_name(spec: CellSpec) -> str:
    """The module holding the code `spec`'s framework runs for its experiment."""
    return code_module(spec.experiment, spec.framework)


def code_module(experiment: str, framework: str) -> str:
    """The module of `framework`'s code for `experiment` (a FrameworkCode)."""
    return f"runner.experiments.{_package(experiment)}.{framework}"


def framework_code(spec: CellSpec) -> FrameworkCode:
    """The code `spec`'s framework runs for its experiment (imports that framework)."""
    return importlib.import_module(framework_module_name(spec))


def framework_code_path(spec: CellSpec) -> Path:
    """The source file of that module, relative to the project root."""
    package = _package(spec.experiment)
    return Path("runner") / "experiments" / package / f"{spec.framework}.py"


def _package(experiment: str) -> str:
    """The package under runner.experiments holding `experiment`'s code."""
    return EXPERIMENT_PACKAGES.get(experiment) or REQUESTED_ONLY_PACKAGES[experiment]
