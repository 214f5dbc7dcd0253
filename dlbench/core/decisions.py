"""The verdict rule: a family of pairs judged against a practical threshold, at one look.

The unit is one process's value, on the log scale; degrees of freedom count processes.
For each pair A/B, Welch's t on log values gives the ratio of geometric means and its
standard error. The rule, stated once:

- A side is named better only when the ratio is beyond the practical threshold with
  significance: the minimum-effect test of "the ratio is within 1+t of 1 or on the other
  side" is rejected after Holm's step-down over the family. Equivalently, its adjusted
  interval lies wholly beyond the threshold.
- "No meaningful difference" (within the threshold, which is no smaller than the measured
  A/A noise floor) only when the adjusted interval lies wholly inside it.
- Otherwise the pair is undecided: its processes cannot tell, and more of them could.
- A pair with one process on a side, identical repeats (a deterministic rerun) or values
  that are not positive is inconclusive: it carries no spread to test.

The adjusted interval of a pair is taken at the level Holm tested it at (alpha / the number
of pairs left at its step; every pair after the first that is not rejected at the level of
that step), so a pair is named better exactly when its printed interval is beyond the
threshold.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dlbench.core.judging import IDENTICAL_REPEATS, Decision, holm, identical_repeats
from dlbench.core.metrics import Direction
from dlbench.core.words import counts


@dataclass(frozen=True)
class PairTest:
    """Welch's t on the log values of A and B: everything the rule needs of one pair."""

    n_a: int
    n_b: int
    log_ratio: float  # mean(log a) - mean(log b)
    standard_error: float
    df: float
    p_value: float  # two-sided, of "the ratio is 1"
    note: str = ""  # why the pair carries no spread to test, when it does not

    @property
    def ratio(self) -> float:
        """Geometric mean of A over geometric mean of B."""
        return math.exp(self.log_ratio) if not math.isnan(self.log_ratio) else math.nan

    @property
    def testable(self) -> bool:
        """Whether the pair has a spread to test against."""
        return not self.note

    def p_beyond(self, threshold: float) -> float:
        """Two-sided p of the minimum-effect test: that |log ratio| <= log(1 + threshold)."""
        if not self.testable:
            return 1.0
        from scipy.special import stdtr  # not at the top: workers import dlbench

        margin = abs(self.log_ratio) - math.log1p(threshold)
        return float(min(1.0, 2 * stdtr(self.df, -margin / self.standard_error)))

    def interval(self, alpha: float) -> tuple[float, float]:
        """The two-sided (1 - alpha) interval of the ratio."""
        if not self.testable:
            return math.nan, math.nan
        from scipy.special import stdtrit

        half = float(stdtrit(self.df, 1 - alpha / 2)) * self.standard_error
        return math.exp(self.log_ratio - half), math.exp(self.log_ratio + half)


def pair_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> PairTest:
    """Welch's t on the logs of A's and B's processes (a note instead, where untestable)."""
    array_a = np.asarray(a, dtype=float).ravel()
    array_b = np.asarray(b, dtype=float).ravel()
    array_a, array_b = array_a[~np.isnan(array_a)], array_b[~np.isnan(array_b)]
    n_a, n_b = int(array_a.size), int(array_b.size)
    note = _untestable(array_a, array_b)
    if note and (n_a == 0 or n_b == 0 or np.any(array_a <= 0) or np.any(array_b <= 0)):
        return PairTest(n_a, n_b, math.nan, math.nan, math.nan, 1.0, note)
    log_a, log_b = np.log(array_a), np.log(array_b)
    log_ratio = float(np.mean(log_a) - np.mean(log_b))
    if note:
        return PairTest(n_a, n_b, log_ratio, math.nan, math.nan, 1.0, note)
    share_a, share_b = np.var(log_a, ddof=1) / n_a, np.var(log_b, ddof=1) / n_b
    error = math.sqrt(share_a + share_b)
    df = (share_a + share_b) ** 2 / (share_a ** 2 / (n_a - 1) + share_b ** 2 / (n_b - 1))
    from scipy.special import stdtr

    return PairTest(n_a, n_b, log_ratio, error, float(df),
                    float(2 * stdtr(df, -abs(log_ratio) / error)))


def _untestable(a: np.ndarray, b: np.ndarray) -> str:
    """Why A against B carries no spread to test, or "" when it does."""
    if min(a.size, b.size) < 2:
        return f"{min(a.size, b.size)} process on a side: no spread to test against"
    if np.any(a <= 0) or np.any(b <= 0):
        return "a value is zero or negative: no ratio to test"
    if identical_repeats(a) or identical_repeats(b):
        return IDENTICAL_REPEATS
    return ""


@dataclass(frozen=True)
class PairDecision:
    """One pair of a family, decided: the test, the adjusted interval and the decision."""

    test: PairTest
    decision: Decision
    threshold: float
    alpha: float  # the two-sided level the pair's interval was taken at
    family_size: int
    p_adjusted: float  # Holm-adjusted minimum-effect p (1 where untestable)
    ci_low: float
    ci_high: float
    look: int = 1
    reason: str = ""
    direction: Direction = Direction.LOWER

    @property
    def ratio(self) -> float:
        """A over B (geometric means)."""
        return self.test.ratio

    @property
    def confidence(self) -> float:
        """The adjusted interval's coverage, e.g. 0.985."""
        return 1 - self.alpha


def holm_levels(p_values: Sequence[float], alpha: float) -> tuple[list[bool], list[float]]:
    """Holm's step-down: which hypotheses are rejected, and the level each was tested at
    (after the first that is not rejected, every later one at that step's level)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected, levels = [False] * len(p_values), [alpha] * len(p_values)
    stopped_at = None
    for step, index in enumerate(order):
        level = alpha / (len(p_values) - step) if stopped_at is None else stopped_at
        levels[index] = level
        if stopped_at is None and p_values[index] < level:
            rejected[index] = True
        elif stopped_at is None:
            stopped_at = level
    return rejected, levels


def decide_family(tests: Sequence[PairTest], direction: Direction, threshold: float,
                  alpha: float, look: int = 1) -> list[PairDecision]:
    """Decide every pair of one family at one look (same order as `tests`)."""
    testable = [i for i, test in enumerate(tests) if test.testable]
    p_values = [tests[i].p_beyond(threshold) for i in testable]
    rejected, levels = holm_levels(p_values, alpha)
    adjusted = holm(p_values)
    decided: list[PairDecision | None] = [None] * len(tests)
    for position, index in enumerate(testable):
        decided[index] = _decide_pair(tests[index], direction, threshold, levels[position],
                                      len(testable), adjusted[position], rejected[position],
                                      look)
    return [d or PairDecision(t, Decision.INCONCLUSIVE, threshold, alpha, len(testable), 1.0,
                              math.nan, math.nan, look, t.note, direction)
            for d, t in zip(decided, tests, strict=True)]


def _decide_pair(test: PairTest, direction: Direction, threshold: float, level: float,
                 family_size: int, p_adjusted: float, rejected: bool,
                 look: int) -> PairDecision:
    low, high = test.interval(level)
    band = 1 + threshold
    if rejected:
        decision = _better_side(test.ratio, direction)
        reason = ""
    elif 1 / band <= low and high <= band:
        decision, reason = Decision.NO_MEANINGFUL_DIFFERENCE, f"interval within {threshold:.0%}"
    else:
        decision = Decision.UNDECIDED
        reason = (f"interval {low:.2f}-{high:.2f}x reaches across the {threshold:.0%} "
                  f"threshold: {counts([test.n_a, test.n_b], 'process')} cannot tell")
    return PairDecision(test, decision, threshold, level, family_size, p_adjusted, low, high,
                        look, reason, direction)


def _better_side(ratio: float, direction: Direction) -> Decision:
    if direction is Direction.NEITHER:
        return Decision.DIFFERENT
    a_better = (ratio > 1) is (direction is Direction.HIGHER)
    return Decision.A_BETTER if a_better else Decision.B_BETTER


def detectable_ratio(log_sd: float, processes: int, alpha: float = 0.05,
                     power: float = 0.8) -> float:
    """The smallest ratio a cell with this spread and process count detects (at `power`)
    against an equally noisy partner: exp((t_alpha/2 + t_power) * sd * sqrt(2 / n))."""
    if processes < 2 or math.isnan(log_sd):
        return math.nan
    from scipy.special import stdtrit

    df = 2 * processes - 2
    quantiles = float(stdtrit(df, 1 - alpha / 2)) + float(stdtrit(df, power))
    return math.exp(quantiles * log_sd * math.sqrt(2 / processes))


def processes_needed(test: PairTest, threshold: float, alpha: float, power: float = 0.8,
                     most: int = 1000) -> int | None:
    """Processes per cell that would decide this pair (beyond or within the threshold) at
    `power`, if the observed ratio and spread held; None when no count up to `most` would."""
    if not test.testable or math.isnan(test.standard_error):
        return None
    from scipy.special import stdtrit

    spread = test.standard_error / math.sqrt(1 / test.n_a + 1 / test.n_b)  # per process
    gap = abs(abs(test.log_ratio) - math.log1p(threshold))
    if gap == 0:
        return None
    for processes in range(2, most + 1):
        df = 2 * processes - 2
        needed = (float(stdtrit(df, 1 - alpha / 2)) + float(stdtrit(df, power))) * spread
        if needed * math.sqrt(2 / processes) <= gap:
            return processes
    return None
