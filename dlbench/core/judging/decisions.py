"""The verdict rule, the one every verdict uses: the home page's answers, the claims, `dlbench
compare` and its page, both forms of `dlbench reproduce` and the runner's looks judge their
pairs here (dlbench/core/judging/verdict_engine.py adds the families and looks of the home page).

The unit is one process's value, on the log scale; degrees of freedom count processes.
For each pair A/B, Welch's t on log values gives the ratio of geometric means and its
standard error; a metric paired by seed (process k of every system starts from seed k:
accuracy) is tested paired, a t on the per-seed log differences (where the values vary by
seed yet every seed's difference is the same, the seed decides both values and that
difference is exact). Timing stays unpaired: two processes of one seed run minutes apart
and their deviations do not correlate. The rule:

- A side is named better only when the ratio is beyond the practical threshold with
  significance: the minimum-effect test of "the ratio is within 1+t of 1 or on the other
  side" is rejected after Holm's step-down over the family. Equivalently, its adjusted
  interval lies wholly beyond the threshold.
- "No meaningful difference" (within the threshold, which is no smaller than the measured
  A/A noise floor) only when the adjusted interval lies wholly inside it.
- Otherwise the pair is undecided: its processes cannot tell, and more of them could.
- A pair with one process on a side, identical repeats (a deterministic rerun) or values
  that are not positive is inconclusive: it carries no spread to test. Identical values
  of processes that each ran their own seed are no rerun (dlbench/core/judging/seeds.py): paired
  by seed, they are tested on the per-seed differences.

The adjusted interval of a pair is taken at the level Holm tested it at (alpha / the number
of pairs left at its step; every pair after the first that is not rejected at the level of
that step), so a pair is named better exactly when its printed interval is beyond the
threshold.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np

from dlbench.core.declarations.metrics import Direction
from dlbench.core.text.words import counts
from dlbench.core.judging.outcomes import Outcome

#: A difference smaller than this (ratio within 1/1.05 .. 1.05) is not meaningful.
PRACTICAL_THRESHOLD = 0.05
#: The overall two-sided significance level of one family of pairs.
ALPHA = 0.05
#: Metrics whose process k of every system starts from the same seed and so are tested
#: paired by process index (dlbench.runner.workloads.catalog.process_seed).
PAIRED_BY_SEED = frozenset({"test_accuracy", "epoch_accuracy", "reached_target"})

T = TypeVar("T")

#: The largest value each bounded metric can take: where every process of both sides is there,
#: the task is too easy to tell the sides apart, and no pair of such values is tested.
CEILINGS = {"test_accuracy": 1.0, "epoch_accuracy": 1.0, "reached_target": 1.0}
AT_CEILING = ("every process on both sides scored the maximum: the task cannot tell them "
              "apart (a harder task could)")

IDENTICAL_REPEATS = ("its repeats are identical (a deterministic rerun, not repeats that "
                     "differ in seed), so they carry no uncertainty to test")


def identical_repeats(values: Sequence[float] | np.ndarray) -> bool:
    """True for two or more repeats that are all the same value (zero spread)."""
    array = np.asarray(values, dtype=float).ravel()
    array = array[~np.isnan(array)]
    return array.size >= 2 and bool(np.all(array == array[0]))


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
    paired: bool = False  # tested on per-seed differences

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
        if self.standard_error == 0:  # paired by seed, every seed's difference the same
            return 0.0 if margin > 0 else 1.0
        return float(min(1.0, 2 * stdtr(self.df, -margin / self.standard_error)))

    def interval(self, alpha: float) -> tuple[float, float]:
        """The two-sided (1 - alpha) interval of the ratio."""
        if not self.testable:
            return math.nan, math.nan
        from scipy.special import stdtrit

        half = float(stdtrit(self.df, 1 - alpha / 2)) * self.standard_error
        return math.exp(self.log_ratio - half), math.exp(self.log_ratio + half)


def pair_test(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
              paired: bool = False, own_seeds: bool = False,
              ceiling: float | None = None) -> PairTest:
    """Welch's t on the logs of A's and B's processes, or with `paired` (A[k] and B[k] share
    process k's seed) a t on the per-seed log differences; a note instead, where untestable.
    With `own_seeds` as well (process k ran seed k, unlike process j), a side whose values
    are identical is no rerun: the seed does not move them, and the pair is tested. Where
    every value of both sides is at the metric's `ceiling`, the pair is not tested: the
    task cannot tell them apart."""
    array_a = np.asarray(a, dtype=float).ravel()
    array_b = np.asarray(b, dtype=float).ravel()
    if paired:
        if array_a.size != array_b.size:
            raise ValueError(f"a paired test needs one value per seed on each side, not "
                             f"{array_a.size} and {array_b.size}")
        kept = ~np.isnan(array_a) & ~np.isnan(array_b)
        array_a, array_b = array_a[kept], array_b[kept]
    else:
        array_a, array_b = array_a[~np.isnan(array_a)], array_b[~np.isnan(array_b)]
    n_a, n_b = int(array_a.size), int(array_b.size)
    note = _untestable(array_a, array_b, identical_is_exact=paired and own_seeds)
    if ceiling is not None and n_a >= 2 and n_b >= 2 and np.all(array_a == ceiling) \
            and np.all(array_b == ceiling):
        note = AT_CEILING
    if note and (n_a == 0 or n_b == 0 or np.any(array_a <= 0) or np.any(array_b <= 0)):
        return PairTest(n_a, n_b, math.nan, math.nan, math.nan, 1.0, note, paired)
    log_a, log_b = np.log(array_a), np.log(array_b)
    log_ratio = float(np.mean(log_a) - np.mean(log_b))
    if note:
        return PairTest(n_a, n_b, log_ratio, math.nan, math.nan, 1.0, note, paired)
    if paired and np.ptp(log_a - log_b) == 0:  # the seed decides both values: exact
        return PairTest(n_a, n_b, log_ratio, 0.0, float(n_a - 1),
                        1.0 if log_ratio == 0 else 0.0, "", True)
    if paired:
        error = float(np.std(log_a - log_b, ddof=1) / math.sqrt(n_a))
        df = float(n_a - 1)
    else:
        share_a, share_b = np.var(log_a, ddof=1) / n_a, np.var(log_b, ddof=1) / n_b
        error = math.sqrt(share_a + share_b)
        df = float((share_a + share_b) ** 2
                   / (share_a ** 2 / (n_a - 1) + share_b ** 2 / (n_b - 1)))
    from scipy.special import stdtr

    return PairTest(n_a, n_b, log_ratio, error, df,
                    float(2 * stdtr(df, -abs(log_ratio) / error)), "", paired)


def _untestable(a: np.ndarray, b: np.ndarray, identical_is_exact: bool = False) -> str:
    """Why A against B carries no spread to test, or "" when it does. A side whose values
    are all identical cannot be told from a deterministic rerun (releases before 2027.02
    reran one seed), unless `identical_is_exact`: paired by seed, each process its own seed
    (dlbench.core.judging.seeds), where the per-seed differences carry the test."""
    if min(a.size, b.size) < 2:
        return f"{min(a.size, b.size)} process on a side: no spread to test against"
    if np.any(a <= 0) or np.any(b <= 0):
        return "a value is zero or negative: no ratio to test"
    if not identical_is_exact and (identical_repeats(a) or identical_repeats(b)):
        return IDENTICAL_REPEATS
    return ""


@dataclass(frozen=True)
class PairDecision:
    """One pair of a family, decided: the test, the adjusted interval and the decision."""

    test: PairTest
    decision: Outcome
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

    @property
    def effect(self) -> float:
        """How far the ratio is from 1, either way: 0.2 means one is 1.2x the other."""
        ratio = self.ratio
        return math.nan if math.isnan(ratio) or ratio <= 0 else max(ratio, 1 / ratio) - 1

    @property
    def named(self) -> bool:
        """Whether a side was named better (or, for a metric with no direction, different)."""
        return self.decision in (Outcome.A_BETTER, Outcome.B_BETTER, Outcome.DIFFERENT)

    @property
    def equivalent(self) -> bool:
        """True when the adjusted interval lies wholly within the practical threshold."""
        return self.decision is Outcome.NO_MEANINGFUL_DIFFERENCE


def holm_levels(p_values: Sequence[float], alpha: float
                ) -> tuple[list[bool], list[float], list[float]]:
    """Holm's step-down, the one implementation: which hypotheses are rejected, the level each
    was tested at (after the first that is not rejected, every later one at that step's
    level), and each one's Holm-adjusted p."""
    order = sorted(range(len(p_values)), key=lambda i: p_values[i])
    rejected, levels = [False] * len(p_values), [alpha] * len(p_values)
    adjusted, running = [1.0] * len(p_values), 0.0
    stopped_at = None
    for step, index in enumerate(order):
        running = max(running, min(1.0, (len(p_values) - step) * p_values[index]))
        adjusted[index] = running
        level = alpha / (len(p_values) - step) if stopped_at is None else stopped_at
        levels[index] = level
        if stopped_at is None and p_values[index] < level:
            rejected[index] = True
        elif stopped_at is None:
            stopped_at = level
    return rejected, levels, adjusted


def decide_family(tests: Sequence[PairTest], direction: Direction,
                  threshold: float | Sequence[float], alpha: float,
                  look: int = 1) -> list[PairDecision]:
    """Decide every pair of one family at one look (same order as `tests`); `threshold` is
    one for the family or one per pair."""
    thresholds = ([float(threshold)] * len(tests) if isinstance(threshold, int | float)
                  else [float(t) for t in threshold])
    testable = [i for i, test in enumerate(tests) if test.testable]
    p_values = [tests[i].p_beyond(thresholds[i]) for i in testable]
    rejected, levels, adjusted = holm_levels(p_values, alpha)
    decided: list[PairDecision | None] = [None] * len(tests)
    for position, index in enumerate(testable):
        decided[index] = _decide_pair(tests[index], direction, thresholds[index],
                                      levels[position], len(testable), adjusted[position],
                                      rejected[position], look)
    return [d or PairDecision(t, Outcome.INCONCLUSIVE, limit, alpha, len(testable), 1.0,
                              math.nan, math.nan, look, t.note, direction)
            for d, t, limit in zip(decided, tests, thresholds, strict=True)]


def judge_pair(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
               direction: Direction, threshold: float = PRACTICAL_THRESHOLD,
               alpha: float = ALPHA, paired: bool = False) -> PairDecision:
    """One pair judged alone (a family of one): what `dlbench reproduce` asks."""
    return decide_family([pair_test(a, b, paired)], direction, threshold, alpha)[0]


@dataclass
class Family:
    """Pairs judged together (a claims page, one `dlbench compare` report): Holm's step-down
    runs over every pair the family has seen, each at its own threshold.

    Judge everything once (decisions are provisional), `settle()`, then judge again: the
    second pass uses the family's levels. `judge_together` does both passes.
    """

    alpha: float = ALPHA
    _pairs: dict[Hashable, tuple[PairTest, float]] = field(default_factory=dict)
    _holm: dict[Hashable, tuple[bool, float, float]] | None = None

    @property
    def size(self) -> int:
        """How many testable pairs the family holds."""
        return sum(1 for test, _ in self._pairs.values() if test.testable)

    def judge(self, key: Hashable, a: Sequence[float] | np.ndarray,
              b: Sequence[float] | np.ndarray, direction: Direction,
              threshold: float = PRACTICAL_THRESHOLD, paired: bool = False,
              ceiling: float | None = None) -> PairDecision:
        """Judge A against B under `key` (what identifies the pair: cells and metric); values
        all at the metric's `ceiling` are not tested (AT_CEILING)."""
        if key not in self._pairs:
            if self._holm is not None:
                raise ValueError(f"pair {key!r} was not judged before the family settled")
            self._pairs[key] = (pair_test(a, b, paired, ceiling=ceiling), threshold)
        test, threshold = self._pairs[key]
        if not test.testable:
            return decide_family([test], direction, threshold, self.alpha)[0]
        rejected, level, adjusted = (self._holm or {}).get(
            key, (test.p_beyond(threshold) < self.alpha, self.alpha,
                  test.p_beyond(threshold)))
        return _decide_pair(test, direction, threshold, level, max(1, self.size), adjusted,
                            rejected, 1)

    def settle(self) -> None:
        """Run Holm's step-down over every testable pair of the family."""
        keys = [k for k, (test, _) in self._pairs.items() if test.testable]
        rejected, levels, adjusted = holm_levels(
            [self._pairs[k][0].p_beyond(self._pairs[k][1]) for k in keys], self.alpha)
        self._holm = {k: (r, level, p) for k, r, level, p
                      in zip(keys, rejected, levels, adjusted, strict=True)}


def judge_together(evaluate: Callable[[Family], T], family: Family | None = None) -> T:
    """Run `evaluate` once to gather the family's pairs, then again with Holm's levels
    (in a new Family unless one is given)."""
    family = Family() if family is None else family
    evaluate(family)
    family.settle()
    return evaluate(family)


def _decide_pair(test: PairTest, direction: Direction, threshold: float, level: float,
                 family_size: int, p_adjusted: float, rejected: bool,
                 look: int) -> PairDecision:
    low, high = test.interval(level)
    band = 1 + threshold
    if rejected:
        decision = _better_side(test.ratio, direction)
        reason = ""
    elif 1 / band <= low and high <= band:
        decision, reason = Outcome.NO_MEANINGFUL_DIFFERENCE, f"interval within {threshold:.0%}"
    else:
        decision = Outcome.UNDECIDED
        reason = (f"interval {low:.2f}-{high:.2f}x reaches across the {threshold:.0%} "
                  f"threshold: {counts([test.n_a, test.n_b], 'process')} cannot tell")
    return PairDecision(test, decision, threshold, level, family_size, p_adjusted, low, high,
                        look, reason, direction)


def _better_side(ratio: float, direction: Direction) -> Outcome:
    if direction is Direction.NEITHER:
        return Outcome.DIFFERENT
    a_better = (ratio > 1) is (direction is Direction.HIGHER)
    return Outcome.A_BETTER if a_better else Outcome.B_BETTER


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
