"""Runs model parity cells of one framework in this process and prints their outcomes as
JSON: the parity tests start one such process per framework (a cell per process would
import the framework once per cell)."""

from __future__ import annotations

import importlib
import json
import sys

from dlbench.runner.cell.spec import CellSpec


def main(framework: str, backend: str, cells: list[list[str]]) -> None:
    """Print one JSON line per (workload, perturbation) cell."""
    module = importlib.import_module(f"dlbench.runner.worker.experiments.parity.{framework}")
    for workload, perturbation in cells:
        spec = CellSpec(experiment="parity", workload=workload, framework=framework,
                        backend=backend, device="cpu", mode="one-step", batch_size=4,
                        repeats=1, threads=1,
                        params={"perturbation": perturbation} if perturbation else {})
        outcome = module.run(spec)
        print(json.dumps({"workload": workload, "perturbation": perturbation,
                          "status": outcome.status.value, "notes": outcome.fairness.notes,
                          "metrics": {o.metric: o.value for o in outcome.observations},
                          "details": outcome.details}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
