"""The same cell across releases: each release's result IDs and values for one cell ID.

A result ID is scoped to its release (2026.12-0817); the cell ID (experiment:workload:
framework:variant:device) is what stays the same, so it joins the releases.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dlbench.core.storage.layout import release_dir, release_names
from dlbench.core.storage.releases import read_result_ids
from dlbench.core.judging.summaries import result_centres
from dlbench.core.storage.tables import read_table

HISTORY_COLUMNS = ["cell_id", "metric", "release", "result_id", "run_id", "n", "median",
                   "low", "high"]


def release_results(results_dir: Path, release: str) -> pd.DataFrame:
    """One release's results: ID, cell, metric and the median and range over processes, as
    every page summarises them (dlbench.core.judging.summaries.result_centres)."""
    root = release_dir(results_dir, release)
    ids = read_result_ids(root)
    stats = result_centres(read_table(root / "observations.parquet", "observations"))
    frame = ids.merge(stats.drop(columns="unit"), on=["run_id", "cell_id", "metric"],
                      how="left")
    return frame.assign(release=release)[HISTORY_COLUMNS]


def history(results_dir: Path, cell_id: str | None = None) -> pd.DataFrame:
    """Every release's results of `cell_id` (all cells when None), oldest release first."""
    frames = [release_results(results_dir, name) for name in release_names(results_dir)]
    if not frames:
        return pd.DataFrame(columns=HISTORY_COLUMNS)
    frame = pd.concat(frames, ignore_index=True)
    if cell_id is not None:
        frame = frame[frame["cell_id"] == cell_id]
    return frame.sort_values(["cell_id", "metric", "release"], kind="stable") \
        .reset_index(drop=True)
