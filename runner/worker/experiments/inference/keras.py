"""inference in Keras 3, on any backend: model.predict(x) of a model compiled with Keras'
defaults (predict, the plain path: jit_compile="auto" resolves per backend: eager on torch,
a tf.function graph on TensorFlow on a CPU, XLA on TensorFlow on a GPU and on JAX), the same
predict of a model compiled with jit_compile=True (jit_compile, the production path: XLA on
TensorFlow and JAX, torch.compile on torch), and model(x, training=False) under the
backend's no-grad context (call: shown, never compared across frameworks)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dlbench.runner.worker.adapters.keras import KerasAdapter, compile_model
from dlbench.runner.worker.experiments.inference.protocol import inference_fairness, measure_inference
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Workload


class KerasCallPredictor:
    """Calls the model directly on a backend tensor, under the backend's no-grad context."""

    def __init__(self, adapter: KerasAdapter, model) -> None:
        import keras

        self.adapter, self.model, self.ops = adapter, model, keras.ops

    def prepare(self, x: np.ndarray) -> object:
        return self.adapter.to_device(x)

    def predict(self, prepared: object) -> np.ndarray:
        with self.adapter.no_grad():
            return self.ops.convert_to_numpy(self.model(prepared, training=False))

    def facts(self, prepared: object) -> dict:
        """What the timed call is, and (on torch) whether its output recorded a graph."""
        facts: dict = {"keras_timed_call": "model(x, training=False) under the no-grad context"}
        if self.adapter.spec.backend == "torch":
            with self.adapter.no_grad():
                output = self.model(prepared, training=False)
            facts["keras_output_requires_grad"] = bool(output.requires_grad)
        return facts


class KerasPredictPredictor:
    """model.predict on a backend tensor, the whole input as one batch, of a model compiled
    with `jit_compile` ("auto": Keras' default)."""

    def __init__(self, model, workload: Workload, adapter: KerasAdapter,
                 jit_compile: bool | str) -> None:
        self.adapter, self.model = adapter, model
        compile_model(model, workload, jit_compile=jit_compile)

    def prepare(self, x: np.ndarray) -> object:
        return self.adapter.to_device(x)

    def predict(self, prepared: object) -> np.ndarray:
        batch = int(prepared.shape[0])
        return np.asarray(self.model.predict(prepared, batch_size=batch, verbose=0))

    def facts(self, prepared: object) -> dict:
        """What the timed call is, and what Keras made of jit_compile."""
        return {"keras_timed_call": "predict(x, batch_size=len(x), verbose=0)",
                "keras_jit_compile": bool(self.model.jit_compile)}


def predictor_for(spec: CellSpec, adapter: KerasAdapter, model, workload: Workload
                  ) -> tuple[object, str, str]:
    """The mode's predictor, what its timer includes, and its compile mode in words."""
    if spec.mode == "call":
        return (KerasCallPredictor(adapter, model),
                "one model(x, training=False) call on a backend tensor under the backend's "
                "no-grad context, and keras.ops.convert_to_numpy of the output",
                f"direct call, no compilation (eager {spec.backend})")
    jit: bool | str = True if spec.mode == "jit_compile" else "auto"
    predictor = KerasPredictPredictor(model, workload, adapter, jit)
    return (predictor,
            "one model.predict(x, batch_size=len(x), verbose=0) call on a backend tensor "
            "(Keras' predict loop and predict function, under the backend's no-grad context) "
            "returning NumPy",
            f"compile(jit_compile={jit!r}) on {spec.backend}: "
            f"jit_compile={predictor.model.jit_compile}")


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    data = cell.data
    model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    predictor, timer, compile_mode = predictor_for(spec, cell.adapter, model, data.workload)
    fairness = inference_fairness(cell, timer_includes=timer, compile_mode=compile_mode,
                                  data_pipeline="inputs converted to backend tensors before "
                                                "timing")
    outcome = measure_inference(cell, predictor, fairness)
    facts = predictor.facts(predictor.prepare(data.x_test[:1]))
    return replace(outcome, details=outcome.details | facts)
