"""parity in PyTorch: the training model's forward pass and one torch.optim.SGD step."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from runner.adapters.pytorch import TorchTrainer
from runner.experiments.parity.model_protocol import (ModelResult, is_model_workload, model_case,
                                                      model_parity_fairness, model_parity_outcome)
from runner.experiments.parity.protocol import (FrameworkResult, parity_case, parity_fairness,
                                                parity_outcome)
from runner.harness import configured_adapter, open_cell
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
    if is_model_workload(spec.workload):
        return run_model(spec, configured_adapter(spec)[1])
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


def run_model(spec: CellSpec, settings: dict[str, str]) -> CellOutcome:
    """A runner.models family: inference-mode logits, then one torch.optim.SGD step."""
    from runner.models import pytorch as models

    device = torch.device("cuda" if spec.device == "cuda" else "cpu")
    case = model_case(spec)

    def tensor(x: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(models.images_to_nchw(x) if x.ndim == 4 else x).to(device)

    model = models.build(case.definition, case.framework_weights, case.conventions).to(device)
    model.eval()
    with torch.inference_mode():
        logits = model(tensor(case.x_forward)).cpu().numpy()
    before = models.read_weights(model)
    model.train()
    optimizer = torch.optim.SGD(model.parameters(), lr=case.workload.learning_rate,
                                momentum=case.workload.momentum)
    optimizer.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(tensor(case.x_step)),
                                       torch.from_numpy(case.y_step).to(device))
    loss.backward()
    optimizer.step()
    result = ModelResult(logits, float(loss.item()), before, models.read_weights(model))
    fairness = model_parity_fairness(spec, case, compile_mode="eager", settings=settings)
    return model_parity_outcome(spec, case, result, fairness)
