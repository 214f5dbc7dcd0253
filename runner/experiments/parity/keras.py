"""parity in Keras 3: the training model's forward pass and one fit step with keras SGD."""

from __future__ import annotations

import numpy as np

from runner.experiments.parity.model_protocol import (ModelResult, is_model_workload, model_case,
                                                      model_parity_fairness, model_parity_outcome)
from runner.experiments.parity.protocol import (FrameworkResult, parity_case, parity_fairness,
                                                parity_outcome)
from runner.experiments.training.keras import KerasTrainer
from runner.framework_setup import configure_keras
from runner.outcome import CellOutcome, skipped
from runner.spec import CellSpec
from runner.workloads import Layer


def canonical_layers(model) -> list[Layer]:
    """The model's weights; Keras' layouts are the canonical ones."""
    weighted = [layer for layer in model.layers if layer.weights]
    kinds = ["conv" if len(layer.get_weights()[0].shape) == 4 else "dense" for layer in weighted]
    return [Layer(kind, *(np.array(w, copy=True) for w in layer.get_weights()))
            for kind, layer in zip(kinds, weighted, strict=True)]


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_keras(spec)
    from runner.accelerator_memory import missing_accelerator

    reason = missing_accelerator(spec)
    if reason:
        return skipped(reason)
    import keras

    if is_model_workload(spec.workload):
        return run_model(spec, settings)
    case = parity_case(spec)
    workload = case.data.workload
    trainer = KerasTrainer(spec, workload.learning_rate, workload.momentum,
                           case.x_step.shape[1:])
    trainer.reset(case.framework_layers)
    logits = keras.ops.convert_to_numpy(trainer.model(case.x_forward, training=False))
    before = canonical_layers(trainer.model)
    trainer.train_epoch(case.x_step, case.y_step)  # one batch: exactly one SGD step
    result = FrameworkResult(logits, before, canonical_layers(trainer.model))
    fairness = parity_fairness(
        spec, compile_mode=f"Keras defaults on {spec.backend}: run_eagerly="
                           f"{trainer.model.run_eagerly}, jit_compile={trainer.model.jit_compile}",
        settings=settings)
    return parity_outcome(spec, case, result, fairness)


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
