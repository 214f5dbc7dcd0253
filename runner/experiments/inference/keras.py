"""inference in Keras 3: model(x, training=False), and model.predict(), on any backend."""

from __future__ import annotations

import numpy as np

from runner.experiments.inference.protocol import inference_fairness, measure_inference
from runner.harness import open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec


class KerasCallPredictor:
    """Calls the model directly on a backend tensor."""

    def __init__(self, model) -> None:
        import keras

        self.model, self.ops = model, keras.ops

    def prepare(self, x: np.ndarray) -> object:
        return self.ops.convert_to_tensor(x)

    def predict(self, prepared: object) -> np.ndarray:
        return self.ops.convert_to_numpy(self.model(prepared, training=False))


class KerasPredictPredictor:
    """model.predict on a NumPy batch, one batch per call."""

    def __init__(self, model) -> None:
        self.model = model

    def prepare(self, x: np.ndarray) -> np.ndarray:
        return x

    def predict(self, prepared: np.ndarray) -> np.ndarray:
        return self.model.predict(prepared, batch_size=len(prepared), verbose=0)


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    data = cell.data
    model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    if spec.mode == "predict":
        predictor = KerasPredictPredictor(model)
        timer = ("one model.predict(x, batch_size=len(x)) call on a NumPy array (Keras' data "
                 "adapter, its predict function, and the NumPy output)")
        compile_mode = f"predict's function: Keras defaults on {spec.backend}"
        pipeline = "NumPy arrays passed to predict; Keras converts them inside the timer"
    else:
        predictor = KerasCallPredictor(model)
        timer = ("one model(x, training=False) call on a backend tensor, and "
                 "keras.ops.convert_to_numpy of the output")
        compile_mode = f"direct call, no compilation (eager {spec.backend})"
        pipeline = "inputs converted to backend tensors before timing"
    fairness = inference_fairness(cell, timer_includes=timer, compile_mode=compile_mode,
                                  data_pipeline=pipeline)
    return measure_inference(cell, predictor, fairness)
