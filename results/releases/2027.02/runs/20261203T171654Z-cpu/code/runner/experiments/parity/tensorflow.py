"""parity in TensorFlow's own API: the training model's forward pass and one SGD step."""

from __future__ import annotations

import tensorflow as tf

from runner.adapters.tensorflow import TfTrainer, mean_cross_entropy
from runner.experiments.parity.model_protocol import (ModelResult, is_model_workload, model_case,
                                                      model_parity_fairness, model_parity_outcome)
from runner.experiments.parity.protocol import (FrameworkResult, parity_case, parity_fairness,
                                                parity_outcome)
from runner.harness import configured_adapter, open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec
from runner.workloads import Layer


def canonical_layers(trainer: TfTrainer) -> list[Layer]:
    """The model's variables; TensorFlow's layouts are the canonical ones."""
    model = trainer.model
    return [Layer(kind, kernel.numpy().copy(), bias.numpy().copy())
            for kind, kernel, bias in zip(model.kinds, model.kernels, model.biases)]


def run(spec: CellSpec) -> CellOutcome:
    if is_model_workload(spec.workload):
        return run_model(spec, configured_adapter(spec)[1])
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


def run_model(spec: CellSpec, settings: dict[str, str]) -> CellOutcome:
    """A runner.models family: inference-mode logits, then one momentum-SGD step written with
    tf.GradientTape (velocity = momentum * velocity + gradient, as torch.optim.SGD)."""
    from runner.models import tensorflow as models

    case = model_case(spec)
    learning_rate, momentum = case.workload.learning_rate, case.workload.momentum
    with tf.device("/GPU:0" if spec.device == "cuda" else "/CPU:0"):
        model = models.build(case.definition, case.framework_weights, case.conventions)
        logits = model(tf.constant(case.x_forward), training=False).numpy()
        before = models.read_weights(model)
        variables = model.trainable_variables
        velocities = [tf.Variable(tf.zeros_like(v)) for v in variables]

        @tf.function
        def step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
            with tf.GradientTape() as tape:
                loss = mean_cross_entropy(model(x, training=True), y)
            for variable, velocity, grad in zip(variables, velocities,
                                                tape.gradient(loss, variables)):
                velocity.assign(momentum * velocity + tf.convert_to_tensor(grad))
                variable.assign_sub(learning_rate * velocity)
            return loss

        loss = float(step(tf.constant(case.x_step), tf.constant(case.y_step)).numpy())
    result = ModelResult(logits, loss, before, models.read_weights(model))
    fairness = model_parity_fairness(spec, case, compile_mode="tf.function step (no XLA); "
                                     "eager forward pass", settings=settings)
    return model_parity_outcome(spec, case, result, fairness)
