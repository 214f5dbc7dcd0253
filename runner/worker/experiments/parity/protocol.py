"""The parity protocol: one forward pass and one optimizer step, compared with a float64
NumPy reference of the same model and SGD step.

A framework supplies hooks (`ParityFramework`): its trainer, the logits of its model for
fixed inputs and its weights in canonical layouts; `run_parity` owns the sequence (weights
in, forward pass, weights before, one optimizer step, weights after) and this module the
inputs, the comparison, the tolerance and the metrics, so every framework is judged alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from dlbench.runner.worker.experiments.parity import reference
from dlbench.runner.worker.harness import Cell, cell_manifest, open_cell
from dlbench.runner.worker.harness.data import CellData
from dlbench.runner.worker.epochs import Trainer
from dlbench.runner.cell.outcome import CellOutcome, Fairness
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, get_workload

#: Fixed inputs for the forward comparison: the first test samples.
FORWARD_INPUTS = 32
#: Normalised tolerance: max |framework - reference| / max |reference| must not exceed it.
TOLERANCE = 1e-4
#: Kernel entries per layer kept in the cell's details for pairwise comparison.
SAMPLED_KERNEL_ENTRIES = 512
#: Faults a test may inject into the weights handed to the framework (never in a suite).
FAULTS = ("swap-first-kernel-outputs",)


@dataclass(frozen=True)
class ParityCase:
    """Weights, fixed inputs and the step batch one parity cell uses."""

    data: CellData
    layers: list[Layer]  # the true initial weights (the reference uses these)
    framework_layers: list[Layer]  # what the framework receives (a fault only in a test)
    x_forward: np.ndarray
    x_step: np.ndarray
    y_step: np.ndarray


@dataclass(frozen=True)
class FrameworkResult:
    """What the framework computed: logits, and weights before/after one step (canonical)."""

    logits: np.ndarray
    before: list[Layer]
    after: list[Layer]


class ParityFramework(Protocol):
    """What a framework supplies to `run_parity` for the mlp and cnn workloads."""

    #: Built as trainer_class(adapter, workload, input_shape); reset() loads the weights and
    #: one train_epoch() over one batch makes exactly one SGD step.
    trainer_class: Callable[..., Trainer]

    def logits(self, trainer: Any, x: np.ndarray) -> np.ndarray:
        """The trainer's model's inference-mode logits for `x`, as NumPy."""

    def canonical_layers(self, trainer: Any) -> list[Layer]:
        """The trainer's model's weights, copied, in canonical layouts."""

    def compile_mode(self, trainer: Any) -> str:
        """How the framework ran the forward pass and the step, in words."""


def run_parity(spec: CellSpec, framework: ParityFramework) -> CellOutcome:
    """The parity sequence of every framework on an mlp or cnn workload: the transferred
    weights in, inference-mode logits, the weights, one optimizer step, the weights again
    (model_protocol.run_parity_cell picks this or the dlbench.runner.models families' sequence)."""
    cell = open_cell(spec)
    case = parity_case(cell)
    trainer = framework.trainer_class(cell.adapter, cell.data.workload, cell.data.input_shape)
    trainer.reset(case.framework_layers)
    logits = framework.logits(trainer, case.x_forward)
    before = framework.canonical_layers(trainer)
    trainer.train_epoch(case.x_step, case.y_step)  # one batch: exactly one SGD step
    result = FrameworkResult(np.asarray(logits), before, framework.canonical_layers(trainer))
    fairness = parity_fairness(cell, compile_mode=framework.compile_mode(trainer))
    return parity_outcome(cell, case, result, fairness)


def inject_fault(layers: list[Layer], fault: str) -> list[Layer]:
    """A deliberately mis-transferred copy of `layers` (a swapped pair of output units)."""
    if not fault:
        return layers
    if fault not in FAULTS:
        raise ValueError(f"unknown parity fault {fault!r}; valid: {', '.join(FAULTS)}")
    kernel = layers[0].kernel.copy()
    kernel[..., [0, 1]] = kernel[..., [1, 0]]
    return [Layer(layers[0].kind, kernel, layers[0].bias), *layers[1:]]


def parity_case(cell: Cell) -> ParityCase:
    """The cell's weights, forward inputs and one step batch of spec.batch_size samples."""
    data = cell.data
    layers = data.initial_layers()
    faulty = inject_fault(layers, cell.spec.params.get("fault", ""))
    step = slice(0, cell.spec.batch_size)
    return ParityCase(data, layers, faulty, data.x_test[:FORWARD_INPUTS], data.x_train[step],
                      data.dataset.y_train[step])


def _max_diff(values: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    """(max absolute difference, that divided by max |expected|)."""
    diff = float(np.max(np.abs(values.astype(np.float64) - expected)))
    scale = float(np.max(np.abs(expected)))
    return diff, diff / scale if scale else diff


def _flat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.ravel(p).astype(np.float64) for p in parts])


def sampled_updates(updates: list[Layer]) -> list[float]:
    """All bias updates and a fixed sample of kernel-entry updates, in a fixed order."""
    parts = []
    for index, layer in enumerate(updates):
        flat = np.ravel(layer.kernel)
        count = min(SAMPLED_KERNEL_ENTRIES, flat.size)
        positions = np.sort(np.random.default_rng(index).choice(flat.size, count, replace=False))
        parts += [flat[positions], np.ravel(layer.bias)]
    return [float(v) for v in _flat(parts)]


def parity_outcome(cell: Cell, case: ParityCase, result: FrameworkResult,
                   fairness: Fairness) -> CellOutcome:
    """Compare the framework's logits and first-step update with the float64 reference."""
    workload = case.data.workload
    expected_logits = reference.forward(case.layers, case.x_forward)
    expected_updates = reference.sgd_updates(case.layers, case.x_step, case.y_step,
                                             workload.learning_rate)
    updates = [Layer(a.kind, a.kernel.astype(np.float64) - b.kernel.astype(np.float64),
                     a.bias.astype(np.float64) - b.bias.astype(np.float64))
               for a, b in zip(result.after, result.before, strict=True)]
    forward_abs, forward_rel = _max_diff(result.logits, expected_logits)
    step_abs, step_rel = _max_diff(
        _flat([p for layer in updates for p in (layer.kernel, layer.bias)]),
        _flat([p for layer in expected_updates for p in (layer.kernel, layer.bias)]))
    passed = forward_rel <= TOLERANCE and step_rel <= TOLERANCE
    observations = [
        cell.observe("parity_forward_max_abs", forward_abs),
        cell.observe("parity_forward_max_rel", forward_rel),
        cell.observe("parity_step_max_abs", step_abs),
        cell.observe("parity_step_max_rel", step_rel),
        cell.observe("parity_tolerance", TOLERANCE),
        cell.observe("parity_pass", float(passed)),
    ]
    details = {"tolerance": TOLERANCE, "reference_pass": passed,
               "logits": np.asarray(result.logits, np.float64).round(9).tolist(),
               "updates": sampled_updates(updates)}
    return cell.outcome(observations, fairness, details)


def parity_fairness(cell: Cell, *, compile_mode: str) -> Fairness:
    """The manifest every parity cell carries."""
    return parity_manifest(cell.spec, cell.settings, compile_mode=compile_mode)


def parity_manifest(spec: CellSpec, settings: dict[str, str], *, compile_mode: str) -> Fairness:
    """The parity manifest of `spec` under the framework `settings` it was configured with."""
    workload = get_workload(spec.workload)
    fault = spec.params.get("fault", "")
    return cell_manifest(
        spec, settings,
        timer_includes="nothing: parity is a correctness check, not a timing",
        precision_policy="fp32 weights and activations; reference in float64 NumPy",
        compile_mode=compile_mode,
        data_pipeline=f"first {FORWARD_INPUTS} test samples for the forward pass; first "
                      f"{spec.batch_size} training samples (in dataset order) for one step",
        notes=(f"same transferred initial weights; one step of the framework's own SGD "
               f"(lr={workload.learning_rate}, momentum={workload.momentum}; the first step "
               f"of momentum SGD is -lr*gradient) on softmax cross-entropy (mean); pass when "
               f"max|framework - reference| / max|reference| <= {TOLERANCE:g} for the logits "
               f"and for the weight update"
               + (f"; DELIBERATE FAULT INJECTED: {fault}" if fault else "")),
    )
