"""The regime of a measurement: whether a timing measures per-call overhead or the machine's
arithmetic (at less than 10% of the machine's measured peak FLOP/s a measurement is
overhead-bound; at or above, compute-bound).

Verdicts are not decided here: every pair is judged by the one rule of
dlbench/core/judging/decisions.py.
"""

from __future__ import annotations

import enum
import math

#: At or above this fraction of the machine's measured peak FLOP/s a cell is compute-bound.
COMPUTE_BOUND_FRACTION = 0.10


class Regime(enum.Enum):
    """What a timing measures: per-call overhead, or the machine's arithmetic."""

    OVERHEAD_BOUND = "overhead-bound"
    COMPUTE_BOUND = "compute-bound"
    NOT_RECORDED = "regime not recorded"


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
