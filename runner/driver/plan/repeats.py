"""Repeats: how many independent worker processes measure a cell (the harness's policy,
one per suite). Inside a process there is one repeat; its timed samples are sub-samples
(dlbench.runner.worker.harness.sampling).

Processes per cell at the first look: quick 3 (a preview of a few cells that fits minutes on 2
cores, not to cite; worker k of a framework measures process k of its cells:
dlbench.runner.driver.plan.sharing), standard 3, machine 3, full 5. The suite's verdict design
(dlbench/core/judging/sequential.py) then tops up the cells of undecided pairs to 6 (standard),
5 (machine) or 10 (full) processes (runner/driver/commands/looks.py).
`--repeats N` sets N for every cell, in one look. Parity is measured by one process whatever
the suite: whether two frameworks compute the same function does not vary between processes.
A run is citable when its suite is standard or full and every cell has at least that
suite's number of processes; run.json records the policy and whether the run is citable.
"""

from __future__ import annotations

from dlbench.core.judging.sequential import SUITE_DESIGNS, Design, design_for, single_look
from dlbench.runner.driver.plan.sharing import suite_shares

#: Worker processes per cell at each suite's first look.
SUITE_PROCESSES: dict[str, int] = {suite: d.first for suite, d in SUITE_DESIGNS.items()}
#: Suites whose results may be cited (quick is a preview).
CITABLE_SUITES = ("standard", "machine", "full")
#: Experiments one process measures whatever the suite, and why.
SINGLE_PROCESS_EXPERIMENTS: dict[str, str] = {
    "parity": "agreement between frameworks does not vary between processes",
}


def process_count(suite: str, experiment: str, override: int | None = None) -> int:
    """How many independent worker processes measure a cell of `experiment` in `suite` at
    the first look: the run's design decides."""
    if experiment in SINGLE_PROCESS_EXPERIMENTS:
        return 1
    return run_design(suite, override).first


def run_design(suite: str, override: int | None = None, planned: bool = False) -> Design:
    """The verdict design a run follows (dlbench.core.judging.sequential.design_for), the one place
    a run's processes per cell are derived from `--repeats`; a device plan fixes its processes in
    one look."""
    design = design_for(suite, override)
    return single_look(design.first) if planned else design


def policy_record(suite: str, override: int | None = None, planned: bool = False) -> dict:
    """The process-count policy of a run, as run.json records it."""
    design = run_design(suite, override, planned)
    citable = suite in CITABLE_SUITES and design.first >= SUITE_PROCESSES[suite]
    return {"suite": suite, "processes_per_cell": design.first, "override": override is not None,
            "shared_processes": suite_shares(suite),
            "suite_processes": SUITE_PROCESSES[suite],
            "design": design.record(),
            "single_process_experiments": SINGLE_PROCESS_EXPERIMENTS,
            "citable": citable, "preview": not citable}
