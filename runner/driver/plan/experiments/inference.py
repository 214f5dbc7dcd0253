"""inference: how fast does each framework predict, one sample at a time and in bulk?"""

from __future__ import annotations

from dlbench.core.declarations.modes import DEFAULT, FASTEST, OTHER, measured, mode_class, modes
from dlbench.runner.driver.plan.experiments import (MODEL_WORKLOADS, Experiment,
                                                    not_measured_params, suite_grid)
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import CellSpec, FrameworkId
from dlbench.runner.workloads import real_size
from dlbench.runner.workloads.real_size import REAL_SIZE_WORKLOADS

#: Per suite: workloads and the calls one process makes (processes per cell:
#: dlbench.runner.driver.plan.repeats).
GRID: dict[str, dict] = {
    "quick": {"workloads": ["mlp-digits"],
              "params": {"warmup_calls": 10, "latency_calls": 200, "throughput_batch": 512,
                         "throughput_samples": 3}},
    "standard": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
                 "params": {"warmup_calls": 50, "latency_calls": 500, "throughput_batch": 1024,
                            "throughput_samples": 5},
                 # on 2 CPU cores (150 minutes for the suite): the real-size ResNet-50 and
                 # BERT-base (the serving questions), and the MLP as the overhead-bound
                 # reference (the per-call overhead questions), each on its plain and
                 # production paths. ResNet-20 left for ResNet-50: between the two it
                 # answered neither question, and its 51 processes (15 min in 2027.02) pay
                 # for part of the real-size cells
                 "cpu": {"workloads": ["mlp-digits", *REAL_SIZE_WORKLOADS],
                         "params": {"warmup_calls": 10, "latency_calls": 200,
                                    "throughput_batch": 128, "throughput_samples": 5}}},
    # machine: standard's CPU cells (ResNet-50 and BERT-base serving on their plain and
    # production paths, less standard's cuts; the MLP's per-call overhead)
    "machine": {"workloads": ["mlp-digits", *REAL_SIZE_WORKLOADS],
                "params": {"warmup_calls": 10, "latency_calls": 200, "throughput_batch": 128,
                           "throughput_samples": 5}},
    "full": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
             "params": {"warmup_calls": 100, "latency_calls": 1000, "throughput_batch": 4096,
                        "throughput_samples": 10},
             "cpu": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic",
                                   *MODEL_WORKLOADS, *REAL_SIZE_WORKLOADS]}},
}


def inference_modes(request: RunRequest, framework: FrameworkId) -> list[str]:
    """The modes a cell is measured in: plain, production and other (Keras' model(x)) in
    full, and in standard on a GPU; plain and production in standard on a CPU (90 minutes
    on 2 cores) and in quick on a GPU; plain only in quick on a CPU (8 minutes). A mode
    another mode's cell measures (dlbench.core.declarations.modes.SAME_AS) is left out."""
    on_cpu = request.device == "cpu"
    if request.suite == "full" or (request.suite == "standard" and not on_cpu):
        kept: tuple[str, ...] = (DEFAULT, FASTEST, OTHER)
    elif request.suite == "quick" and on_cpu:
        kept = (DEFAULT,)
    else:
        kept = (DEFAULT, FASTEST)
    wanted = [mode for mode in modes("inference", framework.framework)
              if mode_class("inference", framework.framework, mode) in kept]
    return measured("inference", framework.name, request.device, wanted)


def plan(request: RunRequest) -> list[CellSpec]:
    """One cell per workload, framework and mode; batch_size 1 is the latency batch. A mode
    too slow for the suite on this device is a cell that says so (not measured)."""
    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or grid["workloads"]:
        real = real_size.is_real_size(name)
        params = real_size.inference_params(name) if real else dict(grid["params"])
        for framework in request.systems:
            for mode in inference_modes(request, framework):
                # at real size a cold compile is measured apart and no longer dominates:
                # the production paths are measured, the slow compilers included
                skipped = not_measured_params(request, framework, mode, "inference", name)
                cells.append(request.cell(
                    "inference", name, framework, mode=mode, batch_size=1,
                    timeout_s=real_size.TIMEOUT_S if real else 300.0, params=params | skipped,
                ))
    return cells


EXPERIMENT = Experiment("inference", plan)
