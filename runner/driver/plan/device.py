"""A device plan: the cells of one timed run on a borrowed machine (the GPU run), as data.

A plan file (JSON, e.g. scripts/gpu_plan.json) lists steps; each step is a selection the
command line could make (suite, experiments, workloads, frameworks, processes per cell)
with an estimate of the seconds one worker process of that step takes per framework.
`dlbench run --plan FILE` measures the union of the steps' cells as one run; the estimate
says whether the run fits the machine's time (`budget_s`). What cannot be measured there
is listed with the reason (`not_measured`) and recorded in run.json.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from dlbench.runner.cell.spec import CellSpec

#: The selection fields of a step: what `dlbench run` options would give.
STEP_FIELDS = ("suite", "experiments", "workloads", "frameworks", "repeats")


@dataclass(frozen=True)
class PlanStep:
    """One selection of cells and the estimated seconds per process of each framework."""

    suite: str
    experiments: list[str]
    workloads: list[str]
    frameworks: list[str]
    repeats: int
    seconds_per_process: dict[str, float]
    why: str = ""
    min_gpus: int = 1  # a step measured only on a machine with at least this many GPUs

    def selection(self) -> dict:
        """What run.json records of this step (the estimate is not part of the request)."""
        return {name: getattr(self, name) for name in STEP_FIELDS}


@dataclass(frozen=True)
class DevicePlan:
    """The steps of a device run, its time budget and what is left out, with why."""

    device: str
    budget_s: float
    fixed_s: float  # the run's own start: environment capture and peak probes
    steps: list[PlanStep]
    not_measured: list[dict] = field(default_factory=list)


class PlanFileError(ValueError):
    """A plan file that cannot be read as a device plan, naming what is wrong."""


def load_plan(path: Path) -> DevicePlan:
    """The device plan in `path`; PlanFileError naming the first thing wrong."""
    try:
        data = json.loads(Path(path).read_text())
        steps = [PlanStep(**step) for step in data["steps"]]
        plan = DevicePlan(data["device"], float(data["budget_s"]), float(data["fixed_s"]),
                          steps, list(data.get("not_measured", [])))
    except FileNotFoundError:
        raise PlanFileError(f"--plan {path}: no such file") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as error:
        raise PlanFileError(f"--plan {path}: not a device plan ({type(error).__name__}: "
                            f"{error}); see scripts/gpu_plan.json") from None
    for step in plan.steps:
        unestimated = [f for f in step.frameworks if f not in step.seconds_per_process]
        if unestimated or not step.frameworks:
            raise PlanFileError(f"--plan {path}: a step of {step.experiments} names no "
                                f"framework or has no estimate for {unestimated}")
    return plan


def step_seconds(step: PlanStep, cells: list[CellSpec]) -> float:
    """The estimated seconds of a step's cells: processes x each framework's estimate."""
    return sum(cell.repeats * step.seconds_per_process[cell.framework_id.name]
               for cell in cells)


def plan_selections(plan: DevicePlan, gpus: int | None = None) -> list[dict]:
    """The steps as run.json's request records them (RunRequest.plan): those a machine with
    `gpus` GPUs can measure (every step when None)."""
    return [step.selection() for step in runnable_steps(plan, gpus)]


def runnable_steps(plan: DevicePlan, gpus: int | None) -> list[PlanStep]:
    """The steps a machine with `gpus` GPUs measures: a step that needs several (data
    parallelism: 2) only where there are that many; the others everywhere, as before."""
    return [step for step in plan.steps
            if gpus is None or step.min_gpus <= 1 or step.min_gpus <= gpus]
