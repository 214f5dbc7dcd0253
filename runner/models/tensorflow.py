"""The model families in TensorFlow's own API: tf.Module holding tf.Variables by canonical
name, written with TensorFlow's own ops (no Keras): fused batch norm, a scanned LSTM, and
attention from tf.matmul and tf.nn.softmax (TensorFlow has no attention op outside Keras).

Entry points: `build(definition, weights, conventions) -> tf.Module` and
`read_weights(model) -> Weights`. Call as `model(x, training=...)`: NHWC float32 images or
int token ids (batch, sequence). In training mode the ResNet normalises with batch
statistics and updates its running statistics (PyTorch's unbiased running variance, which
the fused op computes itself). Training runs inside the trainer's tf.function.

Built at a compute dtype (bfloat16 or float16 for mixed precision), the variables stay
float32 and each trained weight is cast to it where it is used; batch and layer
normalisation compute their statistics in float32 (as Keras' mixed policy and PyTorch's
autocast do), and the logits are float32.
"""

from __future__ import annotations

import math

import numpy as np
import tensorflow as tf

from dlbench.runner.models.conventions import CONVENTIONS, Conventions
from dlbench.runner.models.families import family_of
from dlbench.runner.models.definitions import ModelDefinition, block_convs, residual_blocks
from dlbench.runner.models.weights import Weights, trainable


class CanonicalModule(tf.Module):
    """Variables named by their canonical weight names; running statistics not trainable.
    `self[name]` is a trained weight at the compute dtype; `self.weights[name]` the float32
    variable itself."""

    def __init__(self, definition: ModelDefinition, weights: Weights, c: Conventions,
                 compute_dtype: tf.DType = tf.float32) -> None:
        super().__init__(name=definition.family.replace("-", "_"))  # tf wants an identifier
        self.definition, self.conventions = definition, c
        self.compute_dtype = tf.as_dtype(compute_dtype)
        self.weights = {name: tf.Variable(value, trainable=trainable(name),
                                          name=name.replace(".", "_"))
                        for name, value in weights.items()}

    def __getitem__(self, name: str) -> tf.Variable | tf.Tensor:
        variable = self.weights[name]
        if self.compute_dtype == tf.float32 or not trainable(name):
            return variable
        return tf.cast(variable, self.compute_dtype)

    def computing(self, x: tf.Tensor) -> tf.Tensor:
        """Floating-point input `x` at the compute dtype."""
        return tf.cast(x, self.compute_dtype)


class ResNet(CanonicalModule):
    def __call__(self, x: tf.Tensor, training: bool = False) -> tf.Tensor:
        d = self.definition
        x = self.computing(x)
        x = tf.nn.relu(self._conv_bn(x, "stem.conv", "stem.bn", d.stem_stride, training))
        if d.stem_pool:  # zero padding after ReLU equals -inf padding
            x = tf.nn.max_pool2d(tf.pad(x, [[0, 0], [1, 1], [1, 1], [0, 0]]), 3, 2, "VALID")
        for block in residual_blocks(d):
            shortcut = x
            convs = block_convs(block, d.block)
            for index, (name, _, _, _, stride) in enumerate(convs):
                x = self._conv_bn(x, f"{block.name}.{name}", f"{block.name}.bn{index}", stride,
                                  training)
                if index < len(convs) - 1:
                    x = tf.nn.relu(x)
            if block.projection:
                shortcut = self._conv_bn(shortcut, f"{block.name}.shortcut.conv",
                                         f"{block.name}.shortcut.bn", block.stride, training)
            x = tf.nn.relu(x + shortcut)
        pooled = tf.reduce_mean(x, axis=[1, 2])
        return tf.cast(tf.matmul(pooled, self["head.kernel"]) + self["head.bias"], tf.float32)

    def _conv_bn(self, x: tf.Tensor, conv: str, bn: str, stride: int,
                 training: bool) -> tf.Tensor:
        kernel = self[f"{conv}.kernel"]
        pad = int(kernel.shape[0]) // 2  # explicit symmetric padding, as PyTorch's padding=k//2
        padding = [[0, 0], [pad, pad], [pad, pad], [0, 0]]
        if stride > 1 and self.conventions.strided_padding == "same":
            padding = "SAME"
        x = tf.nn.conv2d(x, kernel, strides=stride, padding=padding)
        return self._batchnorm(x, bn, training)

    def _batchnorm(self, x: tf.Tensor, bn: str, training: bool) -> tf.Tensor:
        """TensorFlow's fused batch norm; in training it normalises with the batch statistics
        and returns the running ones moved by the momentum (its `exponential_avg_factor`,
        PyTorch's meaning, with the unbiased batch variance); its scale, offset and
        statistics are float32 at any compute dtype (the fused op's own contract)."""
        c = self.conventions
        mean, variance = self[f"{bn}.mean"], self[f"{bn}.variance"]
        y, running_mean, running_variance = tf.compat.v1.nn.fused_batch_norm(
            x, self.weights[f"{bn}.gamma"], self.weights[f"{bn}.beta"], mean=mean,
            variance=variance,
            epsilon=c.batchnorm_epsilon, is_training=training,
            exponential_avg_factor=c.batchnorm_momentum if training else 1.0)
        if training:
            mean.assign(running_mean)
            variance.assign(running_variance)
        return y


class TransformerClassifier(CanonicalModule):
    def __call__(self, tokens: tf.Tensor, training: bool = False) -> tf.Tensor:
        d = self.definition
        x = tf.gather(self["embed.tokens"], tokens) + self["embed.positions"][:tf.shape(tokens)[1]]
        x = self._norm(x, "embed.norm")
        for index in range(d.layers):
            p = f"layer{index}"
            x = self._norm(x + self._attention(x, p), f"{p}.attention_norm")
            hidden = tf.nn.gelu(self._dense(x, f"{p}.ff1"),
                                approximate=self.conventions.gelu_approximate)
            x = self._norm(x + self._dense(hidden, f"{p}.ff2"), f"{p}.ff_norm")
        return tf.cast(self._dense(tf.reduce_mean(x, axis=1), "head"), tf.float32)

    def _dense(self, x: tf.Tensor, name: str) -> tf.Tensor:
        return tf.tensordot(x, self[f"{name}.kernel"], axes=1) + self[f"{name}.bias"]

    def _norm(self, x: tf.Tensor, name: str) -> tf.Tensor:
        """Layer normalisation, computed in float32."""
        x = tf.cast(x, tf.float32)
        mean, variance = tf.nn.moments(x, axes=[-1], keepdims=True)
        return self.computing(tf.nn.batch_normalization(
            x, mean, variance, self.weights[f"{name}.beta"], self.weights[f"{name}.gamma"],
            self.conventions.layernorm_epsilon))

    def _attention(self, x: tf.Tensor, p: str) -> tf.Tensor:
        d = self.definition
        head_width = d.width // d.heads

        def heads(part: str) -> tf.Tensor:  # (batch, heads, sequence, head width)
            y = self._dense(x, f"{p}.attention.{part}")
            y = tf.reshape(y, [tf.shape(x)[0], -1, d.heads, head_width])
            return tf.transpose(y, [0, 2, 1, 3])

        scores = tf.matmul(heads("query"), heads("key"), transpose_b=True)
        weights = tf.nn.softmax(scores / math.sqrt(head_width), axis=-1)
        context = tf.transpose(tf.matmul(weights, heads("value")), [0, 2, 1, 3])
        context = tf.reshape(context, [tf.shape(x)[0], -1, d.width])
        return self._dense(context, f"{p}.attention.output")


class LstmClassifier(CanonicalModule):
    def __call__(self, tokens: tf.Tensor, training: bool = False) -> tf.Tensor:
        d = self.definition
        x = tf.gather(self["embed.tokens"], tokens)
        for layer in range(d.layers):
            x = self._lstm(x, f"lstm{layer}")
        return tf.cast(tf.matmul(x[:, -1], self["head.kernel"]) + self["head.bias"],
                       tf.float32)

    def _lstm(self, x: tf.Tensor, name: str) -> tf.Tensor:
        """One LSTM layer as a tf.scan over time (a while loop in the graph, which XLA
        compiles; TensorFlow's fused BlockLSTM op has no XLA kernel and was slower on the
        CPU); the input projection of every step is one matrix product before the loop."""
        kernel, recurrent, bias = (self[f"{name}.{part}"]
                                   for part in ("kernel", "recurrent_kernel", "bias"))
        inputs = tf.transpose(tf.tensordot(x, kernel, axes=1) + bias, [1, 0, 2])  # time major
        zeros = tf.zeros([tf.shape(x)[0], self.definition.width], x.dtype)

        def step(state: tuple[tf.Tensor, tf.Tensor], projected: tf.Tensor):
            hidden, cell = state
            i, f, g, o = tf.split(projected + tf.matmul(hidden, recurrent), 4, axis=-1)
            cell = tf.sigmoid(f) * cell + tf.sigmoid(i) * tf.tanh(g)
            return tf.sigmoid(o) * tf.tanh(cell), cell

        hidden, _ = tf.scan(step, inputs, initializer=(zeros, zeros))
        return tf.transpose(hidden, [1, 0, 2])


def build(definition: ModelDefinition, weights: Weights, conventions: Conventions = CONVENTIONS,
          compute_dtype: tf.DType = tf.float32) -> CanonicalModule:
    """The model holding exactly `weights` (TensorFlow's layouts are the canonical ones),
    computing at `compute_dtype`."""
    return family_of(definition).builder("tensorflow")(definition, weights, conventions,
                                                       compute_dtype)


def read_weights(model: CanonicalModule) -> Weights:
    """The model's weights and running statistics in canonical names and layouts."""
    return {name: np.array(variable.numpy(), copy=True) for name, variable in model.weights.items()}
