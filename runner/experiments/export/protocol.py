"""The export protocol, shared by every framework's export paths.

A framework supplies an `ExportPath` (how to write the artifact, how to load it back into
its own runtime) and the eager model's outputs. This module owns the temp directory, the
clock, the parity check and the runtime timing, and turns any failure into a recorded
"fails: <error>" result instead of stopping the run.
"""

from __future__ import annotations

import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dlbench.schema import CellStatus
from runner.experiments.export.runtimes import Predict, artifact_size_mib
from runner.experiments.training.protocol import TrainingData
from runner.measure import NS_PER_S, clock_ns
from runner.outcome import CellOutcome, Fairness, Observation
from runner.spec import CellSpec

#: Largest |artifact - eager| accepted on float32 logits of order 1: runtimes may reorder
#: and fuse float32 sums (observed differences are around 1e-6), nothing more.
PARITY_TOLERANCE = 1e-4
LATENCY_CALLS = 30
WARMUP_CALLS = 3
THROUGHPUT_PASSES = 3


@dataclass(frozen=True)
class ExportPath:
    """One way to ship the model: write the artifact under a directory, load it back."""

    runtime: str  # what runs the artifact, for the fairness manifest
    export: Callable[[Path], Path]  # directory -> the artifact (file or directory)
    load: Callable[[Path], Predict]


def unsupported(reason: str, fairness: Fairness | None = None,
                observations: list[Observation] | None = None) -> CellOutcome:
    """A path that does not work here: its first error line is the cell's result."""
    return CellOutcome(CellStatus.UNSUPPORTED, observations or [], fairness,
                       reason=f"fails: {reason}".splitlines()[0][:500])


def _error(stage: str, error: BaseException) -> str:
    return f"{stage}: {type(error).__name__}: {error}"


def eval_inputs(data: TrainingData, batch_size: int) -> np.ndarray:
    """The test inputs cut to whole batches, so every call has batch 1 or `batch_size`."""
    x = data.x_test
    return np.ascontiguousarray(x[: len(x) // batch_size * batch_size])


def in_batches(predict: Predict, x: np.ndarray, batch_size: int) -> np.ndarray:
    return np.concatenate([np.asarray(predict(x[i:i + batch_size]))
                           for i in range(0, len(x), batch_size)])


def measure_export(spec: CellSpec, data: TrainingData, eager: Predict, path: ExportPath,
                   fairness: Fairness) -> CellOutcome:
    """Export, load back, check parity against the eager model, time the runtime."""
    x = eval_inputs(data, spec.batch_size)
    expected = in_batches(eager, x, spec.batch_size)
    with tempfile.TemporaryDirectory(prefix="dlbench-export-") as scratch:
        stage = "export"
        try:
            start = clock_ns()
            artifact = path.export(Path(scratch))
            export_s = (clock_ns() - start) / NS_PER_S
            size = artifact_size_mib(Path(scratch))  # with side files (external data)
            stage = "loading the artifact"
            start = clock_ns()
            predict = path.load(artifact)
            load_s = (clock_ns() - start) / NS_PER_S
            stage = "running the artifact"
            diff = float(np.max(np.abs(in_batches(predict, x, spec.batch_size) - expected)))
            observations = [Observation("export_time", export_s, 0),
                            Observation("artifact_size", size, 0),
                            Observation("artifact_load_time", load_s, 0),
                            Observation("artifact_max_abs_diff", diff, 0)]
            for repeat in range(spec.repeats):
                observations += _timings(predict, x, spec.batch_size, repeat)
        except Exception as error:  # noqa: BLE001 - a failing path is a result
            return unsupported(_error(stage, error), fairness)
    if not diff <= PARITY_TOLERANCE:
        return unsupported(f"outputs differ from the eager model by {diff:.3g} > tolerance "
                           f"{PARITY_TOLERANCE:g}", fairness, observations)
    return CellOutcome(CellStatus.OK, observations, fairness,
                       details={"parity_tolerance": PARITY_TOLERANCE, "runtime": path.runtime,
                                "parity_samples": len(x)})


def _timings(predict: Predict, x: np.ndarray, batch_size: int,
             repeat: int) -> list[Observation]:
    one = x[:1]
    for _ in range(WARMUP_CALLS):
        predict(one)
    latencies = []
    for _ in range(LATENCY_CALLS):
        start = clock_ns()
        predict(one)
        latencies.append((clock_ns() - start) / 1e6)
    in_batches(predict, x, batch_size)  # warm the batch shape
    passes = []
    for _ in range(THROUGHPUT_PASSES):
        start = clock_ns()
        in_batches(predict, x, batch_size)
        passes.append((clock_ns() - start) / NS_PER_S)
    return [Observation("artifact_latency", statistics.median(latencies), repeat),
            Observation("artifact_throughput", len(x) / statistics.median(passes), repeat)]


def export_fairness(spec: CellSpec, runtime: str, exporter: str,
                    settings: dict[str, str]) -> Fairness:
    """The manifest every export cell carries."""
    return Fairness(
        timer_includes=(f"export: writing the artifact with {exporter}; load: reading it "
                        f"back into {runtime}; latency: one batch-1 call returning NumPy "
                        f"(median of {LATENCY_CALLS} after {WARMUP_CALLS} warm-up calls); "
                        f"throughput: median of {THROUGHPUT_PASSES} passes over the test inputs in "
                        f"batches of {spec.batch_size} after a warm-up pass"),
        precision_policy="fp32 weights, activations and artifact",
        compile_mode=f"{spec.export_format} artifact run by {runtime}",
        data_pipeline="NumPy float32 test inputs of the workload, cut to whole batches",
        threads=spec.threads,
        batch_size=spec.batch_size,
        notes=(f"The model holds the workload's shared initial weights (no training). "
               f"Parity: max |artifact - eager| over the test inputs, tolerance "
               f"{PARITY_TOLERANCE:g}; a path that fails to export, load or run, or exceeds "
               f"the tolerance, is recorded as 'fails: <first error line>'. Artifacts are "
               f"written to a temporary directory and measured on the CPU."),
        settings=settings,
    )
