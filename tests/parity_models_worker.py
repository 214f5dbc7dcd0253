"""Runs model parity cells of one framework in this process and prints their outcomes as
JSON: the parity tests start one such process per framework (a cell per process would
import the framework once per cell)."""

from __future__ import annotations

import importlib
import json
import sys

from dlbench.runner.cell.spec import CellSpec


def cell_spec(framework: str, backend: str, cell: list[str] | dict) -> CellSpec:
    """A (workload, perturbation) cell at batch 4, or a planned cell's spec (its JSON)."""
    if isinstance(cell, dict):
        return CellSpec.from_json(json.dumps(cell))
    workload, perturbation = cell
    return CellSpec(experiment="parity", workload=workload, framework=framework,
                    backend=backend, device="cpu", mode="one-step", batch_size=4,
                    repeats=1, threads=1,
                    params={"perturbation": perturbation} if perturbation else {})


def main(framework: str, backend: str, cells: list[list[str] | dict]) -> None:
    """Print one JSON line per cell: (workload, perturbation) or a planned spec."""
    module = importlib.import_module(f"dlbench.runner.worker.experiments.parity.{framework}")
    for cell in cells:
        spec = cell_spec(framework, backend, cell)
        outcome = module.run(spec)
        print(json.dumps({"workload": spec.workload,
                          "perturbation": spec.params.get("perturbation", ""),
                          "status": outcome.status.value, "notes": outcome.fairness.notes,
                          "data_pipeline": outcome.fairness.data_pipeline,
                          "metrics": {o.metric: o.value for o in outcome.observations},
                          "details": outcome.details}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
