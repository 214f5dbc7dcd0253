"""Forward-call timing shared by inference and precision: batch-1 latency call by call,
and large-batch throughput over calibrated windows (dlbench.runner.worker.harness.sampling)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dlbench.runner.worker.harness import Cell
from dlbench.runner.worker.measure import (NS_PER_MS, NS_PER_S, RetainedMemory, WorkingMemory,
                                           clock_ns)
from dlbench.runner.cell.outcome import Observation
from dlbench.runner.cell.spec import CellSpec


class Predictor(Protocol):
    """What a framework implements to be timed by this protocol."""

    def prepare(self, x: np.ndarray) -> object:
        """`x` in the form the timed call takes (a device tensor, or NumPy where the API
        takes NumPy); not timed."""

    def predict(self, prepared: object) -> np.ndarray:
        """One forward call, its output as NumPy on the host (which waits for the device)."""


@dataclass(frozen=True)
class InferencePlan:
    """How many calls of each kind the process makes (from spec.params)."""

    warmup_calls: int
    latency_calls: int
    throughput_batch: int
    throughput_samples: int
    latency_budget_s: float = 10.0  # the latency calls stop here, after MIN_LATENCY_CALLS

    @classmethod
    def of(cls, spec: CellSpec) -> InferencePlan:
        p = spec.params
        return cls(int(p.get("warmup_calls", 10)), int(p.get("latency_calls", 200)),
                   int(p.get("throughput_batch", 512)), int(p.get("throughput_samples", 5)),
                   float(p.get("latency_budget_s", 10.0)))


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


def first_large_call(predictor: Predictor, x: np.ndarray, plan: InferencePlan) -> None:
    """One untimed call at the throughput batch (a new shape may trace or compile again)."""
    predictor.predict(predictor.prepare(large_batch(x, plan.throughput_batch)))


#: Batch-1 calls every process times, whatever its latency budget.
MIN_LATENCY_CALLS = 20


def latencies_ms(cell: Cell, predictor: Predictor, x: np.ndarray,
                 plan: InferencePlan) -> list[float]:
    """Batch-1 latency of `latency_calls` single calls (after `warmup_calls`), cycling over
    `x`, or fewer once `latency_budget_s` is spent (never fewer than MIN_LATENCY_CALLS): a
    distribution of single calls, so each call is its own sub-sample. The same rule holds
    for every framework; a call of a few hundred ms (Keras' predict loop on TensorFlow)
    would otherwise hold a process for minutes. What the timing loop itself costs per call
    (an empty call through the same loop: the clock reads, the indexing, one Python call) is
    measured first, stated in the details and subtracted from every call."""
    singles = [predictor.prepare(x[i:i + 1]) for i in range(min(len(x), plan.latency_calls))]
    for i in range(plan.warmup_calls):
        predictor.predict(singles[i % len(singles)])
    overhead = loop_overhead_ms(singles)
    with cell.sampler.window:
        timed = timed_calls(predictor.predict, singles, plan.latency_calls,
                            plan.latency_budget_s)
    cell.sampler.once("inference_latency", "one batch-1 call per sub-sample (a latency "
                      f"distribution; each call returns its output to the host; up to "
                      f"{plan.latency_calls} calls or {plan.latency_budget_s:g} s)", len(timed))
    cell.sampler.record["inference_latency"] |= {"loop_overhead_ms": overhead,
                                                 "loop_overhead_subtracted": True}
    return [value - overhead for value in timed]


#: Empty calls timed per process to measure the timing loop's own cost per call.
OVERHEAD_CALLS = 1000


def _empty_call(prepared: object) -> None:
    """A call that does nothing: what the timing loop costs around a call."""


def loop_overhead_ms(singles: list[object], calls: int = OVERHEAD_CALLS) -> float:
    """The median time (ms) of an empty call through the latency loop."""
    return float(np.median(timed_calls(_empty_call, singles, calls, budget_s=1.0)))


def timed_calls(call: Callable[[object], object], singles: list[object], count: int,
                budget_s: float) -> list[float]:
    """`call` on each input in turn, each timed alone (ms): `count` calls, or fewer once
    `budget_s` is spent (never fewer than MIN_LATENCY_CALLS)."""
    result: list[float] = []
    began = clock_ns()
    while len(result) < count and (
            len(result) < MIN_LATENCY_CALLS or (clock_ns() - began) / NS_PER_S < budget_s):
        start = clock_ns()
        call(singles[len(result) % len(singles)])
        result.append((clock_ns() - start) / NS_PER_MS)
    return result


def throughput(cell: Cell, predictor: Predictor, x: np.ndarray, plan: InferencePlan) -> float:
    """Samples/s at `throughput_batch`: the median of calibrated windows, after
    `warmup_calls` untimed calls (a new batch shape may trace or compile again)."""
    prepared = predictor.prepare(large_batch(x, plan.throughput_batch))
    for _ in range(max(1, plan.warmup_calls)):
        predictor.predict(prepared)
    with cell.sampler.window:
        per_call = cell.sampler.per_call_s("inference_throughput",
                                           lambda: predictor.predict(prepared), lambda: None,
                                           plan.throughput_samples)
    return plan.throughput_batch / float(np.median(per_call))


def latency_summary(cell: Cell, values: list[float], keep_calls: bool = True
                    ) -> list[Observation]:
    """Raw latencies (step = call index, when kept) and their p50/p90/p99."""
    p50, p90, p99 = np.percentile(values, [50, 90, 99])
    raw = [cell.observe("inference_latency", v, i) for i, v in enumerate(values)]
    return (raw if keep_calls else []) + [cell.observe("latency_p50", p50),
                                          cell.observe("latency_p90", p90),
                                          cell.observe("latency_p99", p99)]


def inference_observations(cell: Cell, predictor: Predictor,
                           compiles: bool) -> list[Observation]:
    """The inference protocol's phases: the first calls (compile time apart), batch-1
    latencies, large-batch throughput, and the memory of each phase (`compile_memory`, what
    the first calls left, where the mode compiles)."""
    plan = InferencePlan.of(cell.spec)
    x = cell.data.x_test
    with RetainedMemory() as first_calls:
        observations = [cell.observe("first_call_time", first_call_seconds(predictor, x))]
        first_large_call(predictor, x, plan)
    cell.sampler.once("first_call_time", "the process's first forward call")
    with WorkingMemory() as working:
        observations += latency_summary(cell, latencies_ms(cell, predictor, x, plan))
        observations.append(cell.observe("inference_throughput",
                                         throughput(cell, predictor, x, plan)))
    observations.append(cell.observe("working_memory", working.peak_mib))
    if compiles:
        observations.append(cell.observe("compile_memory", first_calls.retained_mib))
    return observations
