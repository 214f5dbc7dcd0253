"""A float64 NumPy implementation of the workload models and one SGD step: the yardstick.

Layouts are the canonical ones of dlbench.runner.workloads.catalog: images NHWC, conv kernels
(height, width, in, out), dense kernels (in, out). A conv layer is a 3x3 'same'
cross-correlation, ReLU and 2x2 max-pool; dense layers are followed by ReLU except the
last; conv features are flattened in NHWC order before the first dense layer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dlbench.runner.workloads.catalog import Layer


@dataclass(frozen=True)
class _Trace:
    """What the backward pass needs from the forward pass of one layer."""

    kind: str
    inputs: np.ndarray  # the layer's input (padded for conv)
    pre: np.ndarray  # pre-activation output
    pooled_mask: np.ndarray | None  # where each max-pool window took its maximum
    relu: bool


def _patches(padded: np.ndarray, height: int, width: int) -> np.ndarray:
    """(N, H, W, 3, 3, C) windows of a 1-padded NHWC batch."""
    rows = [[padded[:, i:i + height, j:j + width, :] for j in range(3)] for i in range(3)]
    return np.stack([np.stack(row, axis=3) for row in rows], axis=3)


def _max_pool(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """2x2 stride-2 max-pool and a one-hot mask of the first maximum of each window."""
    n, h, w, c = x.shape
    windows = x[:, :h // 2 * 2, :w // 2 * 2, :].reshape(n, h // 2, 2, w // 2, 2, c)
    windows = windows.transpose(0, 1, 3, 5, 2, 4).reshape(n, h // 2, w // 2, c, 4)
    first = windows.argmax(axis=-1)
    mask = np.zeros_like(windows)
    np.put_along_axis(mask, first[..., None], 1.0, axis=-1)
    return windows.max(axis=-1), mask


def _unpool(grad: np.ndarray, mask: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    n, h, w, c = shape
    spread = (mask * grad[..., None]).reshape(n, h // 2, w // 2, c, 2, 2)
    out = np.zeros(shape)
    out[:, :h // 2 * 2, :w // 2 * 2, :] = spread.transpose(0, 1, 4, 2, 5, 3).reshape(
        n, h // 2 * 2, w // 2 * 2, c)
    return out


def _forward(layers: list[Layer], x: np.ndarray) -> tuple[np.ndarray, list[_Trace]]:
    traces: list[_Trace] = []
    a = np.asarray(x, dtype=np.float64)
    last = len(layers) - 1
    for index, layer in enumerate(layers):
        kernel, bias = layer.kernel.astype(np.float64), layer.bias.astype(np.float64)
        if layer.kind == "conv":
            padded = np.pad(a, ((0, 0), (1, 1), (1, 1), (0, 0)))
            pre = np.einsum("nhwijc,ijco->nhwo", _patches(padded, a.shape[1], a.shape[2]),
                            kernel) + bias
            a, mask = _max_pool(np.maximum(pre, 0.0))
            traces.append(_Trace("conv", padded, pre, mask, True))
            continue
        a = a.reshape(len(a), -1)
        pre = a @ kernel + bias
        traces.append(_Trace("dense", a, pre, None, index != last))
        a = np.maximum(pre, 0.0) if index != last else pre
    return a, traces


def forward(layers: list[Layer], x: np.ndarray) -> np.ndarray:
    """Logits of the model holding `layers` for inputs `x`, in float64."""
    return _forward(layers, x)[0]


def gradients(layers: list[Layer], x: np.ndarray, y: np.ndarray) -> list[Layer]:
    """Gradients of the mean softmax cross-entropy with respect to every kernel and bias."""
    logits, traces = _forward(layers, x)
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    grad = shifted / shifted.sum(axis=1, keepdims=True)
    grad[np.arange(len(y)), y] -= 1.0
    grad /= len(y)
    result: list[Layer] = []
    for layer, trace in zip(reversed(layers), reversed(traces), strict=True):
        kernel = layer.kernel.astype(np.float64)
        if trace.kind == "dense":
            if trace.relu:
                grad = grad * (trace.pre > 0)
            result.append(Layer("dense", trace.inputs.T @ grad, grad.sum(axis=0)))
            grad = grad @ kernel.T
            continue
        grad = grad.reshape(trace.pre.shape[0], trace.pre.shape[1] // 2,
                            trace.pre.shape[2] // 2, trace.pre.shape[3])
        grad = _unpool(grad, trace.pooled_mask, trace.pre.shape) * (trace.pre > 0)
        height, width = trace.pre.shape[1:3]
        patches = _patches(trace.inputs, height, width)
        result.append(Layer("conv", np.einsum("nhwijc,nhwo->ijco", patches, grad),
                            grad.sum(axis=(0, 1, 2))))
        grad = _conv_input_grad(grad, kernel, trace.inputs.shape)
    return result[::-1]


def _conv_input_grad(grad: np.ndarray, kernel: np.ndarray, padded_shape: tuple) -> np.ndarray:
    """Gradient with respect to the (unpadded) input of a 3x3 'same' convolution."""
    padded = np.zeros(padded_shape)
    height, width = grad.shape[1:3]
    for i in range(3):
        for j in range(3):
            padded[:, i:i + height, j:j + width, :] += grad @ kernel[i, j].T
    return padded[:, 1:-1, 1:-1, :]


def sgd_updates(layers: list[Layer], x: np.ndarray, y: np.ndarray,
                learning_rate: float) -> list[Layer]:
    """The change to every weight made by the first SGD step (momentum buffers start at zero,
    so the first step of SGD with momentum is -learning_rate * gradient)."""
    return [Layer(g.kind, -learning_rate * g.kernel, -learning_rate * g.bias)
            for g in gradients(layers, x, y)]
