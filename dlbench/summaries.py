"""Per-result summaries: the centre and spread of each (run, cell, metric)'s repeats.

Computed here once for every reader: `dlbench results show`, the site's tables and charts.
"""

from __future__ import annotations

import pandas as pd

from dlbench.metrics import get_metric
from dlbench.stats import summarize

STAT_COLUMNS = ["run_id", "cell_id", "metric", "unit", "n", "median", "ci_low", "ci_high",
                "low", "high", "cv"]


def repeat_values(observations: pd.DataFrame) -> pd.DataFrame:
    """Per-repeat rows only (no step, a value): the values results are computed from."""
    return observations[observations["step"].isna() & observations["value"].notna()]


def result_stats(observations: pd.DataFrame) -> pd.DataFrame:
    """One row per run, cell and per-repeat metric: n, median, 95% CI, min, max and CV."""
    rows = []
    for (run_id, cell_id, metric), group in repeat_values(observations).groupby(
            ["run_id", "cell_id", "metric"], sort=True):
        values = group["value"].to_numpy(dtype=float)
        stats = summarize(values)
        rows.append({"run_id": run_id, "cell_id": cell_id, "metric": metric,
                     "unit": get_metric(str(metric)).unit, "n": stats.n,
                     "median": stats.median, "ci_low": stats.ci_low, "ci_high": stats.ci_high,
                     "low": float(values.min()), "high": float(values.max()), "cv": stats.cv})
    return pd.DataFrame(rows, columns=STAT_COLUMNS)
