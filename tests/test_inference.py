"""inference: the plan, the timing protocol on a NumPy model, and a real PyTorch cell."""

from __future__ import annotations

import numpy as np
import pytest

from dlbench.runner.driver.plan.request import RunRequest
from dlbench.core.declarations.modes import mode_of_class, modes, same_as
from dlbench.runner.driver.plan.experiments.inference import EXPERIMENT
from dlbench.runner.worker.experiments.inference.protocol import measure_inference
from dlbench.runner.worker.experiments.parity import reference
from dlbench.runner.cell.frameworks import FRAMEWORKS
from dlbench.runner.worker.harness.inference import large_batch
from dlbench.runner.cell.outcome import Fairness
from dlbench.runner.cell.spec import NOT_MEASURED, CellSpec
from dlbench.runner.workloads.catalog import flops_per_sample
from tests.harness_fixtures import numpy_cell


def _request(suite: str = "quick", device: str = "cpu") -> RunRequest:
    return RunRequest(suite=suite, device=device, threads=1)


def test_quick_plan_has_each_frameworks_plain_mode_and_gpu_standard_every_measured_mode():
    cells = EXPERIMENT.plan(_request())
    assert {(c.framework_id.name, c.mode) for c in cells} == {
        (f.name, mode_of_class("inference", f.framework, "default")) for f in FRAMEWORKS}
    standard_gpu = EXPERIMENT.plan(_request("standard", "cuda"))  # every mode, as in full
    assert {(c.framework_id.name, c.mode) for c in standard_gpu} == {
        (f.name, mode) for f in FRAMEWORKS for mode in modes("inference", f.framework)
        if not same_as("inference", f.name, mode, "cuda")}
    assert len({c.cell_id for c in cells}) == len(cells)
    assert {c.batch_size for c in cells} == {1}
    for cell in cells:
        assert cell.mode in modes("inference", cell.framework)
        assert cell.params["latency_calls"] >= 200


def test_cpu_standard_has_plain_and_production_modes_on_every_workload():
    """The digits MLP (per-call overhead) and the real-size models (serving) on both paths of
    every system; what the standard suite leaves out on a CPU is planned as not measured, with
    its reason (issue 32: BERT-base's compiles, TensorFlow's XLA on ResNet-50; issue 38:
    Keras' jit_compile on torch on ResNet-50)."""
    cells = EXPERIMENT.plan(_request("standard"))
    assert {c.workload for c in cells} == {"mlp-digits", "resnet50-synthetic", "bert-base-tokens"}
    every_path = {("pytorch", "inference_mode"), ("pytorch", "compiled"),
                  ("tensorflow", "eager"), ("tensorflow", "tf.function"),
                  ("tensorflow", "xla"), ("keras-tensorflow", "predict"),
                  ("keras-tensorflow", "jit_compile"), ("keras-torch", "predict"),
                  ("keras-torch", "jit_compile"),
                  ("keras-jax", "predict")}  # XLA by default: also its jit_compile
    for workload in ("mlp-digits", "resnet50-synthetic", "bert-base-tokens"):
        planned = {(c.framework_id.name, c.mode) for c in cells if c.workload == workload}
        assert planned == every_path
    left_out = {(c.workload, c.framework_id.name, c.mode) for c in cells
                if c.params.get(NOT_MEASURED)}
    assert ("resnet50-synthetic", "tensorflow", "xla") in left_out
    assert ("resnet50-synthetic", "keras-torch", "jit_compile") in left_out  # issue 38
    assert ("resnet50-synthetic", "keras-tensorflow", "jit_compile") not in left_out
    assert ("mlp-digits", "keras-torch", "jit_compile") in left_out  # its cold compile


class NumpyPredictor:
    """The workload's model evaluated by the float64 reference: a real, framework-free model."""

    def __init__(self, layers) -> None:
        self.layers, self.calls = layers, 0

    def prepare(self, x: np.ndarray) -> np.ndarray:
        return x

    def predict(self, prepared: np.ndarray) -> np.ndarray:
        self.calls += 1
        return reference.forward(self.layers, prepared)


def _spec(repeat_index: int = 0, **params) -> CellSpec:
    base = {"warmup_calls": 2, "latency_calls": 200, "throughput_batch": 64,
            "throughput_samples": 2, "min_window_s": 0.02}
    return CellSpec(experiment="inference", workload="mlp-digits", framework="pytorch",
                    backend="", device="cpu", mode="inference_mode", batch_size=1, repeats=3,
                    repeat_index=repeat_index, params=base | params)


def _compiled_spec() -> CellSpec:
    from dataclasses import replace

    return replace(_spec(), mode="compiled")


def _fairness() -> Fairness:
    return Fairness("a call", "fp32", "eager", "arrays", 1, 1)


def _measure(spec: CellSpec):
    cell = numpy_cell(spec)
    return measure_inference(cell, NumpyPredictor(cell.data.initial_layers()), _fairness())


def test_protocol_keeps_every_latency_and_its_percentiles_for_its_one_repeat():
    outcome = _measure(_spec(repeat_index=2))
    assert {o.repeat for o in outcome.observations} == {2}  # this process's repeat only
    raw = [o for o in outcome.observations if o.metric == "inference_latency"]
    assert sorted(o.step for o in raw) == list(range(200))
    values = sorted(o.value for o in raw)
    summary = {o.metric: o.value for o in outcome.observations if o.step is None}
    assert summary["latency_p50"] == pytest.approx(np.percentile(values, 50))
    assert summary["latency_p50"] <= summary["latency_p90"] <= summary["latency_p99"]
    assert summary["inference_throughput"] > 0
    assert [o.metric for o in outcome.observations].count("first_call_time") == 1
    assert outcome.details["sampling"]["repeat_index"] == 2
    assert outcome.details["flops_per_sample"] == flops_per_sample("mlp-digits", "cpu") > 0
    assert (outcome.details["classes"], outcome.details["target_accuracy"]) == (10, 0.95)


class CompilingPredictor(NumpyPredictor):
    """A predictor whose first call leaves COMPILED_MIB resident, as a compiler's caches do."""

    def predict(self, prepared: np.ndarray) -> np.ndarray:
        if not hasattr(self, "compiled"):
            self.compiled = np.ones(COMPILED_MIB * 2**20, dtype=np.uint8)  # touched: resident
        return super().predict(prepared)


COMPILED_MIB = 96


def test_protocol_counts_compilation_as_compile_memory_not_working_memory():
    cell = numpy_cell(_compiled_spec())
    outcome = measure_inference(cell, CompilingPredictor(cell.data.initial_layers()),
                                _fairness())
    values = {o.metric: o.value for o in outcome.observations if o.step is None}
    assert values["compile_memory"] >= 0.9 * COMPILED_MIB  # the first calls' memory is here
    assert values["working_memory"] < COMPILED_MIB / 2  # and not in the timed calls'
    plain = {o.metric for o in _measure(_spec()).observations}
    assert "compile_memory" not in plain  # PyTorch's inference_mode does not compile


def test_latency_calls_stop_at_the_budget_but_never_below_the_minimum():
    from dlbench.runner.worker.harness.inference import MIN_LATENCY_CALLS

    spent = _measure(_spec(latency_budget_s=0.0))  # a budget spent before the first call
    calls = [o for o in spent.observations if o.metric == "inference_latency"]
    assert len(calls) == MIN_LATENCY_CALLS
    assert spent.details["sampling"]["measurements"]["inference_latency"]["samples"] == \
        MIN_LATENCY_CALLS
    ample = _measure(_spec(latency_budget_s=600.0))
    assert len([o for o in ample.observations if o.metric == "inference_latency"]) == 200


def test_throughput_windows_are_calibrated_to_the_minimum_window():
    outcome = _measure(_spec(min_window_s=0.05))
    sampling = outcome.details["sampling"]
    window = sampling["measurements"]["inference_throughput"]
    assert sampling["min_window_s"] == 0.05
    # a batch-64 NumPy forward takes well under 50 ms: one call alone is too short a window
    assert window["samples"] == 2 and window["loops"] >= 2
    assert window["median_window_s"] > 0


def test_large_batch_repeats_the_inputs():
    x = np.arange(6).reshape(3, 2)
    assert large_batch(x, 7).shape == (7, 2)
    np.testing.assert_array_equal(large_batch(x, 7)[3], x[0])


@pytest.mark.slow
def test_real_pytorch_compiled_cell_separates_first_call_from_latency():
    from dlbench.runner.driver.launch.execute import execute_cell

    spec = CellSpec(experiment="inference", workload="mlp-digits", framework="pytorch",
                    backend="", device="cpu", mode="compiled", batch_size=1, repeats=1,
                    threads=1, timeout_s=240,
                    params={"warmup_calls": 3, "latency_calls": 200, "throughput_batch": 128,
                            "throughput_samples": 2, "min_window_s": 0.02})
    record = execute_cell(spec)
    assert record.outcome.status.value == "ok", record.outcome.reason + record.stderr_tail
    values = {o.metric: o.value for o in record.outcome.observations if o.step is None}
    raw = [o for o in record.outcome.observations if o.metric == "inference_latency"]
    assert len(raw) == 200
    assert values["first_call_time"] * 1000 > values["latency_p50"]  # compilation is in there
    assert "torch.compile" in record.outcome.fairness.compile_mode
    assert record.outcome.fairness.settings["torch.inductor_cache"].startswith("fresh")


def _keras_cell(backend: str, mode: str):
    from dlbench.runner.driver.launch.execute import execute_cell

    spec = CellSpec(experiment="inference", workload="mlp-digits", framework="keras",
                    backend=backend, device="cpu", mode=mode, batch_size=1, repeats=1,
                    threads=1, timeout_s=300,
                    params={"warmup_calls": 2, "latency_calls": 20, "throughput_batch": 64,
                            "throughput_samples": 2, "min_window_s": 0.01})
    record = execute_cell(spec)
    assert record.outcome.status.value == "ok", record.outcome.reason + record.stderr_tail
    return record.outcome


@pytest.mark.slow
def test_keras_call_inference_on_torch_times_a_call_that_records_no_graph():
    outcome = _keras_cell("torch", "call")
    assert outcome.details["keras_output_requires_grad"] is False  # under torch.no_grad
    assert "no-grad" in outcome.details["keras_timed_call"]
    assert "no-grad" in outcome.fairness.timer_includes


@pytest.mark.slow
def test_keras_plain_and_production_inference_time_the_same_predict_call():
    plain, production = _keras_cell("tensorflow", "predict"), _keras_cell("tensorflow",
                                                                          "jit_compile")
    assert plain.details["keras_timed_call"] == production.details["keras_timed_call"]
    assert plain.details["keras_jit_compile"] is False  # auto: a graph on a CPU
    assert production.details["keras_jit_compile"] is True
    assert "predict" in production.fairness.timer_includes
    assert "before timing" in production.fairness.data_pipeline  # converted outside the timer
    measured = {o.metric for o in production.observations}
    assert {"working_memory", "compile_memory", "user_memory"} <= measured
    assert "compile_memory" not in {o.metric for o in plain.observations}


@pytest.mark.slow
def test_keras_on_jax_plain_predict_is_already_jit_compiled():
    """What dlbench.core.declarations.modes.SAME_AS declares: its jit_compile cell would
    measure the same."""
    outcome = _keras_cell("jax", "predict")
    assert outcome.details["keras_jit_compile"] is True
    assert "compile_memory" in {o.metric for o in outcome.observations}  # stands for both
