"""parity in TensorFlow's own API: the training model's forward pass and one SGD step."""

from __future__ import annotations

import tensorflow as tf

from runner.adapters.tensorflow import TfTrainer
from runner.experiments.parity.protocol import (FrameworkResult, parity_case, parity_fairness,
                                                parity_outcome)
from runner.harness import open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec
from runner.workloads import Layer


def canonical_layers(trainer: TfTrainer) -> list[Layer]:
    """The model's variables; TensorFlow's layouts are the canonical ones."""
    model = trainer.model
    return [Layer(kind, kernel.numpy().copy(), bias.numpy().copy())
            for kind, kernel, bias in zip(model.kinds, model.kernels, model.biases)]


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    case = parity_case(cell)
    trainer = TfTrainer(cell.adapter, cell.data.workload, cell.data.input_shape)
    trainer.reset(case.framework_layers)
    with tf.device(trainer.device):
        logits = trainer.model(tf.constant(case.x_forward)).numpy()
    before = canonical_layers(trainer)
    trainer.train_epoch(case.x_step, case.y_step)  # one batch: exactly one SGD step
    result = FrameworkResult(logits, before, canonical_layers(trainer))
    fairness = parity_fairness(cell, compile_mode="tf.function train step (no XLA); eager "
                               "forward pass")
    return parity_outcome(cell, case, result, fairness)
