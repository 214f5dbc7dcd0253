"""Steal calibration: how much slower a timed process runs per bin of CPU steal, from a
release's own tables, and the limit on timed-window steal that data suggests
(dlbench.runner.driver.machine.load.MAX_TIMED_STEAL_SHARE: above it a process is measured again and, if it
stays busy, left out). Computation on committed data, not a measurement.

Each timed process's per-process value is compared with its cell's median (log ratio; for a
higher-is-better metric the sign is turned, so positive is always slower), then grouped by
the process's steal share: over the timed window where the table records it
(`timed_steal_share`), else over the whole process (`steal_share`). Releases before the timed
window was recorded have steal over the whole process only; the table says which it read.

Run: .venv/bin/python benchmarks/steal_calibration.py [--release 2027.02]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd

from dlbench.core.declarations.metrics import METRICS, Direction, is_timing_unit
from dlbench.core.judging.summaries import per_process
from dlbench.report.inputs.source import load_release, source_processes

ROOT = Path(__file__).resolve().parent.parent
#: Steal bins (share of all ticks): their lower edges.
STEAL_BINS = (0.0, 0.005, 0.01, 0.02, 0.03, 0.05)
#: A bin whose median process is slower than this (log scale) is too slow to keep: half the
#: 5% practical threshold.
TOLERATED_SLOWDOWN = math.log(1.025)


def steal_column(processes: pd.DataFrame) -> str:
    """The steal column to read: the timed window's where any process has it."""
    timed = "timed_steal_share"
    return timed if timed in processes and processes[timed].notna().any() else "steal_share"


def slowdowns(observations: pd.DataFrame, processes: pd.DataFrame) -> pd.DataFrame:
    """One row per timed process value: cell, metric, steal and log slowdown to its cell's
    median (positive: slower)."""
    timing = {name for name, m in METRICS.items() if is_timing_unit(m.unit)}
    rows = per_process(observations)
    rows = rows[rows["metric"].isin(timing)]
    column = steal_column(processes)
    steal = processes.drop_duplicates(["run_id", "cell_id", "repeat"], keep="last")[
        ["run_id", "cell_id", "repeat", column]].rename(columns={column: "steal"})
    rows = rows.merge(steal, on=["run_id", "cell_id", "repeat"], how="inner")
    rows = rows[(rows["value"] > 0) & rows["steal"].notna()]
    logs = np.log(rows["value"].to_numpy(float))
    medians = rows.assign(log=logs).groupby(["run_id", "cell_id", "metric"])["log"].transform(
        "median").to_numpy()
    sign = np.array([-1.0 if METRICS[m].direction is Direction.HIGHER else 1.0
                     for m in rows["metric"]])
    return rows.assign(slowdown=sign * (logs - medians))[
        ["run_id", "cell_id", "metric", "repeat", "steal", "slowdown"]]


def by_bin(found: pd.DataFrame) -> pd.DataFrame:
    """Per steal bin: processes, the median slowdown (as a ratio) and its share slower than
    1.25x."""
    edges = [*STEAL_BINS, math.inf]
    labels = [f"{low:.1%}-{high:.1%}" if high != math.inf else f">= {low:.1%}"
              for low, high in zip(edges, edges[1:], strict=False)]
    binned = found.assign(bin=pd.cut(found["steal"], edges, right=False, labels=labels))
    rows = []
    for label, group in binned.groupby("bin", observed=False, sort=True):
        slow = group["slowdown"]
        rows.append({"steal": str(label), "values": int(len(group)),
                     "median_ratio": math.exp(float(slow.median())) if len(group) else math.nan,
                     "share_over_1.25x": float((slow > math.log(1.25)).mean())
                     if len(group) else math.nan})
    return pd.DataFrame(rows)


def suggested_limit(found: pd.DataFrame) -> float | None:
    """The lower edge of the lowest bin with processes from which every bin's median process
    is slower than TOLERATED_SLOWDOWN: steal above it costs more than half the practical
    threshold."""
    edges = [*STEAL_BINS, math.inf]
    medians = []
    for low, high in zip(edges, edges[1:], strict=False):
        group = found[(found["steal"] >= low) & (found["steal"] < high)]
        medians.append(float(group["slowdown"].median()) if len(group) else math.nan)
    for index, low in enumerate(STEAL_BINS):
        later = [m for m in medians[index:] if not math.isnan(m)]
        if (not math.isnan(medians[index]) and later
                and all(m > TOLERATED_SLOWDOWN for m in later)):
            return low
    return None


def explained_share(found: pd.DataFrame) -> tuple[float, float]:
    """(slope per 1% of steal as a ratio, R^2) of a line through slowdown on steal: what an
    adjustment for steal would remove."""
    if len(found) < 3 or found["steal"].nunique() < 2:
        return math.nan, math.nan
    slope, intercept = np.polyfit(found["steal"], found["slowdown"], 1)
    fitted = intercept + slope * found["steal"]
    total = float(((found["slowdown"] - found["slowdown"].mean()) ** 2).sum())
    r2 = 1 - float(((found["slowdown"] - fitted) ** 2).sum()) / total if total else math.nan
    return math.exp(slope * 0.01), r2



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2027.02")
    args = parser.parse_args()
    source = load_release(ROOT / "results", args.release)
    processes = source_processes(source)
    if processes is None or not len(processes):
        raise SystemExit(f"release {args.release} has no processes table: nothing to calibrate")
    found = slowdowns(source.observations, processes)
    print(f"release {args.release}: {len(found)} timed process values, steal read from "
          f"{steal_column(processes)}")
    print(by_bin(found).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    slope, r2 = explained_share(found)
    print(f"a line through slowdown on steal: {slope:.3f}x per 1% of steal, R^2 {r2:.2f}")
    limit = suggested_limit(found)
    print("suggested limit: " + ("none (no bin is slower than 1.025x)" if limit is None
                                 else f"{limit:.1%} of steal"))


if __name__ == "__main__":
    main()
