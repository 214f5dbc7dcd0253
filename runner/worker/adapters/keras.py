"""The Keras 3 adapter, on whichever backend KERAS_BACKEND names: configuration (the
backend's framework first), Sequential models from canonical weights, devices, memory, and
the compile/fit trainer every Keras experiment file builds on."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from contextlib import AbstractContextManager

import numpy as np

from dlbench.runner.worker.adapters import Adapter
from dlbench.runner.worker.epochs import EpochClock, EpochData
from dlbench.runner.models.conventions import CONVENTIONS
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, ModelStart, Workload


def backend_adapter(spec: CellSpec) -> Adapter | None:
    """The adapter of the framework under Keras (TensorFlow, PyTorch), or None for JAX,
    which this module handles itself."""
    if spec.backend == "tensorflow":
        from dlbench.runner.worker.adapters.tensorflow import TfAdapter

        return TfAdapter(spec)
    if spec.backend == "torch":
        from dlbench.runner.worker.adapters.pytorch import TorchAdapter

        return TorchAdapter(spec)
    return None


def configure_jax(spec: CellSpec) -> dict[str, str]:
    """Matmul precision and no persistent compilation cache for JAX; returns the settings."""
    import jax

    jax.config.update("jax_default_matmul_precision", "float32")
    jax.config.update("jax_enable_compilation_cache", False)  # every compile is cold
    return {"jax.version": jax.__version__, "jax.default_matmul_precision": "float32",
            "jax.compilation_cache": "off (no persistent cache)",
            "jax.threads": f"capped by CPU affinity to {spec.threads} cores"}


def sequential_model(layers: list[Layer], input_shape: tuple[int, ...]):
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


def family_model(workload: Workload, start: ModelStart, input_shape: tuple[int, ...]):
    """The builder of the dlbench.runner.models families: the definition with the shared weights."""
    from dlbench.runner.models import keras as models

    return models.build(start.definition, start.weights, CONVENTIONS)


def layered_model(workload: Workload, layers: list[Layer], input_shape: tuple[int, ...]):
    """The builder of the mlp and cnn workloads, whose weights are `layers`."""
    return sequential_model(layers, input_shape)


#: Workload model kind -> builder(workload, layers, input_shape): the same signature in every
#: adapter; every other kind is a dlbench.runner.models family (dlbench.runner.models.families), built by
#: family_model from its ModelStart in place of layers.
BUILDERS: dict[str, Callable] = {
    "mlp": layered_model, "cnn": layered_model}


def compile_model(model, workload: Workload, **options) -> None:
    """The optimizer and loss every framework uses, in Keras' own API."""
    import keras

    model.compile(
        optimizer=keras.optimizers.SGD(learning_rate=workload.learning_rate,
                                       momentum=workload.momentum),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        **options,
    )


def seed_keras(seed: int) -> None:
    """What keras.utils.set_random_seed does, without importing TensorFlow on the torch and
    JAX backends: Keras imports TensorFlow whenever it is installed just to seed tf.data,
    which cost a Keras-on-torch process 3.9 s and put TensorFlow's memory into its import
    footprint. On TensorFlow it is Keras's own function."""
    import keras

    if keras.backend.backend() == "tensorflow":
        keras.utils.set_random_seed(seed)
        return
    import random

    from keras.src.backend.common import global_state
    from keras.src.random import seed_generator
    from keras.src.utils.rng_utils import GLOBAL_RANDOM_SEED

    global_state.set_global_attribute(GLOBAL_RANDOM_SEED, seed)
    global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
    random.seed(seed)
    np.random.seed(seed)
    if keras.backend.backend() == "torch":
        import torch

        torch.manual_seed(seed)


class KerasAdapter(Adapter):
    """Keras 3 on the cell's backend and device: devices and memory are the backend's."""

    def __init__(self, spec: CellSpec) -> None:
        super().__init__(spec)
        self.backend = backend_adapter(spec)

    def missing_accelerator(self) -> str:
        if self.backend is not None:
            return self.backend.missing_accelerator()
        if self.spec.device != "cuda":
            return ""
        import jax

        return "" if jax.default_backend() == "gpu" else "JAX sees no GPU"

    def configure(self) -> dict[str, str]:
        settings = self.backend.configure() if self.backend else (super().configure()
                                                                  | configure_jax(self.spec))
        import keras

        seed_keras(0)
        return settings | {"keras.version": keras.__version__,
                           "keras.backend": keras.backend.backend()}

    def build_model(self, workload: Workload, layers: list[Layer],
                    input_shape: tuple[int, ...]):
        return BUILDERS.get(workload.model, family_model)(workload, layers, input_shape)

    def to_device(self, x: np.ndarray):
        import keras

        return keras.ops.convert_to_tensor(x)

    def no_grad(self) -> AbstractContextManager:
        """The backend's no-grad context for inference (torch.no_grad on torch; TensorFlow
        and JAX record no gradients outside a tape or a grad transform)."""
        if self.spec.backend == "torch":
            import torch

            return torch.no_grad()
        return contextlib.nullcontext()

    def sync(self) -> None:
        if self.backend is not None:
            self.backend.sync()
        elif self.spec.device == "cuda":
            import jax

            jax.effects_barrier()

    def warm_up(self) -> None:
        import keras

        model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(2)])
        model.compile(optimizer="sgd", loss="mse")
        x = np.zeros((2, 4), np.float32)
        model.fit(x, np.zeros((2, 2), np.float32), verbose=0)
        model.predict(x, verbose=0)
        keras.ops.convert_to_numpy(model(keras.ops.convert_to_tensor(x), training=False))

    def reset_peak(self) -> None:
        if self.backend is not None:
            self.backend.reset_peak()

    def accelerator_peak_mib(self) -> float | None:
        if self.backend is not None:
            return self.backend.accelerator_peak_mib()
        if self.spec.device != "cuda":
            return None
        import jax

        stats = jax.devices()[0].memory_stats() or {}
        return stats.get("peak_bytes_in_use", 0) / 2**20

    def compile_cache_files(self) -> int | None:
        """The backend's (TF: XLA persistent cache off by default; JAX: switched off)."""
        return self.backend.compile_cache_files() if self.backend else None


def epoch_batches(epoch_data: EpochData, batch_size: int):
    """A keras.utils.PyDataset serving the batches of one epoch in the shared order;
    `load(epoch)` switches it to another epoch's arrays (called between epochs)."""
    import keras

    class EpochBatches(keras.utils.PyDataset):
        def __init__(self) -> None:
            super().__init__(workers=1, use_multiprocessing=False)
            self.load(0)

        def load(self, epoch: int) -> None:
            self.x, self.y = epoch_data(epoch)

        def __len__(self) -> int:
            return -(-len(self.y) // batch_size)

        def __getitem__(self, index: int) -> tuple[np.ndarray, np.ndarray]:
            rows = slice(index * batch_size, (index + 1) * batch_size)
            return self.x[rows], self.y[rows]

    return EpochBatches()


def epoch_clock_callback(clock: EpochClock, batches, epochs: int):
    """A Keras callback that starts the harness's clock at each epoch's beginning, stops it
    at the epoch's end (Keras has read the loss), then loads the next epoch's order."""
    import keras

    class ClockCallback(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch: int, logs: dict | None = None) -> None:
            clock.begin(epoch)

        def on_epoch_end(self, epoch: int, logs: dict | None = None) -> None:
            clock.end(epoch, float((logs or {})["loss"]))
            if epoch + 1 < epochs:
                batches.load(epoch + 1)  # outside the timer

    return ClockCallback()


class KerasTrainer:
    """The workload's Sequential model, compiled with Keras SGD and trained with one fit."""

    def __init__(self, adapter: KerasAdapter, workload: Workload,
                 input_shape: tuple[int, ...], **compile_options) -> None:
        self.adapter, self.workload, self.input_shape = adapter, workload, input_shape
        self.batch_size = adapter.spec.batch_size
        self.compile_options = compile_options
        self.fit_calls = 0

    def reset(self, layers: list[Layer]) -> None:
        self.model = self.adapter.build_model(self.workload, layers, self.input_shape)
        compile_model(self.model, self.workload, **self.compile_options)
        self.adapter.reset_peak()

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        history = self.model.fit(x, y, batch_size=self.batch_size, epochs=1,
                                 shuffle=False, verbose=0)
        return float(history.history["loss"][-1])  # fit returns after the device finished

    def train(self, epochs: int, epoch_data: EpochData, clock: EpochClock) -> None:
        """All epochs in one model.fit(epochs=N), timed by a callback."""
        batches = epoch_batches(epoch_data, self.batch_size)
        self.fit_calls += 1
        self.model.fit(batches, epochs=epochs, shuffle=False, verbose=0,
                       callbacks=[epoch_clock_callback(clock, batches, epochs)])

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        """Test accuracy, predicted at the training batch size, so that evaluating never
        needs more memory than a training step."""
        logits = self.model.predict(x, batch_size=self.batch_size, verbose=0)
        return float((np.argmax(logits, axis=1) == y).mean())

    def peak_memory_mib(self) -> float | None:
        return self.adapter.accelerator_peak_mib()

    def describe(self) -> str:
        """What Keras made of the compile options."""
        return f"run_eagerly={self.model.run_eagerly}, jit_compile={self.model.jit_compile}"


ADAPTER = KerasAdapter
