"""The inference protocol, shared by every framework's inference code.

A framework supplies a `Predictor` (dlbench.runner.worker.harness.inference: its model and one forward
call in one mode); the harness owns the inputs, the clock, warm-up and the metrics, so every
framework and mode is timed alike: batch-1 latency over many single calls, and throughput
at a large batch over calibrated windows. Each worker process is one repeat.

Memory is read around the two phases: the first calls (batch 1, then the throughput batch:
where a graph is traced or a compiler runs, once per shape) and the timed calls after them.
`working_memory` is the timed calls' peak above the memory the first calls left, so it holds
no compilation; in a mode that compiles, `compile_memory` is what the first calls left.
"""

from __future__ import annotations

from dlbench.core.declarations.modes import compiles
from dlbench.runner.worker.harness import Cell
from dlbench.runner.worker.harness.inference import InferencePlan, Predictor, inference_observations
from dlbench.runner.cell.outcome import CellOutcome, Fairness


def measure_inference(cell: Cell, predictor: Predictor, fairness: Fairness) -> CellOutcome:
    """The first calls, then batch-1 latencies and large-batch throughput, with the memory
    of each phase."""
    spec = cell.spec
    compiled = compiles(spec.experiment, spec.framework_id.name, spec.mode, spec.device)
    return cell.outcome(inference_observations(cell, predictor, compiled), fairness,
                        cell.workload_details())


def inference_fairness(cell: Cell, *, timer_includes: str, compile_mode: str,
                       data_pipeline: str,
                       precision_policy: str = "fp32 weights and activations") -> Fairness:
    """The manifest every inference cell carries."""
    spec, plan = cell.spec, InferencePlan.of(cell.spec)
    return cell.fairness(
        timer_includes=timer_includes,
        precision_policy=precision_policy,
        compile_mode=compile_mode,
        data_pipeline=data_pipeline,
        notes=(f"same transferred initial weights in every framework; latency: "
               f"{plan.latency_calls} timed batch-1 calls per process after "
               f"{plan.warmup_calls} warm-up calls, cycling over the test inputs, less the "
               f"timing loop's own cost per call (an empty call, measured in the process); "
               f"throughput: "
               f"{plan.throughput_samples} calibrated windows of calls at batch "
               f"{plan.throughput_batch} after {plan.warmup_calls} untimed calls; the very "
               f"first call (tracing/compilation) is timed separately as first_call_time"),
    )
