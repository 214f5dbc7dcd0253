"""Per-result summaries: median and spread of the repeats, with labels a reader needs."""

from __future__ import annotations

import math

import pandas as pd

from dlbench.metrics import get_metric
from dlbench.stats import summarize as summarize_values
from dlbench.schema import VARIANT_COLUMNS
from report.source import Source

SUMMARY_COLUMNS = [
    "result_id", "run_id", "cell_id", "experiment", "workload", "system", "framework",
    "backend", "variant", *VARIANT_COLUMNS, "device", "machine", "metric", "unit", "n",
    "median", "ci_low", "ci_high", "low", "high", "cv",
]


def system_name(framework: str, backend: str) -> str:
    """The name of a framework as the command line spells it, e.g. keras-torch."""
    return f"keras-{backend}" if framework == "keras" else framework


def variant_label(row: pd.Series) -> str:
    """The variant columns that are set, as one short label (e.g. 'fp32 · default · b64')."""
    parts = [str(row["precision"]), str(row["mode"]), f"batch {row['batch_size']}"]
    if int(row["workers"]) != 1:
        parts.append(f"{row['workers']} workers")
    if isinstance(row["export_format"], str) and row["export_format"]:
        parts.append(str(row["export_format"]))
    return " · ".join(parts)


def _find(value: object, names: tuple[str, ...]) -> str:
    """The first non-empty string stored under one of `names`, searching nested dicts."""
    if isinstance(value, dict):
        for name in names:
            found = value.get(name)
            if isinstance(found, str) and found:
                return found
        for child in value.values():
            found = _find(child, names)
            if found:
                return found
    if isinstance(value, list):
        for child in value:
            found = _find(child, names)
            if found:
                return found
    return ""


def machine_label(environment: dict, device: str) -> str:
    """The hardware a device of a run is, e.g. 'cpu: AMD EPYC 7B13 (2 cores)'."""
    if device == "cuda":
        gpu = environment.get("gpu") or environment.get("gpus") or {}
        name = _find(gpu, ("name", "model")) or "unknown GPU"
        return f"cuda: {name}"
    cpu = environment.get("cpu") or environment
    name = _find(cpu, ("model", "cpu_model", "brand_raw", "processor")) or "unknown CPU"
    cores = _find_number(cpu, ("logical_cores", "cores", "cpu_count"))
    return f"cpu: {name}" + (f" ({cores} cores)" if cores else "")


def _find_number(value: object, names: tuple[str, ...]) -> int | None:
    if isinstance(value, dict):
        for name in names:
            found = value.get(name)
            if isinstance(found, int) and not isinstance(found, bool):
                return found
    return None


def _stats(scalar: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (run_id, cell_id, metric), group in scalar.groupby(["run_id", "cell_id", "metric"],
                                                           sort=True):
        values = group["value"].to_numpy()
        stats = summarize_values(values)
        rows.append({"run_id": run_id, "cell_id": cell_id, "metric": metric, "n": stats.n,
                     "median": stats.median, "ci_low": stats.ci_low, "ci_high": stats.ci_high,
                     "low": float(values.min()), "high": float(values.max()), "cv": stats.cv})
    return pd.DataFrame(rows, columns=["run_id", "cell_id", "metric", "n", "median", "ci_low",
                                       "ci_high", "low", "high", "cv"])


def summarize(source: Source) -> pd.DataFrame:
    """One row per result (run × cell × scalar metric): median, 95% CI, min–max, n and CV."""
    obs = source.observations
    scalar = obs[obs["step"].isna() & obs["value"].notna()]
    stats = _stats(scalar)
    cells = source.cells.drop_duplicates(["run_id", "cell_id"])
    keys = ["run_id", "cell_id", "metric"]
    frame = stats.merge(cells, on=["run_id", "cell_id"], how="left")
    frame = frame.merge(source.result_ids, on=keys, how="left")
    frame["system"] = [system_name(f, b) for f, b in zip(frame["framework"], frame["backend"],
                                                        strict=True)]
    frame["variant"] = [variant_label(row) for _, row in frame.iterrows()]
    frame["unit"] = [get_metric(m).unit for m in frame["metric"]]
    frame["machine"] = [
        machine_label(source.run(r).environment, d)
        for r, d in zip(frame["run_id"], frame["device"], strict=True)
    ]
    frame = frame[SUMMARY_COLUMNS].sort_values("result_id", kind="stable")
    return frame.reset_index(drop=True)


def format_number(value: float) -> str:
    """Three significant digits, thousands grouped: 0.0123, 4.56, 1,234."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude == 0:
        return "0"
    decimals = max(0, 2 - int(math.floor(math.log10(magnitude))))
    return f"{value:.{decimals}f}"

