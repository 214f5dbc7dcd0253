"""Describing one cell's repeats: the median with a bootstrap interval and the spread.

Pure numpy. Every resampling is seeded, so the same values give the same numbers. Nothing
here decides a verdict: pairs are tested by the one rule of dlbench/core/judging/decisions.py
(Welch's t on log values, the ratio of geometric means).

Choices, stated once:
- Centre: the median of the repeats (robust to one slow repeat caused by the OS).
- Interval: a percentile bootstrap of the median (default 2000 resamples, 95%).
- Spread: the coefficient of variation of the repeats.
- The geometric mean: what leaders are ranked by (the verdict rule tests its ratio).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


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


def geometric_mean(values: Sequence[float] | np.ndarray) -> float:
    """The geometric mean of positive values, the centre the verdict rule's ratio compares
    (the arithmetic mean where one is not positive: such pairs are not tested anyway)."""
    array = np.asarray(values, dtype=float).ravel()
    array = array[~np.isnan(array)]
    if not array.size:
        return math.nan
    return float(np.exp(np.mean(np.log(array)))) if np.all(array > 0) else float(np.mean(array))
