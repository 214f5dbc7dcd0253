"""inference: the plan, the timing protocol on a NumPy model, and a real PyTorch cell."""

from __future__ import annotations

import numpy as np
import pytest

from runner.experiments import PlanRequest
from dlbench.modes import mode_class, mode_of_class, modes
from runner.experiments.inference import EXPERIMENT
from runner.experiments.inference.protocol import measure_inference
from runner.experiments.parity import reference
from runner.frameworks import FRAMEWORKS
from runner.harness.inference import large_batch
from runner.outcome import Fairness
from runner.spec import CellSpec
from runner.workloads import flops_per_sample
from tests.harness_fixtures import numpy_cell


def _request(suite: str = "quick", device: str = "cpu") -> PlanRequest:
    return PlanRequest(suite=suite, workloads=[], frameworks=list(FRAMEWORKS), device=device,
                       repeats=None, threads=1, timeout_s=None, data_dir="")


def _classes(cells) -> set[tuple[str, str]]:
    return {(c.framework_id.name, mode_class("inference", c.framework, c.mode)) for c in cells}


def test_quick_plan_has_each_frameworks_default_mode_and_standard_every_mode_at_batch_one():
    cells = EXPERIMENT.plan(_request())
    assert {(c.framework_id.name, c.mode) for c in cells} == {
        (f.name, mode_of_class("inference", f.framework, "default")) for f in FRAMEWORKS}
    standard_gpu = EXPERIMENT.plan(_request("standard", "cuda"))  # every mode, as in full
    assert {(c.framework_id.name, c.mode) for c in standard_gpu} == {
        (f.name, mode) for f in FRAMEWORKS for mode in modes("inference", f.framework)}
    assert len({c.cell_id for c in cells}) == len(cells)
    assert {c.batch_size for c in cells} == {1}
    for cell in cells:
        assert cell.mode in modes("inference", cell.framework)
        assert cell.params["latency_calls"] >= 200


def test_cpu_standard_has_default_modes_everywhere_and_fastest_on_the_resnet_only():
    cells = EXPERIMENT.plan(_request("standard"))
    mlp = [c for c in cells if c.workload == "mlp-digits"]
    resnet = [c for c in cells if c.workload == "resnet-synthetic"]
    assert _classes(mlp) == {(f.name, "default") for f in FRAMEWORKS}
    slow = {("keras-torch", "fastest")}  # Keras jit_compile on torch: minutes per process
    assert _classes(resnet) == {(f.name, c) for f in FRAMEWORKS
                                for c in ("default", "fastest")} - slow


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
    from runner.execute import execute_cell

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
    from runner.execute import execute_cell

    spec = CellSpec(experiment="inference", workload="mlp-digits", framework="keras",
                    backend=backend, device="cpu", mode=mode, batch_size=1, repeats=1,
                    threads=1, timeout_s=300,
                    params={"warmup_calls": 2, "latency_calls": 20, "throughput_batch": 64,
                            "throughput_samples": 2, "min_window_s": 0.01})
    record = execute_cell(spec)
    assert record.outcome.status.value == "ok", record.outcome.reason + record.stderr_tail
    return record.outcome


@pytest.mark.slow
def test_keras_default_inference_on_torch_times_a_call_that_records_no_graph():
    outcome = _keras_cell("torch", "call")
    assert outcome.details["keras_output_requires_grad"] is False  # under torch.no_grad
    assert "no-grad" in outcome.details["keras_timed_call"]
    assert "no-grad" in outcome.fairness.timer_includes


@pytest.mark.slow
def test_keras_fastest_inference_times_the_jitted_predict_on_batch_not_predict():
    outcome = _keras_cell("tensorflow", "jit_compile")
    assert outcome.details["keras_timed_call"] == "predict_on_batch"
    assert outcome.details["keras_jit_compile"] is True
    assert "predict_on_batch" in outcome.fairness.timer_includes
    assert "before timing" in outcome.fairness.data_pipeline  # converted outside the timer
