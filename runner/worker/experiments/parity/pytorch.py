"""parity in PyTorch: the training model's forward pass and one torch.optim.SGD step."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from dlbench.runner.worker.adapters.pytorch import TorchTrainer
from dlbench.runner.worker.experiments.parity.model_protocol import ModelCase, run_parity_cell
from dlbench.runner.models.weights import Weights
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer


class TorchParity:
    """PyTorch's hooks of the parity protocol: eager, forward passes in inference mode."""

    trainer_class = TorchTrainer

    def logits(self, trainer: TorchTrainer, x: np.ndarray) -> np.ndarray:
        trainer.model.eval()
        with torch.inference_mode():
            return trainer.model(trainer.adapter.to_device(x)).cpu().numpy()

    def canonical_layers(self, trainer: TorchTrainer) -> list[Layer]:
        """The model's weights in canonical layouts (conv HWIO, dense (in, out))."""
        layers = []
        for module in trainer.model.modules():
            if isinstance(module, nn.Conv2d):
                kind, kernel = "conv", module.weight.detach().cpu().numpy().transpose(2, 3, 1, 0)
            elif isinstance(module, nn.Linear):
                kind, kernel = "dense", module.weight.detach().cpu().numpy().T
            else:
                continue
            layers.append(Layer(kind, kernel.copy(), module.bias.detach().cpu().numpy().copy()))
        return layers

    def compile_mode(self, trainer: TorchTrainer) -> str:
        return "eager"

    def build_model(self, spec: CellSpec, case: ModelCase) -> nn.Module:
        from dlbench.runner.models import pytorch as models

        model = models.build(case.definition, case.framework_weights, case.conventions)
        return model.to(_device(spec))

    def model_logits(self, spec: CellSpec, model: nn.Module, x: np.ndarray) -> np.ndarray:
        model.eval()
        with torch.inference_mode():
            return model(_tensor(spec, x)).cpu().numpy()

    def model_weights(self, model: nn.Module, case: ModelCase) -> Weights:
        from dlbench.runner.models import pytorch as models

        return models.read_weights(model)

    def model_step(self, spec: CellSpec, model: nn.Module, case: ModelCase) -> float:
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=case.workload.learning_rate,
                                    momentum=case.workload.momentum)
        optimizer.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(_tensor(spec, case.x_step)),
                                           torch.from_numpy(case.y_step).to(_device(spec)))
        loss.backward()
        optimizer.step()
        return float(loss.item())

    def model_compile_mode(self, spec: CellSpec, model: nn.Module) -> str:
        return "eager"


def _device(spec: CellSpec) -> torch.device:
    return torch.device("cuda" if spec.device == "cuda" else "cpu")


def _tensor(spec: CellSpec, x: np.ndarray) -> torch.Tensor:
    """A dlbench.runner.models input on the cell's device (images NCHW)."""
    from dlbench.runner.models import pytorch as models

    return torch.from_numpy(models.images_to_nchw(x) if x.ndim == 4 else x).to(_device(spec))


def run(spec: CellSpec) -> CellOutcome:
    return run_parity_cell(spec, TorchParity())
