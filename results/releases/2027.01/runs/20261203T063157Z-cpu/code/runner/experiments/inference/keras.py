"""inference in Keras 3, on any backend: model(x, training=False) under the backend's no-grad
context (call, the default), and predict_on_batch of a model compiled with
jit_compile=True (jit_compile, the fastest documented mode: Keras' jitted predict function,
XLA on TensorFlow and JAX, torch.compile under torch.no_grad on torch)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from runner.adapters.keras import KerasAdapter, compile_model
from runner.experiments.inference.protocol import inference_fairness, measure_inference
from runner.harness import open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec
from runner.workloads import Workload


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


class KerasJitPredictor:
    """predict_on_batch on a backend tensor, through the jitted predict function Keras builds
    for a model compiled with jit_compile=True."""

    def __init__(self, adapter: KerasAdapter, model, workload: Workload) -> None:
        self.adapter, self.model = adapter, model
        compile_model(model, workload, jit_compile=True)

    def prepare(self, x: np.ndarray) -> object:
        return self.adapter.to_device(x)

    def predict(self, prepared: object) -> np.ndarray:
        return np.asarray(self.model.predict_on_batch(prepared))  # NumPy: waits for the device

    def facts(self, prepared: object) -> dict:
        """What the timed call is, and what Keras made of jit_compile."""
        return {"keras_timed_call": "predict_on_batch",
                "keras_jit_compile": bool(self.model.jit_compile)}


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    data = cell.data
    model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    pipeline = "inputs converted to backend tensors before timing"
    if spec.mode == "jit_compile":
        predictor = KerasJitPredictor(cell.adapter, model, data.workload)
        timer = ("one model.predict_on_batch(x) call on a backend tensor (Keras' predict "
                 "function, jitted, under the backend's no-grad context) returning NumPy")
        compile_mode = (f"compile(jit_compile=True) on {spec.backend}: "
                        f"jit_compile={model.jit_compile}")
    else:
        predictor = KerasCallPredictor(cell.adapter, model)
        timer = ("one model(x, training=False) call on a backend tensor under the backend's "
                 "no-grad context, and keras.ops.convert_to_numpy of the output")
        compile_mode = f"direct call, no compilation (eager {spec.backend})"
    fairness = inference_fairness(cell, timer_includes=timer, compile_mode=compile_mode,
                                  data_pipeline=pipeline)
    outcome = measure_inference(cell, predictor, fairness)
    facts = predictor.facts(predictor.prepare(data.x_test[:1]))
    return replace(outcome, details=outcome.details | facts)
