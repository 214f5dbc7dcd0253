"""execution-mode: break-even arithmetic, the plan, and a real TensorFlow tf.function cell."""

from __future__ import annotations

import pytest

from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import NOT_MEASURED
from dlbench.runner.driver.plan.experiments.execution_mode import EXPERIMENT, modes
from dlbench.runner.worker.experiments.execution_mode.protocol import ModeTimes, break_even_steps
from dlbench.runner.cell.frameworks import FRAMEWORKS
from dlbench.runner.cell.spec import CellSpec, FrameworkId


def test_break_even_counts_steps_until_compilation_has_paid_off():
    eager = ModeTimes(12.0, [10.0, 10.0, 10.0])  # 2 ms first-use overhead, 10 ms steady
    compiled = ModeTimes(502.0, [2.0, 2.0, 2.0])  # 0.5 s compile, 2 ms steady
    assert compiled.compile_s == pytest.approx(0.5)
    # after n steps: 502 + 2(n-1) <= 12 + 10(n-1)  <=>  n - 1 >= 61.25
    assert break_even_steps(compiled, eager) == 63
    assert break_even_steps(eager, compiled) is None  # slower modes never break even


def _request(suite: str, device: str = "cpu") -> RunRequest:
    return RunRequest(suite=suite, device=device, threads=1)


def test_quick_plan_covers_every_framework_with_its_compiled_modes_and_keras_defaults():
    cells = EXPERIMENT.plan(_request("quick"))
    assert len({c.cell_id for c in cells}) == len(cells)
    assert {c.framework_id.name for c in cells} == {f.name for f in FRAMEWORKS}
    quick = _request("quick")
    assert modes(quick, FrameworkId("pytorch", "")) == ["compiled"]
    assert modes(quick, FrameworkId("tensorflow", "")) == ["tf.function", "xla"]
    # torch: the default (eager) is measured, jit_compile is planned as not measured
    assert modes(quick, FrameworkId("keras", "torch")) == ["default", "jit_compile"]
    assert modes(quick, FrameworkId("keras", "jax")) == ["default"]  # XLA: also jit_compile
    slow = [c for c in cells if c.params.get(NOT_MEASURED)]
    assert [(c.framework_id.name, c.mode) for c in slow] == [("keras-torch", "jit_compile")]


@pytest.mark.parametrize(("suite", "device", "every_mode"), [
    ("standard", "cpu", False), ("standard", "cuda", True), ("full", "cpu", True)])
def test_full_and_gpu_standard_measure_every_mode_and_cpu_standard_plain_and_production(
        suite, device, every_mode):
    request = _request(suite, device)
    torch_modes = modes(request, FrameworkId("keras", "torch"))
    jax_modes = modes(request, FrameworkId("keras", "jax"))
    tf_modes = modes(request, FrameworkId("tensorflow", ""))
    # Keras on torch's run_eagerly and on JAX's jit_compile are its default's configuration
    assert torch_modes == ["default", "jit_compile"] and jax_modes == (
        ["run_eagerly", "default"] if every_mode else ["default"])
    assert tf_modes == ["eager", "tf.function", "xla"]  # plain eager, both production paths


@pytest.mark.slow
def test_real_tf_function_cell_reports_cold_and_warm_compile_apart_from_steady_time():
    from dlbench.runner.driver.launch.execute import execute_cell

    spec = CellSpec(experiment="execution-mode", workload="mlp-digits",
                    framework="tensorflow", backend="", device="cpu", mode="tf.function",
                    batch_size=32, repeats=3, repeat_index=1, threads=1, timeout_s=240,
                    params={"step_samples": 3, "batches": 8, "min_window_s": 0.02})
    record = execute_cell(spec)
    assert record.outcome.status.value == "ok", record.outcome.reason + record.stderr_tail
    assert record.machine["fresh_memory_gibs"] > 0  # read before the worker started
    obs = record.outcome.observations
    assert {o.repeat for o in obs} == {1}  # one repeat per process, labelled with its index
    summary = {o.metric: o.value for o in obs if o.step is None}
    steps = sorted((o.step, o.value) for o in obs if o.metric == "step_time")
    assert [step for step, _ in steps] == [0, 1, 2, 3]  # the first step, then 3 windows
    assert summary["compile_time_cold"] > 0  # tracing the step
    assert summary["compile_time_cold"] == pytest.approx(
        max(steps[0][1] - summary["steady_step_time"], 0) / 1000)
    assert "compile_time_warm" in summary and "compile_time" not in summary
    faster = summary["steady_step_time"] < summary["eager_step_time"]
    assert ("break_even_steps" in summary) == faster
    windows = record.outcome.details["sampling"]["measurements"]
    assert windows["step_time"]["loops"] >= 2 and windows["eager_step_time"]["samples"] == 3
    assert "tf.function" in record.outcome.fairness.compile_mode


@pytest.mark.slow
def test_torch_compile_cold_time_is_a_real_compilation_not_a_cache_hit():
    from dlbench.runner.driver.launch.execute import execute_cell

    spec = CellSpec(experiment="execution-mode", workload="mlp-digits", framework="pytorch",
                    backend="", device="cpu", mode="compiled", batch_size=32, repeats=1,
                    threads=1, timeout_s=400,
                    params={"step_samples": 2, "batches": 4, "min_window_s": 0.02})
    record = execute_cell(spec)
    assert record.outcome.status.value == "ok", record.outcome.reason + record.stderr_tail
    cache = record.outcome.details["compile_cache"]
    assert cache["files_before_cold_compile"] == 0  # a fresh, empty inductor cache
    assert cache["files_after_cold_compile"] > 0  # the cold step compiled and wrote code
    summary = {o.metric: o.value for o in record.outcome.observations if o.step is None}
    # the second compile of a fresh model finds the first one's caches (inductor's on-disk
    # code among them): a cold time that were a cache hit would be no longer than it
    assert summary["compile_time_warm"] < summary["compile_time_cold"]
