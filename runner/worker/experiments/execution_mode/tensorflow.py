"""execution-mode in TensorFlow's own API: eager vs tf.function vs tf.function(jit_compile)."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from dlbench.runner.worker.adapters.tensorflow import TfAdapter, TfTrainer
from dlbench.runner.worker.experiments.execution_mode.protocol import execution_fairness, measure_execution_mode
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, Workload

COMPILE_MODES = {
    "eager": "eager (the train step runs op by op)",
    "tf.function": "tf.function train step (graph, no XLA)",
    "xla": "tf.function(jit_compile=True) train step (XLA)",
}


class TfStepper(TfTrainer):
    """The training model and its GradientTape SGD step, wrapped as the mode says."""

    def __init__(self, adapter: TfAdapter, workload: Workload, input_shape: tuple[int, ...],
                 mode: str) -> None:
        super().__init__(adapter, workload, input_shape, jit_compile=mode == "xla")
        self.mode = mode

    def prepare(self, x: np.ndarray, y: np.ndarray) -> tuple[tf.Tensor, tf.Tensor]:
        return self.adapter.to_device(x), self.adapter.to_device(y)

    def reset(self, layers: list[Layer]) -> None:
        super().reset(layers)
        if self.mode == "eager":
            self.train_step = self._train_step

    def step(self, x: tf.Tensor, y: tf.Tensor) -> float:
        with tf.device(self.device):
            return float(self.train_step(x, y).numpy())  # .numpy() waits for the device


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    workload, shape = cell.data.workload, cell.data.input_shape
    stepper = TfStepper(cell.adapter, workload, shape, spec.mode)
    eager = None if spec.mode == "eager" else TfStepper(cell.adapter, workload, shape, "eager")
    fairness = execution_fairness(
        cell,
        timer_includes="one train step (GradientTape forward/backward and the momentum-SGD "
                       "variable updates) on batch tensors already on the device, and "
                       ".numpy() of the loss (a device sync)",
        compile_mode=COMPILE_MODES[spec.mode],
        eager_mode=COMPILE_MODES["eager"],
        data_pipeline="batches converted to device tensors before timing",
    )
    return measure_execution_mode(cell, stepper, eager, fairness)
