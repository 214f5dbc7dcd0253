"""export in TensorFlow's own API: SavedModel, TFLite/LiteRT (TFLiteConverter), and ONNX
through tf2onnx, each loaded back into its own runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import tensorflow as tf

from dlbench.runner.worker.adapters.tensorflow import TfModel
from dlbench.runner.worker.experiments.export.protocol import (ExportPath, artifact_shift, export_fairness,
                                                measure_export, missing_package)
from dlbench.runner.worker.experiments.export.runtimes import (litert_predict, litert_runtime_name,
                                                onnxruntime_predict, saved_model_predict)
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


def servable(model: TfModel, example: np.ndarray) -> tf.Module:
    """The model with a `serve` tf.function taking any batch shaped and typed like `example`
    (float32 images, int32 token ids)."""
    module = tf.Module()
    module.model = model
    signature = tf.TensorSpec([None, *example.shape[1:]], tf.as_dtype(example.dtype))
    module.serve = tf.function(lambda x: model(x), input_signature=[signature])
    return module


def export_paths(module: tf.Module, threads: int) -> dict[str, ExportPath]:
    """Every export path TensorFlow offers for this model, by export_format."""

    def saved_model(directory: Path) -> Path:
        tf.saved_model.save(module, str(directory / "saved_model"),
                            signatures={"serving_default": module.serve})
        return directory / "saved_model"

    def tflite(directory: Path) -> Path:
        converter = tf.lite.TFLiteConverter.from_concrete_functions(
            [module.serve.get_concrete_function()], module)
        (directory / "model.tflite").write_bytes(converter.convert())
        return directory / "model.tflite"

    def onnx(directory: Path) -> Path:
        import tf2onnx

        tf2onnx.convert.from_function(module.serve, input_signature=module.serve.input_signature,
                                      output_path=str(directory / "model.onnx"))
        return directory / "model.onnx"

    return {
        "savedmodel": ExportPath("tf.saved_model.load, serving_default signature", saved_model,
                                 lambda path: saved_model_predict(path, "serving_default")),
        "tflite": ExportPath(f"{litert_runtime_name()}, {threads} thread(s)", tflite,
                             lambda path: litert_predict(path, threads)),
        "onnx-tf2onnx": ExportPath(f"onnxruntime CPU, {threads} thread(s)", onnx,
                                   lambda path: onnxruntime_predict(path, threads)),
    }


def run(spec: CellSpec) -> CellOutcome:
    if spec.export_format == "onnx-tf2onnx":
        missing_package("tf2onnx", "TensorFlow's ONNX export")
    cell = open_cell(spec)
    data = cell.data
    with tf.device("/CPU:0"):
        model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
        exported = model
        if artifact_shift(spec):  # a model other than the eager one (protocol.PERTURB_PARAM)
            exported = cell.adapter.build_model(data.workload, data.initial_layers(),
                                                data.input_shape)
            exported.trainable_variables[-1].assign_add(
                tf.fill(exported.trainable_variables[-1].shape, artifact_shift(spec)))
    module = servable(exported, data.x_test)
    path = export_paths(module, spec.threads)[spec.export_format]
    fairness = export_fairness(cell, path.runtime, f"TensorFlow {spec.export_format}")

    def eager(x: np.ndarray) -> np.ndarray:
        return model(tf.constant(x)).numpy()

    return measure_export(cell, eager, path, fairness)
