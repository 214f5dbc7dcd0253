"""parity in PyTorch: the training model's forward pass and one torch.optim.SGD step."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from runner.adapters.pytorch import TorchTrainer
from runner.experiments.parity.protocol import (FrameworkResult, parity_case, parity_fairness,
                                                parity_outcome)
from runner.harness import open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec
from runner.workloads import Layer


def canonical_layers(model: nn.Module) -> list[Layer]:
    """The model's weights in canonical layouts (conv HWIO, dense (in, out))."""
    layers = []
    for module in model.modules():
        if isinstance(module, nn.Conv2d):
            kernel = module.weight.detach().cpu().numpy().transpose(2, 3, 1, 0)
            layers.append(Layer("conv", kernel.copy(), module.bias.detach().cpu().numpy().copy()))
        elif isinstance(module, nn.Linear):
            kernel = module.weight.detach().cpu().numpy().T
            layers.append(Layer("dense", kernel.copy(), module.bias.detach().cpu().numpy().copy()))
    return layers


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    case = parity_case(cell)
    trainer = TorchTrainer(cell.adapter, cell.data.workload, cell.data.input_shape)
    trainer.reset(case.framework_layers)
    trainer.model.eval()
    with torch.inference_mode():
        logits = trainer.model(cell.adapter.to_device(case.x_forward)).cpu().numpy()
    before = canonical_layers(trainer.model)
    trainer.train_epoch(case.x_step, case.y_step)  # one batch: exactly one SGD step
    result = FrameworkResult(np.asarray(logits), before, canonical_layers(trainer.model))
    return parity_outcome(cell, case, result, parity_fairness(cell, compile_mode="eager"))
