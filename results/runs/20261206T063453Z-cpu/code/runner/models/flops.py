"""Forward FLOPs per sample, counted from a model's layers.

Formula: 2 x multiply-accumulates (MACs) of every matrix product: convolutions
(out height x out width x k x k x in x out), dense layers (in x out per row), the four
attention projections and the two attention products (query x key: sequence^2 x width;
weights x value: the same), and the LSTM gate products (4 x width x (in + width) per step).
Ignored (a few percent at most at these sizes): BatchNorm, LayerNorm, activations, softmax,
pooling, residual additions, bias additions, embedding lookups and the loss. A training
step costs about 3x the forward FLOPs (forward, and two products per layer backward).
"""

from __future__ import annotations

from dlbench.runner.models.definitions import (LstmDefinition, ModelDefinition, ResNetDefinition,
                                       TransformerDefinition, block_convs, final_channels,
                                       residual_blocks)

#: Training FLOPs per forward FLOP (backward counted as twice the forward).
TRAINING_FACTOR = 3


def _conv_output(size: int, kernel: int, stride: int) -> int:
    return (size + 2 * (kernel // 2) - kernel) // stride + 1


def _resnet_macs(d: ResNetDefinition) -> int:
    size = _conv_output(d.image_size, d.stem_kernel, d.stem_stride)
    macs = size * size * d.stem_kernel ** 2 * d.channels * d.stem_width
    if d.stem_pool:
        size = _conv_output(size, 3, 2)
    for block in residual_blocks(d):
        inner = size
        for _, kernel, inputs, outputs, stride in block_convs(block, d.block):
            inner = _conv_output(inner, kernel, stride)
            macs += inner * inner * kernel ** 2 * inputs * outputs
        if block.projection:
            macs += inner * inner * block.inputs * block.outputs
        size = inner
    return macs + final_channels(d) * d.classes


def _transformer_macs(d: TransformerDefinition) -> int:
    per_token = 4 * d.width * d.width + 2 * d.width * d.feed_forward
    attention = 2 * d.sequence * d.sequence * d.width
    return d.layers * (d.sequence * per_token + attention) + d.width * d.classes


def _lstm_macs(d: LstmDefinition) -> int:
    macs, inputs = 0, d.embedding
    for _ in range(d.layers):
        macs += d.sequence * 4 * d.width * (inputs + d.width)
        inputs = d.width
    return macs + d.width * d.classes


def forward_flops(definition: ModelDefinition) -> int:
    """Forward FLOPs of one sample (2 x MACs of the matrix products, its family's macs)."""
    from dlbench.runner.models.families import family_of  # here: the families name this module's parts

    return 2 * family_of(definition).part("macs")(definition)


def dense_flops(widths: list[int]) -> int:
    """Forward FLOPs of a stack of dense layers of these widths (input first)."""
    return 2 * sum(a * b for a, b in zip(widths, widths[1:]))


def same_conv_pool_flops(height: int, width: int, channels: list[int]) -> int:
    """Forward FLOPs of 3x3 'same' convs, each followed by a 2x2 max-pool."""
    flops = 0
    for inputs, outputs in zip(channels, channels[1:]):
        flops += 2 * height * width * 9 * inputs * outputs
        height, width = height // 2, width // 2
    return flops
