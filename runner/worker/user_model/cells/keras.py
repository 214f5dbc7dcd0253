"""A user's Keras 3 model on the cell's backend: the same saved weights loaded into the model
the user's file builds here; predict with compile()'s defaults (predict) or
jit_compile=True (jit_compile), and train_on_batch with the user's loss and optimizer."""

from __future__ import annotations

import numpy as np

from dlbench.runner.cell.outcome import CellOutcome, failed
from dlbench.runner.cell.spec import CellSpec
from dlbench.core.machine.cpu_flags import cpu_flags
from dlbench.runner.worker.user_model.known_crashes import onednn_refusal
from dlbench.runner.worker.user_model.loading import load_user_model
from dlbench.runner.worker.user_model.measure import (inference_outcome, measured_or_failed,
                                                      model_dir, model_fairness, model_request,
                                                      open_model_cell, parity_outcome,
                                                      training_outcome)
from dlbench.runner.cell.model_source import PARITY, TRAINING


def recompiled(model, jit_compile: bool | str) -> None:
    """compile() again with the user's loss and optimizer (a fresh one of its kind, if it
    had one) and `jit_compile`; an uncompiled model gets no loss."""
    import keras

    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None:
        optimizer = keras.optimizers.get(keras.optimizers.serialize(optimizer))
    model.compile(optimizer=optimizer or "sgd", loss=getattr(model, "loss", None),
                  jit_compile=jit_compile)


class PredictPredictor:
    """model.predict on a backend tensor, the whole input as one batch."""

    def __init__(self, adapter, model) -> None:
        self.adapter, self.model = adapter, model

    def prepare(self, x: np.ndarray) -> object:
        return self.adapter.to_device(x)

    def predict(self, prepared: object) -> np.ndarray:
        from dlbench.runner.worker.user_model.loading import first_array

        return first_array(self.model.predict(prepared, batch_size=int(prepared.shape[0]),
                                              verbose=0))


def run(spec: CellSpec) -> CellOutcome:
    """The cell's outcome; failed before the model runs when its layers would crash the
    backend (dlbench.runner.worker.user_model.known_crashes)."""
    refusal = onednn_refusal(spec.params.get("facts", {}), spec.backend,
                             spec.experiment == TRAINING, spec.device, cpu_flags())
    if refusal:
        return failed(refusal)
    return measured_or_failed(_measure, spec)


def _measure(spec: CellSpec) -> CellOutcome:
    cell = open_model_cell(spec)
    model = load_user_model(model_request(spec), model_dir(spec))
    jit: bool | str = True if spec.mode == "jit_compile" else "auto"
    recompiled(model, jit)
    compile_mode = f"compile(jit_compile={jit!r}) on {spec.backend}: jit_compile=" \
                   f"{model.jit_compile}"
    if spec.experiment == TRAINING:
        data = cell.data
        batch = spec.batch_size
        reps = -(-batch // len(data.x_test))
        x = cell.adapter.to_device(np.concatenate([data.x_test] * reps)[:batch])
        y = cell.adapter.to_device(np.concatenate([data.y] * reps)[:batch])
        fairness = model_fairness(cell, timer_includes="one train_on_batch(x, y) step on "
                                  "backend tensors (forward, loss, gradients, optimizer update)",
                                  compile_mode=compile_mode)
        return training_outcome(cell, lambda: model.train_on_batch(x, y), fairness)
    predictor = PredictPredictor(cell.adapter, model)
    fairness = model_fairness(cell, timer_includes="one model.predict(x, batch_size=len(x), "
                              "verbose=0) call on a backend tensor, returning NumPy",
                              compile_mode=compile_mode)
    if spec.experiment == PARITY:
        return parity_outcome(cell, predictor, fairness)
    return inference_outcome(cell, predictor, fairness, compiles=jit is True)
