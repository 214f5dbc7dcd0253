"""The noise floor of an experiment's metric: how far apart one configuration measured twice
typically comes out, from many estimates rather than one draw.

Estimates, per run, experiment and metric:
- each A/A control pair (one configuration planned as two cells): |log| of the ratio of its
  cells' geometric means;
- each cell with at least MIN_SPLIT_PROCESSES processes, split into its even and odd process
  indices (interleaved, so both halves span the run): a pseudo A/A, |log| of the halves'
  ratio, scaled by sqrt((2/n) / (1/n_even + 1/n_odd)) to the spread of a ratio of two whole
  cells of n processes (the twins' scale).

The floor is the NOISE_QUANTILE quantile of those estimates (the typical A/A difference; the
chance of a false winner is the test's to control, and benchmarks/verdict_calibration.py
checks it), and a family's practical threshold is the floor where it exceeds 5%.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Protocol

import numpy as np
import pandas as pd

from dlbench.core.judging.decisions import PRACTICAL_THRESHOLD

#: The quantile of the A/A estimates that is the noise floor: the median, the difference a
#: repeat of one configuration typically shows (the estimator least moved by one odd cell).
NOISE_QUANTILE = 0.5
#: A cell needs this many processes to be split into two halves of two or more.
MIN_SPLIT_PROCESSES = 4

FloorKey = tuple[str, str, str]  # (run, experiment, metric)


class AAPair(Protocol):
    """What the floor reads of an A/A control (dlbench.core.judging.verdict_engine.Control)."""

    run_id: str
    experiment: str
    metric: str

    @property
    def noise(self) -> float: ...


def split_half(values: np.ndarray, processes: np.ndarray) -> float:
    """One cell's pseudo A/A estimate on the log scale, at the scale of two whole cells;
    nan where the cell has too few positive values to split."""
    keep = ~np.isnan(values)
    values, processes = values[keep], processes[keep]
    if values.size < MIN_SPLIT_PROCESSES or np.any(values <= 0):
        return math.nan
    logs, even = np.log(values), processes % 2 == 0
    n_even, n_odd = int(even.sum()), int((~even).sum())
    if min(n_even, n_odd) < 2:
        return math.nan
    scale = math.sqrt((2 / values.size) / (1 / n_even + 1 / n_odd))
    return abs(float(np.mean(logs[even]) - np.mean(logs[~even]))) * scale


def estimates(controls: Iterable[AAPair], rows: pd.DataFrame | None
              ) -> dict[FloorKey, list[float]]:
    """Every A/A estimate (log scale) by run, experiment and metric."""
    found: dict[FloorKey, list[float]] = {}
    for control in controls:
        if not math.isnan(control.noise):
            key = (control.run_id, control.experiment, control.metric)
            found.setdefault(key, []).append(math.log1p(control.noise))
    if rows is None or not len(rows):
        return found
    for (run_id, experiment, metric, _), cell in rows.groupby(
            ["run_id", "experiment", "metric", "cell_id"], sort=True):
        processes = (cell["repeat"].to_numpy(int) if "repeat" in cell
                     and cell["repeat"].notna().all() else np.arange(len(cell)))
        estimate = split_half(cell["value"].to_numpy(float), processes)
        if not math.isnan(estimate):
            found.setdefault((str(run_id), str(experiment), str(metric)), []).append(estimate)
    return found


def noise_floors(controls: Iterable[AAPair], rows: pd.DataFrame | None = None,
                 quantile: float = NOISE_QUANTILE) -> dict[FloorKey, float]:
    """(run, experiment, metric) -> its noise floor (0.12 means 1.12x): the `quantile` of the
    A/A twins' and the split-half estimates there."""
    return {key: math.expm1(float(np.quantile(values, quantile)))
            for key, values in estimates(controls, rows).items() if values}


def threshold_for(floors: dict[FloorKey, float], run_id: str, experiment: str,
                  metric: str) -> float:
    """The practical threshold of a family: 5%, or the noise floor where it is larger."""
    return max(PRACTICAL_THRESHOLD, floors.get((run_id, experiment, metric), 0.0))
