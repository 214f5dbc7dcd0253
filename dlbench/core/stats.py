"""Statistics of repeats: medians with bootstrap intervals, ratios with significance.

Pure numpy/scipy. Every resampling is seeded, so the same values give the same numbers.

Choices, stated once:
- Centre: the median of the repeats (robust to one slow repeat caused by the OS).
- Interval: a percentile bootstrap of the median (default 2000 resamples, 95%).
- Two-sample test: Welch's t-test on the logarithms of the repeats (positive values; a
  two-sided Mann-Whitney U test where a value is zero or negative). A repeat is one worker
  process, and the suites measure 3 (standard) or 5 (full) per cell: no rank test can name
  a difference from so few (3 against 3 gives at best p = 0.10), while the log of a
  process's timing is close to normal (slowdowns multiply), so Welch on logs tests the ratio
  of geometric means with the spread between processes as its error. One repeat on a side
  gives no test: such comparisons are flagged as underpowered.
- A difference is significant only if p < alpha AND the bootstrap interval of the ratio of
  medians excludes 1: the test and the interval must agree.

Who wins is decided in dlbench.core.judging (Holm over a family, a practical threshold), which
calls compare_samples for each pair.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dlbench.core.metrics import Direction
from dlbench.core.words import plural

#: Below this many repeats per side there is no spread to test a difference against.
MIN_REPEATS_FOR_SIGNIFICANCE = 2

ALPHA = 0.05


@dataclass(frozen=True)
class Summary:
    """The centre and spread of one cell's repeats."""

    n: int
    median: float
    ci_low: float
    ci_high: float
    cv: float  # coefficient of variation: sample std / |mean|; nan for n < 2
    confidence: float = 0.95

    @property
    def single(self) -> bool:
        """True when there is one value only: the interval is a point, not a measurement."""
        return self.n < 2

    @property
    def relative_half_width(self) -> float:
        """Half the interval's width relative to the median (0.05 means +-5%)."""
        half = (self.ci_high - self.ci_low) / 2
        if self.median == 0:
            return 0.0 if half == 0 else math.inf
        return half / abs(self.median)


def _as_array(values: Sequence[float] | np.ndarray, what: str = "values") -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    array = array[~np.isnan(array)]
    if array.size == 0:
        raise ValueError(f"{what}: no finite values to summarise")
    return array


def _bootstrap_medians(array: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    index = rng.integers(0, array.size, size=(resamples, array.size))
    return np.median(array[index], axis=1)


def _percentiles(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    tail = (1 - confidence) / 2 * 100
    low, high = np.nanpercentile(samples, [tail, 100 - tail])
    return float(low), float(high)


def summarize(
    values: Sequence[float] | np.ndarray,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> Summary:
    """Median, bootstrap interval of the median and coefficient of variation of `values`."""
    array = _as_array(values)
    median = float(np.median(array))
    if array.size == 1:
        return Summary(1, median, median, median, math.nan, confidence)
    rng = np.random.default_rng(seed)
    low, high = _percentiles(_bootstrap_medians(array, resamples, rng), confidence)
    mean = float(np.mean(array))
    cv = float(np.std(array, ddof=1) / abs(mean)) if mean != 0 else math.nan
    return Summary(int(array.size), median, min(low, median), max(high, median), cv, confidence)


class Outcome(enum.Enum):
    """Which of two samples is better, if the difference is significant."""

    A_BETTER = "a_better"
    B_BETTER = "b_better"
    NO_SIGNIFICANT_DIFFERENCE = "no_significant_difference"
    DIFFERENT = "different"  # significant, but the metric has no better direction


@dataclass(frozen=True)
class Comparison:
    """Sample A against sample B: ratio of medians, its interval, the test and the outcome."""

    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: float  # median(a) / median(b)
    ratio_ci_low: float
    ratio_ci_high: float
    p_value: float
    significant: bool
    outcome: Outcome
    direction: Direction
    note: str = ""  # why a comparison could not be significant, when that is known

    @property
    def underpowered(self) -> bool:
        """True when too few repeats exist for the test to ever reach significance."""
        return min(self.n_a, self.n_b) < MIN_REPEATS_FOR_SIGNIFICANCE


def mann_whitney_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided Mann-Whitney U p-value; 1.0 when every value is identical."""
    if np.all(a == a[0]) and np.all(b == a[0]):
        return 1.0
    from scipy import stats as scipy_stats  # here, not at the top: every worker imports this module

    return float(scipy_stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)


def log_welch_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p of Welch's t-test on log values (Mann-Whitney where a value is not
    positive). Zero spread on both sides gives 1.0 for equal values and 0.0 otherwise: the
    certainty identical reruns pretend to, which dlbench.core.judging refuses as inconclusive."""
    if np.any(a <= 0) or np.any(b <= 0):
        return mann_whitney_p(a, b)
    if a.size < MIN_REPEATS_FOR_SIGNIFICANCE or b.size < MIN_REPEATS_FOR_SIGNIFICANCE:
        return 1.0
    log_a, log_b = np.log(a), np.log(b)
    if np.ptp(log_a) == 0 and np.ptp(log_b) == 0:
        return 1.0 if log_a[0] == log_b[0] else 0.0
    return welch_p(log_a, log_b)


def welch_p(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sided p of Welch's t-test (as scipy.stats.ttest_ind with equal_var=False), from
    scipy.special alone: scipy.stats takes a second or more to import, in every site build."""
    from scipy.special import stdtr  # here, not at the top: every worker imports this module

    share_a, share_b = np.var(a, ddof=1) / a.size, np.var(b, ddof=1) / b.size
    standard_error = math.sqrt(share_a + share_b)
    t = (np.mean(a) - np.mean(b)) / standard_error
    df = (share_a + share_b) ** 2 / (share_a ** 2 / (a.size - 1) + share_b ** 2 / (b.size - 1))
    return float(2 * stdtr(df, -abs(t)))


def _ratio_interval(
    a: np.ndarray, b: np.ndarray, confidence: float, resamples: int, seed: int
) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    medians_a = _bootstrap_medians(a, resamples, rng)
    medians_b = _bootstrap_medians(b, resamples, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = medians_a / medians_b
    ratios[~np.isfinite(ratios)] = np.nan
    if np.all(np.isnan(ratios)):
        return math.nan, math.nan
    return _percentiles(ratios, confidence)


def _outcome(significant: bool, ratio: float, direction: Direction) -> Outcome:
    if not significant:
        return Outcome.NO_SIGNIFICANT_DIFFERENCE
    if direction is Direction.NEITHER:
        return Outcome.DIFFERENT
    a_higher = ratio > 1
    a_better = a_higher if direction is Direction.HIGHER else not a_higher
    return Outcome.A_BETTER if a_better else Outcome.B_BETTER


def compare_samples(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    direction: Direction,
    confidence: float = 0.95,
    alpha: float = ALPHA,
    resamples: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Compare the repeats of A and B for a metric whose better side is `direction`."""
    array_a, array_b = _as_array(a, "sample A"), _as_array(b, "sample B")
    median_a, median_b = float(np.median(array_a)), float(np.median(array_b))
    p_value = log_welch_p(array_a, array_b)
    note = ""
    if median_b == 0:
        ratio, low, high = math.nan, math.nan, math.nan
        note = "median of B is zero: no ratio"
    else:
        ratio = median_a / median_b
        low, high = _ratio_interval(array_a, array_b, confidence, resamples, seed)
        low, high = min(low, ratio), max(high, ratio)
    excludes_one = not math.isnan(low) and (low > 1 or high < 1)
    significant = bool(p_value < alpha and excludes_one)
    if (min(array_a.size, array_b.size) < MIN_REPEATS_FOR_SIGNIFICANCE and not note
            and not significant):
        fewest = min(array_a.size, array_b.size)
        note = (f"underpowered: {plural(fewest, 'repeat')}; the test needs "
                f"at least {MIN_REPEATS_FOR_SIGNIFICANCE} per side")
    return Comparison(
        n_a=int(array_a.size), n_b=int(array_b.size), median_a=median_a, median_b=median_b,
        ratio=ratio, ratio_ci_low=low, ratio_ci_high=high, p_value=p_value,
        significant=significant, outcome=_outcome(significant, ratio, direction),
        direction=direction, note=note,
    )
