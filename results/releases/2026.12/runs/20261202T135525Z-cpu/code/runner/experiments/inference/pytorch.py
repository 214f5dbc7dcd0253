"""inference in PyTorch: eager under torch.inference_mode, and torch.compile."""

from __future__ import annotations

import numpy as np
import torch

from runner.experiments.execution_mode.pytorch import inductor_cache_state
from runner.experiments.inference.protocol import inference_fairness, measure_inference
from runner.experiments.training.protocol import training_data
from runner.experiments.training.pytorch import build_model, to_tensor
from runner.framework_setup import configure_torch
from runner.outcome import CellOutcome, skipped
from runner.spec import CellSpec
from runner.workloads import initial_layers


class TorchPredictor:
    """The workload's model in eval mode; `compiled` wraps it in torch.compile."""

    def __init__(self, model: torch.nn.Module, device: torch.device, compiled: bool) -> None:
        self.device = device
        self.model = model.to(device).eval()
        self.forward = torch.compile(self.model) if compiled else self.model

    def prepare(self, x: np.ndarray) -> torch.Tensor:
        return to_tensor(x, self.device)

    def predict(self, prepared: torch.Tensor) -> np.ndarray:
        with torch.inference_mode():
            return self.forward(prepared).cpu().numpy()  # the copy to host waits for the device


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_torch(spec)
    if spec.device == "cuda" and not torch.cuda.is_available():
        return skipped("PyTorch sees no CUDA device")
    compiled = spec.mode == "compiled"
    if compiled:
        settings |= {"torch.inductor_cache": inductor_cache_state()}
    data = training_data(spec)
    device = torch.device("cuda" if spec.device == "cuda" else "cpu")
    predictor = TorchPredictor(build_model(initial_layers(data.workload, data.dataset)), device,
                               compiled)
    fairness = inference_fairness(
        spec,
        timer_includes="one model call under torch.inference_mode on an input tensor already "
                       "on the device, and copying the output to a host NumPy array",
        compile_mode="torch.compile (inductor, default mode)" if compiled
                     else "eager under torch.inference_mode",
        data_pipeline="inputs converted to device tensors before timing",
        settings=settings,
    )
    return measure_inference(spec, predictor, data, fairness)
