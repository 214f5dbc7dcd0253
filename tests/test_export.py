"""The export experiment: the protocol on a real (NumPy) artifact, the grid, and real
framework export paths in worker processes, loaded back and checked for parity."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dlbench.core.declarations.metrics import get_metric
from dlbench.core.storage.schema import CellStatus
from dlbench.runner.driver.launch.execute import execute_cell
from dlbench.runner.driver.plan.experiments import get_experiment
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.plan.experiments.export import FORMATS, QUICK_FORMATS
from dlbench.runner.worker.experiments.export.protocol import (PARITY_TOLERANCE, ExportPath,
                                                               export_fairness, measure_export)
from dlbench.runner.worker.experiments.export.runtimes import artifact_size_mib
from dlbench.runner.cell.spec import CellSpec
from tests.harness_fixtures import numpy_cell

SPEC = CellSpec(experiment="export", workload="mlp-digits", framework="pytorch", backend="",
                device="cpu", export_format="npz", batch_size=32, repeats=1, threads=1,
                params={"min_window_s": 0.01})
WEIGHTS = np.random.default_rng(0).normal(size=(64, 10)).astype(np.float32)


def npz_path(shift: float = 0.0, fail_at: str = "") -> ExportPath:
    """A real file artifact: the weights of a linear model saved with NumPy."""

    def export(directory: Path) -> Path:
        if fail_at == "export":
            raise ValueError("this exporter refuses the model\nsecond line")
        np.savez(directory / "model.npz", w=WEIGHTS)
        return directory / "model.npz"

    def load(path: Path):
        w = np.load(path)["w"]
        return lambda x: x @ w + np.float32(shift)

    return ExportPath("numpy", export, load)


def measure(path: ExportPath):
    cell = numpy_cell(SPEC)
    fairness = export_fairness(cell, path.runtime, "numpy.savez")
    return measure_export(cell, lambda x: x @ WEIGHTS, path, fairness)


def test_a_working_path_reports_every_metric_and_passes_parity():
    outcome = measure(npz_path())
    assert outcome.status is CellStatus.OK
    metrics = {o.metric: o.value for o in outcome.observations}
    assert metrics["artifact_max_abs_diff"] <= PARITY_TOLERANCE
    assert metrics["artifact_size"] > 64 * 10 * 4 / 2**20
    assert metrics["artifact_latency"] > 0 and metrics["artifact_throughput"] > 0
    assert set(metrics) == set(get_experiment("export").metrics)
    windows = outcome.details["sampling"]["measurements"]
    assert windows["artifact_latency"]["loops"] >= 2  # one batch-1 call is under 10 ms


def test_a_failing_export_is_a_result_with_its_first_error_line():
    outcome = measure(npz_path(fail_at="export"))
    assert outcome.status is CellStatus.UNSUPPORTED
    assert outcome.reason == "fails: export: ValueError: this exporter refuses the model"


def test_a_failure_reason_is_the_line_naming_the_cause_without_the_temporary_path():
    """TensorFlow wraps errors under an "in user code:" header; the cause is the last line."""

    def export(directory: Path) -> Path:
        raise TypeError(f'in user code:\n\n    File "model.py", line 3, in serve  *\n\n'
                        f'    ValueError: cannot write {directory}/model.npz\n')

    outcome = measure(ExportPath("numpy", export, npz_path().load))
    assert outcome.status is CellStatus.UNSUPPORTED
    assert outcome.reason == ("fails: export: TypeError: ValueError: cannot write "
                              "<export dir>/model.npz")


def test_an_artifact_computing_another_function_fails_parity():
    outcome = measure(npz_path(shift=0.01))
    assert outcome.status is CellStatus.UNSUPPORTED
    assert "differ" in outcome.reason
    diff = [o.value for o in outcome.observations if o.metric == "artifact_max_abs_diff"]
    assert diff == [pytest.approx(0.01, rel=1e-3)]


def test_the_artifact_layout_is_applied_once_outside_the_timer():
    """An artifact taking the inputs reversed (as PyTorch's take NCHW): the layout is done
    once before timing, never inside a timed call."""
    layouts, calls = [], []
    plain = npz_path()

    def reversed_layout(x: np.ndarray) -> np.ndarray:
        layouts.append(len(x))
        return np.ascontiguousarray(x[:, ::-1])

    def load(path: Path):
        w = np.load(path)["w"][::-1]

        def predict(x: np.ndarray) -> np.ndarray:
            calls.append(x.flags.c_contiguous)
            return x @ w

        return predict

    outcome = measure(ExportPath("numpy, reversed inputs", plain.export, load, reversed_layout))
    assert outcome.status is CellStatus.OK, outcome.reason  # parity: the layout was applied
    assert len(layouts) == 1 and len(calls) > 10 and all(calls)
    assert "before timing" in outcome.fairness.data_pipeline


def test_artifact_size_counts_every_file_of_a_directory(tmp_path):
    (tmp_path / "a").write_bytes(b"x" * 2**20)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b").write_bytes(b"x" * 2**19)
    assert artifact_size_mib(tmp_path) == pytest.approx(1.5)


def test_plan_covers_every_framework_and_quick_is_a_subset():
    request = RunRequest(suite="standard", workloads=["mlp-digits"], device="cuda", threads=2)
    cells = get_experiment("export").plan(request)
    assert {(c.framework_id.name, c.export_format) for c in cells} == {
        (name, fmt) for name, formats in FORMATS.items() for fmt in formats}
    assert {c.device for c in cells} == {"cpu"}
    for name, formats in QUICK_FORMATS.items():
        assert set(formats) <= set(FORMATS[name]) and formats
    for metric in get_experiment("export").metrics:
        get_metric(metric)


def export_cell(framework: str, backend: str, export_format: str,
                workload: str = "mlp-digits") -> CellSpec:
    return CellSpec(experiment="export", workload=workload, framework=framework,
                    backend=backend, device="cpu", export_format=export_format,
                    batch_size=32, repeats=1, threads=2, timeout_s=240)


@pytest.mark.slow
@pytest.mark.parametrize("framework,backend,export_format,workload", [
    ("pytorch", "", "onnx-dynamo", "cnn-digits"),  # NCHW artifact fed the same images
    ("pytorch", "", "torch.export", "mlp-digits"),
    ("tensorflow", "", "onnx-tf2onnx", "mlp-digits"),
    ("tensorflow", "", "tflite", "mlp-digits"),
    ("keras", "torch", "onnx", "mlp-digits"),
])
def test_artifacts_load_back_and_match_the_eager_model(framework, backend, export_format,
                                                       workload):
    record = execute_cell(export_cell(framework, backend, export_format, workload))
    outcome = record.outcome
    assert outcome.status is CellStatus.OK, (outcome.reason, record.stderr_tail)
    metrics = {o.metric: o.value for o in outcome.observations}
    assert metrics["artifact_max_abs_diff"] <= outcome.details["parity_tolerance"]
    assert metrics["artifact_size"] > 0 and metrics["artifact_load_time"] > 0
    if "onnx" in export_format:
        assert outcome.details["runtime"].startswith("onnxruntime")


@pytest.mark.slow
def test_a_missing_optional_package_skips_the_path_naming_the_package():
    import importlib.util

    if importlib.util.find_spec("openvino") is not None:
        pytest.skip("openvino is installed here: its path runs")
    record = execute_cell(export_cell("keras", "jax", "openvino"))
    assert record.outcome.status is CellStatus.SKIPPED, record.outcome.reason
    assert record.outcome.reason.startswith("optional package not installed: openvino")


@pytest.mark.slow
@pytest.mark.parametrize("framework,backend,export_format,workload", [
    ("pytorch", "", "torch.export", "transformer-tokens"),
    ("keras", "torch", "torch", "lstm-tokens"),  # Keras' torch export, dynamic batch
])
def test_the_models_round_trip_at_their_tiny_size(framework, backend, export_format, workload):
    """int32 token ids in, logits out, at batch 1 (latency) and batch 4 (parity, throughput)."""
    spec = replace(export_cell(framework, backend, export_format, workload), batch_size=4,
                   params={"profile": "tiny", "min_window_s": 0.01})
    record = execute_cell(spec)
    outcome = record.outcome
    assert outcome.status is CellStatus.OK, (outcome.reason, record.stderr_tail)
    metrics = {o.metric: o.value for o in outcome.observations}
    assert metrics["artifact_max_abs_diff"] <= PARITY_TOLERANCE
    assert outcome.details["parity_samples"] == 256  # generated test sets hold >= 256
