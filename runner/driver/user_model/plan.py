"""The cells of a user's model: workloads of the same kind as the built-ins, whose workload
is the user's file and its saved weights (the cell's params say where).

- model-parity: one process per system and mode family, before any timing: outputs on the
  same inputs from the same weights against the reference the preparing process computed.
- model-inference: batch-1 latency and throughput at the model's batch, per mode.
- model-training: training step time, per mode (a Keras model compiled with a loss).

Keras models run on every Keras backend (and OpenVINO for inference); a PyTorch module in
eager mode, torch.compile, ONNX Runtime and OpenVINO. Modes that a built-in system declares
as the same configuration (Keras on JAX jit-compiles by default) or too slow for the suite on
a CPU (Keras' jit_compile on torch) follow the built-ins' declarations.
"""

from __future__ import annotations

import importlib.util
from dataclasses import replace

from dlbench.core.declarations.modes import same_as
from dlbench.core.judging.verdict_engine import CONTROL_SUFFIX
from dlbench.runner.cell.model_source import INFERENCE, PARITY, TRAINING
from dlbench.runner.cell.spec import NOT_MEASURED, CellSpec, FrameworkId
from dlbench.runner.driver.plan.experiments import BASE_SUITE, not_measured_params
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.plan.sharing import COMPILES

#: Keras backends and the experiments they run (OpenVINO's Keras backend only predicts).
KERAS_BACKENDS = {"tensorflow": (INFERENCE, TRAINING), "jax": (INFERENCE, TRAINING),
                  "torch": (INFERENCE, TRAINING), "openvino": (INFERENCE,)}
#: Modes per kind of model and experiment: (mode, compiles, the built-in mode it is).
KERAS_MODES = {INFERENCE: (("predict", False, "predict"), ("jit_compile", True, "jit_compile")),
               TRAINING: (("default", False, "default"), ("jit_compile", True, "jit_compile"))}
TORCH_MODES = (("eager", False, "inference_mode"), ("compiled", True, "compiled"),
               ("onnxruntime", False, ""), ("openvino", False, ""))
#: Python modules a PyTorch mode needs beyond torch (its artifacts run on the CPU).
TORCH_MODE_MODULES = {"onnxruntime": ("onnxruntime", "onnx"), "openvino": ("openvino",)}
#: Calls per process, per suite (the inference experiment's grid, at the user's batch).
CALLS = {"quick": {"warmup_calls": 10, "latency_calls": 200, "throughput_samples": 3,
                   "train_samples": 3},
         "standard": {"warmup_calls": 20, "latency_calls": 300, "throughput_samples": 5,
                      "train_samples": 5},
         "full": {"warmup_calls": 50, "latency_calls": 500, "throughput_samples": 10,
                  "train_samples": 10}}
TIMEOUT_S = 600.0
#: --steps N: N timed batch-1 calls (the latency time budget lifted, so N are made: the
#: cell's timeout still bounds the process) and at least N timed training steps.
NO_LATENCY_BUDGET_S = 1e9


def calls_per_process(suite: str, steps: int | None) -> dict:
    """The suite's calls per process, or with `steps` N timed calls and training steps."""
    calls = dict(CALLS.get(suite) or CALLS[BASE_SUITE[suite]])
    if steps:
        calls |= {"latency_calls": steps, "latency_budget_s": NO_LATENCY_BUDGET_S,
                  "train_steps": steps}
    return calls


def system_names(kind: str) -> list[str]:
    """The systems a model of `kind` ("keras" or "torch") is measured on."""
    if kind == "keras":
        return [FrameworkId("keras", backend).name for backend in KERAS_BACKENDS]
    return ["pytorch"]


def model_cells(request: RunRequest, facts: dict, model_params: dict,
                chosen: tuple[str, ...] = (), steps: int | None = None) -> list[CellSpec]:
    """Parity cells first, then inference and training cells, and one A/A control; only
    the `chosen` systems when some are named (--framework); `steps`: --steps."""
    kind = facts["kind"]
    params = model_params | calls_per_process(request.suite, steps) | {
        "throughput_batch": facts["batch_size"]}
    systems = [s for s in (_keras_systems(facts) if kind == "keras" else _torch_systems())
               if not chosen or s[0].name in chosen]
    parity: list[CellSpec] = []
    timed: list[CellSpec] = []
    for framework, experiment, mode, compiles, builtin in systems:
        cell = request.cell(experiment, facts["model_id"], framework, timeout_s=TIMEOUT_S,
                            mode=mode, batch_size=1 if experiment == INFERENCE
                            else facts["batch_size"], params=params | {COMPILES: compiles},
                            device="cpu" if mode in TORCH_MODE_MODULES else "")
        reason = _not_measured(request, framework, experiment, mode, builtin)
        if reason:
            cell = replace(cell, params=cell.params | {NOT_MEASURED: reason})
        timed.append(cell)
        if experiment == INFERENCE:
            parity.append(replace(cell, experiment=PARITY, repeats=1))
    return parity + with_control(timed)


def _keras_systems(facts: dict) -> list[tuple]:
    systems = []
    for backend, experiments in KERAS_BACKENDS.items():
        for experiment in experiments:
            if experiment == TRAINING and not facts["trains"]:
                continue
            for mode, compiles, builtin in KERAS_MODES[experiment]:
                systems.append((FrameworkId("keras", backend), experiment, mode, compiles,
                                builtin))
    return systems


def _torch_systems() -> list[tuple]:
    return [(FrameworkId("pytorch", "pytorch"), INFERENCE, mode, compiles, builtin)
            for mode, compiles, builtin in TORCH_MODES]


def _not_measured(request: RunRequest, framework: FrameworkId, experiment: str, mode: str,
                  builtin: str) -> str:
    """Why a planned mode gets no process here (empty when it is measured)."""
    missing = [m for m in TORCH_MODE_MODULES.get(mode, ())
               if importlib.util.find_spec(m) is None] if framework.framework == "pytorch" else []
    if missing:
        return f"not installed: {', '.join(missing)}"
    if framework.backend == "openvino" and mode != "predict":
        return "OpenVINO's Keras backend runs predict only"
    if not builtin:
        return ""
    entry = same_as("training" if experiment == TRAINING else "inference", framework.name,
                    builtin, request.device)
    if entry is not None:
        return f"measured as {entry.measured_as}: {entry.why}"
    return str(not_measured_params(request, framework, builtin).get(NOT_MEASURED, ""))


def with_control(cells: list[CellSpec]) -> list[CellSpec]:
    """The first measured inference cell twice (an A/A control), when cells have 2+ processes."""
    source = next((c for c in cells if c.experiment == INFERENCE and not c.params.get(
        NOT_MEASURED) and not c.params.get(COMPILES)), None)
    if source is None or source.repeats < 2:
        return cells
    planned = list(cells)
    planned.insert(planned.index(source) + 1, replace(source, control=CONTROL_SUFFIX))
    return planned
