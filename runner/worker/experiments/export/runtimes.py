"""The artifacts' own runtimes: load an exported file and return a NumPy-in, NumPy-out call.

Each loader imports its runtime only when called, so a cell only imports what its artifact
needs. Every runtime gets the cell's thread count, and runs at the cell's precision (fp32)
on every CPU kind: a runtime that would choose a lower precision by itself is pinned, and
what it chose is read back from it into the call's settings (`RuntimeCall.settings`).
OpenVINO's CPU plugin is the case in point: its INFERENCE_PRECISION_HINT defaults to bf16
on CPUs with AVX-512 BF16 or AMX, f32 on others.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

Predict = Callable[[np.ndarray], np.ndarray]

#: OpenVINO's name for fp32, the precision of every cell that serves an artifact.
OPENVINO_F32 = "f32"
#: ONNX Runtime's one CPU option that computes fp32 GEMMs in bf16 (ARM64 only, off by
#: default): pinned off, so no release of ONNX Runtime can turn it on by default.
ORT_BF16_FASTMATH = "mlas.enable_gemm_fastmath_arm64_bfloat16"


class PrecisionNotPinned(RuntimeError):
    """A runtime compiled a model at another precision than the cell's, pin or not: the
    cell is unsupported here rather than published at a precision it does not state."""


@dataclass(frozen=True)
class RuntimeCall:
    """A loaded artifact's NumPy-in, NumPy-out call and the precision settings its runtime
    reports for it (read back from the runtime, for the cell's fairness manifest)."""

    call: Predict
    settings: dict[str, str] = field(default_factory=dict)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return self.call(x)


def runtime_settings(predict: Predict) -> dict[str, str]:
    """The settings a loaded runtime reported (none for a runtime with nothing to pin)."""
    return dict(predict.settings) if isinstance(predict, RuntimeCall) else {}


def onnxruntime_predict(path: Path, threads: int) -> RuntimeCall:
    """An onnxruntime CPU session with `threads` intra-op threads, fp32 GEMMs in fp32."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry(ORT_BF16_FASTMATH, "0")
    session = onnxruntime.InferenceSession(str(path), options,
                                           providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return RuntimeCall(lambda x: session.run(None, {name: x})[0], {
        f"onnxruntime.{ORT_BF16_FASTMATH}": options.get_session_config_entry(ORT_BF16_FASTMATH),
        "onnxruntime.version": onnxruntime.__version__})


def openvino_compiled(model, threads: int | None, precision: str = OPENVINO_F32):
    """`model` (an openvino.Model, or a path OpenVINO reads) compiled for the CPU at
    `precision`, pinned and read back: RuntimeError when the plugin compiled another one."""
    import openvino

    config = {"INFERENCE_PRECISION_HINT": precision}
    if threads:
        config["INFERENCE_NUM_THREADS"] = threads
    core = openvino.Core()
    if isinstance(model, (str, Path)):
        model = core.read_model(str(model))
    return checked_precision(core.compile_model(model, "CPU", config), precision)


def checked_precision(compiled, precision: str):
    """`compiled`, when it runs at `precision`; PrecisionNotPinned when it does not."""
    chosen = openvino_precision(compiled)
    if chosen != precision:
        raise PrecisionNotPinned(f"OpenVINO's CPU plugin compiled the model at {chosen}, not "
                                 f"the cell's {precision}")
    return compiled


def openvino_precision(compiled) -> str:
    """The inference precision a compiled OpenVINO model runs at, in OpenVINO's words."""
    return str(compiled.get_property("INFERENCE_PRECISION_HINT").to_string())


def pin_openvino_compiles(precision: str = OPENVINO_F32) -> dict[str, str]:
    """Make this process's openvino.compile_model calls compile at `precision`, each read
    back (Keras' OpenVINO backend compiles through that function with no precision hint, so
    the plugin's default, bf16 on CPUs with bf16 units, would run an fp32 cell); returns the
    setting for the cell's manifest."""
    import openvino

    plain = getattr(openvino.compile_model, "unpinned", openvino.compile_model)

    def compile_at(model, device_name: str | None = "AUTO", config: dict | None = None):
        pinned = (config or {}) | {"INFERENCE_PRECISION_HINT": precision}
        return checked_precision(plain(model, device_name, pinned), precision)

    compile_at.unpinned = plain  # type: ignore[attr-defined]
    openvino.compile_model = compile_at
    return {"openvino.inference_precision_hint": f"{precision} (pinned on every compile of "
            "Keras' OpenVINO backend, each compiled model read back)",
            "openvino.version": openvino.__version__}


def openvino_call(compiled) -> RuntimeCall:
    """A compiled OpenVINO model as a call, with its precision read back."""
    import openvino

    return RuntimeCall(lambda x: compiled(x)[0], {
        "openvino.inference_precision_hint": openvino_precision(compiled),
        "openvino.version": openvino.__version__})


def openvino_predict(path: Path, threads: int) -> RuntimeCall:
    """An OpenVINO CPU compiled model (read from OpenVINO IR or ONNX) with `threads`
    inference threads, at fp32 on every CPU."""
    return openvino_call(openvino_compiled(path, threads))


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
