"""The claims page judges a comparison the home page answers exactly as the home page does.

The home page decides each question's pairs with the one verdict engine (its looks, Holm's
correction within the question's row, the A/A noise floor as threshold), and a release stores
those decisions (verdicts.csv). A claim that compares the same two cells on the same metric
takes that decision, stored or, for a draft, this build's, so the two pages can never
disagree about one pair. Only comparisons the home page does not make (a system that is not
its row's best against another, a variant within one system) are judged on the claims page
itself, by the same rule with Holm's correction over those comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dlbench.core.judging.outcomes import PAIR, Outcome
from dlbench.core.judging.decisions import PRACTICAL_THRESHOLD, Family, PairDecision, PairTest
from dlbench.core.declarations.metrics import Direction
from dlbench.core.judging.verdict_engine import metric_direction
from dlbench.report.verdicts.verdict_table import OWN_RULES

#: (run, metric, cell A, cell B) -> the home page's decision of A against B.
AnsweredPairs = Mapping[tuple[str, str, str, str], PairDecision]
#: Why a pair taken from the home page was not decided, in the claims page's words.
AS_ANSWERED = "undecided on the home page too"
_FLIPPED = {Outcome.A_BETTER: Outcome.B_BETTER, Outcome.B_BETTER: Outcome.A_BETTER}


def _number(value: object) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def _count(value: object, default: int) -> int:
    number = _number(value)
    return int(number) if number == number else default


def _decision_of(row: Mapping) -> PairDecision:
    """One stored pair row as the decision the engine made (A is the row's cell_a)."""
    decision = Outcome(str(row["decision"]))
    ratio = _number(row["ratio"])
    test = PairTest(
        n_a=_count(row["processes_a"], 0), n_b=_count(row["processes_b"], 0),
        log_ratio=math.log(ratio) if ratio > 0 else math.nan, standard_error=math.nan,
        df=math.nan, p_value=_number(row["p_value"]),
        note="identical repeats" if decision is Outcome.INCONCLUSIVE else "")
    confidence = _number(row["confidence"])
    return PairDecision(
        test, decision, threshold=_number(row["threshold"]),
        alpha=1 - confidence if confidence == confidence else math.nan,
        family_size=_count(row["family_size"], 1), p_adjusted=_number(row["p_adjusted"]),
        ci_low=_number(row["ci_low"]), ci_high=_number(row["ci_high"]),
        look=_count(row["look"], 1),
        reason="" if decision is not Outcome.UNDECIDED else AS_ANSWERED,
        direction=metric_direction(str(row["metric"])))


def flipped(judgement: PairDecision) -> PairDecision:
    """The same decision read the other way round: B against A."""
    test = judgement.test
    reverse = PairTest(test.n_b, test.n_a, -test.log_ratio, test.standard_error, test.df,
                       test.p_value, test.note, test.paired)
    low, high = judgement.ci_low, judgement.ci_high
    return PairDecision(reverse, _FLIPPED.get(judgement.decision, judgement.decision),
                        judgement.threshold, judgement.alpha, judgement.family_size,
                        judgement.p_adjusted, 1 / high if high else math.nan,
                        1 / low if low else math.nan, judgement.look, judgement.reason,
                        judgement.direction)


def answered_pairs(verdicts: pd.DataFrame | None) -> dict[tuple[str, str, str, str],
                                                           PairDecision]:
    """The home page's pair decisions, each under both orientations; a pair a derived
    answer repeats (throughput from epoch time) keeps the tested one."""
    if verdicts is None or verdicts.empty:
        return {}
    known = {decision.value for decision in PAIR}
    pairs = verdicts[(verdicts["row"] == "pair") & verdicts["decision"].isin(known)
                     & ~verdicts["question"].isin(OWN_RULES)]  # no ratio: their own rules
    pairs = pairs.assign(derived=~pairs["derived_from"].fillna("").astype(str).isin(
        ["", "None", "nan"]))
    answered: dict[tuple[str, str, str, str], PairDecision] = {}
    for row in pairs.sort_values("derived", kind="stable").to_dict("records"):
        run, metric = str(row["run_id"]), str(row["metric"])
        a, b = str(row["cell_a"]), str(row["cell_b"])
        if (run, metric, a, b) in answered:
            continue
        judgement = _decision_of(row)
        answered[(run, metric, a, b)] = judgement
        answered[(run, metric, b, a)] = flipped(judgement)
    return answered


@dataclass
class AnsweredFamily(Family):
    """A family that takes the home page's decision for every pair the home page answers
    and judges the others together (Holm over those only).

    A key of the form (run, metric, cell A, cell B) is looked up among the answered pairs;
    any other key, or one the home page did not answer, is judged by Family.
    """

    answered: AnsweredPairs = field(default_factory=dict)

    def judge(self, key: Hashable, a: Sequence[float] | np.ndarray,
              b: Sequence[float] | np.ndarray, direction: Direction,
              threshold: float = PRACTICAL_THRESHOLD, paired: bool = False,
              ceiling: float | None = None) -> PairDecision:
        found = self.answered.get(key) if isinstance(key, tuple) else None
        if found is not None:
            return found
        return super().judge(key, a, b, direction, threshold, paired, ceiling)

    def from_home_page(self, key: Hashable) -> bool:
        """Whether the pair under `key` is the home page's decision."""
        return isinstance(key, tuple) and key in self.answered
