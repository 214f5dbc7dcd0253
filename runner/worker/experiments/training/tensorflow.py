"""training in TensorFlow's own API: tf.Variable weights, tf.GradientTape, tf.function
(default) or tf.function(jit_compile=True) (xla, the fastest documented mode)."""

from __future__ import annotations

from dlbench.runner.worker.adapters.tensorflow import TfTrainer
from dlbench.runner.worker.experiments.training.protocol import measure_training, training_fairness
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    xla = spec.mode == "xla"
    trainer = TfTrainer(cell.adapter, cell.data.workload, cell.data.input_shape, jit_compile=xla)
    fairness = training_fairness(
        cell,
        timer_includes="converting the epoch's arrays to tensors on the device, every "
                       "tf.function train step (traced on the first call), and reading "
                       "the epoch loss (a device sync)",
        compile_mode="tf.function(jit_compile=True) train step (XLA)" if xla
                     else "tf.function graph (no XLA)",
        data_pipeline="in-memory tensors sliced per batch in the shared epoch order",
    )
    return measure_training(cell, trainer, fairness)
