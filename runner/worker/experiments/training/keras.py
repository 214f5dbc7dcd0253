"""training in Keras 3: Sequential + compile/fit, on whichever backend KERAS_BACKEND names;
Keras' defaults (default) or compile(jit_compile=True) (jit_compile, the fastest documented
mode: XLA on TensorFlow and JAX, torch.compile on torch)."""

from __future__ import annotations

from dataclasses import replace

from dlbench.runner.worker.adapters.keras import KerasTrainer
from dlbench.runner.worker.experiments.training.protocol import measure_training, training_fairness
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec

#: Mode name -> the compile() options it stands for.
COMPILE_OPTIONS: dict[str, dict] = {"default": {}, "jit_compile": {"jit_compile": True}}


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    trainer = KerasTrainer(cell.adapter, cell.data.workload, cell.data.input_shape,
                           **COMPILE_OPTIONS[spec.mode])
    trainer.reset(cell.data.initial_layers())  # resolves Keras' defaults for the manifest
    fairness = training_fairness(
        cell,
        timer_includes="each epoch of one model.fit(epochs=N) call, from the callback's "
                       "on_epoch_begin to its on_epoch_end (Keras has read the epoch loss); "
                       "the first epoch includes tracing/compilation of the train function, "
                       "fit's own setup before the first epoch is outside the timer",
        compile_mode=f"{spec.mode} on {spec.backend}: {trainer.describe()}",
        data_pipeline="a keras.utils.PyDataset serving the epoch's batches in the shared "
                      "order (NumPy slices; Keras converts them); the next epoch's order is "
                      "loaded in on_epoch_end, outside the timer",
    )
    outcome = measure_training(cell, trainer, fairness)
    return replace(outcome, details=outcome.details | {"keras_fit_calls": trainer.fit_calls})
