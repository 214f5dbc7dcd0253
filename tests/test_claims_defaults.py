"""The accuracy-equal claim reads the defaults-accuracy answer (issue 50): supported when no
system differs meaningfully from the leader, contradicted when one does, inconclusive when
undecided or at the ceiling, not measured where the experiment did not run; the home page's
stored answer decides where it holds the same one; the answer is stored in verdicts.csv as
the other answers are. Constructed tidy tables judged by the real rule (the real runs are in
tests/test_defaults_accuracy.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.judging_fixtures import CPU_ENV, tables

from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.check import check_claims, load_claims
from dlbench.report.claims.defaults_rule import NOT_RUN, claim_outcome, decided_answers
from dlbench.report.render.labels import short_sentences
from dlbench.report.verdicts.verdict_table import VERDICT_COLUMNS, verdicts_frame
from dlbench.report.verdicts.defaults_answers import QUESTION, defaults_answers
from dlbench.report.verdicts.stored import read_verdicts

CLAIM = next(claim for claim in load_claims() if claim.id == "accuracy-equal")
TASK = "MLP with BatchNorm, noisy 4-class task"
SEEDS = 10


def _cells(means: dict[str, float], test_samples: int = 20000, spread: float = 0.004,
           **extra) -> list[dict]:
    """defaults-accuracy cells: each system's SEEDS accuracies around its mean, repeat k
    being seed k."""
    return [{"system": system, "experiment": "defaults-accuracy", "workload": "mlp-bn-noisy",
             "details": {"test_samples": test_samples, "task": TASK},
             "values": {"test_accuracy": list(mean + np.random.default_rng(i).normal(
                 0, spread, SEEDS))}, **extra}
            for i, (system, mean) in enumerate(means.items())]


def _verdict(cells: list[dict], home: pd.DataFrame | None = None):
    observations, frame = tables(cells)
    [verdict] = check_claims(observations, frame, [CLAIM], machines={"r1": "m"}, listings={},
                             environments={"r1": CPU_ENV}, defaults=decided_answers(home))
    return verdict


ALIKE = {"pytorch": 0.812, "keras-jax": 0.811, "keras-torch": 0.8125}


def test_no_system_differing_meaningfully_from_the_leader_supports_the_claim():
    verdict = _verdict(_cells(ALIKE))
    assert verdict.verdict is Outcome.SUPPORTED
    text = verdict.explanation
    assert text.startswith(f"{TASK}: trained with each framework's own defaults, 10 seeds each")
    assert "one test set of 20000 samples" in text and "Keras on JAX" in text
    assert ("none of the systems differs meaningfully from the leader, threshold ±2.0 points"
            in text)
    # as the claims page words it (a system's key in words): nothing lost
    assert short_sentences(text)[-1].startswith("none of the systems differs meaningfully")
    assert short_sentences(text)[0].endswith("trained with each framework's own defaults, 10 "
                                             "seeds each, paired by seed, one test set of "
                                             "20000 samples")
    assert "as the home page decides it" not in text  # judged here: no verdicts table given


def test_a_system_meaningfully_less_accurate_than_the_leader_contradicts_it():
    verdict = _verdict(_cells({**ALIKE, "keras-torch": 0.75}))
    assert verdict.verdict is Outcome.CONTRADICTED
    assert "one of the systems differs meaningfully from the leader" in verdict.explanation
    assert "minus Keras on torch +6." in verdict.explanation


@pytest.mark.parametrize(("cells", "why"), [
    (_cells(ALIKE, test_samples=500), "undecided"),  # the test set's own error: 1.8 points
    (_cells(dict.fromkeys(ALIKE, 1.0), spread=0.0), "the task cannot tell them apart"),
    (_cells({"pytorch": 0.81}), "fewer than two systems"),
    # 4 classes: every system at about 0.26 learned nothing (a model at chance decides nothing)
    ([dict(c, details={**c["details"], "classes": 4})
      for c in _cells(dict.fromkeys(ALIKE, 0.26))], "a model at chance decides nothing"),
])
def test_an_undecided_answer_leaves_it_inconclusive_with_the_reason(cells, why):
    verdict = _verdict(cells)
    assert verdict.verdict is Outcome.INCONCLUSIVE
    assert why in verdict.explanation


def test_a_device_without_the_experiment_is_not_measured_and_says_what_would_be_compared():
    training = [{"system": s, "values": {"test_accuracy": [0.95] * 5}}
                for s in ("pytorch", "tensorflow")]  # same-start accuracy: parity, not this
    verdict = _verdict(training)
    assert verdict.verdict is Outcome.NOT_MEASURED
    assert verdict.explanation == NOT_RUN + "."
    assert "trained with each framework's own defaults" in NOT_RUN and "parity result" in NOT_RUN
    assert short_sentences(verdict.explanation) == [verdict.explanation]  # in words already


def _stored(cells: list[dict]) -> pd.DataFrame:
    """The verdicts table of `cells`, written as verdicts.csv and read back."""
    observations, frame = tables(cells)
    table = verdicts_frame([], [], {}, defaults_answers(observations, frame))
    return read_verdicts(table.to_csv(index=False).encode())


def test_the_answer_is_stored_in_the_verdicts_table_as_the_other_answers_are():
    stored = _stored(_cells({**ALIKE, "keras-torch": 0.75}))
    assert list(stored.columns) == VERDICT_COLUMNS
    answer = stored[stored["row"] == "answer"].iloc[0]
    assert (answer["question"], answer["contender_a"], answer["outcome"], answer["group"]) == (
        QUESTION, "pytorch", Outcome.NO_MEANINGFUL_DIFFERENCE.value,
        "workload mlp-bn-noisy")
    assert answer["cell_a"].startswith("defaults-accuracy:mlp-bn-noisy:pytorch:")
    pairs = stored[stored["row"] == "pair"].set_index("contender_b")
    assert pairs.loc["keras-torch", "decision"] == "a better"
    assert pairs.loc["keras-jax", "decision"] == "no meaningful difference"
    assert pairs.loc["keras-torch", "difference"] == pytest.approx(0.062, abs=0.005)
    low, high = pairs.loc["keras-torch", ["difference_low", "difference_high"]]
    assert 0.02 < low < 0.062 < high and pairs["ratio"].isna().all()  # points, not a ratio
    assert decided_answers(stored) == {("r1", "cpu", "mlp-bn-noisy"): (
        "no meaningful difference", (("keras-jax", "no meaningful difference"),
                                     ("keras-torch", "a better")))}


def test_the_claim_takes_the_home_pages_stored_answer_of_the_same_comparison():
    cells = _cells(ALIKE)
    stored = _stored(cells)
    assert _verdict(cells, stored).verdict is Outcome.SUPPORTED
    # a stored answer a later rule would not give (here: one pair published as a win)
    published = stored.copy()
    published.loc[published.index[published["row"] == "pair"][0], "decision"] = "a better"
    verdict = _verdict(cells, published)
    assert verdict.verdict is Outcome.CONTRADICTED
    assert "as the home page decides it" in verdict.explanation


@pytest.mark.parametrize(("outcome", "decisions", "expected"), [
    ("no meaningful difference", ["no meaningful difference"] * 2, Outcome.SUPPORTED),
    ("no meaningful difference", ["no meaningful difference", "a better"],
     Outcome.CONTRADICTED),  # the leader's equals named, one system beaten
    ("winner", ["a better", "a better"], Outcome.CONTRADICTED),
    ("undecided", ["a better", "undecided"], Outcome.CONTRADICTED),
    ("undecided", ["no meaningful difference", "undecided"], Outcome.INCONCLUSIVE),
    ("the task cannot tell them apart", [], Outcome.INCONCLUSIVE),
    ("insufficient data", [], Outcome.INCONCLUSIVE),
])
def test_the_claim_follows_the_answers_pairs(outcome, decisions, expected):
    assert claim_outcome(outcome, decisions) is expected
