"""Per-result summaries: the centre and spread of each (run, cell, metric)'s repeats.

Computed here once for every reader: `dlbench results show`, the site's tables and charts,
the history across releases. This module owns the per-process view of the observations too:
every page, verdict and command reads a process's values through `per_process` or
`repeat_values`, never by filtering the steps out itself.
Each result also says its resolution: the smallest ratio its processes can detect against an
equally noisy partner.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pandas as pd

from dlbench.core.judging.decisions import detectable_ratio
from dlbench.core.declarations.metrics import get_metric
from dlbench.core.judging.stats import geometric_mean, summarize

CENTRE_COLUMNS = ["run_id", "cell_id", "metric", "unit", "n", "median", "low", "high"]
STAT_COLUMNS = ["run_id", "cell_id", "metric", "unit", "n", "median", "ci_low", "ci_high",
                "low", "high", "cv", "detectable_ratio"]


def per_process(observations: pd.DataFrame) -> pd.DataFrame:
    """One row per process and metric (no step; a step row is a point of a process's curve),
    a value missing or not: what a result ID numbers."""
    return observations[observations["step"].isna()]


def repeat_values(observations: pd.DataFrame) -> pd.DataFrame:
    """Per-process rows that hold a value: the values results are computed from."""
    rows = per_process(observations)
    return rows[rows["value"].notna()]


def geometric_centres(rows: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """(run, cell, metric) -> the geometric mean of its processes' values (`rows`: one per
    process, as repeat_values gives them): the centre verdicts rank and compare."""
    return {(str(r), str(c), str(m)): geometric_mean(group["value"].to_numpy(float))
            for (r, c, m), group in rows.groupby(["run_id", "cell_id", "metric"])}


def detectable(values: np.ndarray) -> float:
    """The smallest ratio these processes detect against an equally noisy partner (80% power,
    5% level; dlbench.core.judging.decisions.detectable_ratio); nan for one process or values <=
    0."""
    if values.size < 2 or np.any(values <= 0):
        return math.nan
    return detectable_ratio(float(np.std(np.log(values), ddof=1)), int(values.size))


def _by_result(observations: pd.DataFrame) -> Iterator[tuple[dict, np.ndarray]]:
    """Each result's centre row (CENTRE_COLUMNS) and its per-process values."""
    for (run_id, cell_id, metric), group in repeat_values(observations).groupby(
            ["run_id", "cell_id", "metric"], sort=True):
        values = group["value"].to_numpy(dtype=float)
        yield {"run_id": run_id, "cell_id": cell_id, "metric": metric,
               "unit": get_metric(str(metric)).unit, "n": int(values.size),
               "median": float(np.median(values)), "low": float(values.min()),
               "high": float(values.max())}, values


def result_centres(observations: pd.DataFrame) -> pd.DataFrame:
    """One row per run, cell and per-repeat metric: n, median, min and max (result_stats
    without the interval, for readers that show no interval)."""
    return pd.DataFrame([row for row, _ in _by_result(observations)], columns=CENTRE_COLUMNS)


def result_stats(observations: pd.DataFrame) -> pd.DataFrame:
    """One row per run, cell and per-repeat metric: n, median, 95% CI, min, max and CV."""
    rows = []
    for row, values in _by_result(observations):
        stats = summarize(values)
        rows.append(row | {"ci_low": stats.ci_low, "ci_high": stats.ci_high, "cv": stats.cv,
                           "detectable_ratio": detectable(values)})
    return pd.DataFrame(rows, columns=STAT_COLUMNS)
