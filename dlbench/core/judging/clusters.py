"""A cell whose processes split into two clusters: a slow state and a fast one, not one
spread around one value.

Slow processes cluster in time on these machines (2027.04's AMD EPYC run: Keras on
TensorFlow's ResNet-50 training took 16.9-17.6 s in its first three processes and 6.4-6.7 s
in its last two), so a cell's processes are not always draws from one distribution. Welch's
t assumes they are: on the first three it named a 2.41x winner that the cell's own later
processes overturned. A cell whose sorted values have a gap wider than SPLIT_FACTOR, with at
least a fifth of its processes (and two) on each side, is split; a pair with a split side is
not decided until the cause is known or more processes settle it, unless the decision holds for
each cluster alone: its interval, moved to where that cluster puts the ratio, stays on the same
side of the threshold (a 400x lead is a lead whichever state the machine was in). The lone
slow process among many is an outlier the test's spread already carries, not a cluster.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: A gap between two consecutive sorted process values wider than this splits a cell: the
#: same factor that calls a process slow against its cell's best.
SPLIT_FACTOR = 1.25
#: The smallest cluster that counts, as a share of the cell's processes (and at least two).
SMALLEST_CLUSTER_SHARE = 0.2


@dataclass(frozen=True)
class Split:
    """A cell's two clusters: how many processes each holds and the range of each."""

    low_count: int
    low_range: tuple[float, float]
    high_count: int
    high_range: tuple[float, float]
    #: each cluster's geometric mean over the whole cell's: where that cluster alone would
    #: put the cell (low below 1, high above)
    shifts: tuple[float, float] = (1.0, 1.0)

    @property
    def gap(self) -> float:
        """How many times the high cluster's least value is the low cluster's largest."""
        return self.high_range[0] / self.low_range[1]

    def words(self, side: str = "one side") -> str:
        """The split in words, naming the side of the pair it is on."""
        return (f"{side}'s processes split into two clusters ({self.low_count} at "
                f"{_range(self.low_range)}, {self.high_count} at {_range(self.high_range)}, "
                f"{self.gap:.2f}x apart): not decided until the cause is known or more "
                "processes settle it")


def smallest_cluster(processes: int) -> int:
    """The fewest processes a cluster of a cell with `processes` needs to count."""
    return max(2, math.ceil(SMALLEST_CLUSTER_SHARE * processes))


def split_of(values: Sequence[float] | np.ndarray) -> Split | None:
    """The cell's two clusters where its processes split at the widest gap; None when they
    do not (no gap wider than SPLIT_FACTOR, or a side smaller than smallest_cluster)."""
    ordered = np.sort(np.asarray(values, dtype=float))
    if ordered.size < 4 or np.any(ordered <= 0) or not np.all(np.isfinite(ordered)):
        return None
    ratios = ordered[1:] / ordered[:-1]
    cut = int(np.argmax(ratios)) + 1
    low, high = ordered[:cut], ordered[cut:]
    if ratios[cut - 1] <= SPLIT_FACTOR or min(low.size, high.size) < smallest_cluster(
            ordered.size):
        return None
    whole = float(np.mean(np.log(ordered)))
    shifts = (math.exp(float(np.mean(np.log(low))) - whole),
              math.exp(float(np.mean(np.log(high))) - whole))
    return Split(low.size, (float(low[0]), float(low[-1])), high.size,
                 (float(high[0]), float(high[-1])), shifts)


def _range(bounds: tuple[float, float]) -> str:
    low, high = bounds
    return f"{low:.3g}" if low == high else f"{low:.3g}-{high:.3g}"


def slow_share(values: Sequence[float] | np.ndarray, lower_is_better: bool = True) -> float:
    """The share of a cell's process values more than SPLIT_FACTOR slower than its best."""
    ordered = np.asarray(values, dtype=float)
    ordered = ordered[np.isfinite(ordered) & (ordered > 0)]
    if ordered.size == 0:
        return math.nan
    behind = ordered / ordered.min() if lower_is_better else ordered.max() / ordered
    return float(np.mean(behind > SPLIT_FACTOR))
