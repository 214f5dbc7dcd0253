"""The one seeded set of initial weights of a model, in canonical layouts and names.

Drawn once in NumPy and transferred into every framework, never re-drawn there. Kernels are
Glorot-uniform (activations stay of order one, so a changed convention shows in the
outputs), biases and BatchNorm/LayerNorm shifts zero except an LSTM's forget-gate bias,
which is one (Keras' unit_forget_bias, Jozefowicz et al. 2015: the cell remembers from the
first step), scales one, running statistics mean 0 and variance 1, embeddings standard
normal.
"""

from __future__ import annotations

import numpy as np

from dlbench.runner.models.definitions import (LstmDefinition, ModelDefinition, ResNetDefinition,
                                       TransformerDefinition, block_convs, final_channels,
                                       residual_blocks)

Weights = dict[str, np.ndarray]

#: Suffixes of BatchNorm running statistics: state updated by the forward pass, not trained.
RUNNING_STATISTICS = (".mean", ".variance")


def parameter_shapes(definition: ModelDefinition) -> dict[str, tuple[int, ...]]:
    """Every canonical weight name and its shape, in a fixed order (its family's shapes)."""
    from dlbench.runner.models.families import family_of  # here: the families name this module's parts

    return family_of(definition).part("shapes")(definition)


def _batchnorm(prefix: str, channels: int) -> dict[str, tuple[int, ...]]:
    return {f"{prefix}.{part}": (channels,) for part in ("gamma", "beta", "mean", "variance")}


def _resnet_shapes(d: ResNetDefinition) -> dict[str, tuple[int, ...]]:
    k = d.stem_kernel
    shapes = {"stem.conv.kernel": (k, k, d.channels, d.stem_width),
              **_batchnorm("stem.bn", d.stem_width)}
    for block in residual_blocks(d):
        for index, (name, kernel, inputs, outputs, _) in enumerate(block_convs(block, d.block)):
            shapes[f"{block.name}.{name}.kernel"] = (kernel, kernel, inputs, outputs)
            shapes |= _batchnorm(f"{block.name}.bn{index}", outputs)
        if block.projection:
            shapes[f"{block.name}.shortcut.conv.kernel"] = (1, 1, block.inputs, block.outputs)
            shapes |= _batchnorm(f"{block.name}.shortcut.bn", block.outputs)
    return shapes | {"head.kernel": (final_channels(d), d.classes), "head.bias": (d.classes,)}


def _transformer_shapes(d: TransformerDefinition) -> dict[str, tuple[int, ...]]:
    w = d.width
    shapes = {"embed.tokens": (d.vocabulary, w), "embed.positions": (d.sequence, w),
              "embed.norm.gamma": (w,), "embed.norm.beta": (w,)}
    for layer in range(d.layers):
        p = f"layer{layer}"
        for part in ("query", "key", "value", "output"):
            shapes |= {f"{p}.attention.{part}.kernel": (w, w), f"{p}.attention.{part}.bias": (w,)}
        shapes |= {f"{p}.attention_norm.gamma": (w,), f"{p}.attention_norm.beta": (w,),
                   f"{p}.ff1.kernel": (w, d.feed_forward), f"{p}.ff1.bias": (d.feed_forward,),
                   f"{p}.ff2.kernel": (d.feed_forward, w), f"{p}.ff2.bias": (w,),
                   f"{p}.ff_norm.gamma": (w,), f"{p}.ff_norm.beta": (w,)}
    return shapes | {"head.kernel": (w, d.classes), "head.bias": (d.classes,)}


def _lstm_shapes(d: LstmDefinition) -> dict[str, tuple[int, ...]]:
    shapes = {"embed.tokens": (d.vocabulary, d.embedding)}
    inputs = d.embedding
    for layer in range(d.layers):
        shapes |= {f"lstm{layer}.kernel": (inputs, 4 * d.width),
                   f"lstm{layer}.recurrent_kernel": (d.width, 4 * d.width),
                   f"lstm{layer}.bias": (4 * d.width,)}
        inputs = d.width
    return shapes | {"head.kernel": (d.width, d.classes), "head.bias": (d.classes,)}


def initial_weights(definition: ModelDefinition, seed: int = 0) -> Weights:
    """The model's initial weights (float32), the same for every framework."""
    rng = np.random.default_rng([seed, 1000])
    weights: Weights = {}
    for name, shape in parameter_shapes(definition).items():
        weights[name] = _draw(rng, name, shape).astype(np.float32)
        if name.startswith("lstm") and name.endswith(".bias"):
            weights[name][shape[0] // 4:shape[0] // 2] = 1.0  # gates i, f, c, o: f is second
    return weights


def _draw(rng: np.random.Generator, name: str, shape: tuple[int, ...]) -> np.ndarray:
    last = name.rsplit(".", 1)[-1]
    if last in ("gamma", "variance"):
        return np.ones(shape)
    if last in ("beta", "bias", "mean"):
        return np.zeros(shape)
    if name.startswith("embed."):
        return rng.normal(scale=1.0, size=shape)
    receptive = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    fan_in, fan_out = shape[-2] * receptive, shape[-1] * receptive
    if last == "recurrent_kernel" or (name.startswith("lstm") and last == "kernel"):
        fan_out = shape[-1] // 4  # each of the four gates is its own (in, width) kernel
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=shape)


def parameter_count(definition: ModelDefinition) -> int:
    """Trainable parameters (BatchNorm running statistics excluded)."""
    return sum(int(np.prod(shape)) for name, shape in parameter_shapes(definition).items()
               if not name.endswith(RUNNING_STATISTICS))


def trainable(name: str) -> bool:
    """Whether a canonical weight is trained (running statistics are not)."""
    return not name.endswith(RUNNING_STATISTICS)
