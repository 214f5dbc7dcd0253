"""A float64 NumPy forward pass of the dlbench.runner.models families: the parity yardstick.

It follows the equalised conventions (dlbench.runner.models.conventions) and the canonical layouts;
in training mode BatchNorm normalises with the batch statistics and returns the updated
running statistics, the running variance in the convention the framework under test uses.
Gradients are not written out: parity checks an optimizer step through directional
derivatives of this loss (central differences in float64).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from dlbench.runner.models.conventions import CONVENTIONS, Conventions
from dlbench.runner.models.families import family_of
from dlbench.runner.models.definitions import (LstmDefinition, ModelDefinition, ResNetDefinition,
                                       TransformerDefinition, block_convs, residual_blocks)
from dlbench.runner.models.weights import Weights

_erf = np.vectorize(math.erf)


class _Forward:
    """One forward pass; collects running-statistic updates in training mode."""

    def __init__(self, weights: Weights, training: bool, running_variance: str,
                 conventions: Conventions) -> None:
        self.w = {k: np.asarray(v, np.float64) for k, v in weights.items()}
        self.training, self.unbiased = training, running_variance == "unbiased"
        self.c, self.statistics = conventions, {}

    def conv(self, x: np.ndarray, name: str, stride: int) -> np.ndarray:
        kernel = self.w[f"{name}.kernel"]
        pad = kernel.shape[0] // 2
        padded = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
        windows = sliding_window_view(padded, kernel.shape[:2], axis=(1, 2))[:, ::stride, ::stride]
        return np.einsum("nhwcij,ijco->nhwo", windows, kernel)

    def batchnorm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean, variance = self.w[f"{name}.mean"], self.w[f"{name}.variance"]
        if self.training:
            count = x.shape[0] * x.shape[1] * x.shape[2]
            batch_mean, batch_variance = x.mean(axis=(0, 1, 2)), x.var(axis=(0, 1, 2))
            running = batch_variance * count / (count - 1) if self.unbiased else batch_variance
            m = self.c.batchnorm_momentum
            self.statistics[f"{name}.mean"] = (1 - m) * mean + m * batch_mean
            self.statistics[f"{name}.variance"] = (1 - m) * variance + m * running
            mean, variance = batch_mean, batch_variance
        scale = self.w[f"{name}.gamma"] / np.sqrt(variance + self.c.batchnorm_epsilon)
        return (x - mean) * scale + self.w[f"{name}.beta"]

    def dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.kernel"] + self.w[f"{name}.bias"]

    def layernorm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean, variance = x.mean(axis=-1, keepdims=True), x.var(axis=-1, keepdims=True)
        normalised = (x - mean) / np.sqrt(variance + self.c.layernorm_epsilon)
        return normalised * self.w[f"{name}.gamma"] + self.w[f"{name}.beta"]


def _relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0.0)


def _resnet(f: _Forward, d: ResNetDefinition, x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    x = _relu(f.batchnorm(f.conv(x, "stem.conv", d.stem_stride), "stem.bn"))
    if d.stem_pool:
        padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        x = sliding_window_view(padded, (3, 3), axis=(1, 2))[:, ::2, ::2].max(axis=(-2, -1))
    for block in residual_blocks(d):
        shortcut = x
        convs = block_convs(block, d.block)
        for index, (name, _, _, _, stride) in enumerate(convs):
            x = f.batchnorm(f.conv(x, f"{block.name}.{name}", stride), f"{block.name}.bn{index}")
            if index < len(convs) - 1:
                x = _relu(x)
        if block.projection:
            shortcut = f.batchnorm(f.conv(shortcut, f"{block.name}.shortcut.conv", block.stride),
                                   f"{block.name}.shortcut.bn")
        x = _relu(x + shortcut)
    return f.dense(x.mean(axis=(1, 2)), "head")


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _transformer(f: _Forward, d: TransformerDefinition, tokens: np.ndarray) -> np.ndarray:
    x = f.w["embed.tokens"][tokens] + f.w["embed.positions"][:tokens.shape[1]]
    x = f.layernorm(x, "embed.norm")
    n, length, head_width = len(tokens), tokens.shape[1], d.width // d.heads
    for index in range(d.layers):
        p = f"layer{index}"
        q, k, v = (f.dense(x, f"{p}.attention.{part}").reshape(n, length, d.heads, head_width)
                   for part in ("query", "key", "value"))
        weights = _softmax(np.einsum("nqhd,nkhd->nhqk", q, k) / math.sqrt(head_width))
        context = np.einsum("nhqk,nkhd->nqhd", weights, v).reshape(n, length, d.width)
        x = f.layernorm(x + f.dense(context, f"{p}.attention.output"), f"{p}.attention_norm")
        hidden = f.dense(x, f"{p}.ff1")
        hidden = 0.5 * hidden * (1.0 + _erf(hidden / math.sqrt(2.0)))
        x = f.layernorm(x + f.dense(hidden, f"{p}.ff2"), f"{p}.ff_norm")
    return f.dense(x.mean(axis=1), "head")


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _lstm(f: _Forward, d: LstmDefinition, tokens: np.ndarray) -> np.ndarray:
    x = f.w["embed.tokens"][tokens]
    for layer in range(d.layers):
        kernel, recurrent, bias = (f.w[f"lstm{layer}.{part}"]
                                   for part in ("kernel", "recurrent_kernel", "bias"))
        hidden = cell = np.zeros((len(tokens), d.width))
        outputs = []
        for step in range(tokens.shape[1]):
            i, g_f, g, o = np.split(x[:, step] @ kernel + hidden @ recurrent + bias, 4, axis=-1)
            cell = _sigmoid(g_f) * cell + _sigmoid(i) * np.tanh(g)
            hidden = _sigmoid(o) * np.tanh(cell)
            outputs.append(hidden)
        x = np.stack(outputs, axis=1)
    return f.dense(x[:, -1], "head")


def forward(definition: ModelDefinition, weights: Weights, x: np.ndarray, *,
            training: bool = False, running_variance: str = "unbiased",
            conventions: Conventions = CONVENTIONS) -> tuple[np.ndarray, Weights]:
    """(logits, updated running statistics: empty in inference mode or without BatchNorm)."""
    f = _Forward(weights, training, running_variance, conventions)
    return family_of(definition).part("reference")(f, definition, x), f.statistics


def mean_cross_entropy(logits: np.ndarray, labels: np.ndarray) -> float:
    """Softmax cross-entropy from logits, averaged over the batch."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    return float(-log_probs[np.arange(len(labels)), labels].mean())


def training_loss(definition: ModelDefinition, weights: Weights, x: np.ndarray,
                  y: np.ndarray) -> float:
    """The training-mode loss one optimizer step minimises."""
    logits, _ = forward(definition, weights, x, training=True)
    return mean_cross_entropy(logits, y)


def directional_derivative(definition: ModelDefinition, weights: Weights,
                           direction: Weights, x: np.ndarray, y: np.ndarray,
                           step: float = 1e-6) -> float:
    """d loss / d t of loss(weights + t * direction) at t = 0, by central differences."""
    def moved(sign: float) -> Weights:
        return {k: np.asarray(v, np.float64) + sign * step * direction.get(k, 0.0)
                for k, v in weights.items()}

    return (training_loss(definition, moved(1.0), x, y)
            - training_loss(definition, moved(-1.0), x, y)) / (2 * step)
