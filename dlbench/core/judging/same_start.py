"""The parity answer to "do the frameworks compute the same model from the same start?".

Process k of every system starts from the same initial weights k and sees the same data in
the same order (dlbench.core.judging.seeds), so comparing their accuracy asks whether the frameworks
compute the same function, not whether one is more accurate: a parity result, stated as the
largest difference of one process index's values across systems, never a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SameStartParity:
    """The largest per-seed difference across systems, where it was, and on how many seeds."""

    largest: float
    process: int  # the process index (seed k) of the largest difference
    seeds: int  # process indices every system measured
    at_ceiling: bool  # every value of every system at the metric's maximum


def same_start_parity(samples: Mapping[str, tuple[np.ndarray, np.ndarray]],
                      ceiling: float | None = None) -> SameStartParity | None:
    """From each system's (process indices, values): the largest spread across systems of
    one process's values; None where fewer than two systems share a process."""
    if len(samples) < 2:
        return None
    by_system = [dict(zip(np.asarray(p, int).tolist(), np.asarray(v, float).tolist(),
                          strict=True)) for p, v in samples.values()]
    common = sorted(set.intersection(*(set(values) for values in by_system)))
    if not common:
        return None
    spreads = {k: max(v[k] for v in by_system) - min(v[k] for v in by_system) for k in common}
    worst = max(common, key=lambda k: (spreads[k], -k))
    at_ceiling = ceiling is not None and all(v[k] == ceiling for v in by_system for k in common)
    return SameStartParity(spreads[worst], worst, len(common), at_ceiling)


def parity_words(parity: SameStartParity | None) -> str:
    """The parity answer in words."""
    if parity is None:
        return "no seed measured by every system: no parity to state"
    words = (f"the same model from the same start, compared seed by seed (a parity result, "
             f"not a verdict): the largest difference across systems is {parity.largest:.4g} "
             f"(process {parity.process}, of {parity.seeds} seeds every system ran)")
    if parity.at_ceiling:
        words += ("; every process of every system scored the maximum: the task cannot tell "
                  "them apart")
    return words
