"""The inference timing protocol, shared by every framework's inference code.

A framework supplies a `Predictor` (its model and one forward call in one mode); this
module owns the inputs, the clock, warm-up, repeats and the metrics, so every framework
and mode is timed alike: batch-1 latency over many single calls, and throughput at a
large batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dlbench.schema import CellStatus
from runner.experiments.training.protocol import TrainingData
from runner.measure import NS_PER_S, clock_ns
from runner.outcome import CellOutcome, Fairness, Observation
from runner.spec import CellSpec

NS_PER_MS = 1_000_000


class Predictor(Protocol):
    """What a framework implements to be timed by this protocol."""

    def prepare(self, x: np.ndarray) -> object:
        """`x` in the form the timed call takes (a device tensor, or NumPy where the API
        takes NumPy); not timed."""

    def predict(self, prepared: object) -> np.ndarray:
        """One forward call, its output as NumPy on the host (which waits for the device)."""


@dataclass(frozen=True)
class InferencePlan:
    """How many calls of each kind one repeat makes (from spec.params)."""

    warmup_calls: int
    latency_calls: int
    throughput_batch: int
    throughput_calls: int

    @classmethod
    def of(cls, spec: CellSpec) -> InferencePlan:
        p = spec.params
        return cls(int(p.get("warmup_calls", 10)), int(p.get("latency_calls", 200)),
                   int(p.get("throughput_batch", 512)), int(p.get("throughput_calls", 10)))


def large_batch(x: np.ndarray, size: int) -> np.ndarray:
    """`size` samples: the test inputs repeated as often as needed."""
    reps = -(-size // len(x))
    return np.concatenate([x] * reps)[:size]


def first_call_seconds(predictor: Predictor, x: np.ndarray) -> float:
    """Time of the very first call on a batch-1 input (tracing/compilation included)."""
    prepared = predictor.prepare(x[:1])
    start = clock_ns()
    predictor.predict(prepared)
    return (clock_ns() - start) / NS_PER_S


def latencies_ms(predictor: Predictor, x: np.ndarray, plan: InferencePlan) -> list[float]:
    """Batch-1 latency of `latency_calls` calls (after `warmup_calls`), cycling over `x`."""
    singles = [predictor.prepare(x[i:i + 1]) for i in range(min(len(x), plan.latency_calls))]
    for i in range(plan.warmup_calls):
        predictor.predict(singles[i % len(singles)])
    result = []
    for i in range(plan.latency_calls):
        start = clock_ns()
        predictor.predict(singles[i % len(singles)])
        result.append((clock_ns() - start) / NS_PER_MS)
    return result


def throughput(predictor: Predictor, x: np.ndarray, plan: InferencePlan) -> float:
    """Samples/s over `throughput_calls` calls at `throughput_batch`, after `warmup_calls`
    untimed calls (a new batch shape may trace or compile again, and allocate)."""
    prepared = predictor.prepare(large_batch(x, plan.throughput_batch))
    for _ in range(max(1, plan.warmup_calls)):
        predictor.predict(prepared)
    start = clock_ns()
    for _ in range(plan.throughput_calls):
        predictor.predict(prepared)
    seconds = (clock_ns() - start) / NS_PER_S
    return plan.throughput_batch * plan.throughput_calls / seconds


def latency_summary(values: list[float], repeat: int) -> list[Observation]:
    """Raw latencies (step = call index) and their p50/p90/p99."""
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    return ([Observation("inference_latency", v, repeat, i) for i, v in enumerate(values)]
            + [Observation("latency_p50", float(p50), repeat),
               Observation("latency_p90", float(p90), repeat),
               Observation("latency_p99", float(p99), repeat)])


def budgeted_repeats(spec: CellSpec, one_repeat: Callable[[int], list[Observation]]
                     ) -> tuple[list[Observation], dict]:
    """Run `one_repeat(0..)` spec.repeats times, but start no repeat after
    spec.params['time_budget_s'] (when set) has passed; at least one always runs."""
    budget_s = float(spec.params.get("time_budget_s", float("inf")))
    started = clock_ns()
    observations: list[Observation] = []
    done = 0
    while done < spec.repeats and (done == 0 or (clock_ns() - started) / NS_PER_S < budget_s):
        observations += one_repeat(done)
        done += 1
    details = {"repeats_done": done, "repeats_planned": spec.repeats,
               "time_budget_s": spec.params.get("time_budget_s")}
    return observations, details


def budget_note(spec: CellSpec) -> str:
    """The fairness-note clause for a time budget, or ''."""
    if "time_budget_s" not in spec.params:
        return ""
    return (f"; of {spec.repeats} repeats, none starts after {spec.params['time_budget_s']} s "
            f"(details.repeats_done says how many ran)")


def measure_inference(spec: CellSpec, predictor: Predictor, data: TrainingData,
                      fairness: Fairness) -> CellOutcome:
    """First call once, then per repeat: batch-1 latencies and large-batch throughput."""
    plan = InferencePlan.of(spec)
    x = data.x_test
    first = Observation("first_call_time", first_call_seconds(predictor, x), 0)

    def one_repeat(repeat: int) -> list[Observation]:
        return latency_summary(latencies_ms(predictor, x, plan), repeat) + [
            Observation("inference_throughput", throughput(predictor, x, plan), repeat)]

    observations, details = budgeted_repeats(spec, one_repeat)
    return CellOutcome(CellStatus.OK, [first, *observations], fairness, details=details)


def inference_fairness(spec: CellSpec, *, timer_includes: str, compile_mode: str,
                       data_pipeline: str, settings: dict[str, str],
                       precision_policy: str = "fp32 weights and activations") -> Fairness:
    """The manifest every inference cell carries."""
    plan = InferencePlan.of(spec)
    return Fairness(
        timer_includes=timer_includes,
        precision_policy=precision_policy,
        compile_mode=compile_mode,
        data_pipeline=data_pipeline,
        threads=spec.threads,
        batch_size=spec.batch_size,
        notes=(f"same transferred initial weights in every framework; latency: "
               f"{plan.latency_calls} timed batch-1 calls per repeat after {plan.warmup_calls} "
               f"warm-up calls, cycling over the test inputs; throughput: "
               f"{plan.throughput_calls} timed calls at batch {plan.throughput_batch} after "
               f"{plan.warmup_calls} untimed calls; the very first call (tracing/compilation) is timed "
               f"separately as first_call_time" + budget_note(spec)),
        settings=settings,
    )
