"""The settings that silently differ between frameworks, made equal, and the fairness note
that says so for each model family."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dlbench.core.declarations.systems import frameworks

from dlbench.runner.models.definitions import ModelDefinition
from dlbench.runner.models.weights import Weights


@dataclass(frozen=True)
class Conventions:
    """Numerical settings every builder applies; the defaults are the equalised ones."""

    batchnorm_epsilon: float = 1e-5  # PyTorch's default; Keras' default is 1e-3
    batchnorm_momentum: float = 0.1  # weight of the new batch statistic (PyTorch's meaning)
    layernorm_epsilon: float = 1e-5  # PyTorch's default; Keras' default is 1e-3
    gelu_approximate: bool = False  # exact erf GELU; tanh approximation when True
    #: symmetric (k//2 each side) or TensorFlow's "same" (stride 2: bottom/right only)
    strided_padding: str = "symmetric"

    @property
    def keras_batchnorm_momentum(self) -> float:
        """Keras' momentum is the weight of the old running value: 1 - PyTorch's."""
        return 1.0 - self.batchnorm_momentum


CONVENTIONS = Conventions()

#: How each framework computes the running variance (not settable in PyTorch or Keras), as
#: each framework's declaration says (dlbench.core.declarations.systems).
RUNNING_VARIANCE = {name: framework.running_variance for name, framework in frameworks().items()}

#: One-setting deviations a test applies to one framework to prove parity catches it.
PERTURBATIONS = ("gelu-tanh", "batchnorm-momentum", "batchnorm-epsilon", "layernorm-epsilon",
                 "same-padding", "lstm-gate-order")


def perturbed(conventions: Conventions, perturbation: str) -> Conventions:
    """The conventions with one setting changed (weight-layout perturbations leave them)."""
    if perturbation == "gelu-tanh":
        return replace(conventions, gelu_approximate=True)
    if perturbation == "batchnorm-momentum":  # Keras' default 0.99, read as PyTorch's meaning
        return replace(conventions, batchnorm_momentum=0.01)
    if perturbation == "batchnorm-epsilon":  # Keras' default
        return replace(conventions, batchnorm_epsilon=1e-3)
    if perturbation == "layernorm-epsilon":  # Keras' default
        return replace(conventions, layernorm_epsilon=1e-3)
    if perturbation == "same-padding":  # padding="same" on the stride-2 convs
        return replace(conventions, strided_padding="same")
    return conventions


def perturbed_weights(weights: Weights, perturbation: str) -> Weights:
    """Weights as a framework with another LSTM gate order (i, f, o, c) would read them."""
    if perturbation != "lstm-gate-order":
        return weights
    changed = dict(weights)
    for name, value in weights.items():
        if name.startswith("lstm"):
            i, f, c, o = np.split(value, 4, axis=-1)
            changed[name] = np.concatenate([i, f, o, c], axis=-1)
    return changed


def check_perturbation(perturbation: str) -> None:
    """ValueError naming the valid perturbations for an unknown one."""
    if perturbation and perturbation not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation {perturbation!r}; valid: "
                         f"{', '.join(PERTURBATIONS)}")


def fairness_note(definition: ModelDefinition, conventions: Conventions = CONVENTIONS) -> str:
    """What was equalised for this model, in words, for the fairness manifest."""
    from dlbench.runner.models.families import family_of  # here: the families name this module's notes

    common = ("same canonical initial weights transferred into every framework (NHWC images, "
              "HWIO conv kernels, (in, out) dense kernels, converted on load)")
    return "; ".join([common, *family_of(definition).part("notes")(conventions)])


def _resnet_notes(conventions: Conventions) -> list[str]:
    """What was equalised for a ResNet."""
    return [f"BatchNorm epsilon {conventions.batchnorm_epsilon:g} everywhere (Keras' default "
            f"is 1e-3); momentum {conventions.batchnorm_momentum:g} in PyTorch's meaning "
            f"(weight of the new batch statistic) = Keras momentum "
            f"{conventions.keras_batchnorm_momentum:g}",
            "running variance: PyTorch and the TensorFlow model update it with the unbiased "
            "batch variance, Keras with the biased one (neither settable); normalisation in "
            "training uses the biased variance everywhere",
            _padding_note(conventions),
            "convs have no bias (BatchNorm follows); projection shortcut (1x1 conv + "
            "BatchNorm) where the shape changes; stride on the 3x3 conv of a bottleneck"]


def _transformer_notes(conventions: Conventions) -> list[str]:
    """What was equalised for a Transformer encoder."""
    return [f"LayerNorm epsilon {conventions.layernorm_epsilon:g} (Keras' default is 1e-3)",
            "GELU " + ("tanh approximation" if conventions.gelu_approximate else
                       "exact (erf)") + " in every framework",
            "attention scaled by 1/sqrt(head width), softmax over keys, no mask (every "
            "sequence fills its length), no dropout; separate query/key/value kernels "
            "(PyTorch's packed in_proj holds the same three)",
            "post-LayerNorm blocks (BERT order), mean pooling over positions"]


def _lstm_notes(conventions: Conventions) -> list[str]:
    """What was equalised for an LSTM."""
    return [
        "LSTM gates in the order input, forget, cell, output (PyTorch's i,f,g,o and Keras' "
        "i,f,c,o name the same order); sigmoid recurrent activation, tanh activation",
        "one bias per layer: PyTorch's second bias (bias_hh) is held at zero and not "
        "trained, else its learning rate on the bias would be doubled",
        "initial forget-gate bias 1 in every framework (Keras' unit_forget_bias; PyTorch "
        "and TensorFlow start at 0)",
        "initial state zero; the last layer's final hidden state feeds the classifier",
    ]


def _padding_note(conventions: Conventions) -> str:
    if conventions.strided_padding == "same":
        return ("padding 'same' on stride-2 convs (bottom/right only on an even size), unlike "
                "PyTorch's symmetric padding")
    return ("padding symmetric (k//2 on each side) in every framework: PyTorch padding=k//2, "
            "TensorFlow explicit conv2d padding, Keras 'same' at stride 1 and ZeroPadding2D + "
            "'valid' at stride 2 ('same' at stride 2 on an even size pads only bottom/right); "
            "the stem max-pool pads 1 with zeros after ReLU (equal to -inf padding)")
