"""execution-mode in TensorFlow's own API: eager vs tf.function vs tf.function(jit_compile)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from runner.experiments.execution_mode.protocol import execution_fairness, measure_execution_mode
from runner.experiments.training.protocol import training_data
from runner.experiments.training.tensorflow import TfTrainer
from runner.framework_setup import configure_tensorflow
from runner.outcome import CellOutcome, skipped
from runner.spec import CellSpec
from runner.workloads import Layer

COMPILE_MODES = {
    "eager": "eager (the train step runs op by op)",
    "tf.function": "tf.function train step (graph, no XLA)",
    "xla": "tf.function(jit_compile=True) train step (XLA)",
}


class TfStepper(TfTrainer):
    """The training model and its GradientTape SGD step, wrapped as the mode says."""

    def __init__(self, spec: CellSpec, learning_rate: float, momentum: float,
                 input_shape: tuple[int, ...], mode: str) -> None:
        super().__init__(spec, learning_rate, momentum, input_shape)
        self.mode = mode

    def prepare(self, x: np.ndarray, y: np.ndarray) -> tuple[tf.Tensor, tf.Tensor]:
        with tf.device(self.device):
            return tf.identity(tf.constant(x)), tf.identity(tf.constant(y))

    def reset(self, layers: list[Layer]) -> None:
        super().reset(layers)
        if self.mode == "eager":
            self.train_step = self._train_step
        elif self.mode == "xla":
            self.train_step = tf.function(self._train_step, input_signature=self.signature,
                                          jit_compile=True)

    def step(self, x: tf.Tensor, y: tf.Tensor) -> float:
        with tf.device(self.device):
            return float(self.train_step(x, y).numpy())  # .numpy() waits for the device


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_tensorflow(spec)
    if spec.device == "cuda" and not tf.config.list_physical_devices("GPU"):
        return skipped("TensorFlow sees no GPU (this TensorFlow build or machine has no CUDA)")
    data = training_data(spec)
    workload, shape = data.workload, data.x_train.shape[1:]
    stepper = TfStepper(spec, workload.learning_rate, workload.momentum, shape, spec.mode)
    eager = None if spec.mode == "eager" else TfStepper(
        spec, workload.learning_rate, workload.momentum, shape, "eager")
    fairness = execution_fairness(
        spec, data,
        timer_includes="one train step (GradientTape forward/backward and the momentum-SGD "
                       "variable updates) on batch tensors already on the device, and "
                       ".numpy() of the loss (a device sync)",
        compile_mode=COMPILE_MODES[spec.mode],
        eager_mode=COMPILE_MODES["eager"],
        data_pipeline="batches converted to device tensors before timing",
        settings=settings,
    )
    return measure_execution_mode(spec, stepper, eager, data, fairness)
