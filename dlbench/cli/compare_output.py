"""`dlbench compare A B` on the console: the comparison (dlbench.compare) as rich tables."""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from dlbench.compare import Change, ComparisonReport, compare
from dlbench.errors import CompareError, UsageError
from dlbench.metrics import UnknownMetricError


_STYLES = {Change.FASTER: "green", Change.BETTER: "green", Change.SLOWER: "red",
           Change.WORSE: "red", Change.DIFFERENT: "yellow",
           Change.NO_SIGNIFICANT_DIFFERENCE: "dim"}


def _number(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.4g}"


def print_report(report: ComparisonReport, console: object | None = None,
                 significant_only: bool = False) -> None:
    """Print the comparison as rich tables: metric changes, cell changes, environment."""
    from rich.console import Console
    from rich.table import Table

    out = console if console is not None else Console()
    table = Table(title=f"{report.b} compared with {report.a} (ratio = B / A)")
    for column in ("cell", "metric", "A median", "B median", "ratio [95% CI]", "p", "change"):
        table.add_column(column, overflow="fold")
    shown = report.metrics[report.metrics["significant"].astype(bool)] if significant_only \
        else report.metrics
    for _, row in shown.iterrows():
        change = Change(row["change"])
        table.add_row(
            str(row["cell_id"]), f"{row['metric']} ({row['unit']})", _number(row["median_a"]),
            _number(row["median_b"]),
            f"{_number(row['ratio'])} [{_number(row['ratio_ci_low'])}, "
            f"{_number(row['ratio_ci_high'])}]",
            f"{row['p_value']:.2g}", f"[{_STYLES[change]}]{change.value}[/]",
        )
    if len(shown):
        out.print(table)
    else:
        out.print("no significant change" if len(report.metrics) else
                  f"no cell with per-repeat values is in both {report.a} and {report.b}")
    counts = ", ".join(f"{report.count(c)} {c.value}" for c in Change if report.count(c))
    out.print(f"{len(report.metrics)} comparisons: {counts or 'none'}")
    if len(report.metrics) >= 20:
        out.print(f"note: each test uses p < 0.05 without correction for multiple comparisons; "
                  f"even with no real change, about {0.05 * len(report.metrics):.0f} of "
                  f"{len(report.metrics)} may show as significant by chance")
    for label, cells in (("only in A", report.only_in_a), ("only in B", report.only_in_b)):
        if cells:
            out.print(f"cells {label}: {', '.join(cells)}")
    for _, row in report.status_changes.iterrows():
        out.print(f"status of {row['cell_id']}: {row['status_a']} → {row['status_b']}")
    environment = Table(title="environment differences")
    for column in ("key", "A", "B"):
        environment.add_column(column, overflow="fold")
    for _, row in report.environment.iterrows():
        environment.add_row(row["key"], row["a"], row["b"])
    if len(report.environment):
        out.print(environment)
    else:
        out.print("environment: no differences recorded")


def compare_command(args: argparse.Namespace) -> int:
    """`dlbench compare A B`: print what got faster or slower, and why it might have."""

    try:
        report = compare(args.a, args.b, Path(args.results_dir), args.metric or None)
    except (CompareError, UnknownMetricError) as error:
        raise UsageError(str(error)) from None
    print_report(report, significant_only=args.significant)
    return 0
