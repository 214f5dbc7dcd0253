"""training in Keras 3: Sequential + compile/fit, on whichever backend KERAS_BACKEND names."""

from __future__ import annotations

from runner.adapters.keras import KerasTrainer
from runner.experiments.training.protocol import measure_training, training_fairness
from runner.harness import open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    trainer = KerasTrainer(cell.adapter, cell.data.workload, cell.data.input_shape)
    trainer.reset(cell.data.initial_layers())  # resolves Keras' defaults for the manifest
    fairness = training_fairness(
        cell,
        timer_includes="one model.fit(epochs=1, shuffle=False) call over the epoch's "
                       "arrays in the shared order (Keras converts them and compiles its "
                       "train function on the first call)",
        compile_mode=f"Keras defaults on {spec.backend}: {trainer.describe()}",
        data_pipeline="NumPy arrays passed to fit; Keras' own data adapter batches them",
    )
    return measure_training(cell, trainer, fairness)
