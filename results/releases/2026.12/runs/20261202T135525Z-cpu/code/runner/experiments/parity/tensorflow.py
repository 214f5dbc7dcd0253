"""parity in TensorFlow's own API: the training model's forward pass and one SGD step."""

from __future__ import annotations

import tensorflow as tf

from runner.experiments.parity.protocol import (FrameworkResult, parity_case, parity_fairness,
                                                parity_outcome)
from runner.experiments.training.tensorflow import TfTrainer
from runner.framework_setup import configure_tensorflow
from runner.outcome import CellOutcome, skipped
from runner.spec import CellSpec
from runner.workloads import Layer


def canonical_layers(trainer: TfTrainer) -> list[Layer]:
    """The model's variables; TensorFlow's layouts are the canonical ones."""
    model = trainer.model
    return [Layer(kind, kernel.numpy().copy(), bias.numpy().copy())
            for kind, kernel, bias in zip(model.kinds, model.kernels, model.biases)]


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_tensorflow(spec)
    if spec.device == "cuda" and not tf.config.list_physical_devices("GPU"):
        return skipped("TensorFlow sees no GPU (this TensorFlow build or machine has no CUDA)")
    case = parity_case(spec)
    workload = case.data.workload
    trainer = TfTrainer(spec, workload.learning_rate, workload.momentum,
                        case.x_step.shape[1:])
    trainer.reset(case.framework_layers)
    with tf.device(trainer.device):
        logits = trainer.model(tf.constant(case.x_forward)).numpy()
    before = canonical_layers(trainer)
    trainer.train_epoch(case.x_step, case.y_step)  # one batch: exactly one SGD step
    result = FrameworkResult(logits, before, canonical_layers(trainer))
    fairness = parity_fairness(spec, compile_mode="tf.function train step (no XLA); eager "
                               "forward pass", settings=settings)
    return parity_outcome(spec, case, result, fairness)
