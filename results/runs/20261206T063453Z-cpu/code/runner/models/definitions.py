"""Framework-neutral descriptions of the model families: what each layer is, nothing a
framework decides."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal


@dataclass(frozen=True)
class ResNetDefinition:
    """A residual CNN with BatchNorm: a stem, stages of residual blocks, global average
    pooling and a dense classifier. `stages` holds (blocks, width, first stride)."""

    family: ClassVar[str] = "resnet"
    name: str
    image_size: int
    stages: tuple[tuple[int, int, int], ...]
    block: Literal["basic", "bottleneck"] = "basic"
    stem_kernel: int = 3
    stem_stride: int = 1
    stem_width: int = 16
    stem_pool: bool = False  # 3x3 stride-2 max-pool after the stem (ImageNet ResNets)
    channels: int = 3
    classes: int = 10

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.image_size, self.image_size, self.channels)


@dataclass(frozen=True)
class TransformerDefinition:
    """A post-LayerNorm (BERT-style) Transformer encoder classifier: token + position
    embeddings, LayerNorm, `layers` blocks of self-attention and a GELU feed-forward, mean
    pooling over the sequence and a dense classifier."""

    family: ClassVar[str] = "transformer"
    name: str
    vocabulary: int
    sequence: int
    width: int
    heads: int
    layers: int
    feed_forward: int
    classes: int = 10

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.sequence,)


@dataclass(frozen=True)
class LstmDefinition:
    """An LSTM sequence classifier: token embedding, stacked LSTM layers, the last layer's
    final hidden state into a dense classifier."""

    family: ClassVar[str] = "lstm"
    name: str
    vocabulary: int
    sequence: int
    embedding: int
    width: int
    layers: int
    classes: int = 10

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.sequence,)


ModelDefinition = ResNetDefinition | TransformerDefinition | LstmDefinition


@dataclass(frozen=True)
class ResidualBlock:
    """One residual block of a ResNet, with its canonical weight-name prefix."""

    name: str
    inputs: int
    width: int
    outputs: int
    stride: int

    @property
    def projection(self) -> bool:
        """A 1x1 conv + BatchNorm shortcut where the shape changes, identity otherwise."""
        return self.stride != 1 or self.inputs != self.outputs


def residual_blocks(definition: ResNetDefinition) -> list[ResidualBlock]:
    """The blocks in order; the stride is on the first block of a stage (on the 3x3 conv)."""
    expansion = 4 if definition.block == "bottleneck" else 1
    blocks, inputs = [], definition.stem_width
    for stage, (count, width, stride) in enumerate(definition.stages):
        for index in range(count):
            blocks.append(ResidualBlock(f"stage{stage}.block{index}", inputs, width,
                                        width * expansion, stride if index == 0 else 1))
            inputs = width * expansion
    return blocks


def final_channels(definition: ResNetDefinition) -> int:
    """Channels entering the classifier."""
    blocks = residual_blocks(definition)
    return blocks[-1].outputs if blocks else definition.stem_width


def block_convs(block: ResidualBlock, kind: str) -> list[tuple[str, int, int, int, int]]:
    """(name, kernel, inputs, outputs, stride) of a block's main-path convs."""
    if kind == "basic":
        return [("conv0", 3, block.inputs, block.width, block.stride),
                ("conv1", 3, block.width, block.outputs, 1)]
    return [("conv0", 1, block.inputs, block.width, 1),
            ("conv1", 3, block.width, block.width, block.stride),
            ("conv2", 1, block.width, block.outputs, 1)]


#: Fewest input channels any definition gives a strided 1x1 conv (a projection shortcut):
#: torch 2.13.0+cpu's oneDNN (v3.12) AVX2 1x1 backward-weights kernel corrupts the heap
#: (glibc abort or segfault) on a channels-last input with fewer channels than its 8-wide
#: block at stride 2, which is how Keras on torch runs an NHWC model.
MIN_STRIDED_1X1_INPUTS = 8

#: The named sizes: CPU profile, GPU profile, and tiny ones for the parity tests.
RESNET20 = ResNetDefinition("resnet-20", 32, ((3, 16, 1), (3, 32, 2), (3, 64, 2)))
RESNET50 = ResNetDefinition("resnet-50", 224, ((3, 64, 1), (4, 128, 2), (6, 256, 2), (3, 512, 2)),
                            block="bottleneck", stem_kernel=7, stem_stride=2, stem_width=64,
                            stem_pool=True, classes=1000)
#: No strided 1x1 conv with fewer than 8 input channels (see MIN_STRIDED_1X1_INPUTS).
RESNET_TINY = ResNetDefinition("resnet-tiny", 8, ((1, 8, 1), (1, 16, 2)), stem_width=8)
RESNET_BOTTLENECK_TINY = ResNetDefinition("resnet-bottleneck-tiny", 16, ((1, 2, 1), (1, 4, 2)),
                                          block="bottleneck", stem_kernel=7, stem_stride=2,
                                          stem_width=4, stem_pool=True)
BERT_MINI = TransformerDefinition("bert-mini", 8192, 128, 256, 4, 4, 1024)
BERT_BASE = TransformerDefinition("bert-base", 30522, 128, 768, 12, 12, 3072)
TRANSFORMER_TINY = TransformerDefinition("transformer-tiny", 50, 6, 16, 2, 2, 32)
LSTM_CPU = LstmDefinition("lstm-256x1", 8192, 64, 128, 256, 1)
LSTM_GPU = LstmDefinition("lstm-256x2", 8192, 128, 256, 256, 2)
LSTM_TINY = LstmDefinition("lstm-tiny", 50, 5, 6, 8, 2)
