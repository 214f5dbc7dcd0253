"""The deployment runtimes' parity checks, on a tiny stand-in of the real-size ResNet family:
each runtime serves the tiny ResNet's artifact equal to the framework's, and FAILS parity on
an artifact written from a perturbed model (protocol.PERTURB_PARAM)."""

from __future__ import annotations

import importlib.util

import pytest

from dlbench.core.schema import CellStatus
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.experiments.export.protocol import PERTURB_PARAM
from dlbench.runner.process.execute import execute_cell

#: One export path into each runtime: ONNX Runtime, OpenVINO from ONNX, TensorFlow's
#: SavedModel runtime, LiteRT, and Keras' OpenVINO export.
RUNTIME_PATHS = [
    ("pytorch", "", "onnx-dynamo", "onnxruntime"),
    ("pytorch", "", "onnx-openvino", "openvino"),
    ("tensorflow", "", "savedmodel", "tensorflow"),
    ("tensorflow", "", "tflite", "ai_edge_litert"),
    ("keras", "tensorflow", "openvino", "openvino"),
]


def tiny_export(framework: str, backend: str, export_format: str, shift: float) -> CellSpec:
    """An export cell of ResNet-50's family at its tiny size: 8 samples, batch 4."""
    params = {"profile": "tiny", "min_window_s": 0.01, "export_samples": 8}
    if shift:
        params[PERTURB_PARAM] = shift
    return CellSpec(experiment="export", workload="resnet50-synthetic", framework=framework,
                    backend=backend, device="cpu", export_format=export_format, batch_size=4,
                    repeats=1, threads=2, timeout_s=240, params=params)


@pytest.mark.slow
@pytest.mark.parametrize("framework,backend,export_format,package", RUNTIME_PATHS)
def test_each_runtime_fails_parity_on_a_perturbed_artifact(framework, backend, export_format,
                                                           package):
    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed here")
    record = execute_cell(tiny_export(framework, backend, export_format, shift=0.05))
    outcome = record.outcome
    assert outcome.status is CellStatus.UNSUPPORTED, (outcome.reason, record.stderr_tail)
    assert "outputs differ from the eager model" in outcome.reason
    diff = [o.value for o in outcome.observations if o.metric == "artifact_max_abs_diff"]
    assert diff and diff[0] > 1e-3


@pytest.mark.slow
def test_openvino_serves_pytorchs_onnx_artifact_equal_to_the_framework():
    if importlib.util.find_spec("openvino") is None:
        pytest.skip("openvino is not installed here")
    record = execute_cell(tiny_export("pytorch", "", "onnx-openvino", shift=0.0))
    outcome = record.outcome
    assert outcome.status is CellStatus.OK, (outcome.reason, record.stderr_tail)
    assert outcome.details["runtime"].startswith("OpenVINO CPU from ONNX")
    assert outcome.details["parity_samples"] == 8
    metrics = {o.metric: o.value for o in outcome.observations}
    assert metrics["artifact_max_abs_diff"] <= outcome.details["parity_tolerance"]
