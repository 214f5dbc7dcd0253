"""execution-mode: break-even arithmetic, the plan, and a real TensorFlow tf.function cell."""

from __future__ import annotations

import pytest

from runner.experiments import PlanRequest
from runner.experiments.execution_mode import EXPERIMENT, modes
from runner.experiments.execution_mode.protocol import ModeTimes, break_even_steps
from runner.frameworks import FRAMEWORKS
from runner.spec import CellSpec, FrameworkId


def test_break_even_counts_steps_until_compilation_has_paid_off():
    eager = ModeTimes([12.0, 10.0, 10.0, 10.0])  # 2 ms first-use overhead, 10 ms steady
    compiled = ModeTimes([502.0, 2.0, 2.0, 2.0])  # 0.5 s compile, 2 ms steady
    assert compiled.compile_s == pytest.approx(0.5)
    # after n steps: 502 + 2(n-1) <= 12 + 10(n-1)  <=>  n - 1 >= 61.25
    assert break_even_steps(compiled, eager) == 63
    assert break_even_steps(eager, compiled) is None  # slower modes never break even


def test_quick_plan_covers_every_framework_with_its_compiled_modes_only():
    request = PlanRequest(suite="quick", workloads=[], frameworks=list(FRAMEWORKS),
                          device="cpu", repeats=None, threads=1, timeout_s=None, data_dir="")
    cells = EXPERIMENT.plan(request)
    assert len({c.cell_id for c in cells}) == len(cells)
    assert {c.framework_id.name for c in cells} == {f.name for f in FRAMEWORKS}
    assert modes("quick", FrameworkId("pytorch", "")) == ["compiled"]
    assert modes("quick", FrameworkId("tensorflow", "")) == ["tf.function", "xla"]
    assert modes("quick", FrameworkId("keras", "torch")) == ["jit_compile"]
    assert modes("quick", FrameworkId("keras", "jax")) == ["default"]
    assert modes("standard", FrameworkId("keras", "jax")) == ["run_eagerly", "default",
                                                              "jit_compile"]


@pytest.mark.slow
def test_real_tf_function_cell_reports_compile_time_apart_from_steady_time():
    from runner.execute import execute_cell

    spec = CellSpec(experiment="execution-mode", workload="mlp-digits",
                    framework="tensorflow", backend="", device="cpu", mode="tf.function",
                    batch_size=32, repeats=2, threads=1, timeout_s=240, params={"steps": 12})
    record = execute_cell(spec)
    assert record.outcome.status.value == "ok", record.outcome.reason + record.stderr_tail
    obs = record.outcome.observations
    for repeat in (0, 1):
        summary = {o.metric: o.value for o in obs if o.repeat == repeat and o.step is None}
        steps = [o.value for o in obs if o.metric == "step_time" and o.repeat == repeat]
        assert len(steps) == 12
        assert summary["compile_time"] > 0  # tracing the step
        assert summary["compile_time"] * 1000 < steps[0]
        faster = summary["steady_step_time"] < summary["eager_step_time"]
        assert ("break_even_steps" in summary) == faster
    assert "tf.function" in record.outcome.fairness.compile_mode
