"""The steal calibration (benchmarks/steal_calibration.py): slowdown per bin of steal, the
suggested limit, and what a line through it explains."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from benchmarks.steal_calibration import (by_bin, explained_share, slowdowns, steal_column,
                                          suggested_limit)


def tables(steal_slow: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Two cells of 10 processes: processes 8 and 9 of each ran at 1.5% steal, `steal_slow`
    times slower; the rest at 0.1%, within 1% of each other."""
    observations, processes = [], []
    for cell in ("a", "b"):
        for repeat in range(10):
            busy = repeat >= 8
            value = (steal_slow if busy else 1.0) * (1 + 0.001 * repeat)
            observations.append({"run_id": "r", "cell_id": cell, "repeat": repeat,
                                 "step": np.nan, "metric": "steady_epoch_time", "value": value})
            processes.append({"run_id": "r", "cell_id": cell, "repeat": repeat,
                              "steal_share": 0.015 if busy else 0.001,
                              "timed_steal_share": np.nan, "busy": ""})
    return pd.DataFrame(observations), pd.DataFrame(processes)


def test_a_bin_of_slow_processes_sets_the_limit():
    observations, processes = tables(1.3)
    found = slowdowns(observations, processes)
    assert steal_column(processes) == "steal_share"  # no timed window recorded
    assert len(found) == 20
    bins = by_bin(found).set_index("steal")
    assert bins.loc["1.0%-2.0%", "values"] == 4
    assert bins.loc["1.0%-2.0%", "median_ratio"] == pytest.approx(1.3, rel=0.01)
    assert bins.loc["1.0%-2.0%", "share_over_1.25x"] == 1.0
    assert suggested_limit(found) == 0.01
    slope, r2 = explained_share(found)
    assert slope > 1 and r2 > 0.9


def test_steal_that_costs_nothing_suggests_no_limit():
    observations, processes = tables(1.0)
    found = slowdowns(observations, processes)
    assert suggested_limit(found) is None
    assert by_bin(found).set_index("steal").loc["1.0%-2.0%", "median_ratio"] < 1.025


def test_the_timed_window_is_read_where_recorded():
    _, processes = tables(1.0)
    processes["timed_steal_share"] = 0.0
    assert steal_column(processes) == "timed_steal_share"
    assert math.isnan(explained_share(slowdowns(*tables(1.0))[:2])[0])
