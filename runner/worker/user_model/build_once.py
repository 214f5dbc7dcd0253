"""Build the user's model once, in a process of its own, and keep what every backend's
worker loads: its weights, the inputs, and the reference outputs parity compares with.

Usage: python -m dlbench.runner.worker.user_model.build_once REQUEST.json OUT_DIR
Writes OUT_DIR/prepared.json: {"facts": {...}} or {"error": "one line"} (exit status 3).
The parent (dlbench.runner.driver.user_model.preparation) turns an error into a usage error, so a model that
cannot be built, is not a model, or does not take the given shape writes no run at all.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from dlbench.runner.worker.user_model.loading import (ModelError, build_user_model, count_flops, error_line,
                                       forward, load_inputs, model_kind, save_weights)
from dlbench.runner.worker.user_model.known_crashes import strided_small_1x1
from dlbench.runner.cell.model_source import ModelRequest

#: Samples parity compares, and the seed of generated inputs.
PARITY_SAMPLES = 8
#: The batch chosen when none is given: doubled until one call lasts this long.
TARGET_CALL_S = 0.1
MAX_CHOSEN_BATCH = 4096


def choose_batch(model, kind: str, x: np.ndarray) -> int:
    """The smallest power-of-two batch whose forward call lasts about TARGET_CALL_S."""
    batch = 1
    while batch < MAX_CHOSEN_BATCH:
        sample = np.concatenate([x] * (-(-batch // len(x))))[:batch]
        forward(model, kind, sample)
        start = time.perf_counter()
        forward(model, kind, sample)
        if time.perf_counter() - start >= TARGET_CALL_S:
            break
        batch *= 2
    return batch


def training_targets(model, x: np.ndarray, outputs: np.ndarray, given: np.ndarray | None
                     ) -> tuple[np.ndarray | None, str]:
    """Targets a compiled Keras model's loss accepts (the given y, or ones made from its own
    outputs), and in words why there are none."""
    if not getattr(model, "compiled", False) or getattr(model, "loss", None) is None:
        return None, "the model was not compiled with a loss: no training measured"
    candidates = [given] if given is not None else []
    if given is None and outputs.ndim >= 2 and outputs.shape[-1] > 1:
        labels = outputs.argmax(-1)
        candidates += [labels.astype("int32"),
                       np.eye(outputs.shape[-1], dtype="float32")[labels]]
    if given is None:
        candidates.append(outputs.astype("float32"))
    errors = []
    for y in candidates:
        try:
            model.evaluate(x[:len(y)], y, batch_size=min(len(y), 32), verbose=0)
            return y, ""
        except Exception as error:  # noqa: BLE001 - the loss tells which targets it takes
            errors.append(str(error).splitlines()[0][:200] if str(error) else type(error).__name__)
    return None, f"the model's loss took none of the targets tried: {errors[-1]}"


def prepare(request: ModelRequest, out: Path) -> dict:
    """Build, check, choose the batch, save weights, inputs and reference outputs."""
    model = build_user_model(request)
    kind = model_kind(model, request)
    if not request.input_shape and not request.data_file:
        request = replace(request, input_shape=declared_shape(model, kind))
    x, y = load_inputs(request, PARITY_SAMPLES)
    try:
        reference = forward(model, kind, x[:PARITY_SAMPLES])
    except Exception as error:  # noqa: BLE001 - the user's shape or model is wrong
        raise ModelError(shape_mismatch(request, model, error)) from None
    again = forward(model, kind, x[:PARITY_SAMPLES])
    repeat_diff = float(np.max(np.abs(reference.astype("float64") - again)))
    batch = request.batch_size or choose_batch(model, kind, x)
    targets, no_training = (training_targets(model, x, forward(model, kind, x), y)
                            if kind == "keras" else (None, "a PyTorch module is measured "
                                                     "for inference"))
    save_weights(model, kind, out)
    arrays = {"x": x, "parity_x": x[:PARITY_SAMPLES], "reference": reference}
    if targets is not None:
        arrays["y"] = targets
    np.savez(out / "inputs.npz", **arrays)
    flops, flops_note = count_flops(model, kind, x[:1])
    crashing = strided_small_1x1(model) if kind == "keras" else []
    return {"kind": kind, "model_id": request.model_id, "batch_size": batch,
            "batch_chosen": not request.batch_size, "input_shape": list(x.shape[1:]),
            "input_dtype": str(x.dtype), "output_shape": list(reference.shape[1:]),
            "parameters": parameter_count(model, kind), "repeat_max_abs": repeat_diff,
            "trains": targets is not None, "no_training": no_training,
            "flops_per_sample": flops, "flops_note": flops_note,
            "onednn_strided_1x1": crashing,
            "class_name": type(model).__name__}


def declared_shape(model, kind: str) -> tuple[int, ...]:
    """One sample's shape as a Keras model declares it (keras.Input); ModelError otherwise."""
    shape = getattr(model, "input_shape", None) if kind == "keras" else None
    if isinstance(shape, tuple) and len(shape) > 1 and all(
            isinstance(d, int) and d > 0 for d in shape[1:]):
        return tuple(shape[1:])
    declared = f"declares {shape}" if shape else "declares no input shape"
    raise ModelError(f"the model {declared}: give --input-shape SHAPE (one sample's shape, "
                     "e.g. 28,28,1) or --data FILE.npz")


def shape_mismatch(request: ModelRequest, model, error: Exception) -> str:
    """One line: the shape given, what the model says it takes, and its error."""
    given = f"input shape {','.join(map(str, request.input_shape))}" if request.input_shape \
        else f"the inputs of {request.data_file}"
    expects = getattr(model, "input_shape", None)
    wanted = f"; the model takes {expects} (batch first)" if expects else ""
    return f"{given} does not fit the model{wanted}: {error_line(error, 200)}"


def parameter_count(model, kind: str) -> int:
    """Trainable and non-trainable parameters of the model."""
    if kind == "keras":
        return int(model.count_params())
    return int(sum(p.numel() for p in model.parameters()))


def main(argv: list[str]) -> int:
    request = ModelRequest(**{k: tuple(v) if k == "input_shape" else v
                              for k, v in json.loads(Path(argv[0]).read_text()).items()})
    out = Path(argv[1])
    try:
        result = {"facts": prepare(request, out)}
        status = 0
    except ModelError as error:
        result, status = {"error": str(error)}, 3
    except Exception as error:  # noqa: BLE001 - the user's code: one line, not a traceback
        result, status = {"error": f"building the model failed: {error_line(error)}"}, 3
    (out / "prepared.json").write_text(json.dumps(result))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
