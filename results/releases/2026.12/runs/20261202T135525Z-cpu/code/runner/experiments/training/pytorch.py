"""training in PyTorch: a plain training loop with torch.optim.SGD."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from runner.experiments.training.protocol import measure_training, training_data, training_fairness
from runner.framework_setup import configure_torch
from runner.outcome import CellOutcome
from runner.spec import CellSpec
from runner.workloads import Layer


class HwcFlatten(nn.Module):
    """Flatten NCHW activations in NHWC order, the canonical layout of the dense kernel."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 2, 3, 1).flatten(1)


def build_model(layers: list[Layer]) -> nn.Sequential:
    """The workload's model holding exactly `layers` (canonical layouts converted)."""
    modules: list[nn.Module] = []
    for index, layer in enumerate(layers):
        last = index == len(layers) - 1
        if layer.kind == "conv":
            conv = nn.Conv2d(layer.kernel.shape[2], layer.kernel.shape[3], 3, padding=1)
            conv.weight.data = torch.from_numpy(layer.kernel.transpose(3, 2, 0, 1).copy())
            conv.bias.data = torch.from_numpy(layer.bias.copy())
            modules += [conv, nn.ReLU(), nn.MaxPool2d(2)]
            continue
        if index > 0 and layers[index - 1].kind == "conv":
            modules.append(HwcFlatten())
        dense = nn.Linear(*layer.kernel.shape)
        dense.weight.data = torch.from_numpy(layer.kernel.T.copy())
        dense.bias.data = torch.from_numpy(layer.bias.copy())
        modules.append(dense)
        if not last:
            modules.append(nn.ReLU())
    return nn.Sequential(*modules)


def to_tensor(x: np.ndarray, device: torch.device) -> torch.Tensor:
    """NHWC images become NCHW; flat inputs stay as they are."""
    tensor = torch.from_numpy(x)
    if tensor.ndim == 4:
        tensor = tensor.permute(0, 3, 1, 2).contiguous()
    return tensor.to(device)


class TorchTrainer:
    def __init__(self, spec: CellSpec, learning_rate: float, momentum: float) -> None:
        self.device = torch.device("cuda" if spec.device == "cuda" else "cpu")
        self.batch_size = spec.batch_size
        self.learning_rate, self.momentum = learning_rate, momentum
        self.loss_fn = nn.CrossEntropyLoss()

    def sync(self) -> None:
        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def reset(self, layers: list[Layer]) -> None:
        self.model = build_model(layers).to(self.device)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=self.learning_rate,
                                         momentum=self.momentum)
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats()

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        self.model.train()
        inputs, labels = to_tensor(x, self.device), torch.from_numpy(y).to(self.device)
        total = torch.zeros((), device=self.device)
        for start in range(0, len(labels), self.batch_size):
            batch_x = inputs[start:start + self.batch_size]
            batch_y = labels[start:start + self.batch_size]
            self.optimizer.zero_grad(set_to_none=True)
            loss = self.loss_fn(self.model(batch_x), batch_y)
            loss.backward()
            self.optimizer.step()
            total += loss.detach() * len(batch_y)
        mean_loss = (total / len(labels)).item()  # .item() synchronises the device
        self.sync()
        return mean_loss

    @torch.inference_mode()
    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        self.model.eval()
        predictions = self.model(to_tensor(x, self.device)).argmax(dim=1).cpu().numpy()
        return float((predictions == y).mean())

    def peak_memory_mib(self) -> float | None:
        if self.device.type == "cuda":
            return torch.cuda.max_memory_allocated() / 2**20
        return None


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_torch(spec)
    if spec.device == "cuda" and not torch.cuda.is_available():
        from runner.outcome import skipped

        return skipped("PyTorch sees no CUDA device")
    data = training_data(spec)
    trainer = TorchTrainer(spec, data.workload.learning_rate, data.workload.momentum)
    fairness = training_fairness(
        spec, data,
        timer_includes="converting the epoch's arrays to tensors on the device, every "
                       "forward/backward/SGD step, and reading the epoch loss (a device sync)",
        compile_mode="eager",
        data_pipeline="in-memory tensors sliced per batch in the shared epoch order",
        settings=settings,
    )
    return measure_training(spec, trainer, data, fairness)
