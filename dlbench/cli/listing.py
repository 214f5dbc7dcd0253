"""`dlbench list`: what can be measured here."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from dlbench.core.declarations.experiments import EXPERIMENTS
from dlbench.runner.driver.plan.experiments import SUITES
from dlbench.runner.cell.frameworks import FRAMEWORKS, missing_modules
from dlbench.runner.workloads.catalog import LOCAL_DATA_WORKLOADS, WORKLOADS, workload_sizes


def list_command(args: argparse.Namespace) -> int:
    """`dlbench list`: print what can be measured here."""
    print_listing(Console())
    return 0


def print_listing(console: Console) -> None:
    """Print experiments, workloads, frameworks (installed or not) and suites."""
    experiments = Table(title="experiments")
    experiments.add_column("name")
    experiments.add_column("question")
    for experiment in EXPERIMENTS:
        experiments.add_row(experiment.name, experiment.question)
    workloads = Table(title="workloads")
    workloads.add_column("name")
    workloads.add_column("description")
    for workload in WORKLOADS.values():
        note = " (needs --data-dir)" if workload.name in LOCAL_DATA_WORKLOADS else ""
        workloads.add_row(workload.name, workload.description + note)
    frameworks = Table(title="frameworks")
    frameworks.add_column("name")
    frameworks.add_column("installed")
    for framework in FRAMEWORKS:
        missing = missing_modules(framework)
        frameworks.add_row(framework.name, "no: missing " + ", ".join(missing) if missing else "yes")
    for table in (experiments, workloads, workload_table(), frameworks):
        console.print(table)
    console.print(f"suites: {', '.join(SUITES)}")


def workload_table() -> Table:
    """Each workload's size profiles: model, batch, parameters, forward FLOPs per sample."""
    table = Table(title="workload sizes: cpu, or gpu on CUDA; forward FLOPs per sample")
    for column in ("workload", "size", "model", "batch", "parameters", "FLOPs/sample"):
        table.add_column(column, no_wrap=True, justify="right" if column in (
            "batch", "parameters", "FLOPs/sample") else "left")
    for workload in WORKLOADS.values():
        sizes = workload_sizes(workload.name)
        table.add_row(workload.name, *("\n".join(values) for values in (
            [s.profile for s in sizes], [s.model for s in sizes],
            [str(s.batch_size) for s in sizes], [f"{s.parameters:,}" for s in sizes],
            [_si(s.flops_per_sample) for s in sizes])))
    return table


def _si(value: float) -> str:
    """A count with an SI prefix: 81.6M, 8.18G."""
    for prefix, scale in (("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{prefix}"
    return f"{value:.3g}"
