"""A user's PyTorch module: eager under torch.inference_mode (eager), torch.compile of the
module (compiled), and the export experiment's artifacts in their own runtimes, on the CPU
as that experiment measures them: ONNX (dynamo exporter) in ONNX Runtime (onnxruntime) and
OpenVINO (openvino); the same saved weights in every mode, parity against the eager
reference."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch

from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.experiments.export.pytorch import export_paths
from dlbench.runner.worker.experiments.export.runtimes import (Predict, openvino_call, openvino_compiled,
                                                        runtime_settings)
from dlbench.runner.worker.user_model.loading import first_array, load_user_model
from dlbench.runner.worker.user_model.measure import (inference_outcome, measured_or_failed, model_dir,
                                       model_fairness, model_request, open_model_cell,
                                       parity_outcome)
from dlbench.runner.cell.model_source import PARITY


class ModulePredictor:
    """A module (eager or compiled) called on a tensor of its device under
    torch.inference_mode; the output copied to the host (which waits for the device)."""

    def __init__(self, module, device: str) -> None:
        self.module, self.device = module, torch.device(device)

    def prepare(self, x: np.ndarray) -> object:
        return torch.from_numpy(np.ascontiguousarray(x)).to(self.device)

    def predict(self, prepared: object) -> np.ndarray:
        with torch.inference_mode():
            return first_array(self.module(prepared))


class RuntimePredictor:
    """An exported artifact's runtime: NumPy in, NumPy out."""

    def __init__(self, predict: Predict) -> None:
        self.call = predict
        self.settings = runtime_settings(predict)  # the precision the runtime chose

    def prepare(self, x: np.ndarray) -> object:
        return np.ascontiguousarray(x)

    def predict(self, prepared: object) -> np.ndarray:
        return first_array(self.call(prepared))


def openvino_predict(model, example: torch.Tensor, threads: int) -> Predict:
    """The module converted by openvino.convert_model, compiled for the CPU at fp32 (the
    plugin's own default is bf16 on CPUs with bf16 units)."""
    import openvino

    converted = openvino.convert_model(model, example_input=example)
    return openvino_call(openvino_compiled(converted, threads))


def predictor_for(spec: CellSpec, model, example: torch.Tensor, scratch: Path
                  ) -> tuple[object, str]:
    """The mode's predictor and its compile mode in words."""
    if spec.mode == "compiled":
        return (ModulePredictor(torch.compile(model.to(spec.device)), spec.device),
                "torch.compile(model), default mode")
    if spec.mode == "onnxruntime":
        path = export_paths(model, example, spec.threads)["onnx-dynamo"]
        artifact = path.export(scratch)
        return RuntimePredictor(path.load(artifact)), f"ONNX (dynamo exporter), {path.runtime}"
    if spec.mode == "openvino":
        return (RuntimePredictor(openvino_predict(model, example, spec.threads)),
                f"openvino.convert_model, CPU plugin, {spec.threads} thread(s)")
    return ModulePredictor(model.to(spec.device), spec.device), "eager, torch.inference_mode"


def run(spec: CellSpec) -> CellOutcome:
    return measured_or_failed(_measure, spec)


def _measure(spec: CellSpec) -> CellOutcome:
    cell = open_model_cell(spec)
    model = load_user_model(model_request(spec), model_dir(spec))
    example = torch.from_numpy(np.ascontiguousarray(cell.data.x_test[:2]))
    with tempfile.TemporaryDirectory(prefix="dlbench-user-export-") as scratch:
        predictor, compile_mode = predictor_for(spec, model, example, Path(scratch))
        cell.settings.update(getattr(predictor, "settings", {}))
        fairness = model_fairness(cell, timer_includes=f"one forward call ({spec.mode}) on "
                                  "prepared inputs, output as NumPy", compile_mode=compile_mode)
        if spec.experiment == PARITY:
            return parity_outcome(cell, predictor, fairness)
        return inference_outcome(cell, predictor, fairness,
                                 compiles=bool(spec.params.get("compiles")))
