"""execution-mode in PyTorch: eager training steps vs torch.compile."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from runner.experiments.execution_mode.protocol import execution_fairness, measure_execution_mode
from runner.experiments.training.protocol import training_data
from runner.experiments.training.pytorch import TorchTrainer, to_tensor
from runner.framework_setup import configure_torch
from runner.outcome import CellOutcome, skipped
from runner.spec import CellSpec
from runner.workloads import Layer


def inductor_cache_state() -> str:
    """Whether torch.compile's on-disk cache already holds compiled code (it shortens
    compilation), for the fairness manifest."""
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    path = Path(cache_dir())
    entries = sum(1 for _ in path.rglob("*")) if path.is_dir() else 0
    return f"{'warm' if entries else 'cold'} ({entries} files in {path} before this cell)"


class TorchStepper(TorchTrainer):
    """The training model and SGD; `compiled` wraps the model in torch.compile."""

    def __init__(self, spec: CellSpec, learning_rate: float, momentum: float,
                 compiled: bool) -> None:
        super().__init__(spec, learning_rate, momentum)
        self.compiled = compiled

    def prepare(self, x: np.ndarray, y: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        return to_tensor(x, self.device), torch.from_numpy(y).to(self.device)

    def reset(self, layers: list[Layer]) -> None:
        super().reset(layers)
        self.model.train()
        if self.compiled:
            torch._dynamo.reset()  # a fresh compilation per model, not a cached one
            self.forward = torch.compile(self.model)
        else:
            self.forward = self.model

    def step(self, x: torch.Tensor, y: torch.Tensor) -> float:
        self.optimizer.zero_grad(set_to_none=True)
        loss = self.loss_fn(self.forward(x), y)
        loss.backward()
        self.optimizer.step()
        return loss.item()  # .item() waits for the device


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_torch(spec)
    if spec.device == "cuda" and not torch.cuda.is_available():
        return skipped("PyTorch sees no CUDA device")
    data = training_data(spec)
    workload = data.workload
    compiled = spec.mode == "compiled"
    if compiled:
        settings |= {"torch.inductor_cache": inductor_cache_state()}
    stepper = TorchStepper(spec, workload.learning_rate, workload.momentum, compiled)
    eager = TorchStepper(spec, workload.learning_rate, workload.momentum, False) if compiled \
        else None
    fairness = execution_fairness(
        spec, data,
        timer_includes="zero_grad, forward, loss, backward, optimizer.step on batch tensors "
                       "already on the device, and loss.item() (a device sync)",
        compile_mode="torch.compile(model) (inductor, default mode); optimizer eager"
                     if compiled else "eager",
        eager_mode="eager PyTorch",
        data_pipeline="batches converted to device tensors before timing",
        settings=settings,
    )
    return measure_execution_mode(spec, stepper, eager, data, fairness)
