"""What every backend's worker does with a user's model: open the cell (the harness's adapter,
settings, sampler and memory baseline; the model's own saved inputs in place of a dataset),
check parity against the reference outputs, and time inference and training steps with the
harness's forward-call protocol (dlbench.runner.worker.harness.inference) and sampling policy."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dlbench.runner.cell.outcome import CellOutcome, Fairness, failed, unsupported
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.adapters import Adapter, adapter_for
from dlbench.runner.worker.experiments.export.runtimes import PrecisionNotPinned, pin_openvino_compiles
from dlbench.runner.worker.harness import Cell, CellSkipped, cell_manifest, configured_adapter
from dlbench.runner.worker.harness.inference import InferencePlan, Predictor, inference_observations
from dlbench.runner.worker.harness.sampling import Sampler
from dlbench.runner.worker.measure import (NS_PER_S, WorkingMemory, clock_ns,
                                    process_memory_kib)
from dlbench.runner.worker.user_model.loading import error_line
from dlbench.runner.cell.model_source import ModelRequest

#: Largest max|output - reference| / max|reference| parity accepts: the built-in parity
#: experiment's tolerance (float32 sums reordered or fused, nothing more).
PARITY_TOLERANCE = 1e-4


@dataclass(frozen=True)
class ModelData:
    """The inputs the preparing process saved: timing inputs, targets, parity inputs and the
    reference outputs."""

    x_test: np.ndarray
    y: np.ndarray | None
    parity_x: np.ndarray
    reference: np.ndarray
    seed: None = None  # the reader's model brings its own weights: no process seed


def measured_or_failed(measure: Callable[[CellSpec], CellOutcome], spec: CellSpec
                       ) -> CellOutcome:
    """`measure(spec)`, or the failure of the user's code as its informative line (not a
    framework's wrapper line), the traceback kept in the process's output."""
    try:
        return measure(spec)
    except CellSkipped:
        raise
    except PrecisionNotPinned as error:  # the runtime's precision, not the user's code
        return unsupported(str(error))
    except Exception as error:  # noqa: BLE001 - the user's code failing in one backend
        traceback.print_exc()
        return failed(error_line(error, 500))


def model_request(spec: CellSpec) -> ModelRequest:
    """The user's model request the cell's params carry."""
    raw = spec.params["model"]
    return ModelRequest(**{k: tuple(v) if k == "input_shape" else v for k, v in raw.items()})


def model_dir(spec: CellSpec) -> Path:
    """The run's folder of the model's weights and inputs."""
    return Path(spec.params["model_dir"])


def open_model_cell(spec: CellSpec) -> Cell:
    """The harness's cell for a user's model: configured framework (CellSkipped when it
    cannot run here), the saved inputs, the framework's first use paid before the baseline."""
    adapter, settings = _configured(spec)
    with np.load(model_dir(spec) / "inputs.npz", allow_pickle=False) as arrays:
        data = ModelData(arrays["x"], arrays["y"] if "y" in arrays.files else None,
                         arrays["parity_x"], arrays["reference"])
    footprint = process_memory_kib()["VmRSS"] / 1024
    return Cell(spec, adapter, settings, data, Sampler(spec), footprint)  # type: ignore[arg-type]


def _configured(spec: CellSpec) -> tuple[Adapter, dict[str, str]]:
    """The configured adapter after the framework's first use; Keras on OpenVINO (which only
    predicts) is configured by Keras alone and warmed up by the first calls instead."""
    if spec.backend != "openvino":
        adapter, settings = configured_adapter(spec)
        adapter.warm_up()
        return adapter, settings
    import keras

    return adapter_for(spec), {"keras.version": keras.__version__,
                               "keras.backend": keras.backend.backend()
                               } | pin_openvino_compiles()


def parity_outcome(cell: Cell, predictor: Predictor, fairness: Fairness) -> CellOutcome:
    """Outputs of two calls on the parity inputs against the reference, within
    PARITY_TOLERANCE (two calls: a model whose output changes from call to call, such as one
    drawing random numbers at inference, computes no one function)."""
    data: ModelData = cell.data  # type: ignore[assignment]
    prepared = predictor.prepare(data.parity_x)
    outputs = [np.asarray(predictor.predict(prepared), np.float64) for _ in range(2)]
    reference = data.reference.astype(np.float64)
    if outputs[0].shape != reference.shape:
        raise ValueError(f"output shape {outputs[0].shape[1:]} differs from the reference's "
                         f"{reference.shape[1:]}")
    max_abs = max(float(np.max(np.abs(o - reference))) for o in outputs) \
        if reference.size else 0.0
    scale = float(np.max(np.abs(reference))) if reference.size else 0.0
    max_rel = max_abs / scale if scale else max_abs
    passed = bool(np.isfinite(max_rel) and max_rel <= PARITY_TOLERANCE)
    observations = [cell.observe(metric, value) for metric, value in (
        ("parity_forward_max_abs", max_abs), ("parity_forward_max_rel", max_rel),
        ("parity_tolerance", PARITY_TOLERANCE), ("parity_pass", float(passed)))]
    return cell.outcome(observations, fairness, {"tolerance": PARITY_TOLERANCE,
                                                 "reference_pass": passed})


def inference_outcome(cell: Cell, predictor: Predictor, fairness: Fairness,
                      compiles: bool) -> CellOutcome:
    """First call (compile time apart), batch-1 latency, throughput at the model's batch,
    and the memory of each phase, as the inference experiment measures them."""
    return cell.outcome(inference_observations(cell, predictor, compiles), fairness,
                        regime_details(cell))


def training_outcome(cell: Cell, step, fairness: Fairness) -> CellOutcome:
    """The first step (compile time: its time beyond a steady step) and the steady step time
    over calibrated windows of steps (with --steps N, enough windows to time N steps), with
    the steady steps' working memory."""
    start = clock_ns()
    step()
    first_s = (clock_ns() - start) / NS_PER_S
    step()
    samples = training_windows(cell, step)
    with WorkingMemory() as working:
        per_step = cell.sampler.per_call_s("steady_step_time", step, cell.adapter.sync,
                                           samples)
    steady_ms = float(np.median(per_step)) * 1000
    observations = [cell.observe("step_time", first_s * 1000, 0),
                    *(cell.observe("step_time", s * 1000, i + 1) for i, s in
                      enumerate(per_step)),
                    cell.observe("steady_step_time", steady_ms),
                    cell.observe("compile_time", max(0.0, first_s - steady_ms / 1000)),
                    cell.observe("working_memory", working.peak_mib)]
    return cell.outcome(observations, fairness, regime_details(cell))


def training_windows(cell: Cell, step) -> int:
    """The suite's number of timed windows, or with --steps N as many windows of the
    calibrated loop count as time at least N steps."""
    steps = int(cell.spec.params.get("train_steps", 0))
    if not steps:
        return int(cell.spec.params.get("train_samples", 3))
    loops = cell.sampler.calibrate(step, cell.adapter.sync)
    windows = -(-steps // loops)
    cell.sampler.record["train_steps"] = {"asked": steps, "calibrated_loops": loops,
                                          "windows": windows}
    return windows


def regime_details(cell: Cell) -> dict:
    """The model's FLOPs per sample as the preparing process counted them (None: not
    counted, and why), for the page's regime."""
    facts = cell.spec.params.get("facts", {})
    return {"flops_per_sample": facts.get("flops_per_sample"),
            "flops_note": facts.get("flops_note", "")}


def model_fairness(cell: Cell, *, timer_includes: str, compile_mode: str) -> Fairness:
    """The manifest every cell of a user's model carries."""
    spec, plan = cell.spec, InferencePlan.of(cell.spec)
    return cell_manifest(
        spec, cell.settings, timer_includes=timer_includes,
        precision_policy="the model's own dtypes", compile_mode=compile_mode,
        data_pipeline="the saved inputs converted to the backend's tensors before timing",
        notes=(f"the user's model built from its file in this process, with the weights "
               f"saved once by the preparing process; latency: up to {plan.latency_calls} "
               f"timed batch-1 calls after {plan.warmup_calls} warm-up calls; throughput: "
               f"{plan.throughput_samples} calibrated windows at batch "
               f"{plan.throughput_batch}; the first call is timed apart"))
