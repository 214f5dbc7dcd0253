"""The mode matrix: every framework in its default and its fastest mode, cells that never
share an identity, and comparisons that never pair a default mode with a fastest one."""

from __future__ import annotations

import pytest
from tests.judging_fixtures import CPU_ENV, noisy, tables

from dlbench.modes import DEFAULT, FASTEST, MODES, OTHER, group_words, mode_class, mode_of_class
from report.claims import check_claims, load_claims
from report.verdicts import QUESTIONS, answer
from runner.experiments import PlanRequest, get_experiment, too_slow_here
from runner.frameworks import FRAMEWORKS, missing_modules

INSTALLED = [f for f in FRAMEWORKS if not missing_modules(f)]
MODE_EXPERIMENTS = ("training", "inference", "execution-mode")


def _plan(experiment: str, suite: str, frameworks=None) -> list:
    request = PlanRequest(suite=suite, workloads=[], frameworks=list(frameworks or FRAMEWORKS),
                          device="cpu", repeats=None, threads=1, timeout_s=None, data_dir="")
    return get_experiment(experiment).plan(request)


@pytest.mark.parametrize("experiment", MODE_EXPERIMENTS)
@pytest.mark.parametrize("suite", ["standard", "full"])
def test_every_installed_system_has_a_default_and_a_fastest_cell_unless_too_slow_here(
        experiment, suite):
    """Full: on every workload. Standard on 2 CPU cores (90 minutes): the default mode on
    every workload and the fastest on at least one, except a mode too slow on a CPU."""
    assert INSTALLED, "no framework is installed"
    cells = _plan(experiment, suite, INSTALLED)
    request = PlanRequest(suite=suite, workloads=[], frameworks=INSTALLED, device="cpu",
                          repeats=None, threads=1, timeout_s=None, data_dir="")
    for framework in INSTALLED:
        fastest = mode_of_class(experiment, framework.framework, FASTEST)
        wanted_fastest = not too_slow_here(request, framework, fastest)
        per_workload = [{mode_class(experiment, c.framework, c.mode) for c in cells
                         if c.framework_id == framework and c.workload == workload}
                        for workload in {c.workload for c in cells}]
        assert all(DEFAULT in classes for classes in per_workload), (experiment, framework)
        has_fastest = [FASTEST in classes for classes in per_workload]
        if suite == "full":
            assert all(has_fastest), (experiment, framework.name)
        else:
            assert any(has_fastest) == wanted_fastest, (experiment, framework.name)


@pytest.mark.parametrize("experiment", MODE_EXPERIMENTS)
@pytest.mark.parametrize("suite", ["quick", "standard", "full"])
def test_two_modes_never_share_a_cell_or_a_configuration(experiment, suite):
    cells = _plan(experiment, suite)
    rows = [c.key_columns("r") for c in cells]
    assert len({r["cell_id"] for r in rows}) == len(cells)
    assert len({r["config_id"] for r in rows}) == len(cells)


def test_every_framework_has_exactly_one_default_and_one_fastest_mode_per_experiment():
    for experiment, frameworks in MODES.items():
        for framework, table in frameworks.items():
            classes = list(table.values())
            assert classes.count(DEFAULT) == 1 and classes.count(FASTEST) == 1, (
                experiment, framework)


def test_the_quick_suite_does_not_grow():
    training = _plan("training", "quick")
    assert {c.mode for c in training} == {"default"}
    assert len(training) == len({(c.workload, c.framework_id) for c in training})
    inference = _plan("inference", "quick")
    assert len(inference) == len(FRAMEWORKS)  # the default mode each (8 minutes in all)
    assert {mode_class("inference", c.framework, c.mode) for c in inference} == {DEFAULT}


def test_mode_classes_of_listed_unlisted_and_historical_modes():
    assert mode_class("training", "pytorch", "compiled") == FASTEST
    assert mode_class("inference", "tensorflow", "tf.function") == OTHER
    assert mode_class("inference", "keras", "predict") == OTHER  # an older release's mode
    assert mode_class("export", "pytorch", "default") == DEFAULT  # experiments without modes
    assert group_words([("workload", "mlp-digits"), ("mode_class", "fastest")]) == \
        "workload mlp-digits, fastest vs fastest mode"


def _mixed_modes(experiment: str, cells: dict, throughput: bool = False) -> list[dict]:
    """Inference cells of several systems and modes, `cells` = {(system, mode): latency}."""
    def values(latency: float, seed: int) -> dict:
        found = {"latency_p50": noisy(latency, seed)}
        return found | ({"inference_throughput": noisy(1 / latency, seed)} if throughput else {})

    return [{"system": s, "mode": m, "experiment": experiment, "values": values(t, i)}
            for i, ((s, m), t) in enumerate(cells.items())]


#: PyTorch's compiled cell is the fastest cell of all; TensorFlow's graph without XLA (a mode
#: of neither class) is faster than its eager and XLA cells.
INFERENCE = {("pytorch", "inference_mode"): 1.0, ("pytorch", "compiled"): 0.2,
             ("tensorflow", "eager"): 1.5, ("tensorflow", "tf.function"): 0.1,
             ("tensorflow", "xla"): 0.5}


def test_a_verdict_never_pairs_a_default_mode_with_a_fastest_one():
    [question] = [q for q in QUESTIONS if q.key == "inference-latency"]
    cells = _mixed_modes("inference", INFERENCE)
    found = answer(question, *tables(cells), environments={"r1": CPU_ENV})
    by_class = {dict(v.group)["mode_class"]: v for v in found}
    assert set(by_class) == {DEFAULT, FASTEST}  # labelled, and no group of other modes
    for wanted, verdict in by_class.items():
        assert all(mode_class("inference", s.contender, s.cell_id.split(":")[3].split("-")[1])
                   == wanted for s in verdict.standings), verdict.standings
    assert by_class[DEFAULT].winner == "pytorch"  # 1.0 against TensorFlow eager's 1.5
    assert by_class[FASTEST].winner == "pytorch"  # 0.2 against XLA's 0.5, not tf.function
    assert "tf.function" not in " ".join(by_class[FASTEST].evidence)


def test_a_claim_compares_like_with_like_and_says_which():
    [claim] = [c for c in load_claims() if c.id == "infer-order"]
    cells = _mixed_modes("inference", INFERENCE, throughput=True)
    [verdict] = check_claims(*tables(cells), [claim], machines={"r1": "m"}, listings={},
                             environments={"r1": CPU_ENV})
    evidence = " ".join(verdict.evidence)
    assert "tf.function" not in evidence
    text = verdict.explanation
    assert "default vs default mode" in text and "fastest vs fastest mode" in text
