"""defaults-accuracy in PyTorch: nn.Linear and nn.BatchNorm1d with their own initialisers and
constants, torch.optim.Adam() as constructed with no options but the parameters, and a
DataLoader that shuffles each epoch, everything seeded by torch.manual_seed(k)."""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.experiments.defaults_accuracy.protocol import (
    BATCH_SIZE, CLASSES, DOCUMENTED_DEFAULTS, FEATURES, HIDDEN, TrainedWithDefaults,
    recorded_defaults, run_defaults_cell)


def build(seed: int) -> tuple[nn.Sequential, torch.optim.Adam]:
    """The model and optimizer as PyTorch builds them by default, from seed `seed`."""
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.BatchNorm1d(HIDDEN), nn.ReLU(),
                          nn.Linear(HIDDEN, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))
    return model, torch.optim.Adam(model.parameters())


def _initialiser(values: torch.Tensor, fan_in: int, documented: str) -> str:
    """The documented initialiser when the drawn values fit it (uniform within
    1/sqrt(fan_in), not all zero), else what was drawn."""
    largest = float(values.detach().abs().max())
    if 0 < largest <= 1 / math.sqrt(fan_in):
        return documented
    return f"not PyTorch's default: largest |value| {largest:.3g}"


def read_defaults(model: nn.Sequential, optimizer: torch.optim.Adam) -> dict[str, str]:
    """The settings this experiment leaves to PyTorch, read back from the built objects (the
    documented words where a value cannot be read: where epsilon enters, the shuffling)."""
    dense, norm = model[0], model[1]
    documented = DOCUMENTED_DEFAULTS["pytorch"]
    return recorded_defaults("pytorch", {
        "dense kernel initialiser": _initialiser(dense.weight, dense.in_features,
                                                 documented["dense kernel initialiser"]),
        "dense bias initialiser": _initialiser(dense.bias, dense.in_features,
                                               documented["dense bias initialiser"]),
        "Adam epsilon": f"{optimizer.defaults['eps']:g}",
        "BatchNorm momentum (as the framework defines it)": f"{norm.momentum:g}",
        "BatchNorm running statistics: share kept per step": f"{1 - norm.momentum:g}",
        "BatchNorm epsilon": f"{norm.eps:g}",
    })


def train(seed: int, epochs: int, x: np.ndarray, y: np.ndarray, x_test: np.ndarray,
          y_test: np.ndarray) -> TrainedWithDefaults:
    """Train from seed `seed` with PyTorch's defaults; the final test accuracy in eval mode."""
    model, optimizer = build(seed)
    defaults = read_defaults(model, optimizer)
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
        batch_size=BATCH_SIZE, shuffle=True)
    losses = []
    for _ in range(epochs):
        model.train()
        total = 0.0
        for inputs, labels in loader:
            optimizer.zero_grad()
            loss = nn.functional.cross_entropy(model(inputs), labels)
            loss.backward()
            optimizer.step()
            total += float(loss.detach()) * len(labels)
        losses.append(total / len(y))
    model.eval()
    with torch.no_grad():
        predicted = model(torch.from_numpy(x_test)).argmax(dim=1).numpy()
    return TrainedWithDefaults(losses, float(np.mean(predicted == y_test)), defaults)


def run(spec: CellSpec) -> CellOutcome:
    return run_defaults_cell(
        spec, "pytorch", train, label="PyTorch", compile_mode="eager",
        data_pipeline=f"torch.utils.data.DataLoader over in-memory tensors, batch "
                      f"{BATCH_SIZE}, shuffle=True (its own order each epoch)")
