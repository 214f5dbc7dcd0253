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


def test_the_machine_suite_times_resnet50_training_steps_plain_beside_production():
    """On 2 CPU cores: ResNet-50 at its CPU batch, each system's plain path beside its
    production one where both are measured; what is left out says why."""
    from dlbench.runner.workloads.real_size import TIMEOUT_S

    cells = EXPERIMENT.plan(RunRequest(suite="machine", device="cpu", threads=2))
    assert {c.workload for c in cells} == {"resnet50-synthetic"}
    measured = {(c.framework_id.name, c.mode) for c in cells if c.runs}
    assert measured == {("pytorch", "eager"), ("pytorch", "compiled"),
                        ("tensorflow", "eager"), ("tensorflow", "tf.function"),
                        ("keras-tensorflow", "default"), ("keras-tensorflow", "jit_compile")}
    left_out = {(c.framework_id.name, c.mode): c.params[NOT_MEASURED] for c in cells
                if not c.runs}
    assert set(left_out) == {("tensorflow", "xla"), ("keras-torch", "default"),
                             ("keras-torch", "jit_compile"), ("keras-jax", "default")}
    assert "tf.function" in left_out[("tensorflow", "xla")]
    assert "jit_compile='auto' resolves to True" in left_out[("keras-jax", "default")]
    for cell in cells:
        assert cell.batch_size == 8 and cell.timeout_s == TIMEOUT_S
        assert cell.params["data_size"] == "small" and cell.params["batches"] == 4
    # on a GPU the machine suite measures standard's grid
    gpu = EXPERIMENT.plan(RunRequest(suite="machine", device="cuda", threads=2))
    assert "resnet50-synthetic" not in {c.workload for c in gpu}


def test_a_real_size_compiled_cell_is_estimated_with_its_compiles_and_steps():
    from dlbench.runner.driver.plan.estimate import default_process_s

    cells = {(c.framework_id.name, c.mode): c for c in EXPERIMENT.plan(
        RunRequest(suite="machine", device="cpu", threads=2)) if c.runs and not c.control}
    eager, compiled = cells[("pytorch", "eager")], cells[("pytorch", "compiled")]
    # the compiled process times the eager path too, then compiles cold and warm
    assert default_process_s(compiled) > 2 * default_process_s(eager) > 0


@pytest.mark.slow
@pytest.mark.parametrize(("framework", "backend", "mode"), [
    ("pytorch", "", "compiled"), ("tensorflow", "", "tf.function"),
    ("keras", "tensorflow", "jit_compile")])
def test_the_machine_suites_resnet50_production_cells_run_at_the_tiny_size(framework, backend,
                                                                          mode):
    """Each production cell of the machine suite, at the ResNet-50 family's tiny size: the
    plain path timed in the same process, cold and warm compiles, and the break-even when
    the production path is faster."""
    from dlbench.runner.driver.launch.execute import execute_cell

    [planned] = [c for c in EXPERIMENT.plan(RunRequest(suite="machine", device="cpu",
                                                       threads=2))
                 if (c.framework, c.backend, c.mode) == (framework, backend, mode)]
    spec = CellSpec(experiment="execution-mode", workload="resnet50-synthetic",
                    framework=framework, backend=backend, device="cpu", mode=mode,
                    batch_size=4, repeats=1, threads=2, timeout_s=600,
                    params=planned.params | {"profile": "tiny", "step_samples": 2,
                                             "min_window_s": 0.02})
    record = execute_cell(spec)
    assert record.outcome.status.value == "ok", record.outcome.reason + record.stderr_tail
    summary = {o.metric: o.value for o in record.outcome.observations if o.step is None}
    assert summary["eager_step_time"] > 0 and summary["steady_step_time"] > 0
    assert summary["compile_time_cold"] > 0 and "compile_time_warm" in summary
    faster = summary["steady_step_time"] < summary["eager_step_time"]
    assert ("break_even_steps" in summary) == faster
