"""The user's model in a process: import its file, build it, tell Keras from PyTorch, call
it, save and load its weights, and the inputs it is measured on. Shared by the preparing
process and every backend's worker; frameworks are imported only where the model needs them."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from dlbench.runner.cell.model_source import ACCEPTED, KERAS_WEIGHTS, TORCH_WEIGHTS, ModelRequest

#: Generated inputs: this many samples, drawn from this seed (the same in every process).
GENERATED_SAMPLES = 64
INPUT_SEED = 0
#: Generated integer inputs (token ids, class indices) are drawn from [0, INT_HIGH).
INT_HIGH = 10


class ModelError(Exception):
    """The user's model cannot be measured as given; the message is one line."""


#: Lines of a framework's error that say where, not what (Keras wraps a layer's error in them).
_WRAPPER_LINES = ("Exception encountered when calling", "Arguments received by")


def error_line(error: BaseException, limit: int = 300) -> str:
    """The line of an error that says what went wrong, without terminal colour codes."""
    import re

    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip()
             for line in str(error).splitlines()]
    useful = [line for line in lines if line and not line.startswith(_WRAPPER_LINES)]
    return f"{type(error).__name__}: {(useful or [''])[0][:limit]}"


def build_user_model(request: ModelRequest):
    """The model as the user's file builds it (NAME()), or the saved .keras model."""
    if not request.name:
        import keras

        return keras.saving.load_model(request.path, compile=True)
    build = _user_function(Path(request.path), request.name)
    return build()


def _user_function(path: Path, name: str):
    """NAME from the user's file, imported as a module of its own."""
    module_name = f"dlbench_user_model_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    function = getattr(module, name, None)
    if not callable(function):
        raise ModelError(f"{path.name}:{name} is a {type(function).__name__}, not a function "
                         f"that builds the model; expected {ACCEPTED}")
    return function


def model_kind(model, request: ModelRequest) -> str:
    """"keras" or "torch"; ModelError when the object is neither kind of model."""
    if "keras" in sys.modules and isinstance(model, sys.modules["keras"].Model):
        return "keras"
    if "torch" in sys.modules and isinstance(model, sys.modules["torch"].nn.Module):
        return "torch"
    where = f"{Path(request.path).name}:{request.name}()" if request.name else request.path
    raise ModelError(f"{where} returned a {type(model).__module__}.{type(model).__name__}, not "
                     f"a model; expected {ACCEPTED}")


def load_inputs(request: ModelRequest, at_least: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(x, y): the user's arrays from --data, or generated ones of --input-shape (y None)."""
    if request.data_file:
        with np.load(request.data_file, allow_pickle=False) as arrays:
            x = arrays["x"]
            y = arrays["y"] if "y" in arrays.files else None
        reps = -(-at_least // len(x))
        return np.concatenate([x] * reps), None if y is None else np.concatenate([y] * reps)
    rng = np.random.default_rng(INPUT_SEED)
    shape = (max(at_least, GENERATED_SAMPLES), *request.input_shape)
    if request.input_dtype.startswith("int"):
        return rng.integers(0, INT_HIGH, shape).astype(request.input_dtype), None
    return rng.standard_normal(shape).astype(request.input_dtype), None


def first_array(output) -> np.ndarray:
    """The model's (first) output as a NumPy array."""
    if isinstance(output, dict):
        output = next(iter(output.values()))
    if isinstance(output, (list, tuple)):
        output = output[0]
    if hasattr(output, "detach"):
        output = output.detach().cpu()
    return np.asarray(output)


def forward(model, kind: str, x: np.ndarray) -> np.ndarray:
    """One inference call on `x` (no gradients), as NumPy."""
    if kind == "torch":
        import torch

        model.eval()
        with torch.inference_mode():
            return first_array(model(torch.from_numpy(x)))
    import keras

    return first_array(keras.ops.convert_to_numpy(model(x, training=False)))


def save_weights(model, kind: str, out: Path) -> None:
    """The built model's weights, for every backend to load (a .keras file holds its own)."""
    if kind == "torch":
        import torch

        torch.save(model.state_dict(), out / TORCH_WEIGHTS)
    else:
        model.save_weights(out / KERAS_WEIGHTS)


def load_user_model(request: ModelRequest, weights_dir: Path):
    """The model built in this process with the weights the preparing process saved."""
    model = build_user_model(request)
    kind = model_kind(model, request)
    if kind == "torch":
        import torch

        model.load_state_dict(torch.load(weights_dir / TORCH_WEIGHTS, weights_only=True))
        model.eval()
    elif request.name:
        model.load_weights(weights_dir / KERAS_WEIGHTS)
    return model


def count_flops(model, kind: str, x1: np.ndarray) -> tuple[float | None, str]:
    """Forward FLOPs of one sample, and how they were counted (or why they were not)."""
    try:
        if kind == "torch":
            import torch
            from torch.utils.flop_counter import FlopCounterMode

            counter = FlopCounterMode(display=False)
            with counter, torch.inference_mode():
                model(torch.from_numpy(x1))
            return float(counter.get_total_flops()), "torch.utils.flop_counter.FlopCounterMode"
        import keras

        if keras.backend.backend() != "jax":
            return None, f"not counted: FLOPs are counted on JAX, not {keras.backend.backend()}"
        import jax

        lowered = jax.jit(lambda v: model(v, training=False)).lower(x1).compile()
        analysis = lowered.cost_analysis()
        analysis = analysis[0] if isinstance(analysis, list) else analysis
        flops = float(analysis.get("flops", 0.0))
        return (flops, "XLA cost analysis on JAX") if flops > 0 else \
            (None, "not counted: XLA reported no FLOPs")
    except Exception as error:  # noqa: BLE001 - counting is best effort; say why not
        return None, f"not counted: {type(error).__name__}: {str(error)[:120]}"
