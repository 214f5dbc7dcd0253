"""training in Keras 3: Sequential + compile/fit, on whichever backend KERAS_BACKEND names."""

from __future__ import annotations

import numpy as np

from runner.experiments.training.protocol import measure_training, training_data, training_fairness
from runner.framework_setup import configure_keras
from runner.outcome import CellOutcome
from runner.spec import CellSpec
from runner.workloads import Layer, initial_layers


def build_model(layers: list[Layer], input_shape: tuple[int, ...]):
    """A Sequential model holding exactly `layers` (Keras' layouts are the canonical ones)."""
    import keras

    model = keras.Sequential([keras.Input(shape=input_shape)])
    for index, layer in enumerate(layers):
        if layer.kind == "conv":
            model.add(keras.layers.Conv2D(layer.kernel.shape[3], 3, padding="same",
                                          activation="relu"))
            model.add(keras.layers.MaxPooling2D(2))
        else:
            if index > 0 and layers[index - 1].kind == "conv":
                model.add(keras.layers.Flatten())
            last = index == len(layers) - 1
            model.add(keras.layers.Dense(layer.kernel.shape[1],
                                         activation=None if last else "relu"))
    weighted = [l for l in model.layers if l.weights]
    for keras_layer, layer in zip(weighted, layers, strict=True):
        keras_layer.set_weights([layer.kernel, layer.bias])
    return model


def compile_model(model, learning_rate: float, momentum: float, **options) -> None:
    """The optimizer and loss every framework uses, in Keras' own API."""
    import keras

    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=learning_rate, momentum=momentum),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        **options,
    )


class KerasTrainer:
    def __init__(self, spec: CellSpec, learning_rate: float, momentum: float,
                 input_shape: tuple[int, ...]) -> None:
        self.spec = spec
        self.learning_rate, self.momentum = learning_rate, momentum
        self.input_shape = input_shape

    def reset(self, layers: list[Layer]) -> None:
        self.model = build_model(layers, self.input_shape)
        compile_model(self.model, self.learning_rate, self.momentum)
        from runner.accelerator_memory import reset_peak

        reset_peak(self.spec)

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        history = self.model.fit(x, y, batch_size=self.spec.batch_size, epochs=1,
                                 shuffle=False, verbose=0)
        return float(history.history["loss"][-1])  # fit returns after the device finished

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        logits = self.model.predict(x, batch_size=1024, verbose=0)
        return float((np.argmax(logits, axis=1) == y).mean())

    def peak_memory_mib(self) -> float | None:
        from runner.accelerator_memory import peak_mib

        return peak_mib(self.spec)


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_keras(spec)
    from runner.accelerator_memory import missing_accelerator

    reason = missing_accelerator(spec)
    if reason:
        from runner.outcome import skipped

        return skipped(reason)
    data = training_data(spec)
    trainer = KerasTrainer(spec, data.workload.learning_rate, data.workload.momentum,
                           data.x_train.shape[1:])
    trainer.reset(initial_layers(data.workload, data.dataset))
    fairness = training_fairness(
        spec, data,
        timer_includes="one model.fit(epochs=1, shuffle=False) call over the epoch's "
                       "arrays in the shared order (Keras converts them and compiles its "
                       "train function on the first call)",
        compile_mode=f"Keras defaults on {spec.backend}: run_eagerly="
                     f"{trainer.model.run_eagerly}, jit_compile={trainer.model.jit_compile}",
        data_pipeline="NumPy arrays passed to fit; Keras' own data adapter batches them",
        settings=settings,
    )
    return measure_training(spec, trainer, data, fairness)
