"""inference in PyTorch: eager under torch.inference_mode, and torch.compile."""

from __future__ import annotations

import numpy as np
import torch

from dlbench.runner.worker.adapters.pytorch import TorchAdapter
from dlbench.runner.worker.experiments.inference.protocol import inference_fairness, measure_inference
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


class TorchPredictor:
    """The workload's model in eval mode; `compiled` wraps it in torch.compile."""

    def __init__(self, adapter: TorchAdapter, model: torch.nn.Module, compiled: bool) -> None:
        self.adapter = adapter
        self.model = model.to(adapter.device).eval()
        self.forward = torch.compile(self.model) if compiled else self.model

    def prepare(self, x: np.ndarray) -> torch.Tensor:
        return self.adapter.to_device(x)

    def predict(self, prepared: torch.Tensor) -> np.ndarray:
        with torch.inference_mode():
            return self.forward(prepared).cpu().numpy()  # the copy to host waits for the device


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    compiled = spec.mode == "compiled"
    data = cell.data
    model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    fairness = inference_fairness(
        cell,
        timer_includes="one model call under torch.inference_mode on an input tensor already "
                       "on the device, and copying the output to a host NumPy array",
        compile_mode="torch.compile (inductor, default mode, fresh cache per process)"
                     if compiled else "eager under torch.inference_mode",
        data_pipeline="inputs converted to device tensors before timing",
    )
    return measure_inference(cell, TorchPredictor(cell.adapter, model, compiled), fairness)
