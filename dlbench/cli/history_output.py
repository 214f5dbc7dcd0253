"""`dlbench results history CELL_ID`: the same cell's result IDs and values, release by release."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dlbench.cli.terminal_text import terminal_text
from dlbench.core.text.errors import UsageError
from dlbench.core.storage.history import history
from dlbench.core.declarations.metrics import METRICS


def history_command(args: argparse.Namespace) -> int:
    """Print one row per release, run and metric of the cell: result ID, median, range,
    processes."""
    if not Path(args.results_dir).is_dir():
        raise UsageError(f"--results-dir {args.results_dir}: no such folder; pass the folder "
                         "that holds releases/ (default: results)")
    frame = history(Path(args.results_dir), args.cell_id)
    if frame.empty:
        raise UsageError(f"no release holds cell {args.cell_id!r}; cell IDs look like "
                         "training:mlp-digits:pytorch:fp32-default-b32:cpu")
    table = Table(title=terminal_text(f"cell {args.cell_id} across releases"))
    for column in ("metric", "release", "run", "result ID", "median", "min–max", "processes"):
        table.add_column(column, justify="right" if column in ("median", "processes")
                         else "left")
    for row in frame.itertuples(index=False):
        unit = METRICS[row.metric].unit if row.metric in METRICS else ""
        table.add_row(*map(terminal_text, (row.metric, row.release, row.run_id, row.result_id)),
                      f"{row.median:.4g} {unit}",
                      f"{row.low:.4g}–{row.high:.4g}", str(row.n))
    console = Console() if Console().is_terminal else Console(width=200)
    console.print(table)
    console.print("Each run was measured on its own machine (a release of several machines "
                  "has a row per run): compare ratios within a run, not absolute values "
                  "across runs.")
    return 0
