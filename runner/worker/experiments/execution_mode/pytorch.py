"""execution-mode in PyTorch: eager training steps vs torch.compile of the whole step."""

from __future__ import annotations

import numpy as np
import torch

from dlbench.runner.worker.adapters.pytorch import TorchTrainer
from dlbench.runner.worker.experiments.execution_mode.protocol import execution_fairness, measure_execution_mode
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer


class TorchStepper(TorchTrainer):
    """The training model and SGD; `compiled` wraps the whole step in torch.compile."""

    def prepare(self, x: np.ndarray, y: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        return self.adapter.to_device(x), torch.from_numpy(y).to(self.device)

    def reset(self, layers: list[Layer]) -> None:
        super().reset(layers)
        self.model.train()

    def step(self, x: torch.Tensor, y: torch.Tensor) -> float:
        return self.step_fn(x, y).item()  # .item() waits for the device


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
        compile_mode="torch.compile of the whole step: zero_grad, forward, loss, backward "
                     "and optimizer.step (inductor, default mode)" if compiled else "eager",
        eager_mode="eager PyTorch",
        data_pipeline="batches converted to device tensors before timing",
    )
    return measure_execution_mode(cell, stepper, eager, fairness)
