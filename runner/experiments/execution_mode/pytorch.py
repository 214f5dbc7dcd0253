"""execution-mode in PyTorch: eager training steps vs torch.compile."""

from __future__ import annotations

import numpy as np
import torch

from runner.adapters.pytorch import TorchAdapter, TorchTrainer
from runner.experiments.execution_mode.protocol import execution_fairness, measure_execution_mode
from runner.harness import open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec
from runner.workloads import Layer, Workload


class TorchStepper(TorchTrainer):
    """The training model and SGD; `compiled` wraps the model in torch.compile."""

    def __init__(self, adapter: TorchAdapter, workload: Workload,
                 input_shape: tuple[int, ...], compiled: bool) -> None:
        super().__init__(adapter, workload, input_shape)
        self.compiled = compiled

    def prepare(self, x: np.ndarray, y: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        return self.adapter.to_device(x), torch.from_numpy(y).to(self.device)

    def reset(self, layers: list[Layer]) -> None:
        super().reset(layers)
        self.model.train()
        if self.compiled:
            torch._dynamo.reset()  # a new compilation per model; inductor's caches are kept
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
    cell = open_cell(spec)
    compiled = spec.mode == "compiled"
    workload, shape = cell.data.workload, cell.data.input_shape
    stepper = TorchStepper(cell.adapter, workload, shape, compiled)
    eager = TorchStepper(cell.adapter, workload, shape, False) if compiled else None
    fairness = execution_fairness(
        cell,
        timer_includes="zero_grad, forward, loss, backward, optimizer.step on batch tensors "
                       "already on the device, and loss.item() (a device sync)",
        compile_mode="torch.compile(model) (inductor, default mode); optimizer eager"
                     if compiled else "eager",
        eager_mode="eager PyTorch",
        data_pipeline="batches converted to device tensors before timing",
    )
    return measure_execution_mode(cell, stepper, eager, fairness)
