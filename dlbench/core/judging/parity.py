"""Parity between pairs of frameworks, from the parity cells' stored outputs.

Each parity cell keeps (in the cells table's `details_json`) its logits on fixed inputs, a
fixed sample of the weight changes made by one optimizer step, whether it matched the
float64 reference, and the tolerance. Two frameworks compute the same function when both
matched the reference and their stored logits and weight changes agree within tolerance.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd

from dlbench.core.declarations.systems import systems_of

PAIR_COLUMNS = ["run_id", "workload", "device", "framework_a", "framework_b",
                "forward_max_abs", "forward_max_rel", "step_max_abs", "step_max_rel",
                "tolerance", "passed"]


def _max_diff(a: list[float], b: list[float]) -> tuple[float, float]:
    """(max |a - b|, that divided by the largest |value| of a and b)."""
    left, right = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if left.shape != right.shape:
        raise ValueError(f"parity arrays differ in shape: {left.shape} vs {right.shape}")
    diff = float(np.max(np.abs(left - right))) if left.size else 0.0
    scale = float(max(np.max(np.abs(left)), np.max(np.abs(right)))) if left.size else 0.0
    return diff, diff / scale if scale else diff


def _pair_row(keys: tuple, a: pd.Series, b: pd.Series) -> dict:
    da, db = a["details"], b["details"]
    forward_abs, forward_rel = _max_diff(da["logits"], db["logits"])
    step_abs, step_rel = _max_diff(da["updates"], db["updates"])
    tolerance = float(max(da["tolerance"], db["tolerance"]))
    passed = (bool(da["reference_pass"]) and bool(db["reference_pass"])
              and forward_rel <= tolerance and step_rel <= tolerance)
    run_id, workload, device = keys
    return {"run_id": run_id, "workload": workload, "device": device,
            "framework_a": a["system"], "framework_b": b["system"],
            "forward_max_abs": forward_abs, "forward_max_rel": forward_rel,
            "step_max_abs": step_abs, "step_max_rel": step_rel,
            "tolerance": tolerance, "passed": passed}


def pair_results(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per (run, workload, device, framework pair) of the finished parity cells."""
    parity = cells[(cells["experiment"] == "parity") & (cells["status"] == "ok")].copy()
    if parity.empty:
        return pd.DataFrame(columns=PAIR_COLUMNS)
    parity["details"] = [json.loads(text) if text else {} for text in parity["details_json"]]
    parity = parity[[bool(d.get("logits")) for d in parity["details"]]]
    parity["system"] = systems_of(parity)
    rows = []
    for keys, group in parity.groupby(["run_id", "workload", "device"], sort=True):
        ordered = group.sort_values("system")
        for (_, a), (_, b) in itertools.combinations(ordered.iterrows(), 2):
            rows.append(_pair_row(keys, a, b))
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)
