"""Parity of the dlbench.runner.models families: a forward pass and one optimizer step in training
mode, at the workload's tiny size (or the size profile its cell names: PROFILE_PARAM, the
real-size models at their CPU size in a release), judged against the float64 reference.

Checked per framework: inference-mode logits; the training-mode loss of the step batch;
BatchNorm running statistics after the step (in the framework's own running-variance
convention); and the weight update through directional derivatives: for seeded random
sign vectors v, sum(update * v) must equal -learning_rate * d loss / d v (the first step of
momentum SGD is -learning_rate * gradient). Pairs of frameworks then compare their logits
and a fixed sample of weight updates and running-mean changes directly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Protocol

import numpy as np

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.workloads.datasets import synthetic_images, synthetic_tokens
from dlbench.runner.models import reference_forward as reference
from dlbench.runner.worker.experiments.parity.protocol import (TOLERANCE, ParityFramework,
                                                               parity_manifest, run_parity)
from dlbench.runner.worker.harness import configured_adapter
from dlbench.runner.models.conventions import (CONVENTIONS, RUNNING_VARIANCE, Conventions,
                                               check_perturbation, fairness_note, perturbed,
                                               perturbed_weights)
from dlbench.runner.models.definitions import ModelDefinition
from dlbench.runner.models.weights import Weights, initial_weights, trainable
from dlbench.runner.cell.outcome import CellOutcome, Fairness, Observation
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Workload, get_workload, size_profile

#: Inputs of the inference-mode comparison.
FORWARD_INPUTS = 8
#: Random sign directions along which the update is checked.
DIRECTIONS = 4
#: Update entries per weight kept in the cell's details for pairwise comparison.
SAMPLED_ENTRIES = 64
#: The cell parameters that name the size profile checked (default "tiny") and, for a model
#: whose float64 reference is costly (ResNet-50, BERT-base), fewer inference-mode inputs
#: and update directions than FORWARD_INPUTS and DIRECTIONS.
PROFILE_PARAM, INPUTS_PARAM, DIRECTIONS_PARAM = "profile", "forward_inputs", "directions"


def is_model_workload(name: str) -> bool:
    """Whether a workload is one of the dlbench.runner.models families."""
    return bool(get_workload(name).profiles)


@dataclass(frozen=True)
class ModelCase:
    """What one parity cell of a model family builds and feeds."""

    workload: Workload
    definition: ModelDefinition
    weights: Weights  # the true initial weights (the reference uses these)
    framework_weights: Weights  # what the framework receives (perturbed only in a test)
    conventions: Conventions  # what the framework applies (perturbed only in a test)
    x_forward: np.ndarray
    x_step: np.ndarray
    y_step: np.ndarray
    directions: int = DIRECTIONS  # random sign directions the update is checked along


@dataclass(frozen=True)
class ModelResult:
    """What the framework computed, weights in canonical names and layouts."""

    logits: np.ndarray  # inference mode, on x_forward
    loss: float  # training mode, on the step batch, before the step
    before: Weights
    after: Weights


class ModelParityFramework(Protocol):
    """What a framework supplies to `run_model_parity` for the dlbench.runner.models families."""

    def build_model(self, spec: CellSpec, case: ModelCase) -> Any:
        """The definition holding case.framework_weights under case.conventions, on the
        cell's device."""

    def model_logits(self, spec: CellSpec, model: Any, x: np.ndarray) -> np.ndarray:
        """Inference-mode logits for `x`, as NumPy."""

    def model_weights(self, model: Any, case: ModelCase) -> Weights:
        """The weights and running statistics, copied, in canonical names and layouts."""

    def model_step(self, spec: CellSpec, model: Any, case: ModelCase) -> float:
        """One training-mode step of the framework's momentum SGD on the step batch; returns
        the loss before the step."""

    def model_compile_mode(self, spec: CellSpec, model: Any) -> str:
        """How the framework ran the forward pass and the step, in words."""


class ParityHooks(ParityFramework, ModelParityFramework, Protocol):
    """Both sets of a framework's parity hooks: mlp/cnn and the dlbench.runner.models families."""


def run_parity_cell(spec: CellSpec, framework: ParityHooks) -> CellOutcome:
    """A framework's parity cell: the dlbench.runner.models families' sequence or the mlp/cnn one
    (chosen here, as this module builds on the mlp/cnn protocol)."""
    if is_model_workload(spec.workload):
        return run_model_parity(spec, framework)
    return run_parity(spec, framework)


def run_model_parity(spec: CellSpec, framework: ModelParityFramework) -> CellOutcome:
    """The parity sequence of a dlbench.runner.models family: inference-mode logits, the weights,
    one training-mode step, the weights again, judged against the float64 reference."""
    settings = configured_adapter(spec)[1]
    case = model_case(spec)
    model = framework.build_model(spec, case)
    logits = framework.model_logits(spec, model, case.x_forward)
    before = framework.model_weights(model, case)
    loss = framework.model_step(spec, model, case)
    result = ModelResult(logits, loss, before, framework.model_weights(model, case))
    fairness = model_parity_fairness(
        spec, case, compile_mode=framework.model_compile_mode(spec, model), settings=settings)
    return model_parity_outcome(spec, case, result, fairness)


def model_case(spec: CellSpec) -> ModelCase:
    """The model at the cell's size profile (tiny unless PROFILE_PARAM names one), its
    weights and generated inputs for one parity cell."""
    workload = get_workload(spec.workload)
    definition = size_profile(workload, spec.params.get(PROFILE_PARAM, "tiny")).definition
    perturbation = spec.params.get("perturbation", "")
    check_perturbation(perturbation)
    weights = initial_weights(definition, workload.seed)
    inputs = int(spec.params.get(INPUTS_PARAM, FORWARD_INPUTS))
    count = max(spec.batch_size, 4 * inputs)
    if definition.family == "resnet":
        data = synthetic_images(count, size=definition.image_size)
    else:
        data = synthetic_tokens(count, definition.sequence, definition.vocabulary,
                                definition.classes)
    x, y = np.concatenate([data.x_train, data.x_test]), np.concatenate([data.y_train, data.y_test])
    return ModelCase(workload, definition, weights, perturbed_weights(weights, perturbation),
                     perturbed(CONVENTIONS, perturbation), x[-inputs:],
                     x[:spec.batch_size], y[:spec.batch_size],
                     int(spec.params.get(DIRECTIONS_PARAM, DIRECTIONS)))


def _max_diff(values: np.ndarray, expected: np.ndarray) -> tuple[float, float]:
    if not expected.size:
        return 0.0, 0.0
    diff = float(np.max(np.abs(np.asarray(values, np.float64) - expected)))
    scale = float(np.max(np.abs(expected)))
    return diff, diff / scale if scale else diff


def _flat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.ravel(p) for p in parts]) if parts else np.zeros(0)


def _update(result: ModelResult, name: str) -> np.ndarray:
    return result.after[name].astype(np.float64) - result.before[name].astype(np.float64)


def _direction_errors(case: ModelCase, result: ModelResult) -> tuple[float, float]:
    """(max absolute, normalised) error of sum(update * v) against -lr * directional derivative."""
    names = [name for name in case.weights if trainable(name)]
    rng = np.random.default_rng(2024)
    measured, expected = [], []
    for _ in range(case.directions):
        direction = {name: rng.choice([-1.0, 1.0], size=case.weights[name].shape) for name in names}
        measured.append(sum(float(np.sum(_update(result, n) * direction[n])) for n in names))
        slope = reference.directional_derivative(case.definition, case.weights, direction,
                                                 case.x_step, case.y_step)
        expected.append(-case.workload.learning_rate * slope)
    errors = np.abs(np.asarray(measured) - np.asarray(expected))
    norm = np.sqrt(sum(float(np.sum(_update(result, n) ** 2)) for n in names))
    scale = max(norm, float(np.sqrt(np.mean(np.square(expected)))), 1e-30)
    return float(errors.max()), float(errors.max() / scale)


def step_errors(spec: CellSpec, case: ModelCase, result: ModelResult) -> dict[str, float]:
    """Each training-mode check's absolute and normalised error."""
    logits, statistics = reference.forward(case.definition, case.weights, case.x_step,
                                           training=True,
                                           running_variance=RUNNING_VARIANCE[spec.framework])
    loss = reference.mean_cross_entropy(logits, case.y_step)
    errors = {"loss_abs": abs(result.loss - loss), "loss_rel": abs(result.loss - loss) / abs(loss)}
    names = sorted(statistics)
    changes = [_update(result, n) for n in names]
    expected = [statistics[n] - case.weights[n].astype(np.float64) for n in names]
    errors["statistics_abs"], errors["statistics_rel"] = _max_diff(_flat(changes), _flat(expected))
    errors["direction_abs"], errors["direction_rel"] = _direction_errors(case, result)
    return errors


def sampled_updates(case: ModelCase, result: ModelResult) -> list[float]:
    """A fixed sample of each trained weight's update and each running mean's change (running
    variances differ by convention between frameworks and are checked per framework)."""
    parts = []
    for index, name in enumerate(sorted(case.weights)):
        if name.endswith(".variance"):
            continue
        flat = np.ravel(_update(result, name))
        count = min(SAMPLED_ENTRIES, flat.size)
        positions = np.sort(np.random.default_rng(index).choice(flat.size, count, replace=False))
        parts.append(flat[positions])
    return [float(v) for v in np.concatenate(parts)]


def model_parity_outcome(spec: CellSpec, case: ModelCase, result: ModelResult,
                         fairness: Fairness) -> CellOutcome:
    """Judge the framework's forward pass and step against the float64 reference."""
    expected, _ = reference.forward(case.definition, case.weights, case.x_forward)
    forward_abs, forward_rel = _max_diff(result.logits, expected)
    errors = step_errors(spec, case, result)
    step_abs = max(errors["loss_abs"], errors["statistics_abs"], errors["direction_abs"])
    step_rel = max(errors["loss_rel"], errors["statistics_rel"], errors["direction_rel"])
    passed = forward_rel <= TOLERANCE and step_rel <= TOLERANCE
    observations = [Observation(metric, value, spec.repeat_index) for metric, value in (
        ("parity_forward_max_abs", forward_abs), ("parity_forward_max_rel", forward_rel),
        ("parity_step_max_abs", step_abs), ("parity_step_max_rel", step_rel),
        ("parity_tolerance", TOLERANCE), ("parity_pass", float(passed)))]
    details = {"tolerance": TOLERANCE, "reference_pass": passed, "model": case.definition.name,
               "step_checks": errors,
               "logits": np.asarray(result.logits, np.float64).round(9).tolist(),
               "updates": sampled_updates(case, result)}
    return CellOutcome(CellStatus.OK, observations, fairness, details=details)


def model_parity_fairness(spec: CellSpec, case: ModelCase, *, compile_mode: str,
                          settings: dict[str, str]) -> Fairness:
    """The manifest of a model parity cell: the equalised conventions in words."""
    base = parity_manifest(spec, settings, compile_mode=compile_mode)
    perturbation = spec.params.get("perturbation", "")
    return replace(
        base,
        data_pipeline=f"generated inputs at the {spec.params.get(PROFILE_PARAM, 'tiny')} "
                      f"size ({case.definition.name}): {len(case.x_forward)} for the "
                      f"inference-mode pass, {spec.batch_size} for one training-mode step "
                      f"(its update checked along {case.directions} random directions)",
        notes=base.notes + "; " + fairness_note(case.definition, case.conventions)
              + (f"; DELIBERATE PERTURBATION: {perturbation}" if perturbation else ""))
