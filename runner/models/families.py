"""The model families, each declared once: its definition type and where each of its parts
lives (weight shapes, forward multiply-adds, the float64 reference forward parity checks
against, the conventions it is held to in words, and one builder per framework). Every
dispatch on a family reads its declaration here: dlbench.runner.models.weights, dlbench.runner.models.flops,
dlbench.runner.models.conventions.fairness_note, each dlbench.runner.models.<framework>.build and
dlbench.runner.models.reference_forward.

Parts are named "module:function" and imported when first used, so declaring a family
imports no framework. A framework's builder takes what that framework's `build` gives it:
(definition, conventions) for PyTorch and Keras, (definition, weights, conventions) for
TensorFlow, whose layouts are the canonical ones.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dlbench.runner.models.definitions import LstmDefinition, ResNetDefinition, TransformerDefinition


@dataclass(frozen=True)
class Family:
    """One model family: its definition type and the module:function of each part."""

    definition: type  # its *Definition dataclass, whose `family` names it
    shapes: str  # (definition) -> {canonical weight name: shape}, in a fixed order
    macs: str  # (definition) -> multiply-adds of one sample's forward pass
    reference: str  # (forward, definition, x) -> float64 logits (model_reference._Forward)
    notes: str  # (conventions) -> what was equalised across frameworks, in words
    builders: Mapping[str, str]  # framework -> its builder (see the module docstring)

    @property
    def name(self) -> str:
        return str(self.definition.family)

    def part(self, what: str) -> Callable[..., Any]:
        """The function `what` (shapes, macs, reference or notes) names."""
        return load(getattr(self, what))

    def builder(self, framework: str) -> Callable[..., Any]:
        """The function that builds this family's model in `framework`."""
        return load(self.builders[framework])


def load(target: str) -> Callable[..., Any]:
    """The function a "module:function" string names."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


#: Every model family, the ones dlbench.runner.models defines.
FAMILIES: list[Family] = [
    Family(ResNetDefinition, "dlbench.runner.models.weights:_resnet_shapes",
           "dlbench.runner.models.flops:_resnet_macs",
           "dlbench.runner.models.reference_forward:_resnet",
           "dlbench.runner.models.conventions:_resnet_notes",
           {"pytorch": "dlbench.runner.models.pytorch:ResNet",
            "tensorflow": "dlbench.runner.models.tensorflow:ResNet",
            "keras": "dlbench.runner.models.keras:_resnet"}),
    Family(TransformerDefinition, "dlbench.runner.models.weights:_transformer_shapes",
           "dlbench.runner.models.flops:_transformer_macs",
           "dlbench.runner.models.reference_forward:_transformer",
           "dlbench.runner.models.conventions:_transformer_notes",
           {"pytorch": "dlbench.runner.models.pytorch:TransformerClassifier",
            "tensorflow": "dlbench.runner.models.tensorflow:TransformerClassifier",
            "keras": "dlbench.runner.models.keras:_transformer"}),
    Family(LstmDefinition, "dlbench.runner.models.weights:_lstm_shapes",
           "dlbench.runner.models.flops:_lstm_macs",
           "dlbench.runner.models.reference_forward:_lstm",
           "dlbench.runner.models.conventions:_lstm_notes",
           {"pytorch": "dlbench.runner.models.pytorch:LstmClassifier",
            "tensorflow": "dlbench.runner.models.tensorflow:LstmClassifier",
            "keras": "dlbench.runner.models.keras:_lstm"}),
]


def family_of(definition: object) -> Family:
    """The declared family of a model definition; ValueError naming the declared ones."""
    for family in FAMILIES:
        if isinstance(definition, family.definition):
            return family
    raise ValueError(f"{type(definition).__name__} is no declared model family; declared: "
                     f"{', '.join(f.name for f in FAMILIES)}")
