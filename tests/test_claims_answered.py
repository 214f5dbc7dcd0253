"""The claims page takes the home page's decision of every pair the home page answers
(stored with a release, or this build's for a draft), and judges only the others itself."""

from __future__ import annotations

import pandas as pd
import pytest
from tests.judging_fixtures import CPU_ENV, noisy, tables

from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.answered import AS_ANSWERED, answered_pairs
from dlbench.report.claims.check import check_claims, parse_claims
from dlbench.report.verdicts.answers import QUESTIONS, judge_page
from dlbench.report.verdicts.verdict_table import VERDICT_COLUMNS, verdicts_frame

TF = "training:mlp-digits:tensorflow:fp32-default:cpu"
PT = "training:mlp-digits:pytorch:fp32-default:cpu"
#: TensorFlow trains twice as fast as PyTorch in these synthetic tables.
DATA = tables([{"system": "tensorflow", "values": {"steady_epoch_time": noisy(1.0, 1)}},
               {"system": "pytorch", "values": {"steady_epoch_time": noisy(2.0, 2)}}])
CLAIM = parse_claims({"claims": [{
    "id": "tf-first", "claim": "TensorFlow trains faster than PyTorch.", "source": "test",
    "decides": "test", "evidence": [{"kind": "order", "experiment": "training",
                                     "metric": "steady_epoch_time",
                                     "order": ["tensorflow", "pytorch"]}]}]})


def stored_pair(cell_a: str, cell_b: str, decision: str, ratio: float,
                run_id: str = "r1") -> pd.DataFrame:
    """One stored pair row of a verdicts table, as a release keeps it."""
    row = {column: "" for column in VERDICT_COLUMNS} | {
        "row": "pair", "question": "training-speed", "run_id": run_id, "device": "cpu",
        "metric": "steady_epoch_time", "cell_a": cell_a, "cell_b": cell_b,
        "processes_a": 8, "processes_b": 8, "ratio": ratio, "ci_low": ratio * 0.9,
        "ci_high": ratio * 1.1, "confidence": 0.975, "p_value": 0.01, "p_adjusted": 0.02,
        "family_size": 1, "look": 1, "threshold": 0.1, "decision": decision}
    return pd.DataFrame([row], columns=VERDICT_COLUMNS)


def claim_verdict(verdicts: pd.DataFrame | None):
    [verdict] = check_claims(*DATA, CLAIM, machines={"r1": "m"}, listings={},
                             environments={"r1": CPU_ENV}, answered=answered_pairs(verdicts))
    return verdict


def test_a_pair_the_home_page_did_not_answer_is_judged_on_the_claims_page():
    verdict = claim_verdict(None)
    assert verdict.verdict is Outcome.SUPPORTED
    assert verdict.ratios[0][1] == pytest.approx(0.5, rel=0.05)


@pytest.mark.parametrize(("cell_a", "cell_b", "decision", "ratio", "outcome"), [
    # stored as TensorFlow against PyTorch, TensorFlow better: as the data say
    (TF, PT, "a better", 0.5, Outcome.SUPPORTED),
    # stored the other way round (PyTorch against TensorFlow), PyTorch better: the stored
    # decision, read as TensorFlow against PyTorch, contradicts the claim though the data
    # of this build would support it: the verdict a reader cited stays
    (PT, TF, "a better", 0.8, Outcome.CONTRADICTED),
    (TF, PT, "undecided", 0.9, Outcome.INCONCLUSIVE),
    (PT, TF, "no meaningful difference", 1.02, Outcome.CONTRADICTED),
])
def test_a_pair_the_home_page_answered_takes_its_decision(cell_a, cell_b, decision, ratio,
                                                          outcome):
    verdict = claim_verdict(stored_pair(cell_a, cell_b, decision, ratio))
    assert verdict.verdict is outcome
    expected = ratio if cell_a == TF else 1 / ratio
    assert verdict.ratios[0][1] == pytest.approx(expected)
    if decision == "undecided":
        assert AS_ANSWERED in verdict.why


def test_a_stored_pair_of_another_run_is_not_taken():
    verdict = claim_verdict(stored_pair(PT, TF, "a better", 0.8, run_id="another-run"))
    assert verdict.verdict is Outcome.SUPPORTED


def test_the_claims_page_and_the_home_page_agree_on_the_pair_they_share():
    judged = judge_page(*DATA, tuple(q for q in QUESTIONS if q.key == "training-speed"),
                        environments={"r1": CPU_ENV})
    frame = verdicts_frame(judged.answers, judged.controls, {})
    [home] = [row for row in frame.to_dict("records") if row["row"] == "pair"]
    verdict = claim_verdict(frame)
    assert {home["cell_a"], home["cell_b"]} == {TF, PT}
    home_ratio = home["ratio"] if home["cell_a"] == TF else 1 / home["ratio"]
    assert verdict.ratios[0][1] == pytest.approx(home_ratio)
    supported = Outcome(home["decision"]) is (
        Outcome.A_BETTER if home["cell_a"] == TF else Outcome.B_BETTER)
    assert (verdict.verdict is Outcome.SUPPORTED) is supported
