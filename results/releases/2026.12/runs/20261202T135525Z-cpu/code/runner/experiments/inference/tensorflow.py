"""inference in TensorFlow's own API: the tf.Module called eagerly, and under tf.function."""

from __future__ import annotations

import numpy as np
import tensorflow as tf

from runner.experiments.inference.protocol import inference_fairness, measure_inference
from runner.experiments.training.protocol import training_data
from runner.experiments.training.tensorflow import TfModel
from runner.framework_setup import configure_tensorflow
from runner.outcome import CellOutcome, skipped
from runner.spec import CellSpec
from runner.workloads import initial_layers


class TfPredictor:
    """The workload's model; `graph` traces its call once with tf.function (any batch size)."""

    def __init__(self, model: TfModel, device: str, input_shape: tuple[int, ...],
                 graph: bool) -> None:
        self.device = device
        signature = [tf.TensorSpec([None, *input_shape], tf.float32)]
        self.forward = tf.function(model.__call__, input_signature=signature) if graph else model

    def prepare(self, x: np.ndarray) -> tf.Tensor:
        with tf.device(self.device):
            return tf.identity(tf.constant(x))

    def predict(self, prepared: tf.Tensor) -> np.ndarray:
        with tf.device(self.device):
            return self.forward(prepared).numpy()  # .numpy() waits for the device


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_tensorflow(spec)
    if spec.device == "cuda" and not tf.config.list_physical_devices("GPU"):
        return skipped("TensorFlow sees no GPU (this TensorFlow build or machine has no CUDA)")
    data = training_data(spec)
    device = "/GPU:0" if spec.device == "cuda" else "/CPU:0"
    graph = spec.mode == "tf.function"
    with tf.device(device):
        model = TfModel(initial_layers(data.workload, data.dataset))
    predictor = TfPredictor(model, device, data.x_test.shape[1:], graph)
    fairness = inference_fairness(
        spec,
        timer_includes="one model call on an input tensor already on the device, and "
                       ".numpy() of the output",
        compile_mode="tf.function graph, input signature with any batch size (no XLA)"
                     if graph else "eager",
        data_pipeline="inputs converted to device tensors before timing",
        settings=settings,
    )
    return measure_inference(spec, predictor, data, fairness)
