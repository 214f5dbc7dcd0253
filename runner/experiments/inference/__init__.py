"""inference: how fast does each framework predict, one sample at a time and in bulk?"""

from __future__ import annotations

from dlbench.modes import DEFAULT, FASTEST, mode_class, modes
from dlbench.questions import QUESTIONS
from runner.experiments import Experiment, PlanRequest, suite_grid
from runner.spec import CellSpec

#: Per suite: workloads, repeats (worker processes), and the calls one process makes.
GRID: dict[str, dict] = {
    "quick": {"workloads": ["mlp-digits"], "repeats": 3,
              "params": {"warmup_calls": 10, "latency_calls": 200, "throughput_batch": 512,
                         "throughput_samples": 3}},
    "standard": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic"], "repeats": 5,
                 "params": {"warmup_calls": 50, "latency_calls": 500, "throughput_batch": 1024,
                            "throughput_samples": 5},
                 # on 2 CPU cores: the models and the MLP as the overhead-bound reference
                 "cpu": {"workloads": ["mlp-digits", "resnet-synthetic", "transformer-tokens",
                                       "lstm-tokens"]}},
    "full": {"workloads": ["mlp-digits", "cnn-digits", "cnn-synthetic"], "repeats": 10,
             "params": {"warmup_calls": 100, "latency_calls": 1000, "throughput_batch": 4096,
                        "throughput_samples": 10}},
}


def inference_modes(suite: str, framework: str, device: str = "cpu") -> list[str]:
    """Standard and full measure every mode: default, fastest and other (TensorFlow's graph
    without XLA); quick measures the default and the fastest, and on a CPU (8 minutes on 2
    cores) the default only."""
    every = modes("inference", framework)
    if suite != "quick":
        return every
    kept = (DEFAULT,) if device == "cpu" else (DEFAULT, FASTEST)
    return [mode for mode in every if mode_class("inference", framework, mode) in kept]


def plan(request: PlanRequest) -> list[CellSpec]:
    """One cell per workload, framework and mode; batch_size 1 is the latency batch."""
    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or grid["workloads"]:
        for framework in request.frameworks:
            for mode in inference_modes(request.suite, framework.framework, request.device):
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
