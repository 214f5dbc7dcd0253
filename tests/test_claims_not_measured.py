"""Claims (issue 53): 'not measured in this release' where no cell of a claim exists, a group
without the cells its rule names decides nothing, and an equivalence claim takes the home
page's decision of the same pairs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from tests.judging_fixtures import CPU_ENV, noisy, tables

from dlbench.report.claims.answered import answered_pairs
from dlbench.report.claims.check import (check_claims, check_source_claims, claim_total,
                                         load_claims, parse_claims)
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.claims.vocabulary import Combine, Finding, combine_findings
from dlbench.report.inputs.source import load_release
from dlbench.report.pages.claims import claim_holds
from dlbench.report.verdicts.stored import stored_verdicts

PROJECT = {claim.id: claim for claim in load_claims()}
#: An equivalence claim (the rule kind accuracy-equal used before it read the
#: defaults-accuracy answer: tests/test_claims_defaults.py).
EQUAL = parse_claims({"claims": [{"id": "equal", "claim": "c", "source": "s", "decides": "d",
                                  "evidence": [{"kind": "equivalent", "experiment": "training",
                                                "metric": "test_accuracy", "tolerance": 0.02,
                                                "min_value": 0.90}]}]})[0]
ROOT = Path(__file__).resolve().parents[1]
MEASURED, MEASURABLE = Outcome.NOT_MEASURED, Outcome.NOT_MEASURABLE
SUPPORTED, INCONCLUSIVE = Outcome.SUPPORTED, Outcome.INCONCLUSIVE


def _f(outcome: Outcome) -> Finding:
    return Finding(outcome, f"group: {outcome.value}")


@pytest.mark.parametrize(("outcomes", "expected"), [
    ((MEASURED, MEASURED), MEASURED),          # nothing ran
    ((MEASURED, MEASURABLE), MEASURABLE),      # what ran, the device could not show
    ((MEASURED, SUPPORTED), SUPPORTED),        # a group without its cells decides nothing
])
def test_unmeasured_groups_count_only_when_nothing_else_is_known(outcomes, expected):
    assert combine_findings([_f(o) for o in outcomes], Combine.ALL).outcome is expected


@pytest.mark.parametrize(("outcomes", "expected"), [
    ((MEASURED, MEASURED), MEASURED),
    ((MEASURED, SUPPORTED), INCONCLUSIVE),     # a part of the claim was never measured
    ((MEASURABLE, SUPPORTED), SUPPORTED),      # an optional part the device cannot show
])
def test_a_claim_with_an_unmeasured_rule_is_not_supported_by_its_other_rules(outcomes,
                                                                             expected):
    assert claim_total([_f(o) for o in outcomes]).outcome is expected


def _judge(claim_id: str, cells: list[dict], verdicts: pd.DataFrame | None = None):
    observations, frame = tables(cells)
    claim = EQUAL if claim_id == "equal" else PROJECT[claim_id]
    [verdict] = check_claims(observations, frame, [claim], machines={"r1": "m"},
                             listings={}, environments={"r1": CPU_ENV},
                             answered=answered_pairs(verdicts))
    return verdict


def test_a_claim_whose_cells_were_never_run_is_not_measured_in_this_release():
    cells = [{"system": s, "experiment": "training", "values": {"steady_epoch_time": noisy(1)}}
             for s in ("pytorch", "tensorflow")]
    verdict = _judge("fp16-speed", cells)
    assert verdict.verdict is MEASURED
    assert "no precision cell with time per epoch (s) ran on this machine" in \
        verdict.explanation


ACCURACY = [{"system": s, "values": {"test_accuracy": noisy(0.95, i, spread=0.03)}}
            for i, s in enumerate(("pytorch", "tensorflow"))]


def _home(decision: str) -> pd.DataFrame:
    """A home page's verdicts table deciding PyTorch's accuracy cell against TensorFlow's."""
    _, frame = tables(ACCURACY)
    a, b = frame["cell_id"]
    return pd.DataFrame([{
        "row": "pair", "question": "accuracy", "run_id": "r1", "metric": "test_accuracy",
        "cell_a": a, "cell_b": b, "decision": decision, "derived_from": "", "ratio": 1.0,
        "processes_a": 8, "processes_b": 8, "p_value": 0.5, "confidence": 0.95,
        "threshold": 0.05, "family_size": 1, "p_adjusted": 0.5, "ci_low": 0.99,
        "ci_high": 1.01, "look": 1}])


@pytest.mark.parametrize(("decision", "expected"), [
    ("no meaningful difference", SUPPORTED),
    ("a better", Outcome.CONTRADICTED),
    ("undecided", INCONCLUSIVE),
])
def test_an_equivalence_claim_takes_the_home_pages_decision_of_its_pairs(decision, expected):
    verdict = _judge("equal", ACCURACY, _home(decision))
    assert verdict.verdict is expected
    assert "as the home page decides it" in verdict.explanation


def test_where_a_claim_holds_names_the_machines_it_was_not_measured_on():
    rows = [{"machine": "A", "device": "cpu", "verdict": "supported"},
            {"machine": "B", "device": "cpu", "verdict": "supported"},
            {"machine": "C", "device": "cpu", "verdict": MEASURED.value}]
    assert claim_holds(rows) == "supported on A, B; not measured on C"


def test_release_2027_03_says_what_it_did_not_measure_and_agrees_with_its_home_page():
    source = load_release(ROOT / "results", "2027.03")
    verdicts = {v.claim_id: v for v in check_source_claims(source,
                                                           verdicts=stored_verdicts(source))}
    for claim in ("fp16-memory", "fp16-speed", "fp16-accuracy", "dp-tf-scales"):
        assert verdicts[claim].verdict is MEASURED, claim
    # accuracy-equal reads the defaults-accuracy answer, which 2027.03 did not measure; its
    # same-start accuracy is a parity result, never this claim's evidence
    assert verdicts["accuracy-equal"].verdict is MEASURED
    assert "trained with each framework's own defaults" in verdicts["accuracy-equal"].explanation
