"""parity in Keras 3: the training model's forward pass and one fit step with keras SGD."""

from __future__ import annotations

import numpy as np

from runner.adapters.keras import KerasTrainer
from runner.experiments.parity.model_protocol import (ModelResult, is_model_workload, model_case,
                                                      model_parity_fairness, model_parity_outcome)
from runner.experiments.parity.protocol import (FrameworkResult, parity_case, parity_fairness,
                                                parity_outcome)
from runner.harness import configured_adapter, open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec
from runner.workloads import Layer


def canonical_layers(model) -> list[Layer]:
    """The model's weights; Keras' layouts are the canonical ones."""
    weighted = [layer for layer in model.layers if layer.weights]
    kinds = ["conv" if len(layer.get_weights()[0].shape) == 4 else "dense" for layer in weighted]
    return [Layer(kind, *(np.array(w, copy=True) for w in layer.get_weights()))
            for kind, layer in zip(kinds, weighted, strict=True)]


def run(spec: CellSpec) -> CellOutcome:
    if is_model_workload(spec.workload):
        return run_model(spec, configured_adapter(spec)[1])
    cell = open_cell(spec)
    import keras

    case = parity_case(cell)
    trainer = KerasTrainer(cell.adapter, cell.data.workload, cell.data.input_shape)
    trainer.reset(case.framework_layers)
    logits = keras.ops.convert_to_numpy(trainer.model(case.x_forward, training=False))
    before = canonical_layers(trainer.model)
    trainer.train_epoch(case.x_step, case.y_step)  # one batch: exactly one SGD step
    result = FrameworkResult(logits, before, canonical_layers(trainer.model))
    fairness = parity_fairness(
        cell, compile_mode=f"Keras defaults on {spec.backend}: {trainer.describe()}")
    return parity_outcome(cell, case, result, fairness)


def run_model(spec: CellSpec, settings: dict[str, str]) -> CellOutcome:
    """A runner.models family: inference-mode logits, then one train_on_batch with keras SGD."""
    import keras

    from runner.models import keras as models

    case = model_case(spec)
    model = models.build(case.definition, case.framework_weights, case.conventions)
    logits = keras.ops.convert_to_numpy(model(case.x_forward, training=False))
    before = models.read_weights(model, case.definition)
    model.compile(optimizer=keras.optimizers.SGD(learning_rate=case.workload.learning_rate,
                                                 momentum=case.workload.momentum),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    loss = model.train_on_batch(case.x_step, case.y_step)
    result = ModelResult(logits, float(np.ravel(loss)[0]), before,
                         models.read_weights(model, case.definition))
    fairness = model_parity_fairness(
        spec, case, compile_mode=f"Keras defaults on {spec.backend}: run_eagerly="
                                 f"{model.run_eagerly}, jit_compile={model.jit_compile}",
        settings=settings)
    return model_parity_outcome(spec, case, result, fairness)
