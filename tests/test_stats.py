"""Describing repeats: the median, its interval and the spread (verdicts: test_decisions)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dlbench.core.judging.stats import summarize


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


def test_the_geometric_mean_is_the_centre_of_the_log_values():
    from dlbench.core.judging.stats import geometric_mean

    assert geometric_mean([1.0, 4.0]) == pytest.approx(2.0)
    assert geometric_mean([1.0, float("nan"), 9.0]) == pytest.approx(3.0)
    assert geometric_mean([0.0, 2.0]) == 1.0  # not positive: the arithmetic mean
    assert math.isnan(geometric_mean([]))
