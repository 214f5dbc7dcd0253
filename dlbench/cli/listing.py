"""`dlbench list`: what can be measured here."""

from __future__ import annotations

import argparse

from rich.console import Console
from rich.table import Table

from runner.experiments import SUITES, experiment_names, get_experiment
from runner.frameworks import FRAMEWORKS, missing_modules
from runner.workloads import LOCAL_DATA_WORKLOADS, WORKLOADS


def list_command(args: argparse.Namespace) -> int:
    """`dlbench list`: print what can be measured here."""
    print_listing(Console())
    return 0


def print_listing(console: Console) -> None:
    """Print experiments, workloads, frameworks (installed or not) and suites."""
    experiments = Table(title="experiments")
    experiments.add_column("name")
    experiments.add_column("question")
    for name in experiment_names():
        experiments.add_row(name, get_experiment(name).question)
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
    for table in (experiments, workloads, frameworks):
        console.print(table)
    console.print(f"suites: {', '.join(SUITES)}")
