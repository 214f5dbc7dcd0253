"""The model families in PyTorch (nn.Module), holding exactly the canonical weights.

Entry points: `build(definition, weights, conventions) -> nn.Module` and
`read_weights(model) -> Weights`. The ResNet takes NCHW float32 images (convert NHWC with
`images_to_nchw`), the sequence models int64 token ids (batch, sequence).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from dlbench.runner.models.conventions import CONVENTIONS, Conventions
from dlbench.runner.models.families import family_of
from dlbench.runner.models.definitions import (LstmDefinition, ModelDefinition, ResNetDefinition,
                                       TransformerDefinition, block_convs, final_channels,
                                       residual_blocks)
from dlbench.runner.models.weights import Weights


@dataclass(frozen=True)
class Binding:
    """Where a canonical weight lives: module attribute, layout change, rows of a packed one."""

    module: nn.Module
    attribute: str
    layout: str = "same"  # same | dense (transpose) | conv (HWIO -> OIHW)
    rows: slice | None = None


#: Layout -> the axes that turn a canonical array into PyTorch's (None: the same array).
_TORCH_AXES = {"same": None, "dense": (1, 0), "conv": (3, 2, 0, 1)}


def _to_torch(value: np.ndarray, layout: str) -> np.ndarray:
    axes = _TORCH_AXES[layout]
    return value if axes is None else value.transpose(axes)


def _to_canonical(value: np.ndarray, layout: str) -> np.ndarray:
    axes = _TORCH_AXES[layout]
    return value if axes is None else value.transpose(np.argsort(axes))


def _batchnorm(bindings: dict, prefix: str, channels: int, c: Conventions) -> nn.BatchNorm2d:
    bn = nn.BatchNorm2d(channels, eps=c.batchnorm_epsilon, momentum=c.batchnorm_momentum)
    for part, attribute in (("gamma", "weight"), ("beta", "bias"), ("mean", "running_mean"),
                            ("variance", "running_var")):
        bindings[f"{prefix}.{part}"] = Binding(bn, attribute)
    return bn


def _conv(bindings: dict, name: str, kernel: int, inputs: int, outputs: int,
          stride: int) -> nn.Conv2d:
    conv = nn.Conv2d(inputs, outputs, kernel, stride, padding=kernel // 2, bias=False)
    bindings[f"{name}.kernel"] = Binding(conv, "weight", "conv")
    return conv


def _dense(bindings: dict, name: str, inputs: int, outputs: int) -> nn.Linear:
    dense = nn.Linear(inputs, outputs)
    bindings[f"{name}.kernel"] = Binding(dense, "weight", "dense")
    bindings[f"{name}.bias"] = Binding(dense, "bias")
    return dense


class ResidualBlock(nn.Module):
    """conv-BN(-ReLU) main path plus identity or projection shortcut, then ReLU."""

    def __init__(self, main: list[nn.Module], shortcut: nn.Module) -> None:
        super().__init__()
        self.main, self.shortcut = nn.Sequential(*main), shortcut

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.main(x) + self.shortcut(x))


class ResNet(nn.Module):
    def __init__(self, d: ResNetDefinition, c: Conventions) -> None:
        super().__init__()
        b: dict[str, Binding] = {}
        stem = [_conv(b, "stem.conv", d.stem_kernel, d.channels, d.stem_width, d.stem_stride),
                _batchnorm(b, "stem.bn", d.stem_width, c), nn.ReLU()]
        if d.stem_pool:
            stem.append(nn.MaxPool2d(3, 2, padding=1))
        blocks = []
        for block in residual_blocks(d):
            main: list[nn.Module] = []
            convs = block_convs(block, d.block)
            for index, (name, kernel, inputs, outputs, stride) in enumerate(convs):
                main += [_conv(b, f"{block.name}.{name}", kernel, inputs, outputs, stride),
                         _batchnorm(b, f"{block.name}.bn{index}", outputs, c)]
                if index < len(convs) - 1:
                    main.append(nn.ReLU())
            shortcut: nn.Module = nn.Identity()
            if block.projection:
                shortcut = nn.Sequential(
                    _conv(b, f"{block.name}.shortcut.conv", 1, block.inputs, block.outputs,
                          block.stride),
                    _batchnorm(b, f"{block.name}.shortcut.bn", block.outputs, c))
            blocks.append(ResidualBlock(main, shortcut))
        self.features = nn.Sequential(*stem, *blocks)
        self.head = _dense(b, "head", final_channels(d), d.classes)
        self.bindings = b

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x).mean(dim=(2, 3)))


class TransformerClassifier(nn.Module):
    def __init__(self, d: TransformerDefinition, c: Conventions) -> None:
        super().__init__()
        b: dict[str, Binding] = {}
        self.tokens = nn.Embedding(d.vocabulary, d.width)
        self.positions = nn.Parameter(torch.zeros(d.sequence, d.width))
        self.norm = nn.LayerNorm(d.width, eps=c.layernorm_epsilon)
        b |= {"embed.tokens": Binding(self.tokens, "weight"),
              "embed.positions": Binding(self, "positions"),
              "embed.norm.gamma": Binding(self.norm, "weight"),
              "embed.norm.beta": Binding(self.norm, "bias")}
        gelu = "gelu" if not c.gelu_approximate else _gelu_tanh
        self.encoder = nn.ModuleList()
        for index in range(d.layers):
            layer = nn.TransformerEncoderLayer(
                d.width, d.heads, d.feed_forward, dropout=0.0, activation=gelu,
                layer_norm_eps=c.layernorm_epsilon, batch_first=True, norm_first=False)
            self.encoder.append(layer)
            b |= _encoder_bindings(f"layer{index}", layer, d.width)
        self.head = _dense(b, "head", d.width, d.classes)
        self.bindings = b

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.norm(self.tokens(tokens) + self.positions[:tokens.shape[1]])
        for layer in self.encoder:
            x = layer(x)
        return self.head(x.mean(dim=1))


def _gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return F.gelu(x, approximate="tanh")


def _encoder_bindings(p: str, layer: nn.TransformerEncoderLayer, w: int) -> dict:
    attention = layer.self_attn
    b = {}
    for index, part in enumerate(("query", "key", "value")):
        rows = slice(index * w, (index + 1) * w)
        b[f"{p}.attention.{part}.kernel"] = Binding(attention, "in_proj_weight", "dense", rows)
        b[f"{p}.attention.{part}.bias"] = Binding(attention, "in_proj_bias", "same", rows)
    b[f"{p}.attention.output.kernel"] = Binding(attention.out_proj, "weight", "dense")
    b[f"{p}.attention.output.bias"] = Binding(attention.out_proj, "bias")
    for name, module in (("attention_norm", layer.norm1), ("ff_norm", layer.norm2)):
        b[f"{p}.{name}.gamma"], b[f"{p}.{name}.beta"] = (Binding(module, "weight"),
                                                         Binding(module, "bias"))
    for name, module in (("ff1", layer.linear1), ("ff2", layer.linear2)):
        b[f"{p}.{name}.kernel"] = Binding(module, "weight", "dense")
        b[f"{p}.{name}.bias"] = Binding(module, "bias")
    return b


class LstmClassifier(nn.Module):
    def __init__(self, d: LstmDefinition, c: Conventions) -> None:
        super().__init__()
        self.tokens = nn.Embedding(d.vocabulary, d.embedding)
        self.lstm = nn.LSTM(d.embedding, d.width, num_layers=d.layers, batch_first=True)
        b = {"embed.tokens": Binding(self.tokens, "weight")}
        for layer in range(d.layers):
            b |= {f"lstm{layer}.kernel": Binding(self.lstm, f"weight_ih_l{layer}", "dense"),
                  f"lstm{layer}.recurrent_kernel": Binding(self.lstm, f"weight_hh_l{layer}",
                                                           "dense"),
                  f"lstm{layer}.bias": Binding(self.lstm, f"bias_ih_l{layer}")}
            second_bias = getattr(self.lstm, f"bias_hh_l{layer}")
            second_bias.requires_grad_(False)  # one bias per layer, as in Keras and TF
            with torch.no_grad():
                second_bias.zero_()
        self.head = _dense(b, "head", d.width, d.classes)
        self.bindings = b

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        outputs, _ = self.lstm(self.tokens(tokens))
        return self.head(outputs[:, -1])


def build(definition: ModelDefinition, weights: Weights,
          conventions: Conventions = CONVENTIONS) -> nn.Module:
    """The model holding exactly `weights` (converted from canonical layouts)."""
    if conventions.strided_padding != "symmetric":
        raise ValueError(f"PyTorch convolutions pad symmetrically; strided_padding="
                         f"{conventions.strided_padding!r} is for TensorFlow and Keras")
    model = family_of(definition).builder("pytorch")(definition, conventions)
    load_weights(model, weights)
    return model


@torch.no_grad()
def load_weights(model: nn.Module, weights: Weights) -> None:
    """Copy canonical weights into the model's parameters and buffers."""
    for name, binding in model.bindings.items():
        target = getattr(binding.module, binding.attribute)
        value = torch.from_numpy(np.ascontiguousarray(_to_torch(weights[name], binding.layout)))
        part = target[binding.rows] if binding.rows is not None else target
        part.copy_(value.to(part.dtype))


@torch.no_grad()
def read_weights(model: nn.Module) -> Weights:
    """The model's weights and running statistics in canonical names and layouts."""
    weights = {}
    for name, binding in model.bindings.items():
        value = getattr(binding.module, binding.attribute)
        if binding.rows is not None:
            value = value[binding.rows]
        weights[name] = _to_canonical(value.detach().float().cpu().numpy(), binding.layout).copy()
    return weights


def images_to_nchw(x: np.ndarray) -> np.ndarray:
    """Canonical NHWC images as the NCHW array PyTorch convolutions take."""
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))
