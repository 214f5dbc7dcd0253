"""export: which export paths work in each framework (work in progress)."""

from __future__ import annotations

from runner.experiments import Experiment, PlanRequest
from runner.spec import CellSpec


def plan(request: PlanRequest) -> list[CellSpec]:
    return []


EXPERIMENT = Experiment(name="export", question="", metrics=(), plan=plan)
