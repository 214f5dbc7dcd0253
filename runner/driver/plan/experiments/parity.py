"""parity: do the frameworks compute the same function from the same transferred weights?"""

from __future__ import annotations

from dlbench.runner.driver.plan.experiments import MODEL_WORKLOADS, Experiment, suite_grid
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads import real_size

#: Per suite: the workloads checked (the dlbench.runner.models families at their tiny size,
#: on generated inputs). Parity is deterministic: one repeat per cell.
GRID: dict[str, dict] = {
    "quick": {"workloads": ["mlp-digits"]},  # CNN parity: standard suite and tests
    "standard": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
                 # on 2 CPU cores (90 minutes for the suite): the MLP and the three models
                 "cpu": {"workloads": ["mlp-digits", *MODEL_WORKLOADS]}},
    # the MLP the machine suite trains and serves, and the real-size models it compares,
    # each at the size it measures (the same model proven beside the answers comparing it)
    "machine": {"workloads": ["mlp-digits", *real_size.REAL_SIZE_WORKLOADS]},
    "full": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS]},
}


def plan(request: RunRequest) -> list[CellSpec]:
    """One fp32 cell per workload and framework, the workload's batch size as step batch
    (a dlbench.runner.models family: its tiny size profile's; a real-size model: at its CPU
    size, real_size.parity_params)."""
    from dlbench.runner.workloads.catalog import get_workload, size_profile

    cells = []
    for name in request.workloads or suite_grid(GRID, request)["workloads"]:
        workload = get_workload(name)
        batch_size = (size_profile(workload, "tiny").batch_size if workload.profiles
                      else workload.batch_size)
        params, timeout_s = {}, 300.0
        if real_size.is_real_size(name):
            params, batch_size = real_size.parity_params(name), real_size.PARITY_BATCH
            timeout_s = real_size.TIMEOUT_S
        for framework in request.systems:
            cells.append(request.cell("parity", name, framework, timeout_s=timeout_s,
                                      mode="one-step", batch_size=batch_size, params=params))
    return cells


EXPERIMENT = Experiment("parity", plan)
