"""parity in TensorFlow's own API: the training model's forward pass and one SGD step."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from dlbench.runner.worker.adapters.tensorflow import TfTrainer, mean_cross_entropy
from dlbench.runner.worker.experiments.parity.model_protocol import ModelCase, run_parity_cell
from dlbench.runner.models.weights import Weights
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer


class TfParity:
    """TensorFlow's hooks of the parity protocol: an eager forward pass, and a momentum-SGD
    step under tf.function (no XLA) written with tf.GradientTape, as torch.optim.SGD
    (velocity = momentum * velocity + gradient)."""

    trainer_class = TfTrainer

    def logits(self, trainer: TfTrainer, x: np.ndarray) -> np.ndarray:
        with tf.device(trainer.device):
            return trainer.model(tf.constant(x)).numpy()

    def canonical_layers(self, trainer: TfTrainer) -> list[Layer]:
        """The model's variables; TensorFlow's layouts are the canonical ones."""
        model = trainer.model
        return [Layer(kind, kernel.numpy().copy(), bias.numpy().copy())
                for kind, kernel, bias in zip(model.kinds, model.kernels, model.biases)]

    def compile_mode(self, trainer: TfTrainer) -> str:
        return "tf.function train step (no XLA); eager forward pass"

    def build_model(self, spec: CellSpec, case: ModelCase) -> tf.Module:
        from dlbench.runner.models import tensorflow as models

        with tf.device(_device(spec)):
            return models.build(case.definition, case.framework_weights, case.conventions)

    def model_logits(self, spec: CellSpec, model: tf.Module, x: np.ndarray) -> np.ndarray:
        with tf.device(_device(spec)):
            return model(tf.constant(x), training=False).numpy()

    def model_weights(self, model: tf.Module, case: ModelCase) -> Weights:
        from dlbench.runner.models import tensorflow as models

        return models.read_weights(model)

    def model_step(self, spec: CellSpec, model: tf.Module, case: ModelCase) -> float:
        learning_rate, momentum = case.workload.learning_rate, case.workload.momentum
        with tf.device(_device(spec)):
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

            return float(step(tf.constant(case.x_step), tf.constant(case.y_step)).numpy())

    def model_compile_mode(self, spec: CellSpec, model: tf.Module) -> str:
        return "tf.function step (no XLA); eager forward pass"


def _device(spec: CellSpec) -> str:
    return "/GPU:0" if spec.device == "cuda" else "/CPU:0"


def run(spec: CellSpec) -> CellOutcome:
    return run_parity_cell(spec, TfParity())
