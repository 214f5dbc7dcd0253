"""The real-size models on the CPU: which workloads they are, the serving batch each is
served at, the calls a process makes, and what one process is expected to cost.

ResNet-50 (8.2 GFLOP per sample) and BERT-base (22.3 GFLOP per sample) are the models people
deploy; on 2 CPU cores (measured fp32 peak 159-259 GFLOP/s) a batch-1 forward takes tens to
hundreds of milliseconds, so a process makes few calls, each long enough to time alone.
The serving batch is chosen so that one call lasts at least about 0.1 s even at the
measured peak (`serving_call_s`): a bulk call, not per-call overhead.
"""

from __future__ import annotations

from dlbench.runner.workloads.catalog import flops_per_sample

#: The real-size workloads (dlbench.runner.workloads.catalog), each the GPU size of a small model's
#: family with the same weight transfer.
REAL_SIZE_WORKLOADS: tuple[str, ...] = ("resnet50-synthetic", "bert-base-tokens")

#: The highest fp32 rate measured on this project's 2-core machine (GFLOP/s): the serving
#: batch must keep a call above the minimum even there.
PEAK_GFLOPS = 259.0
MIN_SERVING_CALL_S = 0.1
#: The serving batch of each real-size model: ResNet-50 at 8 (66 GFLOP a call, >= 0.25 s at
#: the peak), BERT-base at 4 (89 GFLOP a call, >= 0.34 s at the peak); batch 1 alone would
#: already last 32 ms and 86 ms at the peak.
SERVING_BATCH: dict[str, int] = {"resnet50-synthetic": 8, "bert-base-tokens": 4}

#: The calls one real-size inference process makes (dlbench.runner.worker.harness.inference.InferencePlan):
#: every call is long, so a few suffice; the data are the profile's small sample set.
INFERENCE_CALLS = {"warmup_calls": 2, "latency_calls": 20, "throughput_samples": 3,
                   "latency_budget_s": 10.0}
#: How many test samples an export cell compares with the framework (parity) and passes
#: through the artifact per throughput window, at real size.
EXPORT_SAMPLES = 16
#: Seconds a real-size cell may run: a cold compile of ResNet-50 or BERT-base on 2 cores
#: takes minutes.
TIMEOUT_S = 1200.0


def is_real_size(workload: str) -> bool:
    """Whether `workload` is one of the real-size models."""
    return workload in REAL_SIZE_WORKLOADS


def serving_call_s(workload: str, batch: int, gflops: float = PEAK_GFLOPS) -> float:
    """Seconds one forward call at `batch` takes at `gflops` (a lower bound at the peak)."""
    return batch * flops_per_sample(workload) / (gflops * 1e9)


def inference_params(workload: str) -> dict:
    """The inference grid's parameters for a real-size workload: its serving batch, few calls,
    the profile's small data."""
    return {**INFERENCE_CALLS, "throughput_batch": SERVING_BATCH[workload],
            "data_size": "small"}


#: A real-size training cell (training steps, and precision's working memory): the profile's
#: small data (32 samples: 4 steps an epoch at batch 8), epochs enough for one steady epoch
#: after the first (which holds warm-up and compilation), and a few test samples, so the
#: accuracy evaluated outside the timer costs little; accuracy is judged on the small models.
TRAINING = {"epochs": 3, "data_size": "small", "test_samples": 16}


#: The precision cell parameter that leaves out the fp32 baseline's training (a real-size
#: model's few steps reach no accuracy worth comparing: accuracy is judged on the small
#: models), so the baseline gives the output deviation alone, for one fp32 forward pass.
NO_ACCURACY_PARAM = "no_accuracy_vs_fp32"


def training_params(workload: str) -> dict:
    """The training and precision grids' parameters for a real-size workload (the SGD
    learning rate is the workload's; no target is expected to be reached in 12 steps)."""
    return dict(TRAINING)


def export_params(workload: str) -> dict:
    """The export grid's parameters for a real-size workload: parity and throughput on a
    few samples at the serving batch, the profile's small data."""
    return {"export_samples": EXPORT_SAMPLES, "data_size": "small"}


#: A real-size parity cell (the same model proven in the release): the model at its CPU size
#: (the size every other real-size cell measures), one inference-mode input, one
#: training-mode step at batch 1, its update checked along one random direction. Its float64
#: NumPy reference (4 single-sample passes: the forward, the step's loss, and the two of the
#: direction's central difference) is most of the cell's time: ResNet-50's single-sample
#: pass took 9-10 s on one core of a loaded 2-core machine (2026-12-07, not a result).
PARITY = {"profile": "cpu", "forward_inputs": 1, "directions": 1}
PARITY_BATCH = 1
#: Single-sample passes of a real-size parity cell's reference: the forward, the step's
#: training-mode loss, and two per direction.
PARITY_REFERENCE_PASSES = 2 + 2 * PARITY["directions"]


def parity_params(workload: str) -> dict:
    """The parity grid's parameters for a real-size workload (model_protocol's names)."""
    return dict(PARITY)
