"""The page-wide form of the one verdict rule (claims, `dlbench compare`): Holm over a
family, the minimum-effect test at the practical threshold, identical repeats; and regimes."""

from __future__ import annotations

import numpy as np
import pytest
from tests.judging_fixtures import noisy

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.decisions import judge_pair, judge_together
from dlbench.core.judging.regime import Regime, achieved_fraction, regime_of
from dlbench.core.declarations.metrics import Direction, is_timing_unit


def test_a_clear_difference_names_the_better_side_by_the_ratio_of_geometric_means():
    a, b = noisy(1.0), noisy(1.5, 1)
    judgement = judge_pair(a, b, Direction.LOWER)
    assert judgement.decision is Outcome.A_BETTER and judgement.named
    assert judgement.ratio == pytest.approx(np.exp(np.mean(np.log(a)) - np.mean(np.log(b))))
    assert judge_pair(a, b, Direction.HIGHER).decision is Outcome.B_BETTER


def test_a_tight_interval_within_the_threshold_is_no_meaningful_difference():
    judgement = judge_pair(noisy(1.0, spread=0.001), noisy(1.02, 1, spread=0.001),
                           Direction.LOWER)
    assert judgement.decision is Outcome.NO_MEANINGFUL_DIFFERENCE and judgement.equivalent
    assert "interval within 5%" in judgement.reason


def test_a_wide_interval_is_undecided_not_no_difference():
    # three processes a side, ranges that do not overlap: decided alone, not at 1/116 the level
    fast, slow = [0.0179, 0.0203, 0.0230], [0.0374, 0.0485, 0.0371]
    alone = judge_pair(fast, slow, Direction.LOWER)
    strict = judge_pair(fast, slow, Direction.LOWER, alpha=0.05 / 116)
    assert alone.decision is Outcome.A_BETTER
    assert strict.decision is Outcome.UNDECIDED and not strict.equivalent
    assert "3 and 3 processes cannot tell" in strict.reason


def test_identical_repeats_are_inconclusive_never_a_p_value():
    judgement = judge_pair([0.95] * 5, [0.93] * 5, Direction.HIGHER)
    assert judgement.decision is Outcome.INCONCLUSIVE
    assert "deterministic rerun" in judgement.reason


def test_holm_over_a_family_removes_a_difference_one_test_would_name():
    a, b = noisy(1.0, n=5, spread=0.06), noisy(1.15, 1, n=5, spread=0.06)  # p about 0.01

    def evaluate(family):
        first = family.judge("pair", a, b, Direction.LOWER)
        for index in range(9):
            family.judge(index, noisy(1.0, index + 2, n=5), noisy(1.0, index + 20, n=5),
                         Direction.LOWER)
        return first

    alone = judge_pair(a, b, Direction.LOWER)
    together = judge_together(evaluate)
    assert alone.decision is Outcome.A_BETTER
    assert together.decision is Outcome.UNDECIDED
    assert together.family_size == 10 and together.p_adjusted > alone.p_adjusted
    assert together.alpha < alone.alpha  # its interval is Holm's, wider than alone


def test_a_pair_first_seen_after_the_family_settled_is_refused():
    def evaluate(family):
        return family.judge("a", noisy(1.0), noisy(1.1, 1), Direction.LOWER)

    from dlbench.core.judging.decisions import Family

    family = Family()
    evaluate(family)
    family.settle()
    with pytest.raises(ValueError, match="before the family settled"):
        family.judge("new", noisy(1.0), noisy(1.1, 1), Direction.LOWER)


def test_regime_from_the_achieved_fraction_of_peak():
    fraction = achieved_fraction(1e6, 1000.0, 1e11, training=True)  # 3e9 of 1e11
    assert fraction == pytest.approx(0.03)
    assert regime_of(fraction) is Regime.OVERHEAD_BOUND
    assert regime_of(0.5) is Regime.COMPUTE_BOUND
    assert regime_of(achieved_fraction(None, 1000.0, 1e11, True)) is Regime.NOT_RECORDED


def test_timing_units_read_faster():
    assert is_timing_unit("ms") and is_timing_unit("samples/s")
    assert not is_timing_unit("MiB") and not is_timing_unit("fraction")
