"""Statistics of repeats: intervals, ratios, significance and adaptive repeats."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dlbench.core.metrics import Direction
from dlbench.core.stats import (
    Outcome,
    compare_samples,
    summarize,
)


def test_summary_holds_the_median_inside_its_interval_and_is_deterministic():
    values = [1.02, 0.98, 1.10, 1.00, 0.97, 1.05, 1.01]
    first, second = summarize(values), summarize(values)
    assert first == second
    assert first.n == 7
    assert first.median == pytest.approx(1.01)
    assert first.ci_low <= first.median <= first.ci_high
    assert min(values) <= first.ci_low and first.ci_high <= max(values)
    assert first.cv == pytest.approx(np.std(values, ddof=1) / np.mean(values))
    assert 0 < first.relative_half_width < 0.1


def test_wider_spread_gives_a_wider_interval():
    rng = np.random.default_rng(1)
    tight = summarize(1 + rng.normal(0, 0.01, 20))
    loose = summarize(1 + rng.normal(0, 0.2, 20))
    assert loose.relative_half_width > 3 * tight.relative_half_width


def test_single_value_is_flagged_with_a_point_interval():
    summary = summarize([2.5])
    assert summary.single
    assert (summary.ci_low, summary.median, summary.ci_high) == (2.5, 2.5, 2.5)
    assert math.isnan(summary.cv)


def test_no_values_is_an_error():
    with pytest.raises(ValueError, match="no finite values"):
        summarize([])


def test_clearly_faster_sample_wins_for_a_lower_is_better_metric():
    rng = np.random.default_rng(2)
    fast = 1.0 + rng.normal(0, 0.02, 8)
    slow = 1.5 + rng.normal(0, 0.02, 8)
    comparison = compare_samples(fast, slow, Direction.LOWER)
    assert comparison.significant
    assert comparison.outcome is Outcome.A_BETTER
    assert comparison.ratio == pytest.approx(np.median(fast) / np.median(slow))
    assert comparison.ratio_ci_low <= comparison.ratio <= comparison.ratio_ci_high < 1
    assert comparison.p_value < 0.01
    # the same data under the opposite direction: B is better
    assert compare_samples(fast, slow, Direction.HIGHER).outcome is Outcome.B_BETTER


def test_same_distribution_is_no_significant_difference():
    rng = np.random.default_rng(3)
    a, b = 1 + rng.normal(0, 0.05, 10), 1 + rng.normal(0, 0.05, 10)
    comparison = compare_samples(a, b, Direction.LOWER)
    assert not comparison.significant
    assert comparison.outcome is Outcome.NO_SIGNIFICANT_DIFFERENCE
    assert comparison.ratio_ci_low < 1 < comparison.ratio_ci_high


def test_three_processes_a_side_can_name_a_clear_difference():
    # a rank test's smallest p here is 0.10; Welch on logs sees a 1.8x gap against a 10% spread
    comparison = compare_samples([1.0, 1.1, 1.2], [2.0, 2.1, 2.2], Direction.LOWER)
    assert comparison.p_value < 0.005
    assert comparison.outcome is Outcome.A_BETTER and not comparison.underpowered


def test_three_processes_with_overlapping_spread_name_nothing():
    comparison = compare_samples([1.0, 1.3, 1.1], [1.05, 1.25, 1.15], Direction.LOWER)
    assert comparison.p_value > 0.5
    assert comparison.outcome is Outcome.NO_SIGNIFICANT_DIFFERENCE


def test_one_process_a_side_cannot_be_significant_and_says_why():
    comparison = compare_samples([1.0], [2.0], Direction.LOWER)
    assert comparison.p_value == 1.0
    assert comparison.outcome is Outcome.NO_SIGNIFICANT_DIFFERENCE
    assert comparison.underpowered and "underpowered" in comparison.note


def test_values_that_are_not_positive_fall_back_to_a_rank_test():
    from dlbench.core.stats import log_welch_p, mann_whitney_p

    a, b = np.array([0.0, 0.1, 0.2, 0.3]), np.array([0.5, 0.6, 0.7, 0.8])
    assert log_welch_p(a, b) == mann_whitney_p(a, b) == pytest.approx(2 / 70)


def test_identical_samples_have_p_one():
    comparison = compare_samples([0.9] * 5, [0.9] * 5, Direction.HIGHER)
    assert comparison.p_value == 1.0
    assert comparison.ratio == 1.0
    assert comparison.outcome is Outcome.NO_SIGNIFICANT_DIFFERENCE


def test_metric_without_direction_reports_a_difference_but_no_winner():
    comparison = compare_samples([1.0] * 6, [2.0] * 6, Direction.NEITHER)
    assert comparison.outcome is Outcome.DIFFERENT


def test_zero_median_of_b_gives_no_ratio_and_no_verdict():
    comparison = compare_samples([1.0, 1.1, 1.2, 1.3], [0.0] * 4, Direction.LOWER)
    assert math.isnan(comparison.ratio)
    assert comparison.outcome is Outcome.NO_SIGNIFICANT_DIFFERENCE
    assert "zero" in comparison.note


def test_welch_p_is_scipys_welch_test():
    import numpy as np
    from scipy import stats as scipy_stats

    from dlbench.core.stats import welch_p

    rng = np.random.default_rng(3)
    for n_a, n_b in ((2, 3), (3, 3), (5, 9)):
        a, b = rng.normal(0, 0.1, n_a), rng.normal(0.2, 0.3, n_b)
        expected = scipy_stats.ttest_ind(a, b, equal_var=False).pvalue
        assert welch_p(a, b) == pytest.approx(expected, rel=1e-9)
