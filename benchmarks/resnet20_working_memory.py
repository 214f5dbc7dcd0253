"""Issue 50's working-memory check on the ResNet-20 training step: each default-mode training
cell of `dlbench run --suite standard --experiment training --workload resnet-synthetic`
measured once in a fresh worker process through the runner (execute_cell), for 2 epochs (one
steady epoch is enough for memory), printing working and model memory per system. A memory
check, not a result: no timing is read. (TensorFlow runs under its own oneDNN default for the
CPU; tests/test_working_memory.py checks both of its CPU allocators.)

    .venv/bin/python benchmarks/resnet20_working_memory.py
"""

from __future__ import annotations

import dataclasses
import json

from dlbench.runner.driver.plan.cells import plan_cells
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.launch.execute import execute_cell

METRICS = ("working_memory", "model_memory", "import_footprint")


def main() -> None:
    """Measure and print each system's working memory of the ResNet-20 training step."""
    request = RunRequest(suite="standard", experiments=["training"],
                         workloads=["resnet-synthetic"], frameworks=[], device="cpu",
                         repeats=1, threads=None, timeout_s=None, data_dir="")
    for spec in plan_cells(request, "cpu"):
        if spec.mode != "default" or spec.control:
            continue
        spec = dataclasses.replace(spec, params=spec.params | {"epochs": 2}, timeout_s=1200)
        outcome = execute_cell(spec).outcome
        values = {o.metric: round(o.value, 1) for o in outcome.observations
                  if o.step is None and o.metric in METRICS}
        print(json.dumps({"cell": spec.cell_id, "status": outcome.status.value,
                          "reason": outcome.reason[:200], **values}), flush=True)


if __name__ == "__main__":
    main()
