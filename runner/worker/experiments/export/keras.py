"""export in Keras 3: model.export(path, format=...) in every format Keras offers on the
backend KERAS_BACKEND names, each artifact loaded back into its own runtime."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from dlbench.runner.worker.experiments.export.protocol import (ExportPath, artifact_shift, export_fairness,
                                                measure_export, missing_package)
from dlbench.runner.worker.experiments.export.runtimes import (litert_predict, litert_runtime_name,
                                                onnxruntime_predict, openvino_predict,
                                                saved_model_predict, torch_program_predict)
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec

#: (backend, format) -> the optional package Keras' exporter imports for it.
NEEDS = {
    ("tensorflow", "onnx"): "tf2onnx",
    ("jax", "onnx"): "jax2onnx",
    ("torch", "litert"): "litert_torch",
    ("tensorflow", "openvino"): "openvino",
    ("torch", "openvino"): "openvino",
    ("jax", "openvino"): "openvino",
}

#: format -> file name of the artifact and how its runtime loads it.
ARTIFACTS = {
    "tf_saved_model": ("saved_model", "tf.saved_model.load, serve endpoint"),
    "onnx": ("model.onnx", "onnxruntime CPU"),
    "litert": ("model.tflite", "LiteRT interpreter"),
    "torch": ("model.pt2", "torch.export.load(...).module()"),
    "openvino": ("model.xml", "OpenVINO runtime"),
}


def loader(export_format: str, threads: int):
    """How the artifact of `export_format` is loaded back."""
    if export_format == "tf_saved_model":
        return lambda path: saved_model_predict(path, "serve")
    if export_format == "onnx":
        return lambda path: onnxruntime_predict(path, threads)
    if export_format == "litert":
        return lambda path: litert_predict(path, threads)
    if export_format == "torch":
        return torch_program_predict
    return lambda path: openvino_predict(path, threads)


def export_options(export_format: str) -> dict:
    """Extra model.export arguments: the torch format takes a dynamic batch dimension, as
    PyTorch's own torch.export path does (without it Keras specializes the batch to 1 and
    the loaded program refuses any other batch)."""
    if export_format == "torch":
        import torch

        return {"dynamic_shapes": {0: torch.export.Dim("batch", min=1)}}
    return {}


def run(spec: CellSpec) -> CellOutcome:
    needed = NEEDS.get((spec.backend, spec.export_format))
    if needed:
        missing_package(needed, f"Keras' {spec.export_format} export on {spec.backend}")
    cell = open_cell(spec)
    data = cell.data
    model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    exported = model
    if artifact_shift(spec):  # a model other than the eager one (protocol.PERTURB_PARAM)
        exported = cell.adapter.build_model(data.workload, data.initial_layers(),
                                            data.input_shape)
        last = exported.trainable_weights[-1]
        last.assign(last + artifact_shift(spec))
    name, runtime = ARTIFACTS[spec.export_format]
    if spec.export_format == "litert":
        runtime = litert_runtime_name()

    def export(directory: Path) -> Path:
        exported.export(str(directory / name), format=spec.export_format, verbose=False,
                     **export_options(spec.export_format))
        return directory / name

    path = ExportPath(f"{runtime}, {spec.threads} thread(s)", export,
                      loader(spec.export_format, spec.threads))
    fairness = export_fairness(cell, path.runtime,
                               f"Keras model.export(format={spec.export_format!r}) on "
                               f"{spec.backend}")

    def eager(x: np.ndarray) -> np.ndarray:
        import keras

        return keras.ops.convert_to_numpy(model(x, training=False))

    return measure_export(cell, eager, path, fairness)
