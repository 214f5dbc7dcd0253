"""Reduced precision's accuracy answers are rows of the verdicts table (issue 62), as the
defaults-accuracy answers are: an answer row and its pair (the leader's paired difference
against the other precision), stored in verdicts.csv and read back; the fp16-accuracy claim
reads them, taking the stored outcome where it holds one; neither the claims' ratio pairs nor
the home page's compared tables count them. Constructed tidy tables judged by the real rule
(the real run is in tests/test_precision_accuracy_page.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.judging_fixtures import CPU_ENV, tables

from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.answered import answered_pairs
from dlbench.report.claims.check import check_claims, load_claims
from dlbench.report.claims.precision_rule import NOT_RUN, decided_precision
from dlbench.report.pages.answer_tables import compared_answers
from dlbench.report.verdicts.precision_answers import QUESTION, precision_answers
from dlbench.report.verdicts.stored import read_verdicts
from dlbench.report.verdicts.verdict_table import VERDICT_COLUMNS, verdicts_frame

CLAIM = next(claim for claim in load_claims() if claim.id == "fp16-accuracy")
SEEDS = 8


def _cell(system: str, fp32: float, change: float, target: float = 0.9) -> dict:
    """A bf16 accuracy cell: each seed's bf16 accuracy and its change against fp32."""
    noise = np.random.default_rng(len(system)).normal(0, 0.003, SEEDS)
    reduced = fp32 + change + noise
    return {"system": system, "experiment": "precision", "workload": "mlp-digits",
            "precision": "bf16", "mode": "mixed",
            "details": {"test_samples": 20000, "classes": 10, "target_accuracy": target},
            "values": {"test_accuracy": list(reduced),
                       "accuracy_change_vs_fp32": list(reduced - (fp32 + noise / 2))}}


LOSES, SAME, MISSED = _cell("pytorch", 0.95, -0.05), _cell("tensorflow", 0.95, 0.0), \
    _cell("keras-jax", 0.5, 0.0)


def _stored(cells: list[dict]) -> pd.DataFrame:
    """The verdicts table of `cells`, written as verdicts.csv and read back."""
    observations, frame = tables(cells)
    table = verdicts_frame([], [], {}, precision=precision_answers(observations, frame))
    return read_verdicts(table.to_csv(index=False).encode())


def _verdict(cells: list[dict], home: pd.DataFrame | None = None):
    observations, frame = tables(cells)
    [verdict] = check_claims(observations, frame, [CLAIM], machines={"r1": "m"}, listings={},
                             environments={"r1": CPU_ENV}, precision=decided_precision(home))
    return verdict


def test_each_outcome_is_stored_as_an_answer_row_with_its_pair():
    stored = _stored([LOSES, SAME, MISSED])
    assert list(stored.columns) == VERDICT_COLUMNS
    answers = stored[stored["row"] == "answer"].set_index("group")
    assert set(answers["question"]) == {QUESTION}
    loses = answers.loc["workload mlp-digits, system pytorch"]
    assert (loses["outcome"], loses["contender_a"], loses["winner"]) == (
        Outcome.LOSES.value, "fp32", "fp32")
    same = answers.loc["workload mlp-digits, system tensorflow"]
    assert same["outcome"] == Outcome.NO_MEANINGFUL_DIFFERENCE.value and same["winner"] == ""
    missed = answers.loc["workload mlp-digits, system keras-jax"]
    assert missed["outcome"] == Outcome.MISSED_TARGET.value
    pairs = stored[stored["row"] == "pair"].set_index("group")
    assert "workload mlp-digits, system keras-jax" not in pairs.index  # nothing was judged
    lost = pairs.loc["workload mlp-digits, system pytorch"]
    assert (lost["contender_a"], lost["contender_b"], lost["decision"]) == (
        "fp32", "bf16", "a better")
    assert lost["cell_a"] == lost["cell_b"] == loses["cell_a"]  # both precisions, one cell
    assert lost["difference"] == pytest.approx(0.05, abs=0.005)
    assert lost["difference_low"] < lost["difference"] < lost["difference_high"]
    assert np.isnan(lost["ratio"])  # points, not a ratio
    assert pairs.loc["workload mlp-digits, system tensorflow", "decision"] == \
        "no meaningful difference"
    assert decided_precision(stored) == {
        ("r1", "cpu", "mlp-digits", "pytorch"): Outcome.LOSES.value,
        ("r1", "cpu", "mlp-digits", "tensorflow"): Outcome.NO_MEANINGFUL_DIFFERENCE.value,
        ("r1", "cpu", "mlp-digits", "keras-jax"): Outcome.MISSED_TARGET.value}
    # their own rule: no ratio pair for the claims, no compared row of a question table
    assert answered_pairs(stored) == {} and compared_answers(stored).empty


def test_the_claim_is_supported_where_a_system_loses_accuracy():
    verdict = _verdict([LOSES, SAME])
    assert verdict.verdict is Outcome.SUPPORTED
    assert Outcome.LOSES.value in verdict.explanation


def test_the_claim_is_contradicted_where_every_answer_decided_and_none_lost():
    assert _verdict([SAME]).verdict is Outcome.CONTRADICTED


def test_the_claim_is_inconclusive_where_fp32_missed_its_target_and_not_measured_without():
    missed = _verdict([MISSED])
    assert missed.verdict is Outcome.INCONCLUSIVE
    assert "below the target" in missed.explanation
    training = [{"system": "pytorch", "values": {"steady_epoch_time": [1.0, 1.1, 1.0]}}]
    none = _verdict(training)
    assert none.verdict is Outcome.NOT_MEASURED and none.explanation == NOT_RUN + "."


def test_the_claim_takes_the_home_pages_stored_outcome():
    stored = _stored([SAME])
    assert _verdict([SAME], stored).verdict is Outcome.CONTRADICTED
    published = stored.copy()  # an outcome a later rule would not give
    published.loc[published["row"] == "answer", "outcome"] = Outcome.LOSES.value
    verdict = _verdict([SAME], published)
    assert verdict.verdict is Outcome.SUPPORTED
    assert "as the home page decides it" in verdict.explanation


def test_the_accuracy_answers_of_their_own_rules_are_not_counted_as_timing_answers():
    from dlbench.report.notes.facts import _answers

    rows = [{"row": "answer", "question": q, "run_id": "r1", "outcome": o, "derived_from": ""}
            for q, o in (("defaults-accuracy", "winner"), (QUESTION, "no meaningful difference"),
                         ("training-speed", "inconclusive"))]
    assert _answers(pd.DataFrame(rows, columns=VERDICT_COLUMNS), "r1") == (0, 1, 0, 0)
