"""The artifacts' own runtimes: load an exported file and return a NumPy-in, NumPy-out call.

Each loader imports its runtime only when called, so a cell only imports what its artifact
needs. Every runtime gets the cell's thread count.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

Predict = Callable[[np.ndarray], np.ndarray]


def onnxruntime_predict(path: Path, threads: int) -> Predict:
    """An onnxruntime CPU session with `threads` intra-op threads."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(str(path), options,
                                           providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return lambda x: session.run(None, {name: x})[0]


def openvino_predict(path: Path, threads: int) -> Predict:
    """An OpenVINO CPU compiled model (read from OpenVINO IR or ONNX) with `threads`
    inference threads."""
    import openvino

    core = openvino.Core()
    compiled = core.compile_model(core.read_model(str(path)), "CPU",
                                  {"INFERENCE_NUM_THREADS": threads})
    return lambda x: compiled(x)[0]


def litert_predict(path: Path, threads: int) -> Predict:
    """The LiteRT interpreter (ai-edge-litert when installed, else TensorFlow's tf.lite)."""
    try:
        from ai_edge_litert.interpreter import Interpreter
    except ImportError:
        import tensorflow as tf

        Interpreter = tf.lite.Interpreter
    interpreter = Interpreter(model_path=str(path), num_threads=threads)
    input_index = interpreter.get_input_details()[0]["index"]
    output_index = interpreter.get_output_details()[0]["index"]
    shape: list[tuple[int, ...]] = [()]

    def predict(x: np.ndarray) -> np.ndarray:
        if x.shape != shape[0]:  # LiteRT tensors have static shapes: resize on a new batch
            interpreter.resize_tensor_input(input_index, list(x.shape))
            interpreter.allocate_tensors()
            shape[0] = x.shape
        interpreter.set_tensor(input_index, x)
        interpreter.invoke()
        return interpreter.get_tensor(output_index).copy()

    return predict


def litert_runtime_name() -> str:
    """Which LiteRT interpreter litert_predict uses here."""
    import importlib.util

    if importlib.util.find_spec("ai_edge_litert") is not None:
        return "ai_edge_litert.interpreter.Interpreter"
    return "tf.lite.Interpreter"


def saved_model_predict(path: Path, endpoint: str) -> Predict:
    """A TensorFlow SavedModel loaded with tf.saved_model.load, called through `endpoint`."""
    import tensorflow as tf

    loaded = tf.saved_model.load(str(path))
    if endpoint in loaded.signatures:
        function = loaded.signatures[endpoint]
        return lambda x: next(iter(function(tf.constant(x)).values())).numpy()
    function = getattr(loaded, endpoint)
    return lambda x: np.asarray(function(tf.constant(x)))


def torch_program_predict(path: Path) -> Predict:
    """A .pt2 ExportedProgram loaded with torch.export.load."""
    import torch

    module = torch.export.load(str(path)).module()

    def predict(x: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return module(torch.from_numpy(x)).numpy()

    return predict


def artifact_size_mib(path: Path) -> float:
    """Size on disk of a file, or of every file under a directory."""
    if path.is_dir():
        return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20
    return path.stat().st_size / 2**20
