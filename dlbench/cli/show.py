"""`dlbench results show RUN_ID`: a readable summary of one run (median and spread per cell)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from dlbench.errors import UsageError
from dlbench.metrics import get_metric
from dlbench.parity import pair_results
from dlbench.stats import summarize
from dlbench.tables import ResultsFileError, read_json, read_table


def load_run_tables(run_dir: Path) -> tuple[dict, pd.DataFrame, pd.DataFrame]:
    """run.json, the cells table and the observations table of one run."""
    info = read_json(run_dir / "run.json")
    cells = read_table(run_dir / "cells.parquet", "cells")
    observations = read_table(run_dir / "observations.parquet", "observations")
    return info, cells, observations


def cell_summaries(observations: pd.DataFrame) -> pd.DataFrame:
    """Per cell and per-repeat metric: n, median, 95% CI and CV of the repeats."""
    per_repeat = observations[observations["step"].isna()]
    rows = []
    for (cell_id, metric), group in per_repeat.groupby(["cell_id", "metric"], sort=True):
        summary = summarize(group["value"].to_numpy(dtype=float))
        rows.append({"cell_id": cell_id, "metric": metric, "unit": get_metric(metric).unit,
                     "n": summary.n, "median": summary.median, "ci_low": summary.ci_low,
                     "ci_high": summary.ci_high, "cv": summary.cv})
    return pd.DataFrame(rows)


def show_command(args: argparse.Namespace) -> int:
    run_dir = Path(args.results_dir) / "runs" / args.run_id
    if not (run_dir / "run.json").exists():
        known = sorted(p.name for p in (Path(args.results_dir) / "runs").glob("*")
                       if (p / "run.json").exists())
        raise UsageError(f"no run {args.run_id!r}; runs: {', '.join(known) or 'none'}")
    try:
        info, cells, observations = load_run_tables(run_dir)
    except ResultsFileError as error:
        raise UsageError(str(error)) from None
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    console.print(f"run {info['run_id']} · suite {info['request']['suite']} · device "
                  f"{info['device']} · status {info.get('status', '?')}")
    console.print(status_table(cells))
    console.print(summary_table(cell_summaries(observations)))
    pairs = pair_results(cells)
    if len(pairs):
        console.print(parity_table(pairs))
    return 0


def parity_table(pairs: pd.DataFrame) -> Table:
    """Do two frameworks compute the same function? One row per pair and workload."""
    table = Table(title="parity: same weights, same function? (max relative difference)")
    for column in ("workload", "pair", "forward", "after one step", "tolerance", "pass"):
        table.add_column(column)
    for row in pairs.itertuples():
        table.add_row(row.workload, f"{row.framework_a} vs {row.framework_b}",
                      f"{row.forward_max_rel:.2g}", f"{row.step_max_rel:.2g}",
                      f"{row.tolerance:.0e}", "yes" if row.passed else "NO")
    return table


def status_table(cells: pd.DataFrame) -> Table:
    table = Table(title="cells not ok")
    for column in ("cell_id", "status", "reason"):
        table.add_column(column)
    for row in cells[cells["status"] != "ok"].itertuples():
        table.add_row(row.cell_id, row.status, str(row.reason)[:120])
    return table


def summary_table(summaries: pd.DataFrame) -> Table:
    table = Table(title="median [95% CI] over repeats, CV")
    for column in ("cell", "metric", "n", "median [95% CI]", "CV"):
        table.add_column(column, justify="right" if column in ("n", "CV") else "left")
    previous = None
    for row in summaries.itertuples():
        shown = "" if row.cell_id == previous else row.cell_id
        previous = row.cell_id
        table.add_row(shown, f"{row.metric} ({row.unit})", str(row.n),
                      f"{row.median:.4g} [{row.ci_low:.4g}, {row.ci_high:.4g}]",
                      "-" if pd.isna(row.cv) else f"{row.cv:.1%}")
    return table
