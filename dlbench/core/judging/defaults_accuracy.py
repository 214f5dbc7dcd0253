"""The answer to "does the framework you use change accuracy?": each system trained with its
own defaults, seed by seed, on one fixed test set (the defaults-accuracy experiment).

Process k of every system ran seed k with its framework's own initialisers, optimiser
constants, normalisation settings and shuffling, and scored its final accuracy on the same
test set of n samples. Two sources of error separate a difference seen here from the
difference a reader would see: the seeds (another k gives another model) and the test set
(another n samples of the same task give another score; the test set is the same for every
seed, so its error does not shrink as seeds are added).

The rule, for the leader L (the highest mean accuracy) against every other system B, over
the seeds both measured (K of them, at least 2):

- d_k = acc_L[k] - acc_B[k] (paired by seed); D = mean(d_k).
- Its variance is the seeds' s_d^2 / K plus the test set's p_L(1 - p_L)/n + p_B(1 - p_B)/n
  (p the mean accuracies): the binomial error of each score on n samples, added as if the two
  systems erred on the test samples independently. Their errors are positively correlated
  (both miss the hard samples), which makes the true variance smaller: the interval is
  conservative, never too narrow.
- The interval is D +- t(K - 1, 1 - alpha / (2m)) * sqrt(variance), with m the number of
  pairs (the leader against each other system: Bonferroni over the family), alpha 0.05.
- The pair: the leader better when the interval lies wholly above the practical threshold
  (THRESHOLD, in accuracy points); no meaningful difference when it lies wholly within
  +-THRESHOLD; otherwise undecided (more seeds or a larger test set could tell).

The answer: a winner when the leader is better than every other system; no meaningful
difference when no pair is undecided and the leader beats not all of them (the systems it
does not beat are its equals); undecided when any pair is, or when a system measured fewer
than two seeds in common with the leader (never a winner over a system it was not compared
with); "the task cannot tell them apart" when every process of every system scored 1.0
(nothing is tested); insufficient data with fewer than two systems sharing two seeds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from dlbench.core.judging.outcomes import Outcome

#: The smallest difference in accuracy called meaningful: 2 points (0.02). A test set of
#: 20000 samples at about 0.8 accuracy alone gives each difference a standard error of
#: 0.004, so a tighter threshold could never be shown to hold.
THRESHOLD = 0.02
#: The family's two-sided significance level (Bonferroni over the leader's pairs).
ALPHA = 0.05
#: The largest accuracy: values all there say the task cannot tell the systems apart.
CEILING = 1.0


@dataclass(frozen=True)
class SystemAccuracy:
    """One system's seeds: how many, and their mean accuracy."""

    system: str
    seeds: int
    mean: float


@dataclass(frozen=True)
class AccuracyPair:
    """The leader against one other system: the mean paired difference, its interval and the
    two parts of its standard error."""

    other: str
    seeds: int  # seeds both measured
    difference: float  # leader minus other, in accuracy (0.01 = 1 point)
    low: float
    high: float
    seed_error: float  # the seeds' part of the standard error
    test_error: float  # the test set's part (binomial, n samples)
    outcome: Outcome


@dataclass(frozen=True)
class DefaultsAccuracy:
    """The answer for one group: the outcome, the leader, every system's mean and each pair."""

    outcome: Outcome
    leader: str
    systems: tuple[SystemAccuracy, ...]  # leader first, then by mean accuracy
    pairs: tuple[AccuracyPair, ...]
    test_samples: int
    threshold: float
    confidence: float  # each pair's interval coverage, e.g. 0.9875 for 4 pairs
    reason: str = ""


def _by_seed(processes: np.ndarray, values: np.ndarray) -> dict[int, float]:
    """{process index: value}, the first value of a repeated index, NaN dropped."""
    found: dict[int, float] = {}
    for process, value in zip(np.asarray(processes, int).tolist(),
                              np.asarray(values, float).tolist(), strict=True):
        if not math.isnan(value):
            found.setdefault(int(process), float(value))
    return found


def pair_interval(leader: Mapping[int, float], other: Mapping[int, float], test_samples: int,
                  level: float) -> tuple[float, float, float, float, float, int]:
    """(D, low, high, seed error, test error, seeds) of the leader against `other` at the
    two-sided `level` (the module's rule)."""
    from scipy.special import stdtrit  # not at the top: workers import dlbench.core

    seeds = sorted(set(leader) & set(other))
    lead = np.array([leader[k] for k in seeds])
    rest = np.array([other[k] for k in seeds])
    differences = lead - rest
    difference = float(differences.mean())
    seed_error = float(differences.std(ddof=1) / math.sqrt(len(seeds)))
    p_lead, p_rest = float(lead.mean()), float(rest.mean())
    test_error = math.sqrt((p_lead * (1 - p_lead) + p_rest * (1 - p_rest)) / test_samples)
    half = float(stdtrit(len(seeds) - 1, 1 - level / 2)) * math.hypot(seed_error, test_error)
    return difference, difference - half, difference + half, seed_error, test_error, len(seeds)


def _pair_outcome(low: float, high: float, threshold: float) -> Outcome:
    if low > threshold:
        return Outcome.LEADER_BETTER
    if -threshold <= low and high <= threshold:
        return Outcome.NO_MEANINGFUL_DIFFERENCE
    return Outcome.UNDECIDED


def judge_defaults_accuracy(samples: Mapping[str, tuple[np.ndarray, np.ndarray]],
                            test_samples: int, threshold: float = THRESHOLD,
                            alpha: float = ALPHA, chance: float = 0.0) -> DefaultsAccuracy:
    """The answer from each system's (process indices, final accuracies) on one test set of
    `test_samples` samples, by the module's rule; `chance` is the accuracy of guessing (one
    over the classes): a leader within the threshold of it learned nothing, and systems that
    all learned nothing decide nothing about the frameworks."""
    if test_samples < 1:
        raise ValueError(f"test_samples must be at least 1, got {test_samples}")
    measured = {system: _by_seed(*pair) for system, pair in samples.items()}
    seeds = {system: values for system, values in measured.items() if len(values) >= 2}
    ranked = sorted((SystemAccuracy(s, len(v), float(np.mean(list(v.values()))))
                     for s, v in seeds.items()), key=lambda a: (-a.mean, a.system))
    others = [a for a in ranked[1:] if len(set(seeds[ranked[0].system]) & set(seeds[a.system]))
              >= 2]
    unpaired = sorted(set(measured) - {a.system for a in [*ranked[:1], *others]})
    base = dict(leader=ranked[0].system if ranked else "", systems=tuple(ranked),
                test_samples=test_samples, threshold=threshold)
    if not others:
        return DefaultsAccuracy(Outcome.INSUFFICIENT_DATA, pairs=(), confidence=math.nan,
                                reason="fewer than two systems measured two common seeds",
                                **base)
    level = alpha / len(others)
    if all(v == CEILING for values in seeds.values() for v in values.values()):
        return DefaultsAccuracy(Outcome.AT_CEILING, pairs=(), confidence=1 - level,
                                reason="every process of every system scored the maximum: "
                                       "the task cannot tell them apart", **base)
    if ranked[0].mean <= chance + threshold:
        return DefaultsAccuracy(Outcome.AT_CHANCE, pairs=(), confidence=1 - level,
                                reason=f"the most accurate system scored {ranked[0].mean:.3f}, "
                                       f"within {threshold:.2f} of guessing ({chance:.3f}): a "
                                       f"model at chance decides nothing", **base)
    pairs = []
    for other in others:
        difference, low, high, seed_error, test_error, common = pair_interval(
            seeds[ranked[0].system], seeds[other.system], test_samples, level)
        pairs.append(AccuracyPair(other.system, common, difference, low, high, seed_error,
                                  test_error, _pair_outcome(low, high, threshold)))
    if unpaired:  # never a winner or a tie over a system it was not compared with
        return DefaultsAccuracy(Outcome.UNDECIDED, pairs=tuple(pairs),
                                confidence=1 - level, reason=f"{', '.join(unpaired)}: fewer "
                                f"than two seeds in common with the leader", **base)
    return DefaultsAccuracy(_answer_outcome(pairs), pairs=tuple(pairs), confidence=1 - level,
                            **base)


def _answer_outcome(pairs: list[AccuracyPair]) -> Outcome:
    outcomes = {pair.outcome for pair in pairs}
    if Outcome.UNDECIDED in outcomes:
        return Outcome.UNDECIDED
    if outcomes == {Outcome.LEADER_BETTER}:
        return Outcome.WINNER
    return Outcome.NO_MEANINGFUL_DIFFERENCE


def equals_of_leader(answer: DefaultsAccuracy) -> tuple[str, ...]:
    """The leader and every system it is not shown better than."""
    beaten = {p.other for p in answer.pairs if p.outcome is Outcome.LEADER_BETTER}
    return tuple(a.system for a in answer.systems if a.system not in beaten)
