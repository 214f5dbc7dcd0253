"""inference: how fast does each framework predict, one sample at a time and in bulk?"""

from __future__ import annotations

from dlbench.core.modes import DEFAULT, FASTEST, OTHER, measured, mode_class, modes
from runner.experiments import (
    MODEL_WORKLOADS,
    Experiment,
    PlanRequest,
    not_measured_params,
    suite_grid,
)
from runner.cell.spec import CellSpec, FrameworkId

#: Per suite: workloads and the calls one process makes (processes per cell:
#: runner.plan.repeats).
GRID: dict[str, dict] = {
    "quick": {"workloads": ["mlp-digits"],
              "params": {"warmup_calls": 10, "latency_calls": 200, "throughput_batch": 512,
                         "throughput_samples": 3}},
    "standard": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
                 "params": {"warmup_calls": 50, "latency_calls": 500, "throughput_batch": 1024,
                            "throughput_samples": 5},
                 # on 2 CPU cores (90 minutes for the suite): the ResNet, and the MLP as the
                 # overhead-bound reference, each on its plain and production paths;
                 # ResNet-20 is 3000x the MLP's FLOPs, and at the sizes above one process
                 # took 100-270 s, so the calls are fewer and the bulk batch smaller
                 "cpu": {"workloads": ["mlp-digits", "resnet-synthetic"],
                         "params": {"warmup_calls": 10, "latency_calls": 200,
                                    "throughput_batch": 128, "throughput_samples": 5}}},
    "full": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS],
             "params": {"warmup_calls": 100, "latency_calls": 1000, "throughput_batch": 4096,
                        "throughput_samples": 10}},
}


def inference_modes(request: PlanRequest, framework: FrameworkId) -> list[str]:
    """The modes a cell is measured in: plain, production and other (Keras' model(x)) in
    full, and in standard on a GPU; plain and production in standard on a CPU (90 minutes
    on 2 cores) and in quick on a GPU; plain only in quick on a CPU (8 minutes). A mode
    another mode's cell measures (dlbench.core.modes.SAME_AS) is left out."""
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


def plan(request: PlanRequest) -> list[CellSpec]:
    """One cell per workload, framework and mode; batch_size 1 is the latency batch. A mode
    too slow for the suite on this device is a cell that says so (not measured)."""
    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or grid["workloads"]:
        for framework in request.frameworks:
            for mode in inference_modes(request, framework):
                cells.append(request.cell(
                    "inference", name, framework, timeout_s=300.0, mode=mode, batch_size=1,
                    params=dict(grid["params"]) | not_measured_params(request, framework,
                                                                      mode),
                ))
    return cells


EXPERIMENT = Experiment("inference", plan)
