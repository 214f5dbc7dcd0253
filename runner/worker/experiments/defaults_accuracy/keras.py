"""defaults-accuracy in Keras 3, on whichever backend KERAS_BACKEND names: Dense and
BatchNormalization with their own initialisers and constants, keras.optimizers.Adam() with no
options, compile()'s defaults and fit()'s own shuffling, seeded by keras.utils.set_random_seed(k)
(the adapter's seed_keras, which does the same without importing TensorFlow)."""

from __future__ import annotations

import numpy as np

from dlbench.runner.worker.adapters.keras import seed_keras
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.experiments.defaults_accuracy.protocol import (
    BATCH_SIZE, CLASSES, FEATURES, HIDDEN, TrainedWithDefaults, recorded_defaults,
    run_defaults_cell)

#: Batches of the test set per predict call (evaluation only: no effect on the model).
PREDICT_BATCH = 1024


def build(seed: int):
    """The model, compiled, as Keras builds it by default, from seed `seed`."""
    import keras

    seed_keras(seed)
    model = keras.Sequential([keras.Input(shape=(FEATURES,)), keras.layers.Dense(HIDDEN),
                              keras.layers.BatchNormalization(), keras.layers.ReLU(),
                              keras.layers.Dense(HIDDEN, activation="relu"),
                              keras.layers.Dense(CLASSES)])
    model.compile(optimizer=keras.optimizers.Adam(),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return model


def read_defaults(model) -> dict[str, str]:
    """The settings this experiment leaves to Keras, read back from the built objects (the
    documented words where a value cannot be read: where epsilon enters, the shuffling)."""
    dense, norm = model.layers[0], model.layers[1]
    return recorded_defaults("keras", {
        "dense kernel initialiser": type(dense.kernel_initializer).__name__,
        "dense bias initialiser": type(dense.bias_initializer).__name__,
        "Adam epsilon": f"{float(model.optimizer.epsilon):g}",
        "BatchNorm momentum (as the framework defines it)": f"{norm.momentum:g}",
        "BatchNorm running statistics: share kept per step": f"{norm.momentum:g}",
        "BatchNorm epsilon": f"{norm.epsilon:g}",
    })


def train(seed: int, epochs: int, x: np.ndarray, y: np.ndarray, x_test: np.ndarray,
          y_test: np.ndarray) -> TrainedWithDefaults:
    """Train from seed `seed` with Keras' defaults; the final test accuracy from predict."""
    model = build(seed)
    defaults = read_defaults(model)
    history = model.fit(x, y, batch_size=BATCH_SIZE, epochs=epochs, verbose=0)
    logits = model.predict(x_test, batch_size=PREDICT_BATCH, verbose=0)
    predicted = np.asarray(logits).argmax(axis=1)
    return TrainedWithDefaults([float(v) for v in history.history["loss"]],
                               float(np.mean(predicted == y_test)), defaults)


def run(spec: CellSpec) -> CellOutcome:
    return run_defaults_cell(
        spec, "keras", train, label="Keras",
        compile_mode=f"compile()'s defaults on {spec.backend}",
        data_pipeline=f"model.fit on in-memory NumPy arrays, batch {BATCH_SIZE}, "
                      f"shuffle=True (fit's default: its own order each epoch)")
