"""The noise floor from many A/A estimates (dlbench/core/judging/noise_floor.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from dlbench.core.judging.noise_floor import noise_floors, split_half, threshold_for


@dataclass(frozen=True)
class Twin:
    run_id: str
    experiment: str
    metric: str
    noise: float


def cell_rows(cell: str, values: list[float], metric: str = "latency_p50") -> pd.DataFrame:
    return pd.DataFrame({"run_id": "r1", "experiment": "inference", "metric": metric,
                         "cell_id": cell, "repeat": range(len(values)), "value": values})


def test_a_split_half_is_scaled_to_two_whole_cells():
    values = np.array([1.0, 2.0, 1.0, 2.0])  # even 1.0, odd 2.0: halves log(2) apart
    assert split_half(values, np.arange(4)) == pytest.approx(math.log(2) / math.sqrt(2))
    assert math.isnan(split_half(np.array([1.0, 2.0, 1.0]), np.arange(3)))  # too few
    assert math.isnan(split_half(np.array([1.0, 0.0, 1.0, 2.0]), np.arange(4)))


def test_the_floor_is_the_median_of_every_estimate_not_the_largest_draw():
    rows = pd.concat([cell_rows(f"c{i}", [1.0, 1.05] * 3) for i in range(5)])
    twins = [Twin("r1", "inference", "latency_p50", 0.29)]  # one twin came out 29% apart
    floors = noise_floors(twins, rows)
    expected = math.expm1(math.log(1.05) / math.sqrt(2))  # every cell's halves 1.05x apart
    assert floors[("r1", "inference", "latency_p50")] == pytest.approx(expected)
    assert threshold_for(floors, "r1", "inference", "latency_p50") == 0.05  # at least 5%
    alone = noise_floors(twins)
    assert alone[("r1", "inference", "latency_p50")] == pytest.approx(0.29)


def test_each_experiment_and_metric_has_its_own_floor():
    rows = pd.concat([cell_rows("a", [1.0, 1.5] * 3), cell_rows("b", [1.0, 1.01] * 3, "x")])
    floors = noise_floors([], rows)
    assert threshold_for(floors, "r1", "inference", "latency_p50") > 0.2
    assert threshold_for(floors, "r1", "inference", "x") == 0.05
    assert threshold_for(floors, "r2", "inference", "latency_p50") == 0.05
