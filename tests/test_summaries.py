"""The one per-process view and the one summary every reader takes its numbers from."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dlbench.core.judging.summaries import per_process, repeat_values, result_centres, result_stats


def observations() -> pd.DataFrame:
    """Cell a: three processes and one step row per process; cell b: one process whose value
    is missing."""
    rows = []
    for repeat, value in enumerate((2.0, 4.0, 3.0)):
        rows.append({"run_id": "r", "cell_id": "a", "repeat": repeat, "step": np.nan,
                     "metric": "steady_epoch_time", "value": value})
        rows.append({"run_id": "r", "cell_id": "a", "repeat": repeat, "step": 0.0,
                     "metric": "steady_epoch_time", "value": 100.0})
    rows.append({"run_id": "r", "cell_id": "b", "repeat": 0, "step": np.nan,
                 "metric": "steady_epoch_time", "value": np.nan})
    return pd.DataFrame(rows)


def test_the_per_process_view_drops_steps_and_values_need_a_value():
    rows = per_process(observations())
    assert rows["step"].isna().all() and len(rows) == 4  # b's missing value still numbered
    values = repeat_values(observations())
    assert list(values["cell_id"]) == ["a", "a", "a"] and 100.0 not in set(values["value"])


def test_centres_are_the_summary_without_its_interval():
    centres, stats = result_centres(observations()), result_stats(observations())
    assert centres.to_dict("records") == [{"run_id": "r", "cell_id": "a",
                                           "metric": "steady_epoch_time", "unit": "s", "n": 3,
                                           "median": 3.0, "low": 2.0, "high": 4.0}]
    shared = list(centres.columns)
    pd.testing.assert_frame_equal(stats[shared], centres)
    assert stats.loc[0, "ci_low"] <= 3.0 <= stats.loc[0, "ci_high"]
    assert not math.isnan(stats.loc[0, "cv"])
