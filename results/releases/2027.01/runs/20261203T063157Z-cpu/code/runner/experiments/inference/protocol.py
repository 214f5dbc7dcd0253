"""The inference protocol, shared by every framework's inference code.

A framework supplies a `Predictor` (runner.harness.inference: its model and one forward
call in one mode); the harness owns the inputs, the clock, warm-up and the metrics, so every
framework and mode is timed alike: batch-1 latency over many single calls, and throughput
at a large batch over calibrated windows. Each worker process is one repeat.
"""

from __future__ import annotations

from runner.harness import Cell
from runner.harness.inference import (InferencePlan, Predictor, first_call_seconds,
                                      latencies_ms, latency_summary, throughput)
from runner.outcome import CellOutcome, Fairness


def measure_inference(cell: Cell, predictor: Predictor, fairness: Fairness) -> CellOutcome:
    """The first call, then batch-1 latencies and large-batch throughput."""
    plan = InferencePlan.of(cell.spec)
    x = cell.data.x_test
    observations = [cell.observe("first_call_time", first_call_seconds(predictor, x))]
    cell.sampler.once("first_call_time", "the process's first forward call")
    observations += latency_summary(cell, latencies_ms(cell, predictor, x, plan))
    observations.append(cell.observe("inference_throughput",
                                      throughput(cell, predictor, x, plan)))
    return cell.outcome(observations, fairness, cell.workload_details())


def inference_fairness(cell: Cell, *, timer_includes: str, compile_mode: str,
                       data_pipeline: str,
                       precision_policy: str = "fp32 weights and activations") -> Fairness:
    """The manifest every inference cell carries."""
    spec, plan = cell.spec, InferencePlan.of(cell.spec)
    return Fairness(
        timer_includes=timer_includes,
        precision_policy=precision_policy,
        compile_mode=compile_mode,
        data_pipeline=data_pipeline,
        threads=spec.threads,
        batch_size=spec.batch_size,
        notes=(f"same transferred initial weights in every framework; latency: "
               f"{plan.latency_calls} timed batch-1 calls per process after "
               f"{plan.warmup_calls} warm-up calls, cycling over the test inputs; throughput: "
               f"{plan.throughput_samples} calibrated windows of calls at batch "
               f"{plan.throughput_batch} after {plan.warmup_calls} untimed calls; the very "
               f"first call (tracing/compilation) is timed separately as first_call_time"),
        settings=cell.settings,
    )
