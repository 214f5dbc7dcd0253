"""The model families in Keras 3 (functional keras.Model), on any backend, holding exactly
the canonical weights.

Entry points: `build(definition, weights, conventions) -> keras.Model` and
`read_weights(model, definition) -> Weights`. Inputs: NHWC float32 images or int32 token
ids (batch, sequence). Each layer is named by its canonical weight prefix, so a weight's
variable is found by name; Keras' layouts equal the canonical ones up to a reshape
(attention kernels are (width, heads, head width) in Keras).
"""

from __future__ import annotations

import keras
import numpy as np
from keras import layers

from dlbench.runner.models.conventions import CONVENTIONS, Conventions
from dlbench.runner.models.families import family_of
from dlbench.runner.models.definitions import (LstmDefinition, ModelDefinition, ResNetDefinition,
                                       TransformerDefinition, block_convs, residual_blocks)
from dlbench.runner.models.weights import Weights, parameter_shapes

#: Canonical weight suffix -> Keras variable attribute.
_ATTRIBUTES = {"mean": "moving_mean", "variance": "moving_variance"}


def _n(prefix: str) -> str:
    """A Keras layer name for a canonical prefix (the torch backend refuses dots)."""
    return prefix.replace(".", "_")


class PositionEmbedding(layers.Layer):
    """Adds one learned vector per position (no such layer in Keras core)."""

    def __init__(self, sequence: int, width: int, **options) -> None:
        super().__init__(**options)
        self.embeddings = self.add_weight(shape=(sequence, width), initializer="zeros",
                                          name="embeddings")

    def call(self, x):
        return x + self.embeddings[None, :keras.ops.shape(x)[1]]


def _conv_bn(x, conv: str, bn: str, kernel: int, filters: int, stride: int, c: Conventions):
    padding = "same"  # symmetric for an odd kernel at stride 1
    if stride > 1 and kernel > 1 and c.strided_padding == "symmetric":
        # 'same' at stride 2 pads bottom/right only: pad explicitly
        x = layers.ZeroPadding2D(kernel // 2, name=_n(f"{conv}.pad"))(x)
        padding = "valid"
    x = layers.Conv2D(filters, kernel, strides=stride, padding=padding, use_bias=False,
                      name=_n(conv))(x)
    return layers.BatchNormalization(momentum=c.keras_batchnorm_momentum,
                                     epsilon=c.batchnorm_epsilon, name=_n(bn))(x)


def _resnet(d: ResNetDefinition, c: Conventions) -> keras.Model:
    images = keras.Input(d.input_shape, name="images")
    x = _conv_bn(images, "stem.conv", "stem.bn", d.stem_kernel, d.stem_width, d.stem_stride, c)
    x = layers.ReLU()(x)
    if d.stem_pool:  # zero padding after ReLU equals -inf padding
        x = layers.MaxPooling2D(3, 2)(layers.ZeroPadding2D(1)(x))
    for block in residual_blocks(d):
        shortcut = x
        convs = block_convs(block, d.block)
        for index, (name, kernel, _, outputs, stride) in enumerate(convs):
            x = _conv_bn(x, f"{block.name}.{name}", f"{block.name}.bn{index}", kernel, outputs,
                         stride, c)
            if index < len(convs) - 1:
                x = layers.ReLU()(x)
        if block.projection:
            shortcut = _conv_bn(shortcut, f"{block.name}.shortcut.conv",
                                f"{block.name}.shortcut.bn", 1, block.outputs, block.stride, c)
        x = layers.ReLU()(layers.Add()([x, shortcut]))
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(images, layers.Dense(d.classes, name=_n("head"))(x), name=d.name)


def _layer_norm(name: str, c: Conventions) -> layers.LayerNormalization:
    return layers.LayerNormalization(epsilon=c.layernorm_epsilon, name=_n(name))


def _transformer(d: TransformerDefinition, c: Conventions) -> keras.Model:
    tokens = keras.Input((d.sequence,), dtype="int32", name="tokens")
    x = layers.Embedding(d.vocabulary, d.width, name=_n("embed.tokens"))(tokens)
    x = PositionEmbedding(d.sequence, d.width, name=_n("embed.positions"))(x)
    x = _layer_norm("embed.norm", c)(x)

    def gelu(v):
        return keras.activations.gelu(v, approximate=c.gelu_approximate)

    for index in range(d.layers):
        p = f"layer{index}"
        attended = layers.MultiHeadAttention(d.heads, d.width // d.heads,
                                             name=_n(f"{p}.attention"))(x, x)
        x = _layer_norm(f"{p}.attention_norm", c)(layers.Add()([x, attended]))
        hidden = layers.Dense(d.feed_forward, activation=gelu, name=_n(f"{p}.ff1"))(x)
        x = _layer_norm(f"{p}.ff_norm", c)(
            layers.Add()([x, layers.Dense(d.width, name=_n(f"{p}.ff2"))(hidden)]))
    x = layers.GlobalAveragePooling1D()(x)
    return keras.Model(tokens, layers.Dense(d.classes, name=_n("head"))(x), name=d.name)


def _lstm(d: LstmDefinition, c: Conventions) -> keras.Model:
    tokens = keras.Input((d.sequence,), dtype="int32", name="tokens")
    x = layers.Embedding(d.vocabulary, d.embedding, name=_n("embed.tokens"))(tokens)
    for index in range(d.layers):
        x = layers.LSTM(d.width, return_sequences=index < d.layers - 1,
                        name=_n(f"lstm{index}"))(x)
    return keras.Model(tokens, layers.Dense(d.classes, name=_n("head"))(x), name=d.name)


def build(definition: ModelDefinition, weights: Weights,
          conventions: Conventions = CONVENTIONS) -> keras.Model:
    """The model holding exactly `weights`."""
    model = family_of(definition).builder("keras")(definition, conventions)
    for name, value in weights.items():
        variable = _variable(model, name)
        variable.assign(np.reshape(value, variable.shape))
    return model


def _variable(model: keras.Model, name: str):
    """The Keras variable holding canonical weight `name`."""
    if name.startswith("embed.") and not name.startswith("embed.norm"):
        return model.get_layer(_n(name)).embeddings
    prefix, part = name.rsplit(".", 1)
    if ".attention." in prefix:
        layer_name, sublayer = prefix.rsplit(".", 1)
        layer = getattr(model.get_layer(_n(layer_name)), f"{sublayer}_dense")
    else:
        layer = model.get_layer(_n(prefix))
    if isinstance(layer, layers.LSTM):
        layer = layer.cell
    return getattr(layer, _ATTRIBUTES.get(part, part))


def read_weights(model: keras.Model, definition: ModelDefinition) -> Weights:
    """The model's weights and running statistics in canonical names and layouts."""
    return {name: np.array(keras.ops.convert_to_numpy(_variable(model, name)),
                           copy=True).reshape(shape)
            for name, shape in parameter_shapes(definition).items()}
