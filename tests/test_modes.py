"""The mode matrix: every framework on its plain and its production path, a mode that is the
same configuration as another measured once and standing for both classes, cells that never
share an identity, and comparisons that never pair a mode with itself or across classes."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from tests.judging_fixtures import CPU_ENV, noisy, tables

from dlbench.core.declarations.modes import (DEFAULT, FASTEST, MODES, OTHER, by_class, group_words,
                                             mode_class, mode_classes, same_as)
from dlbench.report.claims.check import check_claims, load_claims
from dlbench.core.judging.verdict_engine import QUESTIONS
from dlbench.report.verdicts.answers import answer, verdicts
from dlbench.runner.driver.plan.experiments import get_experiment
from dlbench.runner.cell.spec import NOT_MEASURED
from dlbench.runner.cell.frameworks import FRAMEWORKS, missing_modules
from dlbench.runner.driver.plan.cells import plan_cells
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.workloads.real_size import REAL_SIZE_WORKLOADS

INSTALLED = [f for f in FRAMEWORKS if not missing_modules(f)]
MODE_EXPERIMENTS = ("training", "inference", "execution-mode")


def _plan(experiment: str, suite: str, frameworks=None, device: str = "cpu") -> list:
    request = RunRequest(suite=suite, frameworks=[f.name for f in frameworks or FRAMEWORKS],
                         device=device, threads=1)
    return get_experiment(experiment).plan(request)


def _classes_per_workload(experiment: str, cells: list, framework) -> list[set[str]]:
    return [{cls for c in cells if c.framework_id == framework and c.workload == workload
             for cls in mode_classes(experiment, framework.name, c.mode, c.device)}
            for workload in {c.workload for c in cells}]


@pytest.mark.parametrize(("experiment", "suite", "device"), [
    ("inference", "standard", "cpu"), ("inference", "standard", "cuda"),
    ("inference", "full", "cpu"), ("execution-mode", "standard", "cuda"),
    ("execution-mode", "full", "cpu")])
def test_inference_and_execution_mode_plan_every_systems_plain_and_production_path_everywhere(
        experiment, suite, device):
    """On every workload of the suite; a production path too slow here is a planned cell
    that says why it is not measured."""
    cells = _plan(experiment, suite, device=device)
    for framework in FRAMEWORKS:
        per_workload = _classes_per_workload(experiment, cells, framework)
        assert per_workload and all({DEFAULT, FASTEST} <= c for c in per_workload), (
            experiment, framework.name)


def test_standard_on_a_cpu_leaves_execution_modes_to_the_full_suite():
    """Its 150 minutes go to the real-size cells; the MLP's modes measured per-call overhead."""
    assert _plan("execution-mode", "standard", device="cpu") == []
    assert _plan("execution-mode", "full", device="cpu")


@pytest.mark.parametrize("suite", ["standard", "full"])
def test_training_has_every_plain_path_and_the_production_path_on_some_workload(suite):
    cells = _plan("training", suite)
    for framework in FRAMEWORKS:
        per_workload = _classes_per_workload("training", cells, framework)
        assert all(DEFAULT in classes for classes in per_workload), framework.name
        has_production = [FASTEST in classes for classes in per_workload]
        assert (all if suite == "full" else any)(has_production), framework.name


def test_a_mode_too_slow_on_a_cpu_is_a_cell_that_says_so_with_its_measured_cost():
    cells = [c for c in _plan("inference", "standard")  # the real-size cuts: test_real_size
             if c.workload not in REAL_SIZE_WORKLOADS]
    slow = {(c.framework_id.name, c.mode): c.params[NOT_MEASURED] for c in cells
            if c.params.get(NOT_MEASURED)}
    # keras-torch's jit_compile is slow on every CPU suite but full (its system declares the
    # cost); the standard suite's own cuts (standard_cpu_cuts) add two cold compiles
    assert set(slow) == {("keras-torch", "jit_compile"), ("pytorch", "compiled"),
                         ("tensorflow", "xla")}
    assert "172 s" in slow[("keras-torch", "jit_compile")]
    assert all(why.startswith("not measured on this device") for why in slow.values())
    assert not any(c.params.get(NOT_MEASURED) for c in _plan("inference", "full"))


@pytest.mark.parametrize("experiment", MODE_EXPERIMENTS)
@pytest.mark.parametrize("suite", ["quick", "standard", "full"])
def test_two_modes_never_share_a_cell_or_a_configuration(experiment, suite):
    cells = _plan(experiment, suite)
    rows = [c.key_columns("r") for c in cells]
    assert len({r["cell_id"] for r in rows}) == len(cells)
    assert len({r["config_id"] for r in rows}) == len(cells)


@pytest.mark.parametrize("experiment", MODE_EXPERIMENTS)
@pytest.mark.parametrize(("suite", "device"), [("quick", "cpu"), ("standard", "cpu"),
                                                ("standard", "cuda"), ("full", "cpu")])
def test_a_mode_that_is_the_same_configuration_as_another_is_never_its_own_cell(
        experiment, suite, device):
    cells = _plan(experiment, suite, device=device)
    assert not [c.cell_id for c in cells
                if same_as(experiment, c.framework_id.name, c.mode, c.device)]
    jax = [c for c in cells if c.framework_id.name == "keras-jax"]
    assert {c.mode for c in jax} <= {"default", "predict", "run_eagerly", "call"}


def test_keras_on_jax_default_stands_for_both_classes_and_other_systems_for_one():
    assert mode_classes("inference", "keras-jax", "predict", "cpu") == (DEFAULT, FASTEST)
    assert mode_classes("execution-mode", "keras-jax", "default", "cpu") == (DEFAULT, FASTEST)
    assert mode_classes("training", "keras-jax", "default", "cpu") == (DEFAULT, FASTEST)
    # on torch, run_eagerly is Keras' default (eager): the default cell also stands for it
    assert mode_classes("execution-mode", "keras-torch", "default", "cpu") == (DEFAULT, OTHER)
    # on TensorFlow Keras' default is a graph on a CPU, and XLA only where a GPU is visible
    assert mode_classes("inference", "keras-tensorflow", "predict", "cpu") == (DEFAULT,)
    assert mode_classes("inference", "keras-tensorflow", "predict", "cuda") == (DEFAULT,
                                                                                 FASTEST)
    assert mode_classes("inference", "pytorch", "compiled", "cpu") == (FASTEST,)


def test_every_framework_has_one_plain_mode_and_a_production_mode_per_experiment():
    for experiment, frameworks in MODES.items():
        for framework, table in frameworks.items():
            classes = list(table.values())
            assert classes.count(DEFAULT) == 1 and classes.count(FASTEST) >= 1, (
                experiment, framework)


def test_the_quick_suite_does_not_grow():
    training = _plan("training", "quick")
    assert {c.mode for c in training} == {"default"}
    assert len(training) == len({(c.workload, c.framework_id) for c in training})
    inference = _plan("inference", "quick")
    assert len(inference) == len(FRAMEWORKS)  # the plain mode each (8 minutes in all)
    assert {mode_class("inference", c.framework, c.mode) for c in inference} == {DEFAULT}


def test_mode_classes_of_listed_unlisted_and_historical_modes():
    assert mode_class("training", "pytorch", "compiled") == FASTEST
    assert mode_class("inference", "tensorflow", "tf.function") == FASTEST
    assert mode_class("inference", "keras", "predict") == DEFAULT
    assert mode_class("inference", "keras", "call") == OTHER
    assert mode_class("inference", "keras", "predict_on_batch") == OTHER  # not listed
    assert mode_class("export", "pytorch", "default") == DEFAULT  # experiments without modes
    assert group_words([("workload", "mlp-digits"), ("mode_class", "fastest")]) == \
        "workload mlp-digits, production vs production mode"


def _rows(entries: list[tuple[str, str]], experiment: str = "inference") -> pd.DataFrame:
    return pd.DataFrame([{"experiment": experiment, "system": s, "mode": m, "device": "cpu",
                          "mode_class": mode_class(experiment, s.split("-")[0], m),
                          "value": float(i)} for i, (s, m) in enumerate(entries)])


def test_by_class_puts_a_cell_standing_for_two_classes_in_each():
    rows = by_class(_rows([("keras-jax", "predict"), ("pytorch", "compiled")]))
    assert sorted(zip(rows["system"], rows["mode_class"], strict=True)) == [
        ("keras-jax", DEFAULT), ("keras-jax", FASTEST), ("pytorch", FASTEST)]
    assert rows.loc[rows["system"] == "keras-jax", "value"].tolist() == [0.0, 0.0]


def test_by_class_leaves_out_a_mode_of_class_other_and_keeps_one_class_modes_once():
    rows = by_class(_rows([("keras-torch", "call"), ("tensorflow", "eager")]))
    assert list(zip(rows["system"], rows["mode_class"], strict=True)) == [
        ("tensorflow", DEFAULT)]
    assert by_class(_rows([("keras-torch", "call")])).empty


def _mixed_modes(experiment: str, cells: dict, throughput: bool = False) -> list[dict]:
    """Inference cells of several systems and modes, `cells` = {(system, mode): latency}."""
    def values(latency: float, seed: int) -> dict:
        found = {"latency_p50": noisy(latency, seed)}
        return found | ({"inference_throughput": noisy(1 / latency, seed)} if throughput else {})

    return [{"system": s, "mode": m, "experiment": experiment, "values": values(t, i)}
            for i, ((s, m), t) in enumerate(cells.items())]


#: PyTorch's compiled cell is the fastest cell of all; TensorFlow's two production modes
#: (tf.function and XLA) are represented by the better one; Keras' model(x) (class other)
#: is faster than anything and never compared.
INFERENCE = {("pytorch", "inference_mode"): 1.0, ("pytorch", "compiled"): 0.2,
             ("tensorflow", "eager"): 1.5, ("tensorflow", "tf.function"): 0.4,
             ("tensorflow", "xla"): 0.5, ("keras-torch", "call"): 0.01,
             ("keras-jax", "predict"): 1.2}


def test_a_verdict_never_pairs_a_plain_mode_with_a_production_one():
    [question] = [q for q in QUESTIONS if q.key == "inference-latency"]
    cells = _mixed_modes("inference", INFERENCE)
    found = answer(question, *tables(cells), environments={"r1": CPU_ENV})
    by_group = {dict(v.group)["mode_class"]: v for v in found}
    assert set(by_group) == {DEFAULT, FASTEST}  # labelled, and no group of other modes
    for wanted, verdict in by_group.items():
        assert all(wanted in mode_classes("inference", s.contender,
                                          s.cell_id.split(":")[3].split("-")[1], "cpu")
                   for s in verdict.standings), verdict.standings
    assert by_group[DEFAULT].winner == "pytorch"  # 1.0 against Keras on JAX's 1.2
    assert by_group[FASTEST].winner == "pytorch"  # 0.2 against tf.function's 0.4
    assert "tf.function" in " ".join(by_group[FASTEST].evidence)
    assert not any("call" in e for v in found for e in v.evidence)
    # Keras on JAX's one cell stands in both groups
    assert all("keras-jax" in [s.contender for s in v.standings] for v in found)


def test_a_claim_compares_like_with_like_and_says_which():
    [claim] = [c for c in load_claims() if c.id == "infer-order"]
    cells = _mixed_modes("inference", INFERENCE, throughput=True)
    [verdict] = check_claims(*tables(cells), [claim], machines={"r1": "m"}, listings={},
                             environments={"r1": CPU_ENV})
    assert "call" not in " ".join(verdict.evidence)
    text = verdict.explanation
    assert "plain vs plain mode" in text and "production vs production mode" in text


def _standard_plan_tables(device: str) -> tuple[pd.DataFrame, pd.DataFrame, list]:
    """Tables of the standard plan on `device` as if every measured cell finished: each
    cell's metrics with distinct, well-separated values per cell."""
    request = RunRequest(suite="standard", experiments=[], workloads=[], frameworks=[],
                         device=device, repeats=None, threads=1, timeout_s=None, data_dir="")
    specs = [s for s in plan_cells(request, device) if not s.params.get(NOT_MEASURED)]
    metrics = {q.metric for q in QUESTIONS}
    cells, observations = [], []
    for index, spec in enumerate(specs):
        key = spec.key_columns("r1")
        cells.append(key | {"status": "ok", "reason": "", "details_json": json.dumps({})})
        for metric in metrics:
            observations += [key | {"repeat": r, "step": np.nan, "metric": metric,
                                    "value": value}
                             for r, value in enumerate(noisy(1.0 + index, index, n=3))]
    return pd.DataFrame(observations), pd.DataFrame(cells), specs


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_no_home_page_question_compares_a_mode_with_itself_over_the_standard_plan(device):
    observations, cells, specs = _standard_plan_tables(device)
    by_id = {s.cell_id: s for s in specs}
    found = verdicts(observations, cells, environments={"r1": CPU_ENV})
    assert found
    compared = 0
    for verdict in found:
        evidence = [by_id[cell] for cell in verdict.evidence]
        assert len(set(verdict.evidence)) == len(evidence), verdict  # a cell meets itself
        configurations = [(s.framework_id.name, s.mode, s.workload, s.batch_size,
                           s.precision, s.workers, s.export_format) for s in evidence]
        assert len(set(configurations)) == len(configurations), verdict
        group = dict(verdict.group)
        if "mode_class" in group:  # like with like: every cell stands for the group's class
            assert all(group["mode_class"] in mode_classes(
                s.experiment, s.framework_id.name, s.mode, s.device) for s in evidence)
        if verdict.question == "compile-speedup":  # modes of one system: never equal ones
            assert not any(same_as(s.experiment, s.framework_id.name, s.mode, s.device)
                           for s in evidence)
        compared += len(verdict.pairings)
    assert compared > 0


def test_a_cell_planned_as_not_measured_is_recorded_skipped_without_a_worker():
    from dlbench.runner.driver.plan.estimate import estimate
    from dlbench.runner.driver.launch.execute import execute_cell
    from dlbench.runner.driver.plan.sharing import may_share

    [spec] = [c for c in _plan("execution-mode", "quick") if c.params.get(NOT_MEASURED)]
    record = execute_cell(spec)
    assert record.outcome.status.value == "skipped"
    assert record.outcome.reason == spec.params[NOT_MEASURED]
    assert record.wall_time_s < 1.0  # no framework was imported
    assert estimate([[spec]], {}).seconds == 0.0
    assert not may_share(spec, "quick")
