"""The execution-mode timing protocol: training steps in one mode, against the framework's
eager mode measured in the same process.

A framework supplies a `Stepper` for the cell's mode and, for graph/compiled modes, one
for its eager mode; this module owns the batches, the clock and the metrics, so every
mode is timed alike. In each mode the first step of a fresh model is timed alone (it
includes tracing/compilation); steady steps are timed in calibrated windows
(dlbench.runner.worker.harness.sampling). The mode then compiles a second fresh model in the same
process: its first step gives the warm compile time, the first one the cold time (the
adapter starts every process with empty compiler caches). In a mode that compiles,
`compile_memory` is what its cold first step leaves resident beyond what the eager
baseline's first step left in the same process (both models stay alive).
"""

from __future__ import annotations

import itertools
import math
import statistics
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dlbench.core.declarations.modes import compiles
from dlbench.runner.worker.harness import Cell
from dlbench.runner.worker.measure import NS_PER_MS, RetainedMemory, clock_ns
from dlbench.runner.cell.outcome import CellOutcome, Fairness
from dlbench.runner.workloads.catalog import Layer, epoch_order

WARMUP_STEPS = 3


class Stepper(Protocol):
    """What a framework implements to be timed by this protocol."""

    def prepare(self, x: np.ndarray, y: np.ndarray) -> tuple[object, object]:
        """A batch in the form the step takes (device tensors, or NumPy); not timed."""

    def reset(self, layers: list[Layer]) -> None:
        """A fresh model holding `layers`, a fresh optimizer, and a fresh step function."""

    def step(self, x: object, y: object) -> float:
        """One training step; returns the loss as a Python float (a device sync)."""


@dataclass(frozen=True)
class ModeTimes:
    """A fresh model's first step, and its steady steps (per-step means of windows), in ms."""

    first_ms: float
    window_ms: list[float]
    first_retained_mib: float = 0.0  # what the first step (and the fresh model) left resident

    @property
    def steady_ms(self) -> float:
        return statistics.median(self.window_ms)

    @property
    def compile_s(self) -> float:
        """The first step's cost beyond a steady step."""
        return max(self.first_ms - self.steady_ms, 0.0) / 1000


def fixed_batches(stepper: Stepper, cell: Cell, count: int) -> list[tuple[object, object]]:
    """Up to `count` full batches in the shared epoch order, prepared for the stepper."""
    data, batch_size = cell.data, cell.spec.batch_size
    order = epoch_order(len(data.dataset.y_train), 0, data.workload.seed)
    full = len(order) // batch_size
    batches = []
    for index in range(min(count, full)):
        rows = order[index * batch_size:(index + 1) * batch_size]
        batches.append(stepper.prepare(data.x_train[rows], data.dataset.y_train[rows]))
    return batches


def first_step_ms(stepper: Stepper, layers: list[Layer], batches: list) -> float:
    """Reset to `layers` and time the first step alone (tracing/compilation included)."""
    stepper.reset(layers)
    start = clock_ns()
    stepper.step(*batches[0])
    return (clock_ns() - start) / NS_PER_MS


def time_mode(cell: Cell, name: str, stepper: Stepper, layers: list[Layer],
              batches: list) -> ModeTimes:
    """A fresh model's first step, then calibrated windows of steady steps."""
    with RetainedMemory() as memory:
        first = first_step_ms(stepper, layers, batches)
    cycle = itertools.cycle(batches[1:] or batches)
    per_step_s = cell.sampler.per_call_s(name, lambda: stepper.step(*next(cycle)),
                                         cell.adapter.sync,
                                         int(cell.spec.params.get("step_samples", 5)))
    return ModeTimes(first, [v * 1000 for v in per_step_s], memory.retained_mib)


def break_even_steps(mode: ModeTimes, eager: ModeTimes) -> int | None:
    """Steps after which `mode` has caught up with eager, or None when it never does."""
    gain_ms = eager.steady_ms - mode.steady_ms
    if gain_ms <= 0:
        return None
    extra_ms = (mode.compile_s - eager.compile_s) * 1000
    return max(1, math.ceil(extra_ms / gain_ms))  # compile + n*steady <= eager's


def measure_execution_mode(cell: Cell, stepper: Stepper, eager: Stepper | None,
                           fairness: Fairness) -> CellOutcome:
    """The eager baseline (for compiled modes), the cell's mode cold, then warm."""
    layers = cell.data.initial_layers()
    count = int(cell.spec.params.get("batches", 16))
    batches = fixed_batches(stepper, cell, count)
    eager_batches = batches if eager is None else fixed_batches(eager, cell, count)
    baseline = eager or stepper
    baseline.reset(layers)
    for index in range(WARMUP_STEPS):  # process-level first use of this model's ops
        baseline.step(*eager_batches[index % len(eager_batches)])
    reference = time_mode(cell, "eager_step_time", eager, layers, eager_batches) if eager \
        else None
    files_before = cell.adapter.compile_cache_files()
    times = time_mode(cell, "step_time", stepper, layers, batches)
    files_after = cell.adapter.compile_cache_files()
    warm_s = max(first_step_ms(stepper, layers, batches) - times.steady_ms, 0.0) / 1000
    observations = [cell.observe("step_time", times.first_ms, 0)]
    observations += [cell.observe("step_time", v, i + 1) for i, v in enumerate(times.window_ms)]
    observations += [cell.observe("steady_step_time", times.steady_ms),
                     cell.observe("compile_time_cold", times.compile_s),
                     cell.observe("compile_time_warm", warm_s)]
    if reference is not None:
        observations.append(cell.observe("eager_step_time", reference.steady_ms))
        even = break_even_steps(times, reference)
        if even is not None:
            observations.append(cell.observe("break_even_steps", float(even)))
        if compiles(cell.spec.experiment, cell.spec.framework_id.name, cell.spec.mode,
                    cell.spec.device):
            extra_mib = max(0.0, times.first_retained_mib - reference.first_retained_mib)
            observations.append(cell.observe("compile_memory", extra_mib))
    cache = {"files_before_cold_compile": files_before, "files_after_cold_compile": files_after}
    return cell.outcome(observations, fairness, details={"compile_cache": cache})


def execution_fairness(cell: Cell, *, timer_includes: str, compile_mode: str,
                       eager_mode: str, data_pipeline: str) -> Fairness:
    """The manifest every execution-mode cell carries."""
    spec, workload = cell.spec, cell.data.workload
    return cell.fairness(
        timer_includes=timer_includes,
        precision_policy="fp32 weights and activations",
        compile_mode=compile_mode,
        data_pipeline=data_pipeline,
        notes=(f"a fresh model from the same transferred weights trains with SGD "
               f"(lr={workload.learning_rate} momentum={workload.momentum}) on full batches "
               f"in the shared order; step 0 (timed alone) includes tracing/compilation; "
               f"steady = median per-step time of calibrated windows of steps; "
               f"compile_time_cold = step 0 minus steady, in a process whose compiler caches "
               f"start empty; compile_time_warm = the same for a second fresh model compiled "
               f"in the same process afterwards (caches kept); the eager baseline "
               f"({eager_mode}) runs in the same process first; break-even = "
               f"ceil((compile_time_cold - eager compile_time_cold) / (eager steady - "
               f"steady)), present only when this mode is faster; {WARMUP_STEPS} untimed eager "
               f"steps absorb process-level first-use costs"),
    )
