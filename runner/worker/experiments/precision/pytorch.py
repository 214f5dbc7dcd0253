"""precision in PyTorch: torch.autocast (bf16, fp16) with torch.amp.GradScaler for fp16."""

from __future__ import annotations

import numpy as np
import torch

from dlbench.runner.worker.adapters.pytorch import TorchAdapter, TorchTrainer
from dlbench.runner.worker.experiments.precision.protocol import (EvaluatedInBatches,
                                                                  PrecisionFramework,
                                                                  run_precision)
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, Workload

DTYPES = {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}


class AmpTrainer(EvaluatedInBatches, TorchTrainer):
    """The training loop under torch.autocast; fp16 scales the loss with a GradScaler."""

    def __init__(self, adapter: TorchAdapter, workload: Workload, input_shape: tuple[int, ...],
                 precision: str) -> None:
        super().__init__(adapter, workload, input_shape)
        self.dtype = DTYPES[precision]

    def autocast(self) -> torch.autocast:
        return torch.autocast(self.device.type, dtype=self.dtype or torch.float32,
                              enabled=self.dtype is not None)

    def reset(self, layers: list[Layer]) -> None:
        super().reset(layers)
        self.scaler = torch.amp.GradScaler(self.device.type,
                                           enabled=self.dtype is torch.float16)

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        self.model.train()
        inputs, labels = self.adapter.to_device(x), torch.from_numpy(y).to(self.device)
        total = torch.zeros((), device=self.device)
        for start in range(0, len(labels), self.batch_size):
            batch_y = labels[start:start + self.batch_size]
            self.optimizer.zero_grad(set_to_none=True)
            with self.autocast():
                loss = self.loss_fn(self.model(inputs[start:start + self.batch_size]), batch_y)
            self.scaler.scale(loss).backward()
            self.scaler.step(self.optimizer)
            self.scaler.update()
            total += loss.detach().float() * len(batch_y)
        return (total / len(labels)).item()  # .item() waits for the device

    def prepare(self, x: np.ndarray) -> torch.Tensor:
        self.model.eval()
        return self.adapter.to_device(x)

    @torch.inference_mode()
    def predict(self, prepared: torch.Tensor) -> np.ndarray:
        with self.autocast():
            return self.model(prepared).float().cpu().numpy()


class TorchPrecision(PrecisionFramework):
    """PyTorch's hooks of the precision protocol: eager, torch.autocast."""

    trainer_class = AmpTrainer
    timer_includes = ("per epoch: tensors to the device, every autocast forward, backward "
                      "and (scaled) SGD step, reading the epoch loss (a device sync)")

    def policy(self, spec: CellSpec) -> str:
        dtype = DTYPES[spec.precision]
        if dtype is None:
            return "fp32"
        return (f"torch.autocast(dtype={dtype}) over float32 parameters"
                + (", torch.amp.GradScaler (dynamic loss scaling)" if spec.precision == "fp16"
                   else ""))

    def compile_mode(self, spec: CellSpec) -> str:
        return "eager"

    def refusals(self, spec: CellSpec) -> tuple[type[BaseException], ...]:
        return (RuntimeError, NotImplementedError)


def run(spec: CellSpec) -> CellOutcome:
    return run_precision(spec, TorchPrecision())
