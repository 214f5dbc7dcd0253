"""The execution-mode timing protocol: per-step training times in one mode, against the
framework's eager mode measured in the same process.

A framework supplies a `Stepper` for the cell's mode and, for graph/compiled modes, one
for its eager mode; this module owns the batches, the clock, the repeats and the metrics
(compile time, steady step time, break-even step count), so every mode is timed alike.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dlbench.schema import CellStatus
from runner.experiments.inference.protocol import budget_note, budgeted_repeats
from runner.experiments.training.protocol import TrainingData
from runner.measure import NS_PER_S, clock_ns
from runner.outcome import CellOutcome, Fairness, Observation
from runner.spec import CellSpec
from runner.workloads import Layer, epoch_order, initial_layers

NS_PER_MS = 1_000_000
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
    """Per-step times of one fresh model in one mode."""

    step_ms: list[float]

    @property
    def steady_ms(self) -> float:
        return statistics.median(self.step_ms[1:])

    @property
    def compile_s(self) -> float:
        """The first step's cost beyond a steady step."""
        return max(self.step_ms[0] - self.steady_ms, 0.0) / 1000


def fixed_batches(stepper: Stepper, data: TrainingData, batch_size: int,
                  count: int) -> list[tuple[object, object]]:
    """`count` full batches in the shared epoch order (cycled), prepared for the stepper."""
    order = epoch_order(len(data.dataset.y_train), 0, data.workload.seed)
    full = len(order) // batch_size
    batches = []
    for index in range(min(count, full)):
        rows = order[index * batch_size:(index + 1) * batch_size]
        batches.append(stepper.prepare(data.x_train[rows], data.dataset.y_train[rows]))
    return batches


def time_steps(stepper: Stepper, layers: list[Layer], batches: list, steps: int) -> ModeTimes:
    """Reset to `layers` and time `steps` steps (the first includes tracing/compilation)."""
    stepper.reset(layers)
    times = []
    for index in range(steps):
        x, y = batches[index % len(batches)]
        start = clock_ns()
        stepper.step(x, y)
        times.append((clock_ns() - start) / NS_PER_MS)
    return ModeTimes(times)


def break_even_steps(mode: ModeTimes, eager: ModeTimes) -> int | None:
    """Steps after which `mode` has caught up with eager, or None when it never does."""
    gain_ms = eager.steady_ms - mode.steady_ms
    if gain_ms <= 0:
        return None
    extra_ms = (mode.compile_s - eager.compile_s) * 1000
    return max(1, math.ceil(extra_ms / gain_ms))  # compile + n*steady <= eager's


def measure_execution_mode(spec: CellSpec, stepper: Stepper, eager: Stepper | None,
                           data: TrainingData, fairness: Fairness) -> CellOutcome:
    """Per repeat: the eager baseline (for compiled modes), then the cell's mode."""
    steps = int(spec.params.get("steps", 30))
    layers = initial_layers(data.workload, data.dataset)
    baseline = eager or stepper
    batches = fixed_batches(stepper, data, spec.batch_size, steps)
    eager_batches = batches if eager is None else fixed_batches(eager, data, spec.batch_size,
                                                                steps)
    time_steps(baseline, layers, eager_batches, WARMUP_STEPS)  # process-level first use

    def one_repeat(repeat: int) -> list[Observation]:
        reference = time_steps(eager, layers, eager_batches, steps) if eager else None
        times = time_steps(stepper, layers, batches, steps)
        observations = [Observation("step_time", v, repeat, i)
                        for i, v in enumerate(times.step_ms)]
        observations += [Observation("steady_step_time", times.steady_ms, repeat),
                         Observation("compile_time", times.compile_s, repeat)]
        if reference is not None:
            observations.append(Observation("eager_step_time", reference.steady_ms, repeat))
            even = break_even_steps(times, reference)
            if even is not None:
                observations.append(Observation("break_even_steps", float(even), repeat))
        return observations

    observations, details = budgeted_repeats(spec, one_repeat)
    return CellOutcome(CellStatus.OK, observations, fairness, details=details)


def execution_fairness(spec: CellSpec, data: TrainingData, *, timer_includes: str,
                       compile_mode: str, eager_mode: str, data_pipeline: str,
                       settings: dict[str, str]) -> Fairness:
    """The manifest every execution-mode cell carries."""
    workload = data.workload
    steps = int(spec.params.get("steps", 30))
    return Fairness(
        timer_includes=timer_includes,
        precision_policy="fp32 weights and activations",
        compile_mode=compile_mode,
        data_pipeline=data_pipeline,
        threads=spec.threads,
        batch_size=spec.batch_size,
        notes=(f"per repeat a fresh model from the same transferred weights runs {steps} "
               f"training steps (SGD lr={workload.learning_rate} momentum={workload.momentum}) "
               f"on full batches in the shared order; step 0 includes tracing/compilation, "
               f"steady = median of steps 1..; compile_time = step 0 minus steady; the eager "
               f"baseline ({eager_mode}) runs the same steps in the same process first; "
               f"break-even = ceil((compile_time - eager compile_time) / (eager steady - "
               f"steady)), present only when this mode is faster; {WARMUP_STEPS} untimed eager "
               f"steps on a throwaway model absorb process-level first-use costs"
               + budget_note(spec)),
        settings=settings,
    )
