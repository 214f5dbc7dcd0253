"""`dlbench results show RUN_ID|latest`: a readable summary of one run (median and spread)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
from rich.console import Console
from rich.table import Table

from dlbench.cli.terminal_text import terminal_text
from dlbench.core.storage.layout import find_run, load_run, resolve_run_id
from dlbench.core.judging.parity import pair_results
from dlbench.core.judging.summaries import result_stats


def show_command(args: argparse.Namespace) -> int:
    """`dlbench results show RUN_ID|latest`: what failed, and each result's median and spread."""
    results_dir = Path(args.results_dir)
    run = load_run(find_run(results_dir, resolve_run_id(results_dir, args.run_id)))
    cells, observations = run.tables()
    console = Console()
    if not console.is_terminal:
        console = Console(width=200)
    suite = run.info.get("request", {}).get("suite") or run.info.get("suite", "?")
    console.print(terminal_text(f"run {run.run_id} · suite {suite} · device "
                                f"{run.info.get('device', '?')} · status "
                                f"{run.info.get('status', '?')}"))
    console.print(status_table(cells))
    console.print(summary_table(result_stats(observations)))
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
        table.add_row(terminal_text(row.workload),
                      terminal_text(f"{row.framework_a} vs {row.framework_b}"),
                      f"{row.forward_max_rel:.2g}", f"{row.step_max_rel:.2g}",
                      f"{row.tolerance:.0e}", "yes" if row.passed else "NO")
    return table


def status_table(cells: pd.DataFrame) -> Table:
    """The cells that did not finish ok, with why."""
    table = Table(title="cells not ok")
    for column in ("cell_id", "status", "reason"):
        table.add_column(column)
    for row in cells[cells["status"] != "ok"].itertuples():
        table.add_row(terminal_text(row.cell_id), terminal_text(row.status),
                      terminal_text(str(row.reason)[:120]))
    return table


def summary_table(summaries: pd.DataFrame) -> Table:
    """Median [95% CI] and CV of every result, one cell's rows together."""
    table = Table(title="median [95% CI] over repeats, CV")
    for column in ("cell", "metric", "n", "median [95% CI]", "CV"):
        table.add_column(column, justify="right" if column in ("n", "CV") else "left")
    previous = None
    for row in summaries.itertuples():
        shown = "" if row.cell_id == previous else row.cell_id
        previous = row.cell_id
        table.add_row(terminal_text(shown), terminal_text(f"{row.metric} ({row.unit})"),
                      str(row.n),
                      f"{row.median:.4g} [{row.ci_low:.4g}, {row.ci_high:.4g}]",
                      "-" if pd.isna(row.cv) else f"{row.cv:.1%}")
    return table
