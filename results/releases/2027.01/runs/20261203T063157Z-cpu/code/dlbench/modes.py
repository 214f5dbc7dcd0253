"""The mode matrix: each framework's execution modes per experiment, and the class of each.

Every framework is measured in its default mode (what its documentation shows first) and in
its fastest documented mode (the whole step compiled), and every comparison across
frameworks pairs like with like: default with default, fastest with fastest. A mode that is
neither (TensorFlow's graph without XLA in inference, the eager baselines of
execution-mode) is measured and shown, but never stands for its framework in a comparison.

One owner: the runner plans its cells from this table and the report groups its
comparisons by `mode_class`.
"""

from __future__ import annotations

from typing import Literal

ModeClass = Literal["default", "fastest", "other"]
DEFAULT: ModeClass = "default"
FASTEST: ModeClass = "fastest"
OTHER: ModeClass = "other"

#: experiment -> framework -> {mode: class}, in the order cells are planned. Training keeps
#: the historical mode name "default" for the default mode (its cell IDs stay those of
#: earlier releases).
MODES: dict[str, dict[str, dict[str, ModeClass]]] = {
    "training": {
        "pytorch": {"default": DEFAULT, "compiled": FASTEST},
        "tensorflow": {"default": DEFAULT, "xla": FASTEST},
        "keras": {"default": DEFAULT, "jit_compile": FASTEST},
    },
    "inference": {
        "pytorch": {"inference_mode": DEFAULT, "compiled": FASTEST},
        "tensorflow": {"eager": DEFAULT, "tf.function": OTHER, "xla": FASTEST},
        "keras": {"call": DEFAULT, "jit_compile": FASTEST},
    },
    "execution-mode": {
        "pytorch": {"eager": DEFAULT, "compiled": FASTEST},
        "tensorflow": {"eager": OTHER, "tf.function": DEFAULT, "xla": FASTEST},
        "keras": {"run_eagerly": OTHER, "default": DEFAULT, "jit_compile": FASTEST},
    },
}

#: What each fastest mode compiles, in words (for manifests and pages).
FASTEST_MEANS = {
    "pytorch": "torch.compile of the whole step",
    "tensorflow": "tf.function(jit_compile=True) (XLA)",
    "keras": "compile(jit_compile=True): the backend's compiler (XLA on TensorFlow and JAX, "
             "torch.compile on torch)",
}


def modes(experiment: str, framework: str) -> list[str]:
    """Every mode `framework` is measured in for `experiment` (["default"] when the
    experiment has no modes)."""
    return list(MODES.get(experiment, {}).get(framework, {"default": DEFAULT}))


def mode_class(experiment: str, framework: str, mode: str) -> ModeClass:
    """The class of a cell's mode: default, fastest, or other (never compared across
    frameworks). A mode named "default" is the default one; any other mode the matrix does
    not list (an older release's) is other."""
    listed = MODES.get(experiment, {}).get(framework, {}).get(mode)
    return listed or (DEFAULT if mode == "default" else OTHER)


def mode_of_class(experiment: str, framework: str, wanted: ModeClass) -> str | None:
    """The mode of `framework` in `experiment` that has class `wanted`, or None."""
    return next((mode for mode, cls in MODES.get(experiment, {}).get(framework, {}).items()
                 if cls == wanted), None)


def comparison_words(wanted: str) -> str:
    """How a comparison of one mode class reads on a page, e.g. 'fastest vs fastest mode'."""
    return f"{wanted} vs {wanted} mode" if wanted in (DEFAULT, FASTEST) else f"{wanted} modes"


def group_words(group: tuple[tuple[str, object], ...] | list) -> str:
    """A comparison's group as words: 'workload mlp-digits, batch size 32, default vs
    default mode'."""
    return ", ".join(comparison_words(str(value)) if key == "mode_class"
                     else f"{key.replace('_', ' ')} {value}" for key, value in group)
