"""Reduced precision, whole: the accuracy-loss rule for each outcome, the machine suite's
precision cells (bf16 accuracy over seeds in every system, fp16 only where the CPU has fp16
units), and tiny real runs of them: every system's bf16 accuracy cell, and TensorFlow's own
API in bf16 on the model families."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dlbench.core.machine.cpu_flags import NO_FP16_UNITS, fp16_units, isa_features
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.precision_accuracy import judge_precision_accuracy
from dlbench.runner.cell.frameworks import FRAMEWORKS
from dlbench.runner.driver.plan.cells import plan_cells
from dlbench.runner.driver.plan.experiments import precision as precision_plan
from dlbench.runner.driver.plan.request import RunRequest

SEEDS = np.arange(8)
#: fp32 accuracies by seed, around 0.93 with a seed spread of about a point.
FP32 = np.array([0.930, 0.925, 0.940, 0.935, 0.920, 0.945, 0.930, 0.928])
TEST_SAMPLES = 20000


def judge(change: np.ndarray, fp32: np.ndarray = FP32, target: float = 0.9):
    return judge_precision_accuracy(SEEDS, fp32 + change, change, TEST_SAMPLES, target)


def test_a_paired_loss_beyond_the_threshold_is_a_loss():
    answer = judge(np.full(8, -0.05) + np.linspace(-0.002, 0.002, 8))
    assert answer.outcome is Outcome.LOSES and answer.judged.leader == "fp32"


def test_a_paired_gain_beyond_the_threshold_is_a_gain():
    assert judge(np.full(8, 0.05) + np.linspace(-0.002, 0.002, 8)).outcome is Outcome.GAINS


def test_small_paired_changes_are_no_meaningful_difference():
    """The seeds' spread (a point) is paired away: only the changes' own spread counts."""
    answer = judge(np.linspace(-0.002, 0.002, 8))
    assert answer.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE


def test_changes_too_spread_to_tell_are_undecided():
    changes = np.array([-0.06, 0.05, -0.04, 0.06, -0.05, 0.04, -0.03, 0.02])
    assert judge(changes).outcome is Outcome.UNDECIDED


def test_fp32_below_its_target_decides_nothing():
    answer = judge(np.full(8, -0.05), fp32=FP32 - 0.1)
    assert answer.outcome is Outcome.MISSED_TARGET and answer.judged is None
    assert "below the target 0.9" in answer.reason


def test_a_single_seed_cannot_tell():
    answer = judge_precision_accuracy(SEEDS[:1], FP32[:1] - 0.05, np.array([-0.05]),
                                      TEST_SAMPLES, 0.9)
    assert answer.outcome is Outcome.CANNOT_TELL


@pytest.mark.parametrize(("flags", "words"), [
    ({"avx512_fp16", "amx_fp16", "avx512f"}, "AMX-FP16 and AVX-512 FP16"),
    ({"avx512_fp16", "avx512f"}, "AVX-512 FP16"),
    ({"avx512_bf16", "avx512f"}, ""),  # the AMD EPYC of release 2027.04: bf16 units only
])
def test_a_cpus_fp16_units_are_read_from_its_flags(flags, words):
    assert fp16_units(isa_features(flags)) == words


def machine_precision(monkeypatch, flags: set[str]) -> list:
    monkeypatch.setattr(precision_plan, "cpu_flags", lambda: flags)
    return plan_cells(RunRequest(suite="machine", experiments=["precision"], threads=1), "cpu")


@pytest.mark.parametrize("flags", [{"avx512_bf16", "avx512f"}, {"avx512_fp16", "amx_fp16"}])
def test_the_machine_suite_plans_fp16_where_the_cpu_has_units_and_says_why_not(monkeypatch,
                                                                             flags):
    cells = machine_precision(monkeypatch, flags)
    fp16 = [c for c in cells if c.precision == "fp16"]
    assert {c.workload for c in fp16} == {"resnet50-synthetic", "bert-base-tokens"}
    assert {c.framework_id.name for c in fp16} == {f.name for f in FRAMEWORKS}
    resnet = [c for c in fp16 if c.workload == "resnet50-synthetic"]
    if fp16_units(isa_features(flags)):
        assert all(c.runs for c in resnet)
    else:
        assert not any(c.runs for c in resnet)
        assert {c.params["unsupported"] for c in resnet} == {NO_FP16_UNITS}


def test_the_machine_suite_trains_the_mlp_in_bf16_beside_fp32_over_seeds(monkeypatch):
    cells = machine_precision(monkeypatch, set())
    mlp = [c for c in cells if c.workload == "mlp-digits"]
    assert sorted(c.framework_id.name for c in mlp) == sorted(f.name for f in FRAMEWORKS)
    assert {(c.precision, c.repeats, c.params["epochs"]) for c in mlp} == {("bf16", 8, 20)}
    assert all(c.runs and not c.params.get("no_accuracy_vs_fp32") for c in mlp)


def _tiny(cell, **params):
    return replace(cell, params=cell.params | {"epochs": 2, "train_samples": 640,
                                               "latency_calls": 5, "throughput_samples": 1,
                                               "throughput_batch": 64, "warmup_calls": 1,
                                               "min_window_s": 0.02} | params,
                   timeout_s=300)


@pytest.mark.slow
def test_every_systems_bf16_accuracy_cell_runs_and_is_judged_paired_by_seed(monkeypatch):
    """The machine suite's bf16 accuracy cells, tiny (2 epochs of 640 samples), two seeds
    each, in real workers: each process states its accuracy change against fp32, and the
    rule judges each system from them."""
    from dlbench.runner.cell.frameworks import missing_modules
    from dlbench.runner.driver.launch.execute import execute_cells

    cells = [c for c in machine_precision(monkeypatch, set()) if c.workload == "mlp-digits"
             and not missing_modules(c.framework_id)]
    assert len(cells) >= 3
    for cell in cells:
        records = [execute_cells([replace(_tiny(cell), repeat_index=seed)])[0]
                   for seed in (0, 1)]
        assert [r.outcome.status.value for r in records] == ["ok", "ok"], \
            [r.outcome.reason + r.stderr_tail for r in records]
        values = [{o.metric: o.value for o in r.outcome.observations if o.step is None}
                  for r in records]
        assert all(abs(v["accuracy_change_vs_fp32"]) < 0.2 and v["test_accuracy"] > 0.5
                   for v in values), (cell.cell_id, values)
        answer = judge_precision_accuracy(
            np.array([0, 1]), np.array([v["test_accuracy"] for v in values]),
            np.array([v["accuracy_change_vs_fp32"] for v in values]),
            int(records[0].outcome.details.get("test_samples", 360)), target=0.5)
        assert answer.judged is not None and answer.outcome is not Outcome.MISSED_TARGET


@pytest.mark.slow
@pytest.mark.parametrize("workload", ["resnet50-synthetic", "bert-base-tokens"])
def test_tensorflows_own_api_trains_its_model_families_in_bf16(monkeypatch, workload):
    """TensorFlow's real-size bf16 cell, at its family's tiny size: built at the cell's
    dtype (until 2026-12-07 it failed: "built in float32 only"), its outputs near fp32's."""
    from dlbench.runner.driver.launch.execute import execute_cells

    (cell,) = [c for c in machine_precision(monkeypatch, set()) if c.workload == workload
               and c.framework_id.name == "tensorflow" and c.precision == "bf16"]
    spec = replace(cell, params={k: v for k, v in cell.params.items() if k != "not_measured"}
                   | {"profile": "tiny"}, timeout_s=300)
    (record,) = execute_cells([spec])
    assert record.outcome.status.value == "ok", record.outcome.reason + record.stderr_tail
    values = {o.metric: o.value for o in record.outcome.observations if o.step is None}
    assert 0 < values["output_deviation_rel_vs_fp32"] < 0.05  # bf16 rounds, a little
    assert "bfloat16" in record.outcome.fairness.precision_policy
