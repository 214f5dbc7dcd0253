"""parity in Keras 3: the training model's forward pass and one fit step with keras SGD."""

from __future__ import annotations

import numpy as np

from dlbench.runner.worker.adapters.keras import KerasTrainer
from dlbench.runner.worker.experiments.parity.model_protocol import ModelCase, run_parity_cell
from dlbench.runner.models.weights import Weights
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer


class KerasParity:
    """Keras' hooks of the parity protocol: direct model calls in inference mode, keras SGD."""

    trainer_class = KerasTrainer

    def logits(self, trainer: KerasTrainer, x: np.ndarray) -> np.ndarray:
        import keras

        return keras.ops.convert_to_numpy(trainer.model(x, training=False))

    def canonical_layers(self, trainer: KerasTrainer) -> list[Layer]:
        """The model's weights; Keras' layouts are the canonical ones."""
        weighted = [layer for layer in trainer.model.layers if layer.weights]
        kinds = ["conv" if len(layer.get_weights()[0].shape) == 4 else "dense"
                 for layer in weighted]
        return [Layer(kind, *(np.array(w, copy=True) for w in layer.get_weights()))
                for kind, layer in zip(kinds, weighted, strict=True)]

    def compile_mode(self, trainer: KerasTrainer) -> str:
        return f"Keras defaults on {trainer.adapter.spec.backend}: {trainer.describe()}"

    def build_model(self, spec: CellSpec, case: ModelCase):
        from dlbench.runner.models import keras as models

        return models.build(case.definition, case.framework_weights, case.conventions)

    def model_logits(self, spec: CellSpec, model, x: np.ndarray) -> np.ndarray:
        import keras

        return keras.ops.convert_to_numpy(model(x, training=False))

    def model_weights(self, model, case: ModelCase) -> Weights:
        from dlbench.runner.models import keras as models

        return models.read_weights(model, case.definition)

    def model_step(self, spec: CellSpec, model, case: ModelCase) -> float:
        """One train_on_batch with keras SGD."""
        import keras

        model.compile(optimizer=keras.optimizers.SGD(learning_rate=case.workload.learning_rate,
                                                     momentum=case.workload.momentum),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return float(np.ravel(model.train_on_batch(case.x_step, case.y_step))[0])

    def model_compile_mode(self, spec: CellSpec, model) -> str:
        return (f"Keras defaults on {spec.backend}: run_eagerly={model.run_eagerly}, "
                f"jit_compile={model.jit_compile}")


def run(spec: CellSpec) -> CellOutcome:
    return run_parity_cell(spec, KerasParity())
