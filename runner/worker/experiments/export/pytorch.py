"""export in PyTorch: torch.export (.pt2), ONNX through the dynamo exporter, TorchScript
(legacy), each loaded back into its own runtime."""

from __future__ import annotations

from copy import deepcopy
from pathlib import Path

import numpy as np
import torch

from dlbench.runner.worker.adapters.pytorch import to_tensor
from dlbench.runner.worker.experiments.export.protocol import (ExportPath, artifact_shift, export_fairness,
                                                measure_export, missing_package)
from dlbench.runner.worker.experiments.export.runtimes import (Predict, onnxruntime_predict, openvino_predict,
                                                torch_program_predict)
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


def eager_predict(model: torch.nn.Module) -> Predict:
    def predict(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return model(to_tensor(x, torch.device("cpu"))).numpy()

    return predict


def nchw(x: np.ndarray) -> np.ndarray:
    """PyTorch's artifacts take NCHW images: the NHWC inputs converted (before timing)."""
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2) if x.ndim == 4 else x)


def tensor_predict(model: torch.nn.Module) -> Predict:
    """A loaded module called on inputs already in its layout."""
    def predict(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return model(torch.from_numpy(x)).numpy()

    return predict


def export_paths(model: torch.nn.Module, example: torch.Tensor, threads: int) -> dict:
    """Every export path PyTorch offers for this model, by export_format."""
    batch = torch.export.Dim.DYNAMIC

    def program(directory: Path) -> Path:
        exported = torch.export.export(model, (example,), dynamic_shapes=({0: batch},))
        torch.export.save(exported, directory / "model.pt2")
        return directory / "model.pt2"

    def onnx(directory: Path) -> Path:
        torch.onnx.export(model, (example,), directory / "model.onnx", dynamo=True,
                          dynamic_shapes=({0: batch},), input_names=["x"])
        return directory / "model.onnx"

    def torchscript(directory: Path) -> Path:
        torch.jit.save(torch.jit.script(model), directory / "model.ts")
        return directory / "model.ts"

    def load_torchscript(path: Path) -> Predict:
        return tensor_predict(torch.jit.load(str(path)))

    return {
        "torch.export": ExportPath("torch.export.load(...).module()", program,
                                   torch_program_predict, nchw),
        "onnx-dynamo": ExportPath(f"onnxruntime CPU, {threads} thread(s)", onnx,
                                  lambda path: onnxruntime_predict(path, threads), nchw),
        "torchscript": ExportPath("torch.jit.load (TorchScript, legacy)", torchscript,
                                  load_torchscript, nchw),
        # the same ONNX file, served by OpenVINO's CPU runtime (it reads ONNX directly)
        "onnx-openvino": ExportPath(f"OpenVINO CPU from ONNX, {threads} thread(s)", onnx,
                                    lambda path: openvino_predict(path, threads), nchw),
    }


def exported_model(model: torch.nn.Module, shift: float) -> torch.nn.Module:
    """The model the artifact is written from: `model` itself, or a copy with its last
    parameter shifted (protocol.PERTURB_PARAM)."""
    if not shift:
        return model
    copy = deepcopy(model)
    with torch.no_grad():
        list(copy.parameters())[-1].add_(shift)
    return copy


def run(spec: CellSpec) -> CellOutcome:
    if spec.export_format == "onnx-openvino":
        missing_package("openvino", "serving PyTorch's ONNX artifact with OpenVINO")
    cell = open_cell(spec)
    data = cell.data
    model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    model.eval()
    example = cell.adapter.to_device(data.x_test[: spec.batch_size])
    path = export_paths(exported_model(model, artifact_shift(spec)), example,
                        spec.threads)[spec.export_format]
    fairness = export_fairness(cell, path.runtime, f"PyTorch {spec.export_format}")
    return measure_export(cell, eager_predict(model), path, fairness)
