"""precision in Keras 3: dtype policies mixed_bfloat16 / mixed_float16 (Keras wraps the
optimizer in a LossScaleOptimizer for mixed_float16), on any backend."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dlbench.runner.worker.adapters.keras import KerasAdapter, KerasTrainer
from dlbench.runner.worker.experiments.precision.protocol import (EvaluatedInBatches,
                                                                  PrecisionFramework,
                                                                  run_precision)
from dlbench.runner.worker.harness import Cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, Workload

POLICIES = {"fp32": "float32", "bf16": "mixed_bfloat16", "fp16": "mixed_float16"}


class PolicyTrainer(EvaluatedInBatches, KerasTrainer):
    """The training model built and compiled under a Keras dtype policy."""

    def __init__(self, adapter: KerasAdapter, workload: Workload, input_shape: tuple[int, ...],
                 precision: str) -> None:
        super().__init__(adapter, workload, input_shape)
        self.policy = POLICIES[precision]

    def reset(self, layers: list[Layer]) -> None:
        import keras

        keras.config.set_dtype_policy(self.policy)
        try:
            super().reset(layers)
        finally:
            keras.config.set_dtype_policy("float32")

    def prepare(self, x: np.ndarray) -> object:
        return self.adapter.to_device(x)

    def predict(self, prepared: object) -> np.ndarray:
        import keras

        output = self.model(prepared, training=False)
        return keras.ops.convert_to_numpy(keras.ops.cast(output, "float32"))


class KerasPrecision(PrecisionFramework):
    """Keras' hooks of the precision protocol: dtype policies, fit, direct model calls."""

    trainer_class = PolicyTrainer
    timer_includes = ("each epoch of one model.fit(epochs=N) call over the epochs' batches "
                      "in the shared order, timed by a callback (on_epoch_begin to "
                      "on_epoch_end)")

    def policy(self, spec: CellSpec) -> str:
        return (f"Keras dtype policy {POLICIES[spec.precision]} (float32 variables)"
                + ("; compile() wraps SGD in a LossScaleOptimizer" if spec.precision == "fp16"
                   else ""))

    def compile_mode(self, spec: CellSpec) -> str:
        return (f"Keras defaults on {spec.backend} (fit); inference by direct model calls on "
                f"backend tensors")

    def refusals(self, spec: CellSpec) -> tuple[type[BaseException], ...]:
        return _refusals(spec.backend)

    def facts(self, make: Callable[[str], PolicyTrainer], cell: Cell) -> dict:
        return policy_facts(make(cell.spec.precision), cell)


def run(spec: CellSpec) -> CellOutcome:
    return run_precision(spec, KerasPrecision())


def policy_facts(trainer: PolicyTrainer, cell: Cell) -> dict:
    """What Keras made of the policy: compute/variable dtypes and the optimizer it used."""
    trainer.reset(cell.data.initial_layers())
    model = trainer.model
    return {"keras_compute_dtype": model.layers[0].compute_dtype,
            "keras_variable_dtype": model.layers[0].variable_dtype,
            "keras_optimizer": type(model.optimizer).__name__}


def _refusals(backend: str) -> tuple[type[BaseException], ...]:
    """The exceptions by which a Keras backend refuses a dtype."""
    refusals: list[type[BaseException]] = [NotImplementedError, TypeError]
    if backend == "tensorflow":
        import tensorflow as tf

        refusals += [tf.errors.NotFoundError, tf.errors.InvalidArgumentError,
                     tf.errors.UnimplementedError]
    elif backend == "torch":
        refusals.append(RuntimeError)
    elif backend == "jax":
        refusals.append(ValueError)
    return tuple(refusals)
