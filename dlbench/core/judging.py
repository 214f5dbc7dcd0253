"""Judging which of two samples is better: the one routine every verdict uses.

The home page's questions, the claims checked and `dlbench compare` all judge pairs of
samples (the repeats of two cells) here. The rules, stated once:

- A difference is named only when it is significant after Holm's correction over every
  comparison of the family (a page, or one `dlbench compare` report) AND larger than the
  practical threshold (5% by default): the ratio of medians is above 1.05 or below 1/1.05.
- "No meaningful difference" is said only when the evidence shows it: a significant
  difference within the threshold, or a ratio whose whole interval lies within it. A pair
  that is not significant while its interval reaches beyond the threshold is "undecided":
  the processes measured cannot tell, and more of them could.
- Significant: the Holm-adjusted p (Welch's t-test on log values, see dlbench.core.stats) < 0.05
  and the bootstrap interval of the ratio excludes 1.
- A sample of identical repeats (zero spread, as a deterministic rerun gives) is not a set of
  independent measurements: a comparison with it is inconclusive, never a p-value.
- Regime: a measurement at less than 10% of the machine's measured peak FLOP/s is
  overhead-bound (it measures per-call overhead); at or above, compute-bound.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from dlbench.core.metrics import Direction
from dlbench.core.stats import ALPHA, Comparison, compare_samples
from dlbench.core.words import counts, plural

#: A difference smaller than this (ratio within 1/1.05 .. 1.05) is not meaningful.
PRACTICAL_THRESHOLD = 0.05

#: At or above this fraction of the machine's measured peak FLOP/s a cell is compute-bound.
COMPUTE_BOUND_FRACTION = 0.10

IDENTICAL_REPEATS = ("its repeats are identical (a deterministic rerun, not repeats that "
                     "differ in seed), so they carry no uncertainty to test")

T = TypeVar("T")
_COMPARISONS: dict[tuple, Comparison] = {}  # by the samples' bytes: one build judges a pair
# in several families (home-page verdicts, claims) and twice in each (judge_together)
_COMPARISONS_KEPT = 4096


class Decision(enum.Enum):
    """What one judged pair says."""

    A_BETTER = "a better"
    B_BETTER = "b better"
    NO_MEANINGFUL_DIFFERENCE = "no meaningful difference"
    DIFFERENT = "different"  # meaningful, for a metric with no better direction
    UNDECIDED = "undecided"  # not significant, yet the interval reaches beyond the threshold
    INCONCLUSIVE = "inconclusive"  # the samples cannot decide (identical repeats, no ratio)


class Regime(enum.Enum):
    """What a timing measures: per-call overhead, or the machine's arithmetic."""

    OVERHEAD_BOUND = "overhead-bound"
    COMPUTE_BOUND = "compute-bound"
    NOT_RECORDED = "regime not recorded"


@dataclass(frozen=True)
class Judgement:
    """A pair judged: the statistics, the corrected p-value and the decision with its reason."""

    comparison: Comparison
    p_adjusted: float
    family_size: int
    threshold: float
    decision: Decision
    reason: str = ""  # why no side is named better, when none is

    @property
    def ratio(self) -> float:
        """median(a) / median(b)."""
        return self.comparison.ratio

    @property
    def effect(self) -> float:
        """How far the ratio is from 1, either way: 0.2 means one is 1.2× the other."""
        ratio = self.comparison.ratio
        if math.isnan(ratio) or ratio <= 0:
            return math.nan
        return max(ratio, 1 / ratio) - 1

    @property
    def equivalent(self) -> bool:
        """True when the whole interval of the ratio lies within the practical threshold."""
        return (self.decision is Decision.NO_MEANINGFUL_DIFFERENCE and within_band(
            self.comparison.ratio_ci_low, self.comparison.ratio_ci_high, self.threshold))


def within_band(low: float, high: float, threshold: float) -> bool:
    """True when the interval [low, high] of a ratio lies within 1/(1+t) .. 1+t."""
    band = 1 + threshold
    return not math.isnan(low) and 1 / band <= low and high <= band


def identical_repeats(values: Sequence[float] | np.ndarray) -> bool:
    """True for two or more repeats that are all the same value (zero spread)."""
    array = np.asarray(values, dtype=float).ravel()
    array = array[~np.isnan(array)]
    return array.size >= 2 and bool(np.all(array == array[0]))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of a family of p-values (same order as given)."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    adjusted, running = [1.0] * len(p_values), 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


def decide(comparison: Comparison, p_adjusted: float, family_size: int = 1,
           threshold: float = PRACTICAL_THRESHOLD, identical: bool = False,
           alpha: float = ALPHA) -> Judgement:
    """The decision for a compared pair, given its family-corrected p-value."""
    def judged(decision: Decision, reason: str = "") -> Judgement:
        return Judgement(comparison, p_adjusted, family_size, threshold, decision, reason)

    if identical:
        return judged(Decision.INCONCLUSIVE, IDENTICAL_REPEATS)
    if math.isnan(comparison.ratio):
        return judged(Decision.INCONCLUSIVE, comparison.note or "no ratio")
    low, high = comparison.ratio_ci_low, comparison.ratio_ci_high
    significant = p_adjusted < alpha and not math.isnan(low) and (low > 1 or high < 1)
    if not significant:
        why = comparison.note or (f"not significant after Holm's correction over "
                                  f"{plural(family_size, 'comparison')} (p={p_adjusted:.2g})")
        if within_band(low, high, threshold):
            return judged(Decision.NO_MEANINGFUL_DIFFERENCE,
                          f"{why}; its 95% interval lies within {threshold:.0%}")
        return judged(Decision.UNDECIDED, f"{why}, and its 95% interval "
                      f"{low:.2f}-{high:.2f}x reaches beyond {threshold:.0%}: "
                      f"{counts([comparison.n_a, comparison.n_b], 'process')} cannot tell")
    effect = max(comparison.ratio, 1 / comparison.ratio) - 1
    if effect <= threshold:
        return judged(Decision.NO_MEANINGFUL_DIFFERENCE,
                      f"{effect:.1%} is within the practical threshold of {threshold:.0%}")
    if comparison.direction is Direction.NEITHER:
        return judged(Decision.DIFFERENT)
    better_a = (comparison.ratio > 1) is (comparison.direction is Direction.HIGHER)
    return judged(Decision.A_BETTER if better_a else Decision.B_BETTER)


def judge_pair(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
               direction: Direction, threshold: float = PRACTICAL_THRESHOLD,
               p_adjusted: float | None = None, family_size: int = 1) -> Judgement:
    """Judge the repeats of A against those of B; `p_adjusted` when a family corrected it."""
    comparison = compare_samples(a, b, direction)
    p_value = comparison.p_value if p_adjusted is None else p_adjusted
    return decide(comparison, p_value, family_size, threshold,
                  identical_repeats(a) or identical_repeats(b))


@dataclass
class Family:
    """Pairs judged together: Holm's correction runs over every pair the family has seen.

    Judge everything once (decisions are provisional), `settle()`, then judge again: the
    second pass uses the corrected p-values. `judge_together` does both passes.
    """

    _pairs: dict[Hashable, tuple[Comparison, bool]] = field(default_factory=dict)
    _adjusted: dict[Hashable, float] | None = None

    @property
    def size(self) -> int:
        """How many distinct pairs the family holds."""
        return len(self._pairs)

    def judge(self, key: Hashable, a: Sequence[float] | np.ndarray,
              b: Sequence[float] | np.ndarray, direction: Direction,
              threshold: float = PRACTICAL_THRESHOLD) -> Judgement:
        """Judge A against B under `key` (what identifies the pair: cells and metric)."""
        if key not in self._pairs:
            if self._adjusted is not None:
                raise ValueError(f"pair {key!r} was not judged before the family settled")
            identical = identical_repeats(a) or identical_repeats(b)
            self._pairs[key] = (shared_comparison(a, b, direction), identical)
        comparison, identical = self._pairs[key]
        p_value = comparison.p_value if self._adjusted is None else self._adjusted[key]
        return decide(comparison, p_value, max(1, self.size), threshold, identical)

    def settle(self) -> None:
        """Correct every p-value of the family together (Holm)."""
        keys = [k for k, (c, identical) in self._pairs.items()
                if not identical and not math.isnan(c.p_value)]
        adjusted = holm([self._pairs[k][0].p_value for k in keys])
        self._adjusted = {k: 1.0 for k in self._pairs} | dict(zip(keys, adjusted, strict=True))


def shared_comparison(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                      direction: Direction) -> Comparison:
    """`compare_samples(a, b, direction)`, computed once per distinct pair of samples."""
    array_a, array_b = np.asarray(a), np.asarray(b)
    if array_a.dtype == object or array_b.dtype == object:
        return compare_samples(a, b, direction)
    key = (array_a.dtype.str, array_a.tobytes(), array_b.dtype.str, array_b.tobytes(), direction)
    if key not in _COMPARISONS:
        if len(_COMPARISONS) >= _COMPARISONS_KEPT:
            _COMPARISONS.clear()
        _COMPARISONS[key] = compare_samples(a, b, direction)
    return _COMPARISONS[key]


def judge_together(evaluate: Callable[[Family], T]) -> T:
    """Run `evaluate` once to gather the family's pairs, then again with corrected p-values."""
    family = Family()
    evaluate(family)
    family.settle()
    return evaluate(family)


def regime_of(achieved_fraction: float | None,
              compute_bound_at: float = COMPUTE_BOUND_FRACTION) -> Regime:
    """The regime of a measurement from its achieved fraction of the measured peak."""
    if achieved_fraction is None or math.isnan(achieved_fraction):
        return Regime.NOT_RECORDED
    return Regime.COMPUTE_BOUND if achieved_fraction >= compute_bound_at else Regime.OVERHEAD_BOUND


def achieved_fraction(flops_per_sample: float | None, samples_per_second: float | None,
                      peak_flops: float | None, training: bool) -> float | None:
    """Achieved FLOP/s over the peak: forward FLOPs x rate (x3 for forward plus backward)."""
    if not flops_per_sample or not samples_per_second or not peak_flops:
        return None
    return flops_per_sample * samples_per_second * (3 if training else 1) / peak_flops
