"""Achieved FLOP/s per cell, and the bound each run's cells are divided by.

A cell's rate is its forward FLOPs per sample (x3 for a training step) times its median
samples per second. A run's bound for a precision is derived from its machine alone
(dlbench.core.machine.fma_peak): a fraction above 1 is shown as it is, a defect to investigate.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from dlbench.core.machine.fma_peak import WINOGRAD_WORDS, Bound, environment_bound
from dlbench.core.judging.summaries import per_process

#: Metrics that give a cell's samples per second, and whether the cell trains.
THROUGHPUT_METRICS = {"train_throughput": True, "inference_throughput": False,
                      "artifact_throughput": False}

#: Training FLOPs per forward FLOP (forward, and two products per layer backward).
TRAINING_FACTOR = 3

#: Workloads with 3x3 convolutions, for runs recorded before a cell's details said so.
CONVOLUTIONAL_WORKLOADS = ("cnn-digits", "cnn-synthetic", "cnn-cifar10", "resnet-synthetic",
                           "resnet-cifar10", "resnet50-synthetic")


@dataclass(frozen=True)
class CellRate:
    """One cell's achieved FLOP/s, the peak key it is compared with, and a note on its count."""

    flops_per_second: float
    peak_key: str  # fp32_flops | bf16_flops
    note: str  # why the rate may overstate the arithmetic done (Winograd), or ""
    device: str = "cpu"  # the device the cell ran on (a run's cells share one)


def details_of(text: object) -> dict:
    """A cell's details_json as a dict ({} where missing or unreadable)."""
    try:
        value = json.loads(str(text)) if text and not pd.isna(text) else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def samples_per_second(rows: pd.DataFrame, batch_size: float) -> tuple[float | None, bool]:
    """A cell's median samples per second over its processes, and whether it trains."""
    for metric, training in THROUGHPUT_METRICS.items():
        values = rows.loc[rows["metric"] == metric, "value"]
        if len(values):
            return float(values.median()), training
    steps = rows.loc[rows["metric"] == "steady_step_time", "value"]  # ms per training step
    if len(steps) and batch_size and float(steps.median()) > 0:
        return batch_size * 1000.0 / float(steps.median()), True
    return None, False


def peak_key(precision: object) -> str:
    """The environment's peak key a cell of this precision is compared with."""
    return "fp32_flops" if str(precision) in ("fp32", "", "nan", "None") else "bf16_flops"


def cell_rates(observations: pd.DataFrame, cells: pd.DataFrame) -> dict[tuple[str, str],
                                                                          CellRate]:
    """Achieved FLOP/s per (run_id, cell_id), where its FLOPs and throughput are recorded."""
    rows = per_process(observations)
    grouped = dict(iter(rows.groupby(["run_id", "cell_id"])))
    rates = {}
    for cell in cells.drop_duplicates(["run_id", "cell_id"]).itertuples():
        details = details_of(getattr(cell, "details_json", None))
        flops = details.get("flops_per_sample")
        cell_rows = grouped.get((cell.run_id, cell.cell_id))
        if not flops or cell_rows is None:
            continue
        rate, training = samples_per_second(cell_rows, float(cell.batch_size or 0))
        if not rate:
            continue
        convolutions = details.get("convolutions", str(cell.workload) in CONVOLUTIONAL_WORKLOADS)
        rates[(str(cell.run_id), str(cell.cell_id))] = CellRate(
            float(flops) * rate * (TRAINING_FACTOR if training else 1),
            peak_key(cell.precision), WINOGRAD_WORDS if convolutions else "",
            str(getattr(cell, "device", "cpu")))
    return rates


def run_bounds(rates: Mapping[tuple[str, str], CellRate],
               environments: Mapping[str, Mapping]) -> dict[tuple[str, str], Bound]:
    """The bound of each (run_id, peak key) its cells are compared with, where known."""
    bounds = {}
    for run_id, key, device in {(run_id, rate.peak_key, rate.device)
                                for (run_id, _), rate in rates.items()}:
        bound = environment_bound(environments.get(run_id) or {}, key, device)
        if bound:
            bounds[(run_id, key)] = bound
    return bounds


def cell_fractions(observations: pd.DataFrame, cells: pd.DataFrame,
                   environments: Mapping[str, Mapping]) -> dict[tuple[str, str], float]:
    """Achieved fraction of the run's bound per (run_id, cell_id), never clipped: above 1 is
    a defect (above_bound)."""
    rates = cell_rates(observations, cells)
    bounds = run_bounds(rates, environments)
    return {(run_id, cell_id): rate.flops_per_second / bounds[(run_id, rate.peak_key)].flops
            for (run_id, cell_id), rate in rates.items() if (run_id, rate.peak_key) in bounds}


def probe_fractions(environment: Mapping, device: str = "cpu"
                    ) -> dict[str, tuple[float, float]]:
    """Each recorded matmul probe's FLOP/s and fraction of its precision's bound on `device`
    (an older record's and a GPU's fp32_flops and bf16_flops are its probes)."""
    peak = environment.get("compute_peak") or {}
    probes = peak.get("probes") or ({} if peak.get("theoretical") else
                                    {key: peak.get(key) for key in ("fp32_flops", "bf16_flops")
                                     if device == "cuda" or key == "fp32_flops"})
    shares = {}
    for name, value in probes.items():
        key = next((k for k in ("fp32_flops", "bf16_flops") if name.endswith(k)), None)
        bound = environment_bound(environment, key, device) if key else None
        if bound and isinstance(value, (int, float)) and value:
            shares[name.removesuffix("_flops")] = (float(value), float(value) / bound.flops)
    return shares
