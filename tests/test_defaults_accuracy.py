"""defaults-accuracy: "does the framework you use change accuracy?". The rule for each of its
outcomes, on synthetic values; each system's defaults read back from its own framework's
objects; the task below its ceiling; the plan (standard and full, never the machine suite);
and the answer with its differing settings and the system that cannot run, as pages show it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.defaults_accuracy import (ALPHA, THRESHOLD, equals_of_leader,
                                                    judge_defaults_accuracy)
from dlbench.core.declarations.systems import systems_of
from dlbench.core.storage.tables import read_table
from dlbench.runner.driver.plan.experiments import suite_experiments
from dlbench.runner.driver.plan.experiments.defaults_accuracy import NO_DEFAULTS
from dlbench.runner.worker.experiments.defaults_accuracy.protocol import (DOCUMENTED_DEFAULTS,
                                                                          differing_defaults,
                                                                          task_data)
from dlbench.runner.driver.plan.cells import plan_cells
from dlbench.runner.driver.plan.request import RunRequest

ROOT = Path(__file__).resolve().parents[1]
SEEDS = np.arange(10)
SYSTEMS = ["pytorch", "tensorflow", "keras-tensorflow", "keras-torch", "keras-jax"]


def around(mean: float, spread: float, seed: int) -> np.ndarray:
    """Ten seeds' accuracies around `mean`."""
    return mean + np.random.default_rng(seed).normal(0.0, spread, SEEDS.size)


def test_a_leader_ahead_of_every_other_by_more_than_the_threshold_is_the_winner():
    answer = judge_defaults_accuracy({"pytorch": (SEEDS, around(0.86, 0.004, 1)),
                                      "keras-jax": (SEEDS, around(0.80, 0.004, 2)),
                                      "keras-torch": (SEEDS, around(0.80, 0.004, 3))}, 20000)
    assert answer.outcome is Outcome.WINNER and answer.leader == "pytorch"
    assert all(p.outcome is Outcome.LEADER_BETTER and p.low > THRESHOLD
               for p in answer.pairs)
    assert answer.confidence == pytest.approx(1 - ALPHA / 2)  # Bonferroni over 2 pairs


def test_intervals_within_the_threshold_are_no_meaningful_difference():
    base = around(0.80, 0.004, 1)
    answer = judge_defaults_accuracy({"pytorch": (SEEDS, base + 0.002),
                                      "keras-jax": (SEEDS, base),
                                      "keras-torch": (SEEDS, base - 0.001)}, 20000)
    assert answer.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE
    assert all(-THRESHOLD <= p.low and p.high <= THRESHOLD for p in answer.pairs)
    assert set(equals_of_leader(answer)) == {"pytorch", "keras-jax", "keras-torch"}


def test_the_test_sets_sampling_error_is_in_the_interval():
    """The same seeds with the same differences: 20000 test samples tell "no meaningful
    difference", 500 cannot (each score's binomial error on 500 samples is 1.8 points)."""
    base = around(0.80, 0.004, 1)
    samples = {"pytorch": (SEEDS, base + 0.002), "keras-jax": (SEEDS, base)}
    large, small = (judge_defaults_accuracy(samples, n) for n in (20000, 500))
    assert large.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE
    assert small.outcome is Outcome.UNDECIDED
    pair = small.pairs[0]
    lead, rest = base.mean() + 0.002, base.mean()
    assert pair.seed_error < 1e-9 and pair.test_error == pytest.approx(
        np.sqrt((lead * (1 - lead) + rest * (1 - rest)) / 500))
    assert pair.high - pair.low > 2 * THRESHOLD


def test_a_seed_spread_too_wide_to_tell_is_undecided():
    answer = judge_defaults_accuracy({"pytorch": (SEEDS[:3], around(0.83, 0.03, 1)[:3]),
                                      "keras-jax": (SEEDS[:3], around(0.80, 0.03, 2)[:3])},
                                     20000)
    assert answer.outcome is Outcome.UNDECIDED
    assert answer.pairs[0].outcome is Outcome.UNDECIDED


def test_the_leaders_equals_are_named_when_it_beats_only_some():
    answer = judge_defaults_accuracy({"pytorch": (SEEDS, around(0.86, 0.002, 1)),
                                      "keras-jax": (SEEDS, around(0.859, 0.002, 2)),
                                      "keras-torch": (SEEDS, around(0.80, 0.002, 3))}, 20000)
    assert answer.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE
    assert set(equals_of_leader(answer)) == {"pytorch", "keras-jax"}  # keras-torch beaten


def test_values_all_at_the_ceiling_say_the_task_cannot_tell_them_apart():
    ones = np.ones(SEEDS.size)
    answer = judge_defaults_accuracy({"pytorch": (SEEDS, ones), "keras-jax": (SEEDS, ones)},
                                     20000)
    assert answer.outcome is Outcome.AT_CEILING and not answer.pairs
    below = judge_defaults_accuracy({"pytorch": (SEEDS, ones),
                                     "keras-jax": (SEEDS, ones - 0.001)}, 20000)
    assert below.outcome is not Outcome.AT_CEILING


def test_a_leader_no_better_than_guessing_says_no_system_learned_the_task():
    guessing = {"pytorch": (SEEDS, around(0.26, 0.004, 1)),
                "keras-jax": (SEEDS, around(0.25, 0.004, 2))}
    answer = judge_defaults_accuracy(guessing, 20000, chance=0.25)
    assert answer.outcome is Outcome.AT_CHANCE and not answer.pairs
    assert "a model at chance decides nothing" in answer.reason
    # the same values on a task whose chance is lower (20 classes) were learned: judged
    learned = judge_defaults_accuracy(guessing, 20000, chance=0.05)
    assert learned.outcome is not Outcome.AT_CHANCE and learned.pairs


def test_a_system_the_leader_shares_too_few_seeds_with_leaves_the_answer_undecided():
    answer = judge_defaults_accuracy({"pytorch": (SEEDS, around(0.86, 0.004, 1)),
                                      "keras-jax": (SEEDS, around(0.80, 0.004, 2)),
                                      "keras-torch": (np.array([0, 20, 21]),
                                                      around(0.80, 0.004, 3)[:3])}, 20000)
    assert answer.outcome is Outcome.UNDECIDED  # beats keras-jax, never met keras-torch
    assert [p.other for p in answer.pairs] == ["keras-jax"]
    assert answer.reason.startswith("keras-torch: fewer than two seeds in common")


def test_pairs_are_matched_by_seed_and_need_two_common_seeds():
    values = around(0.80, 0.01, 1)
    shuffled = np.random.default_rng(5).permutation(SEEDS.size)
    answer = judge_defaults_accuracy({"pytorch": (SEEDS, values + 0.01),
                                      "keras-jax": (SEEDS[shuffled][:-1], values[shuffled][:-1])},
                                     20000)
    assert answer.pairs[0].seeds == 9
    assert answer.pairs[0].seed_error < 1e-9  # every common seed differs by exactly 0.01
    alone = judge_defaults_accuracy({"pytorch": (SEEDS, values)}, 20000)
    one_seed = judge_defaults_accuracy({"pytorch": (SEEDS[:1], values[:1]),
                                        "keras-jax": (SEEDS[:1], values[:1])}, 20000)
    assert {alone.outcome, one_seed.outcome} == {Outcome.INSUFFICIENT_DATA}
    with pytest.raises(ValueError, match="test_samples must be at least 1"):
        judge_defaults_accuracy({"pytorch": (SEEDS, values)}, 0)


def test_the_methodology_states_the_rules_threshold_and_level():
    text = " ".join((ROOT / "templates" / "_verdicts_method.md.j2").read_text().split())
    assert f"A difference counts beyond {THRESHOLD * 100:g} accuracy points" in text
    assert f"at {1 - ALPHA:.0%} over the leader's pairs (Bonferroni)" in text


def test_pytorch_builds_with_its_own_defaults_and_they_differ_from_keras():
    from dlbench.runner.worker.experiments.defaults_accuracy.pytorch import build, read_defaults

    model, optimizer = build(0)
    read = read_defaults(model, optimizer)
    assert read == DOCUMENTED_DEFAULTS["pytorch"]
    assert (read["Adam epsilon"], read["BatchNorm momentum (as the framework defines it)"],
            read["BatchNorm epsilon"]) == ("1e-08", "0.1", "1e-05")
    differ = differing_defaults()
    assert differ["Adam epsilon"] == {"pytorch": "1e-08", "keras": "1e-07"}
    assert differ["BatchNorm running statistics: share kept per step"] == {
        "pytorch": "0.9", "keras": "0.99"}
    other, _ = build(1)
    assert not np.allclose(model[0].weight.detach().numpy(), other[0].weight.detach().numpy())


def test_the_task_is_fixed_and_a_smaller_size_is_a_subset():
    small, full = task_data(256, 500), task_data()
    assert np.array_equal(small.x_train, full.x_train[:256])
    assert np.array_equal(small.y_test, full.y_test[:500])
    assert set(np.unique(full.y_train)) == {0, 1, 2, 3}
    with pytest.raises(ValueError, match="a last batch of 1 sample"):
        task_data(33, 500)


def test_the_standard_full_and_machine_suites_plan_it_and_quick_does_not():
    assert "defaults-accuracy" in suite_experiments("standard")
    assert "defaults-accuracy" in suite_experiments("full")
    assert "defaults-accuracy" in suite_experiments("machine")  # every machine answers it
    assert "defaults-accuracy" not in suite_experiments("quick")
    machine = [c for c in plan_cells(RunRequest(suite="machine", threads=1), "cpu")
               if c.experiment == "defaults-accuracy"]
    assert [c.framework_id.name for c in machine] == SYSTEMS
    assert {c.repeats for c in machine} == {10}
    cells = plan_cells(RunRequest(suite="standard", experiments=["defaults-accuracy"],
                                  threads=1), "cpu")
    assert [c.framework_id.name for c in cells] == SYSTEMS  # no A/A control: no timing
    assert {c.repeats for c in cells} == {10}
    tensorflow = next(c for c in cells if c.framework == "tensorflow")
    assert not tensorflow.runs and tensorflow.params["unsupported"] == NO_DEFAULTS["tensorflow"]
    repeats = plan_cells(RunRequest(suite="standard", experiments=["defaults-accuracy"],
                                    threads=1, repeats=4), "cpu")
    assert {c.repeats for c in repeats} == {4}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """Every system's cell as the machine suite plans it, 2 seeds each, 2 epochs of 512
    samples, 2000 test samples, in real worker processes."""
    from dlbench.runner.driver.commands.run import run_cells
    from dlbench.runner.driver.store.run_store import RunStore

    request = RunRequest(suite="machine", experiments=["defaults-accuracy"], frameworks=SYSTEMS,
                         device="cpu", repeats=2, threads=1)
    cells = [replace(c, params=c.params | {"epochs": 2, "train_samples": 512,
                                           "test_samples": 2000})
             for c in plan_cells(request, "cpu")]
    store = RunStore(tmp_path_factory.mktemp("defaults") / "runs" / "test-run")
    store.root.mkdir(parents=True)
    run_cells(store, request, "cpu", cells, progress=False, busy_retries=0)
    return (read_table(store.root / "observations.parquet", "observations"),
            read_table(store.root / "cells.parquet", "cells"))


@pytest.mark.slow
def test_each_system_trains_with_its_own_defaults_below_the_ceiling(tiny_run):
    observations, cells = tiny_run
    by_system = dict(zip(systems_of(cells), cells.itertuples(), strict=True))
    assert by_system["tensorflow"].status == "unsupported"
    assert by_system["tensorflow"].reason.endswith(NO_DEFAULTS["tensorflow"])  # "process 0: "
    for name in ["pytorch", "keras-tensorflow", "keras-torch", "keras-jax"]:
        cell = by_system[name]
        assert cell.status == "ok", (name, cell.reason)
        details = json.loads(cell.details_json)
        documented = DOCUMENTED_DEFAULTS["pytorch" if name == "pytorch" else "keras"]
        assert details["defaults"] == documented and details["defaults_not_as_documented"] == {}
        assert details["test_samples"] == 2000
        assert sorted(details["processes"]["seeds"]) == [0, 1]  # each process its own seed
        notes = json.loads(cell.fairness_json)["notes"]
        assert "Adam epsilon: pytorch 1e-08, keras 1e-07" in notes
    accuracy = observations[observations["metric"] == "test_accuracy"]["value"]
    assert len(accuracy) == 8
    assert accuracy.max() < 0.99 and accuracy.min() > 0.4  # below the ceiling, above chance


@pytest.mark.slow
def test_the_answer_names_the_differing_settings_and_the_system_that_cannot_run(tiny_run):
    from dlbench.report.pages.defaults_accuracy import defaults_block
    from dlbench.report.render.jinja import environment
    from dlbench.report.verdicts.defaults_answers import defaults_answers

    found = defaults_answers(*tiny_run)
    assert len(found) == 1
    answer = found[0]
    assert {s.system for s in answer.answer.systems} == set(SYSTEMS) - {"tensorflow"}
    assert answer.answer.outcome is not Outcome.AT_CEILING
    assert [n.system for n in answer.not_run] == ["tensorflow"]
    differing = dict(answer.differing)
    assert dict(differing["Adam epsilon"]) == {
        "pytorch": "1e-08", "keras-tensorflow": "1e-07", "keras-torch": "1e-07",
        "keras-jax": "1e-07"}
    assert "BatchNorm epsilon" in differing and "shuffling" in differing
    template = environment(ROOT / "templates").from_string(
        '{% from "_defaults_accuracy.md.j2" import defaults_answers %}'
        '{{ defaults_answers(blocks, "## Does the framework you use change accuracy?") }}')
    text = template.render(blocks=[defaults_block(answer, "cpu: a machine")])
    assert "## Does the framework you use change accuracy?" in text
    assert "| Adam epsilon | 1e-08 | 1e-07 | 1e-07 | 1e-07 |" in text
    assert "TensorFlow's own API" in text and "a test set of 2000 samples" in text
    assert "Keras' |" in text  # the whole reason, not cut short


@pytest.mark.slow
def test_the_accuracy_equal_claim_reads_the_real_runs_answer_and_stores_it_as_verdicts(
        tiny_run):
    """The tiny run's answer decides accuracy-equal by the claim's rule, in words, and is
    stored as verdicts-table rows (an answer and a pair per other system, with cell IDs)."""
    from dlbench.report.claims.check import check_claims, load_claims
    from dlbench.report.claims.defaults_rule import claim_outcome, decided_answers
    from dlbench.report.verdicts.verdict_table import verdicts_frame
    from dlbench.report.verdicts.defaults_answers import DECISIONS, defaults_answers

    observations, cells = tiny_run
    [found] = defaults_answers(observations, cells)
    claim = next(c for c in load_claims() if c.id == "accuracy-equal")
    run_id = str(cells["run_id"].iloc[0])
    [verdict] = check_claims(observations, cells, [claim], machines={run_id: "m"}, listings={})
    expected = claim_outcome(found.answer.outcome.value,
                             [DECISIONS[p.outcome].value for p in found.answer.pairs])
    assert verdict.verdict is expected
    assert verdict.explanation.startswith("MLP with BatchNorm, noisy 4-class task: trained "
                                          "with each framework's own defaults, 2 seeds each")
    assert "one test set of 2000 samples" in verdict.explanation
    assert set(verdict.evidence) == set(cells.loc[cells["status"] == "ok", "cell_id"])
    table = verdicts_frame([], [], {}, [found])
    assert (table["row"] == "answer").sum() == 1 and (table["row"] == "pair").sum() == 3
    assert set(table["cell_b"].dropna()) - {""} <= set(cells["cell_id"])
    [(outcome, pairs)] = decided_answers(table).values()
    assert outcome == found.answer.outcome.value and len(pairs) == 3
    again = check_claims(observations, cells, [claim], machines={run_id: "m"}, listings={},
                         defaults=decided_answers(table))
    assert again[0].verdict is expected and "as the home page decides it" in again[0].explanation
