"""Write tests/data/plan_ids.json: every suite's plan (cell ID, config ID and processes per
cell) on each device, as `tests/test_plan_ids.py` holds it.

Run it only when a change is meant to change what is measured, and say so in the commit:
`python tests/data/make_plan_ids.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT = Path(__file__).with_name("plan_ids.json")


#: The CPU the snapshot is planned for, whatever CPU plans it: a plan is made where it is
#: measured (fp16 cells are unsupported without fp16 units), and the snapshot is one plan.
SNAPSHOT_CPU_FLAGS = frozenset({"avx2", "avx512f", "avx512_vnni", "avx512_bf16"})


def suite_plans() -> dict[str, list[list]]:
    """suite:device -> [cell_id, config_id, processes] for every planned cell, in order, on a
    CPU with SNAPSHOT_CPU_FLAGS."""
    from unittest import mock

    with mock.patch("dlbench.runner.driver.plan.experiments.precision.cpu_flags",
                    lambda: set(SNAPSHOT_CPU_FLAGS)):
        return _plans()


def _plans() -> dict[str, list[list]]:
    from dlbench.core.declarations.identity import config_id
    from dlbench.runner.driver.plan.experiments import SUITES
    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest

    plans = {}
    for suite in SUITES:
        for device in ("cpu", "cuda"):
            request = RunRequest(suite=suite, experiments=[], workloads=[], frameworks=[],
                                 device=device, repeats=None, threads=2, timeout_s=None,
                                 data_dir="")
            plans[f"{suite}:{device}"] = [[cell.cell_id, config_id(cell.to_json()),
                                           cell.repeats] for cell in plan_cells(request, device)]
    return plans


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    SNAPSHOT.write_text(json.dumps(suite_plans(), indent=1) + "\n")
    print(f"wrote {SNAPSHOT}")
