"""The mode matrix: each framework's execution modes per experiment, and the class of each.

Every framework is measured on the two paths its users run, and every comparison across
frameworks pairs like with like, class by class:

- plain (class key "default"): the first call or step a user writes, as the framework's
  getting-started documentation writes it, with the framework's own defaults: eager PyTorch
  (under `torch.inference_mode` for inference), eager TensorFlow, Keras `predict` / `fit`
  with `compile()`'s defaults (which Keras resolves per backend: eager on torch, a
  `tf.function` graph on TensorFlow on a CPU, XLA on TensorFlow on a GPU and on JAX).
- production (class key "fastest"): the compiled path each framework documents for
  production: `torch.compile`; `tf.function` and `tf.function(jit_compile=True)` (XLA);
  Keras `compile(jit_compile=True)` on every backend. A framework with two production modes
  is represented by its better one.
- other: measured and shown, never standing for its framework in a comparison (Keras'
  `model(x)` in inference, `run_eagerly=True` in execution-mode).

The class keys keep their historical names ("default", "fastest": release tables, cell IDs
and verdict records carry them); `CLASS_WORDS` is what a page says.

A mode that is the same configuration as another mode of the same system on a device
(`SAME_AS`: Keras on JAX's default already jit-compiles) is measured once, under the other
mode's name, and stands for both classes (`mode_classes`, `by_class`).

Each framework declares its modes and each system its SAME_AS entries in
dlbench.core.declarations.systems; this module derives the matrix from them. The runner plans its
cells from it and the report groups its comparisons by `mode_class`.
"""

from __future__ import annotations

import pandas as pd

from dlbench.core.declarations.systems import (DEFAULT, DEVICES, FASTEST, OTHER, SYSTEMS, ModeClass,
                                               SameAs, frameworks)

__all__ = ["DEFAULT", "DEVICES", "FASTEST", "OTHER", "ModeClass"]

#: What each class is called on a page.
CLASS_WORDS: dict[str, str] = {DEFAULT: "plain", FASTEST: "production", OTHER: "other"}

#: experiment -> framework -> {mode: class}, in the order cells are planned, from each
#: framework's declaration (dlbench.core.declarations.systems). Training keeps the historical mode
#: name "default" for its plain mode (its cell IDs stay those of earlier releases); its
#: TensorFlow step is a tf.function, as TensorFlow's training guides write it.
def _mode_matrix() -> dict[str, dict[str, dict[str, ModeClass]]]:
    matrix: dict[str, dict[str, dict[str, ModeClass]]] = {}
    for framework in frameworks().values():
        for experiment, table in framework.modes.items():
            matrix.setdefault(experiment, {})[framework.name] = dict(table)
    return matrix


MODES = _mode_matrix()

#: What each framework's production modes compile, in words (for manifests and pages).
FASTEST_MEANS = {name: framework.fastest_means for name, framework in frameworks().items()}

#: (system, entry) for every mode measured under another mode's name, because it is the
#: same configuration (each system's declaration lists its own).
SAME_AS: tuple[tuple[str, SameAs], ...] = tuple(
    (system.name, entry) for system in SYSTEMS for entry in system.same_as)


def modes(experiment: str, framework: str) -> list[str]:
    """Every mode `framework` is measured in for `experiment` (["default"] when the
    experiment has no modes)."""
    return list(MODES.get(experiment, {}).get(framework, {"default": DEFAULT}))


def mode_class(experiment: str, framework: str, mode: str) -> ModeClass:
    """The class of a cell's mode: default (plain), fastest (production), or other (never
    compared across frameworks). A mode named "default" is the plain one; any other mode
    the matrix does not list (an older release's) is other."""
    listed = MODES.get(experiment, {}).get(framework, {}).get(mode)
    return listed or (DEFAULT if mode == "default" else OTHER)


def same_as(experiment: str, system: str, mode: str, device: str) -> SameAs | None:
    """The entry saying `mode` is measured as another mode of `system` on `device`, if any."""
    return next((entry for name, entry in SAME_AS if (entry.experiment, name, entry.mode) ==
                 (experiment, system, mode) and device in entry.devices), None)


def stands_for(experiment: str, system: str, mode: str, device: str) -> list[str]:
    """The modes a cell of `mode` measures: itself and every mode that is the same
    configuration on `device`."""
    return [mode, *(entry.mode for name, entry in SAME_AS
                    if (entry.experiment, name, entry.measured_as) == (experiment, system, mode)
                    and device in entry.devices)]


def mode_classes(experiment: str, system: str, mode: str, device: str) -> tuple[ModeClass, ...]:
    """Every class a cell of `mode` stands for, its own first (one for most modes)."""
    framework = system.split("-", 1)[0]
    classes = [mode_class(experiment, framework, m)
               for m in stands_for(experiment, system, mode, device)]
    return tuple(dict.fromkeys(classes))


def compiles(experiment: str, system: str, mode: str, device: str) -> bool:
    """Whether a cell of `mode` stands for a production (compiled) path."""
    return FASTEST in mode_classes(experiment, system, mode, device)


def measured(experiment: str, system: str, device: str, wanted: list[str]) -> list[str]:
    """`wanted` without the modes another mode's cell measures on `device`."""
    return [mode for mode in wanted if same_as(experiment, system, mode, device) is None]


def by_class(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows (with experiment, system, mode, device and mode_class columns) that may be
    compared across frameworks class by class: a cell standing for two classes appears in
    each, and a mode of class other in none."""
    keys = ["experiment", "system", "mode", "device"]
    if rows.empty:
        return rows[rows["mode_class"] != OTHER]
    combos = rows[keys].astype(str).drop_duplicates()
    extra = [(*combo, cls) for combo in combos.itertuples(index=False, name=None)
             for cls in mode_classes(*combo)[1:]]
    if extra:
        added = pd.DataFrame(extra, columns=[*keys, "extra_class"])
        twins = rows.astype({k: str for k in keys}).merge(added, on=keys)
        twins = twins.assign(mode_class=twins.pop("extra_class"))
        rows = pd.concat([rows, twins.astype(rows.dtypes.to_dict())], ignore_index=True)
    return rows[rows["mode_class"] != OTHER]


def mode_of_class(experiment: str, framework: str, wanted: ModeClass) -> str | None:
    """The first mode of `framework` in `experiment` that has class `wanted`, or None."""
    return next((mode for mode, cls in MODES.get(experiment, {}).get(framework, {}).items()
                 if cls == wanted), None)


def comparison_words(wanted: str) -> str:
    """How a comparison of one mode class reads on a page, e.g. 'production vs production
    mode'."""
    words = CLASS_WORDS.get(wanted)
    return f"{words} vs {words} mode" if wanted in (DEFAULT, FASTEST) else f"{wanted} modes"


def group_words(group: tuple[tuple[str, object], ...] | list) -> str:
    """A comparison's group as words: 'workload mlp-digits, batch size 32, plain vs
    plain mode'."""
    return ", ".join(comparison_words(str(value)) if key == "mode_class"
                     else f"{key.replace('_', ' ')} {value}" for key, value in group)
