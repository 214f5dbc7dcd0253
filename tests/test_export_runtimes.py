"""The deployment runtimes' parity checks, on a tiny stand-in of the real-size ResNet family:
each runtime serves the tiny ResNet's artifact equal to the framework's, and FAILS parity on
an artifact written from a perturbed model (protocol.PERTURB_PARAM)."""

from __future__ import annotations

import importlib.util

import pytest

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.experiments.export.protocol import PERTURB_PARAM
from dlbench.runner.driver.launch.execute import execute_cell

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
    assert outcome.fairness.settings["openvino.inference_precision_hint"] == "f32"


def tiny_openvino_model():
    """A one-matmul OpenVINO model: x @ w, fp32."""
    import numpy as np
    import openvino
    import openvino.opset13 as ops

    x = ops.parameter([1, 8], np.float32)
    w = ops.constant(np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4))
    return openvino.Model([ops.matmul(x, w, False, False)], [x])


def test_openvino_compiles_an_fp32_cell_at_f32_on_every_cpu(tmp_path):
    """OpenVINO's CPU plugin defaults to bf16 where the CPU has bf16 units; our loader pins
    f32 and reads it back (this fails on such a CPU if the pin is dropped)."""
    pytest.importorskip("openvino")
    import numpy as np
    import openvino

    from dlbench.runner.worker.experiments.export.runtimes import openvino_predict

    openvino.save_model(tiny_openvino_model(), str(tmp_path / "model.xml"))
    predict = openvino_predict(tmp_path / "model.xml", threads=1)
    assert predict.settings["openvino.inference_precision_hint"] == "f32"
    assert predict(np.ones((1, 8), np.float32)).shape == (1, 4)


def test_a_runtime_at_another_precision_than_the_cells_is_refused():
    pytest.importorskip("openvino")
    import openvino

    from dlbench.runner.worker.experiments.export.runtimes import (PrecisionNotPinned,
                                                                   checked_precision)

    compiled = openvino.Core().compile_model(tiny_openvino_model(), "CPU",
                                             {"INFERENCE_PRECISION_HINT": "f32"})
    assert checked_precision(compiled, "f32") is compiled
    with pytest.raises(PrecisionNotPinned, match="at f32, not the cell's bf16"):
        checked_precision(compiled, "bf16")


def test_keras_openvino_backend_compiles_are_pinned_to_f32():
    """Keras' OpenVINO backend calls openvino.compile_model with no precision hint: once
    pinned, every such compile reads back f32, on every CPU."""
    pytest.importorskip("openvino")
    import openvino

    from dlbench.runner.worker.experiments.export.runtimes import pin_openvino_compiles

    plain = openvino.compile_model
    try:
        settings = pin_openvino_compiles()
        compiled = openvino.compile_model(tiny_openvino_model(), "CPU")
        assert compiled.get_property("INFERENCE_PRECISION_HINT").to_string() == "f32"
        assert settings["openvino.inference_precision_hint"].startswith("f32")
        pin_openvino_compiles()  # twice: still one wrapper over the plain function
        assert openvino.compile_model.unpinned is plain
    finally:
        openvino.compile_model = plain


def test_onnxruntime_keeps_fp32_gemms_in_fp32(tmp_path):
    pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    from dlbench.runner.worker.experiments.export.runtimes import (ORT_BF16_FASTMATH,
                                                                   onnxruntime_predict)

    weight = numpy_helper.from_array(np.ones((8, 4), np.float32), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "tiny",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                              [weight])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              str(tmp_path / "model.onnx"))
    predict = onnxruntime_predict(tmp_path / "model.onnx", threads=1)
    assert predict.settings[f"onnxruntime.{ORT_BF16_FASTMATH}"] == "0"
    assert predict(np.ones((1, 8), np.float32)).tolist() == [[8.0] * 4]
