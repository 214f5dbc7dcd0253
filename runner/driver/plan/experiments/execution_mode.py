"""execution-mode: do graphs and compilers train faster than eager execution, and when has
the compilation paid for itself?"""

from __future__ import annotations

from dlbench.core.declarations.modes import MODES as MODE_MATRIX
from dlbench.core.declarations.modes import OTHER, measured, mode_class
from dlbench.core.declarations.systems import frameworks
from dlbench.runner.driver.plan.experiments import (BASE_SUITE, MODEL_WORKLOADS, Experiment,
                                                    not_measured_params, suite_grid)
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import CellSpec, FrameworkId
from dlbench.runner.workloads import real_size

#: Each framework's eager mode first, then its graph/compiled modes.
MODES: dict[str, tuple[str, ...]] = {
    framework: tuple(table) for framework, table in MODE_MATRIX["execution-mode"].items()}

#: Modes the quick suite leaves out because another cell measures the same thing: every
#: graph/compiled cell times its framework's eager mode in the same process
#: (eager_step_time). (A mode that is the same configuration as another, such as Keras on
#: JAX's jit_compile, is never a cell of its own: dlbench.core.declarations.modes.SAME_AS.) Standard
#: on a CPU leaves out only the eager baselines that stand for no framework (mode class "other");
#: full, and standard on a GPU, run every other mode as its own cell.
DUPLICATES = {(name, framework.eager_baseline) for name, framework in frameworks().items()}

#: Per suite (processes per cell: dlbench.runner.driver.plan.repeats): workloads, and per mode the calibrated
#: windows of steady steps and the distinct batches they cycle over. Standard (on a GPU) and
#: full measure the ResNet, Transformer and LSTM too.
GRID: dict[str, dict] = {
    "quick": {"workloads": ["mlp-digits"], "step_samples": 3, "batches": 16},
    "standard": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
                 "step_samples": 5, "batches": 32,
                 # on 2 CPU cores: none. The suite's 150 minutes go to the real-size
                 # cells, whose production paths (inference) and the ResNet-20's compiled
                 # modes (training) answer "eager or compiled?"; the full suite keeps these.
                 "cpu": {"workloads": []}},
    # machine (README: "The machine suite"): on 2 CPU cores, ResNet-50's training steps in
    # each system's plain path beside its production one (torch.compile, TensorFlow's XLA,
    # Keras' jit_compile on TensorFlow), each compiled cell with its compile times and its
    # break-even against the plain path timed in the same process; on the profile's 32
    # samples (4 batches of 8), 3 windows of steady steps (a step lasts over a second)
    "machine": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
                "step_samples": 5, "batches": 32,
                "cpu": {"workloads": ["resnet50-synthetic"], "step_samples": 3, "batches": 4,
                        "params": {"data_size": "small"}}},
    "full": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
             "step_samples": 10, "batches": 64},
}


def modes(request: RunRequest, framework: FrameworkId) -> list[str]:
    """The modes a suite measures for one framework: every mode in full and in standard on a
    GPU; the plain and production ones in standard on a CPU; quick without duplicates;
    never a mode another mode's cell measures (dlbench.core.declarations.modes.SAME_AS)."""
    every = list(MODES[framework.framework])
    suite = BASE_SUITE.get(request.suite, request.suite)  # machine: as standard
    if suite == "full" or (suite == "standard" and request.device != "cpu"):
        kept = every
    elif suite == "standard":
        kept = [mode for mode in every
                if mode_class("execution-mode", framework.framework, mode) != OTHER]
    else:
        kept = [mode for mode in every
                if (framework.framework, mode) not in DUPLICATES]
    return measured("execution-mode", framework.name, request.device, kept)


def plan(request: RunRequest) -> list[CellSpec]:
    """One cell per workload, framework and mode, at the workload's batch size (a
    dlbench.runner.models workload's at the device's size profile, as in training). A mode too
    slow for the suite on this device is a cell that says so (not measured)."""
    from dlbench.runner.workloads.catalog import device_batch_size, get_workload

    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or grid["workloads"]:
        batch_size = device_batch_size(get_workload(name), request.device)
        timeout_s = real_size.TIMEOUT_S if real_size.is_real_size(name) else 600.0
        for framework in request.systems:
            for mode in modes(request, framework):
                cells.append(request.cell(
                    "execution-mode", name, framework, timeout_s=timeout_s, mode=mode,
                    batch_size=batch_size,
                    params={k: grid[k] for k in ("step_samples", "batches")}
                    | grid.get("params", {})
                    | not_measured_params(request, framework, mode, "execution-mode", name),
                ))
    return cells


EXPERIMENT = Experiment("execution-mode", plan)
