"""The verdict rule's error rate and power, by simulation at a release's own spreads.

One simulated verdict draws each contender's processes on the log scale (normal, with that
contender's observed spread between processes), and applies what the runner and the engine
do: the leader (by geometric mean) against every other (Holm within the family, minimum-effect
tests at the practical threshold), the cells of undecided pairs topped up to the next look
after each look, then the final leader against each other contender on every process the
two cells hold, at the level of the look those processes reach (decide_sequential of
dlbench/core/judging/verdict_engine.py; its split-cell rule only withholds decisions, and draws from
one normal per contender never split).
Vectorised over replications, so a site build can afford it.

- False-winner rate: every contender equal; the share of verdicts that name a winner.
- Power at ratio r: the first contender r times better than every other; the share that
  name it by the first look, and by the last.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dlbench.core.judging.sequential import Design

#: Ratios at which the calibration table states power.
POWER_RATIOS = (1.1, 1.25, 1.5, 2.0)
#: Replications per simulated verdict in a site build (the benchmark runs more).
BUILD_REPLICATIONS = 1000


@dataclass(frozen=True)
class Simulated:
    """What share of simulated verdicts named a winner, and named the true one, per look."""

    winner_by_look: tuple[float, ...]  # any winner named, decided by look k (cumulative)
    true_winner_by_look: tuple[float, ...]  # contender 0 named, by look k

    @property
    def winner_rate(self) -> float:
        """Share of verdicts that name a winner at the end."""
        return self.winner_by_look[-1]

    @property
    def true_winner_rate(self) -> float:
        """Share that name contender 0 at the end."""
        return self.true_winner_by_look[-1]


def _masked_stats(x: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and sample variance of x[r, k, :counts[r, k]] (log values)."""
    mask = np.arange(x.shape[2])[None, None, :] < counts[:, :, None]
    n = counts.astype(float)
    mean = np.where(mask, x, 0).sum(axis=2) / n
    var = (np.where(mask, x - mean[:, :, None], 0) ** 2).sum(axis=2) / (n - 1)
    return mean, var


def _holm(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Rows of p (inf where a pair is not in the family): rejected, and each pair's level.
    dlbench.core.judging.decisions.holm_levels, vectorised over replications (a loop over rows made
    a site build minutes slower); tests/test_decisions.py checks both agree row by row."""
    m = np.isfinite(p).sum(axis=1, keepdims=True)
    order = np.argsort(p, axis=1)
    sorted_p = np.take_along_axis(p, order, axis=1)
    steps = np.arange(p.shape[1])[None, :]
    levels_sorted = alpha / np.maximum(m - steps, 1)
    passes = np.cumprod(sorted_p < levels_sorted, axis=1).astype(bool)
    first_fail = passes.sum(axis=1, keepdims=True)
    stop_level = np.take_along_axis(levels_sorted, np.minimum(first_fail, p.shape[1] - 1), 1)
    levels_sorted = np.where(steps < first_fail, levels_sorted, stop_level)
    rejected, levels = np.zeros_like(passes), np.zeros_like(levels_sorted)
    np.put_along_axis(rejected, order, passes & np.isfinite(sorted_p), axis=1)
    np.put_along_axis(levels, order, levels_sorted, axis=1)
    return rejected, levels


def _pair_calls(mean: np.ndarray, var: np.ndarray, counts: np.ndarray, best: np.ndarray,
                family: np.ndarray, threshold: float, alpha: float
                ) -> tuple[np.ndarray, np.ndarray]:
    """(best better, undecided) per (replication, contender) for the pairs in `family`."""
    from scipy.special import stdtr, stdtrit

    rows = np.arange(mean.shape[0])
    share = var / counts
    share_best = share[rows, best][:, None]
    diff = mean - mean[rows, best][:, None]  # > 0: the best is lower (better)
    error = np.sqrt(share + share_best)
    df = (share + share_best) ** 2 / (share ** 2 / (counts - 1)
                                      + share_best ** 2 / (counts[rows, best][:, None] - 1))
    margin = np.abs(diff) - math.log1p(threshold)
    p = np.where(family, np.minimum(1.0, 2 * stdtr(df, -margin / error)), np.inf)
    rejected, levels = _holm(p, alpha)
    half = stdtrit(df, 1 - levels / 2) * error
    inside = (np.abs(diff) + half) <= math.log1p(threshold)
    better = rejected & (diff > 0) & family
    undecided = family & ~rejected & ~inside
    return better, undecided


def simulate(log_sds: np.ndarray, log_shifts: np.ndarray, design: Design, threshold: float,
             replications: int, seed: int = 0) -> Simulated:
    """Simulate verdicts of contenders with these spreads and true log values (lower is
    better), each process ~ N(shift, sd) on the log scale."""
    if design.first < 2:
        raise ValueError(f"a design whose first look has {design.first} process has no "
                         "spread to test")
    rng = np.random.default_rng(seed)
    k, last = len(log_sds), design.last
    x = rng.normal(log_shifts[None, :, None], log_sds[None, :, None], (replications, k, last))
    rows = np.arange(replications)
    counts = np.full((replications, k), design.first)
    for look in range(len(design.looks) - 1):  # the runner's top-ups after each look
        mean, var = _masked_stats(x, counts)
        best = np.argmin(mean, axis=1)  # the leader by geometric mean
        others = np.arange(k)[None, :] != best[:, None]
        _, undecided = _pair_calls(mean, var, counts, best, others, threshold,
                                   design.alphas[look])
        topped = (undecided | (undecided.any(axis=1, keepdims=True)
                               & (np.arange(k)[None, :] == best[:, None])))
        counts = np.where(topped & (counts == design.looks[look]), design.looks[look + 1],
                          counts)
    mean, var = _masked_stats(x, counts)
    best = np.argmin(mean, axis=1)
    others = np.arange(k)[None, :] != best[:, None]
    held = np.maximum(counts, counts[rows, best][:, None])  # the processes a pair's cells hold
    decided_better = np.zeros((replications, k), dtype=bool)
    winner_by_look, true_by_look = [], []
    previous = 0
    for look, (limit, alpha) in enumerate(zip(design.looks, design.alphas, strict=True)):
        final = look == len(design.looks) - 1
        reached = others & (held > previous) & ((held <= limit) | final)
        better, _ = _pair_calls(mean, var, counts, best, reached, threshold, alpha)
        decided_better |= better
        named = (decided_better | ~others).all(axis=1)
        winner_by_look.append(float(named.mean()))
        true_by_look.append(float((named & (best == 0)).mean()))
        previous = limit
    return Simulated(tuple(winner_by_look), tuple(true_by_look))


def false_winner_rate(log_sds: np.ndarray, design: Design, threshold: float,
                      replications: int = BUILD_REPLICATIONS, seed: int = 0) -> float:
    """Share of verdicts that name a winner where every contender is equal."""
    return simulate(np.asarray(log_sds, float), np.zeros(len(log_sds)), design, threshold,
                    replications, seed).winner_rate


def power(log_sds: np.ndarray, ratio: float, design: Design, threshold: float,
          replications: int = BUILD_REPLICATIONS, seed: int = 0) -> tuple[float, ...]:
    """Share of verdicts that name contender 0, `ratio` times better than every other, by
    each look."""
    shifts = np.full(len(log_sds), math.log(ratio))
    shifts[0] = 0.0
    return simulate(np.asarray(log_sds, float), shifts, design, threshold, replications,
                    seed).true_winner_by_look
