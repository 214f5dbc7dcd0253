"""inference in TensorFlow's own API: the tf.Module called eagerly, and under tf.function."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from runner.adapters.tensorflow import TfAdapter, TfModel, input_dtype
from runner.experiments.inference.protocol import inference_fairness, measure_inference
from runner.harness import open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec


class TfPredictor:
    """The workload's model; `graph` traces its call once with tf.function (any batch size)."""

    def __init__(self, adapter: TfAdapter, model: TfModel, input_shape: tuple[int, ...],
                 graph: bool, dtype: tf.DType = tf.float32) -> None:
        self.adapter, self.device = adapter, adapter.device
        signature = [tf.TensorSpec([None, *input_shape], dtype)]
        self.forward = tf.function(model.__call__, input_signature=signature) if graph else model

    def prepare(self, x: np.ndarray) -> tf.Tensor:
        return self.adapter.to_device(x)

    def predict(self, prepared: tf.Tensor) -> np.ndarray:
        with tf.device(self.device):
            return self.forward(prepared).numpy()  # .numpy() waits for the device


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    data = cell.data
    graph = spec.mode == "tf.function"
    model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    fairness = inference_fairness(
        cell,
        timer_includes="one model call on an input tensor already on the device, and "
                       ".numpy() of the output",
        compile_mode="tf.function graph, input signature with any batch size (no XLA)"
                     if graph else "eager",
        data_pipeline="inputs converted to device tensors before timing",
    )
    predictor = TfPredictor(cell.adapter, model, data.input_shape, graph,
                            input_dtype(data.workload))
    return measure_inference(cell, predictor, fairness)
