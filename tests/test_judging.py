"""The one judging routine: Holm over a family, the practical threshold, identical repeats."""

from __future__ import annotations

import pytest
from tests.judging_fixtures import noisy

from dlbench.core.judging import (
    Decision,
    Regime,
    achieved_fraction,
    holm,
    judge_pair,
    judge_together,
    regime_of,
)
from dlbench.core.metrics import Direction, is_timing_unit
from dlbench.core.stats import compare_samples


def test_holm_multiplies_the_smallest_by_the_family_size_and_stays_monotone():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_a_clear_difference_names_the_better_side():
    judgement = judge_pair(noisy(1.0), noisy(1.5, 1), Direction.LOWER)
    assert judgement.decision is Decision.A_BETTER
    assert judge_pair(noisy(1.0), noisy(1.5, 1), Direction.HIGHER).decision is Decision.B_BETTER


def test_a_significant_difference_below_the_threshold_is_no_meaningful_difference():
    judgement = judge_pair(noisy(1.0, spread=0.001), noisy(1.02, 1, spread=0.001),
                           Direction.LOWER)
    assert judgement.comparison.significant
    assert judgement.decision is Decision.NO_MEANINGFUL_DIFFERENCE
    assert "practical threshold of 5%" in judgement.reason
    assert judgement.equivalent


def test_a_tight_interval_within_the_threshold_is_no_meaningful_difference():
    judgement = judge_pair(noisy(1.0, spread=0.004), noisy(1.003, 1, spread=0.004),
                           Direction.LOWER)
    assert not judgement.comparison.significant
    assert judgement.decision is Decision.NO_MEANINGFUL_DIFFERENCE and judgement.equivalent
    assert "lies within 5%" in judgement.reason


def test_a_wide_interval_that_is_not_significant_is_undecided_not_no_difference():
    # three processes a side, ranges that do not overlap: p about 0.004 alone, over 116 after Holm
    fast, slow = [0.0179, 0.0203, 0.0230], [0.0374, 0.0485, 0.0371]
    alone = judge_pair(fast, slow, Direction.LOWER)
    corrected = judge_pair(fast, slow, Direction.LOWER, p_adjusted=alone.p_adjusted * 116,
                           family_size=116)
    assert alone.decision is Decision.A_BETTER
    assert corrected.decision is Decision.UNDECIDED and not corrected.equivalent
    assert "3 and 3 processes cannot tell" in corrected.reason


def test_identical_repeats_are_inconclusive_never_a_p_value():
    judgement = judge_pair([0.95] * 5, [0.93] * 5, Direction.HIGHER)
    assert compare_samples([0.95] * 5, [0.93] * 5, Direction.HIGHER).p_value < 0.05
    assert judgement.decision is Decision.INCONCLUSIVE
    assert "deterministic rerun" in judgement.reason


def test_holm_over_a_family_removes_a_difference_one_test_would_name():
    # alone p is about 0.006 (a 15% gap, 8% spread); Holm over 10 comparisons multiplies it by 10
    a, b = noisy(1.0, n=5, spread=0.08), noisy(1.15, 1, n=5, spread=0.08)

    def evaluate(family):
        first = family.judge("pair", a, b, Direction.LOWER)
        for index in range(9):
            family.judge(index, noisy(1.0, index + 2, n=5), noisy(1.0, index + 20, n=5),
                         Direction.LOWER)
        return first

    alone = judge_pair(a, b, Direction.LOWER)
    together = judge_together(evaluate)
    assert alone.decision is Decision.A_BETTER
    assert together.decision is Decision.UNDECIDED
    assert together.family_size == 10 and together.p_adjusted > alone.p_adjusted


def test_regime_from_the_achieved_fraction_of_peak():
    fraction = achieved_fraction(1e6, 1000.0, 1e11, training=True)  # 3e9 of 1e11
    assert fraction == pytest.approx(0.03)
    assert regime_of(fraction) is Regime.OVERHEAD_BOUND
    assert regime_of(0.5) is Regime.COMPUTE_BOUND
    assert regime_of(achieved_fraction(None, 1000.0, 1e11, True)) is Regime.NOT_RECORDED


def test_timing_units_read_faster():
    assert is_timing_unit("ms") and is_timing_unit("samples/s")
    assert not is_timing_unit("MiB") and not is_timing_unit("fraction")
