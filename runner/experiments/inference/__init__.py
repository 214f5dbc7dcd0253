"""inference: how fast does each framework predict, one sample at a time and in bulk?"""

from __future__ import annotations

from dlbench.questions import QUESTIONS
from runner.experiments import Experiment, PlanRequest, suite_grid
from runner.spec import CellSpec

#: Each framework's plain path and its idiomatic fast path.
MODES: dict[str, tuple[str, ...]] = {
    "pytorch": ("inference_mode", "compiled"),
    "tensorflow": ("eager", "tf.function"),
    "keras": ("call", "predict"),
}

#: Per suite: workloads, repeats (worker processes), and the calls one process makes; quick
#: measures each framework's first (default) mode only.
GRID: dict[str, dict] = {
    "quick": {"workloads": ["mlp-digits"], "repeats": 3, "modes_per_framework": 1,
              "params": {"warmup_calls": 10, "latency_calls": 200, "throughput_batch": 512,
                         "throughput_samples": 3}},
    "standard": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic"], "repeats": 5,
                 "params": {"warmup_calls": 50, "latency_calls": 500, "throughput_batch": 1024,
                            "throughput_samples": 5},
                 "cpu": {"workloads": ["mlp-digits", "cnn-digits", "resnet-synthetic",
                                       "transformer-tokens", "lstm-tokens"]}},
    "full": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic"], "repeats": 10,
             "params": {"warmup_calls": 100, "latency_calls": 1000, "throughput_batch": 4096,
                        "throughput_samples": 10}},
}


def plan(request: PlanRequest) -> list[CellSpec]:
    """One cell per workload, framework and mode; batch_size 1 is the latency batch."""
    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or grid["workloads"]:
        for framework in request.frameworks:
            for mode in MODES[framework.framework][:grid.get("modes_per_framework")]:
                cells.append(CellSpec(
                    experiment="inference", workload=name, framework=framework.framework,
                    backend=framework.backend, device=request.device, mode=mode,
                    batch_size=1, repeats=request.repeats or grid["repeats"],
                    threads=request.threads, timeout_s=request.timeout_s or 300.0,
                    data_dir=request.data_dir, params=dict(grid["params"]),
                ))
    return cells


EXPERIMENT = Experiment(
    name="inference",
    question=QUESTIONS["inference"],
    metrics=("latency_p50", "latency_p90", "latency_p99", "inference_latency",
             "inference_throughput", "first_call_time", "import_footprint"),
    plan=plan,
)
