"""inference in TensorFlow's own API: the tf.Module called eagerly (eager, the default), under
tf.function (graph, no XLA), and under tf.function(jit_compile=True) (xla, the fastest)."""

from __future__ import annotations

import tensorflow as tf

from dlbench.runner.worker.adapters.tensorflow import TfAdapter, TfForwardCalls, TfModel, input_dtype
from dlbench.runner.worker.experiments.inference.protocol import inference_fairness, measure_inference
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


COMPILE_MODES = {
    "eager": "eager",
    "tf.function": "tf.function graph, input signature with any batch size (no XLA)",
    "xla": "tf.function(jit_compile=True): XLA, compiled once per batch shape",
}


class TfPredictor(TfForwardCalls):
    """The workload's model; `graph` traces its call with tf.function (any batch size), and
    `jit_compile` compiles that graph with XLA (once per batch shape)."""

    def __init__(self, adapter: TfAdapter, model: TfModel, input_shape: tuple[int, ...],
                 graph: bool, dtype: tf.DType = tf.float32, jit_compile: bool = False) -> None:
        self.adapter, self.device = adapter, adapter.device
        signature = [tf.TensorSpec([None, *input_shape], dtype)]
        self.forward = (tf.function(model.__call__, input_signature=signature,
                                    jit_compile=jit_compile) if graph else model)


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    data = cell.data
    graph, xla = spec.mode in ("tf.function", "xla"), spec.mode == "xla"
    model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
    fairness = inference_fairness(
        cell,
        timer_includes="one model call on an input tensor already on the device, and "
                       ".numpy() of the output",
        compile_mode=COMPILE_MODES[spec.mode],
        data_pipeline="inputs converted to device tensors before timing",
    )
    predictor = TfPredictor(cell.adapter, model, data.input_shape, graph,
                            input_dtype(data.workload), jit_compile=xla)
    return measure_inference(cell, predictor, fairness)
