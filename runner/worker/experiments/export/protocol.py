"""The export protocol, shared by every framework's export paths.

A framework supplies an `ExportPath` (how to write the artifact, how to load it back into
its own runtime) and the eager model's outputs. This module owns the temp directory, the
clock, the parity check and the runtime timing (calibrated windows, dlbench.runner.worker.harness.sampling),
and turns any failure into a recorded "fails: <error>" result instead of stopping the run.
Each worker process is one repeat.
"""

from __future__ import annotations

import importlib.util
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.worker.experiments.export.runtimes import (Predict, artifact_size_mib,
                                                               runtime_settings)
from dlbench.runner.worker.harness import Cell, CellSkipped
from dlbench.runner.worker.harness.data import CellData
from dlbench.runner.worker.measure import NS_PER_S, clock_ns
from dlbench.runner.cell.outcome import CellOutcome, Fairness, Observation

#: Largest |artifact - eager| accepted on float32 logits of order 1: runtimes may reorder
#: and fuse float32 sums (observed differences are around 1e-6), nothing more.
PARITY_TOLERANCE = 1e-4
WARMUP_CALLS = 3
#: Calibrated windows per timing (each at least the sampling policy's minimum window).
WINDOWS = 3


#: The cell parameter that exports a model other than the eager one: its last parameter
#: shifted by this amount. It exists to check the parity check itself: such an artifact must
#: fail parity in every runtime (tests/test_export_runtimes.py).
PERTURB_PARAM = "perturb_artifact"


def artifact_shift(spec) -> float:
    """How far the exported model's last parameter is moved from the eager model's (0: the
    same model, as every measured cell exports)."""
    return float(spec.params.get(PERTURB_PARAM, 0.0))


@dataclass(frozen=True)
class ExportPath:
    """One way to ship the model: write the artifact under a directory, load it back."""

    runtime: str  # what runs the artifact, for the fairness manifest
    export: Callable[[Path], Path]  # directory -> the artifact (file or directory)
    load: Callable[[Path], Predict]
    #: The NumPy inputs in the artifact's layout (NHWC -> NCHW for PyTorch's), applied
    #: before any timer starts, alike for every framework.
    layout: Callable[[np.ndarray], np.ndarray] = np.ascontiguousarray


def unsupported(reason: str, fairness: Fairness | None = None,
                observations: list[Observation] | None = None) -> CellOutcome:
    """A path that does not work here: its first error line is the cell's result."""
    return CellOutcome(CellStatus.UNSUPPORTED, observations or [], fairness,
                       reason=f"fails: {reason}".splitlines()[0][:500])


def missing_package(package: str, needed_by: str) -> None:
    """Skip the cell (CellSkipped) when the optional `package` a path needs is not installed:
    the path is not tried here, which is not the framework's failure."""
    if importlib.util.find_spec(package) is None:
        raise CellSkipped(f"optional package not installed: {package} ({needed_by} needs it)")


def _error(stage: str, error: BaseException) -> str:
    return f"{stage}: {type(error).__name__}: {error_line(error)}"


def error_line(error: BaseException) -> str:
    """The line of an error's message that says what went wrong: its first line, unless that
    is a header such as TensorFlow's "in user code:", whose cause is the last line."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        return lines[-1]
    return lines[0] if lines else ""


def eval_inputs(data: CellData, batch_size: int, samples: int = 0) -> np.ndarray:
    """The test inputs (the first `samples` of them when given: a real-size model's few) cut
    to whole batches, so every call has batch 1 or `batch_size`."""
    x = data.x_test[:samples] if samples else data.x_test
    return np.ascontiguousarray(x[: len(x) // batch_size * batch_size])


def in_batches(predict: Predict, x: np.ndarray, batch_size: int) -> np.ndarray:
    return np.concatenate([np.asarray(predict(x[i:i + batch_size]))
                           for i in range(0, len(x), batch_size)])


def measure_export(cell: Cell, eager: Predict, path: ExportPath,
                   fairness: Fairness) -> CellOutcome:
    """Export, load back, check parity against the eager model, time the runtime."""
    spec = cell.spec
    x = eval_inputs(cell.data, spec.batch_size, int(spec.params.get("export_samples", 0)))
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
            fairness = replace(fairness, settings=fairness.settings | runtime_settings(predict))
            stage = "running the artifact"
            inputs = path.layout(x)  # not timed
            diff = float(np.max(np.abs(in_batches(predict, inputs, spec.batch_size)
                                       - expected)))
            observations = [cell.observe("export_time", export_s),
                            cell.observe("artifact_size", size),
                            cell.observe("artifact_load_time", load_s),
                            cell.observe("artifact_max_abs_diff", diff)]
            observations += _timings(cell, predict, inputs)
        except Exception as error:  # noqa: BLE001 - a failing path is a result
            reason = _error(stage, error).replace(scratch, "<export dir>")  # stable reason
            return unsupported(reason, fairness)
    if not diff <= PARITY_TOLERANCE:
        return unsupported(f"outputs differ from the eager model by {diff:.3g} > tolerance "
                           f"{PARITY_TOLERANCE:g}", fairness, observations)
    return cell.outcome(observations, fairness,
                        details={"parity_tolerance": PARITY_TOLERANCE, "runtime": path.runtime,
                                 "parity_samples": len(x)} | cell.workload_details())


def _timings(cell: Cell, predict: Predict, x: np.ndarray) -> list[Observation]:
    """Batch-1 latency and whole-pass throughput, each over calibrated windows (`x` already
    in the artifact's layout)."""
    batch_size = cell.spec.batch_size
    one = np.ascontiguousarray(x[:1])
    for _ in range(WARMUP_CALLS):
        predict(one)
    in_batches(predict, x, batch_size)  # warm the batch shape
    sampler, no_sync = cell.sampler, lambda: None  # outputs are NumPy: already synchronised
    call_s = sampler.per_call_s("artifact_latency", lambda: predict(one), no_sync, WINDOWS)
    pass_s = sampler.per_call_s("artifact_throughput",
                                lambda: in_batches(predict, x, batch_size), no_sync, WINDOWS)
    return [cell.observe("artifact_latency", statistics.median(call_s) * 1000),
            cell.observe("artifact_throughput", len(x) / statistics.median(pass_s))]


def export_fairness(cell: Cell, runtime: str, exporter: str) -> Fairness:
    """The manifest every export cell carries."""
    spec = cell.spec
    return cell.fairness(
        timer_includes=(f"export: writing the artifact with {exporter}; load: reading it "
                        f"back into {runtime}; latency: one batch-1 call returning NumPy "
                        f"(median of {WINDOWS} calibrated windows after {WARMUP_CALLS} "
                        f"warm-up calls); throughput: median of {WINDOWS} calibrated windows "
                        f"of passes over the test inputs in batches of {spec.batch_size} "
                        f"after a warm-up pass"),
        precision_policy="fp32 weights, activations and artifact",
        compile_mode=f"{spec.export_format} artifact run by {runtime}",
        data_pipeline="NumPy float32 test inputs of the workload, cut to whole batches and put "
                      "in the artifact's layout (NHWC->NCHW for PyTorch's) before timing",
        notes=(f"The model holds the workload's shared initial weights (no training). "
               f"Parity: max |artifact - eager| over the test inputs, tolerance "
               f"{PARITY_TOLERANCE:g}; a path that fails to export, load or run, or exceeds "
               f"the tolerance, is recorded as 'fails: <first error line>'. Artifacts are "
               f"written to a temporary directory and measured on the CPU."),
    )
