"""precision in TensorFlow's own API: float32 variables, computation cast to bfloat16 or
float16, and for float16 a dynamic loss scale written with tf ops (no Keras)."""

from __future__ import annotations

import tensorflow as tf

from dlbench.runner.worker.adapters.tensorflow import (TfAdapter, TfForwardCalls, TfTrainer,
                                        mean_cross_entropy)
from dlbench.runner.worker.experiments.precision.protocol import (EvaluatedInBatches,
                                                                  PrecisionFramework,
                                                                  run_precision)
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, Workload

DTYPES = {"fp32": tf.float32, "bf16": tf.bfloat16, "fp16": tf.float16}
INITIAL_LOSS_SCALE = 2.0**15


class MixedTfTrainer(EvaluatedInBatches, TfForwardCalls, TfTrainer):
    """The training model computing in `precision`; fp16 scales the loss, skips steps whose
    gradients overflow and halves the scale then."""

    def __init__(self, adapter: TfAdapter, workload: Workload, input_shape: tuple[int, ...],
                 precision: str) -> None:
        super().__init__(adapter, workload, input_shape)
        self.dtype = DTYPES[precision]

    def reset(self, layers: list[Layer]) -> None:
        self.model = self.adapter.build_model(self.workload, layers, self.input_shape,
                                              compute_dtype=self.dtype)
        with tf.device(self.device):
            self.velocities = [tf.Variable(tf.zeros_like(v)) for v in self.model.trainable_variables]
            self.loss_scale = tf.Variable(INITIAL_LOSS_SCALE if self.dtype == tf.float16 else 1.0)
        self.train_step = tf.function(self._train_step, input_signature=self.signature)
        self.forward = tf.function(self.model.__call__, input_signature=self.signature[:1])
        self.adapter.reset_peak()

    def _train_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = mean_cross_entropy(self.model(x), y)
            scaled = loss * self.loss_scale
        variables = self.model.trainable_variables
        grads = [g / self.loss_scale for g in tape.gradient(scaled, variables)]
        finite = tf.reduce_all([tf.reduce_all(tf.math.is_finite(g)) for g in grads])

        def apply() -> tf.Tensor:
            for variable, velocity, grad in zip(variables, self.velocities, grads):
                velocity.assign(self.momentum * velocity + grad)
                variable.assign_sub(self.learning_rate * velocity)
            return self.loss_scale

        tf.cond(finite, apply, lambda: self.loss_scale.assign(self.loss_scale / 2))
        return loss


class TfPrecision(PrecisionFramework):
    """TensorFlow's hooks of the precision protocol: tf.function graphs, no XLA."""

    trainer_class = MixedTfTrainer
    timer_includes = ("per epoch: tensors to the device, every tf.function train step "
                      "(traced on the first call), reading the epoch loss (a device sync)")

    def policy(self, spec: CellSpec) -> str:
        if spec.precision == "fp32":
            return "fp32"
        return (f"float32 variables cast to {DTYPES[spec.precision].name} for the computation, "
                f"float32 logits and loss"
                + (f"; dynamic loss scale from {INITIAL_LOSS_SCALE:g}, halved and the step "
                   f"skipped on overflow" if spec.precision == "fp16" else ""))

    def compile_mode(self, spec: CellSpec) -> str:
        return "tf.function graph (no XLA) for training and inference"

    def refusals(self, spec: CellSpec) -> tuple[type[BaseException], ...]:
        return (tf.errors.NotFoundError, tf.errors.InvalidArgumentError,
                tf.errors.UnimplementedError, TypeError)


def run(spec: CellSpec) -> CellOutcome:
    return run_precision(spec, TfPrecision())
