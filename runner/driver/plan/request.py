"""The one request of a run, from the command line to the planner.

The CLI builds a `RunRequest` once from `dlbench run`'s flags (dlbench/cli/run_flags.py);
run.json records it as it is (--resume and --remeasure read it back), and the planner reads
it: `plan_cells` resolves its device and threads, and each experiment's plan makes its
cells with `cell`, which gives each cell the processes its suite or `repeats` (--repeats)
decides. The count keeps the flag's name, `repeats`, as the cells table's column does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from dlbench.core.judging.sequential import Design
from dlbench.runner.cell.spec import CellSpec, FrameworkId
from dlbench.runner.cell import frameworks
from dlbench.runner.driver.plan.repeats import policy_record, process_count, run_design


@dataclass(frozen=True)
class RunRequest:
    """What `dlbench run` was asked to measure: the selection (empty: the suite's), the
    device ('auto' until planned), the processes per cell (`repeats`; None: the suite's),
    the threads (None: every core this process may use), the timeout (None: each
    experiment's own) and the data folder; or a device plan's steps (runner/driver/plan/device.py),
    each with its own suite, selection and processes per cell."""

    suite: str = "quick"
    experiments: list[str] = field(default_factory=list)
    workloads: list[str] = field(default_factory=list)
    frameworks: list[str] = field(default_factory=list)  # system names; 'keras': each backend
    device: str = "auto"
    repeats: int | None = None
    threads: int | None = None
    timeout_s: float | None = None
    data_dir: str = ""
    plan: list[dict] = field(default_factory=list)

    def steps(self) -> list[RunRequest]:
        """Each plan step as a request of its own (threads, timeout, data and device shared)."""
        return [replace(self, plan=[], suite=step["suite"], experiments=step["experiments"],
                        workloads=step["workloads"], frameworks=step["frameworks"],
                        repeats=step["repeats"]) for step in self.plan]

    def resolved(self, device: str) -> RunRequest:
        """This request on `device` (a concrete one: auto resolved) with its threads counted:
        every core this process may use where --threads names none."""
        return replace(self, device=device, threads=self.thread_count)

    @property
    def thread_count(self) -> int:
        """--threads, else every core this process may use."""
        return self.threads or len(os.sched_getaffinity(0))

    @property
    def systems(self) -> list[FrameworkId]:
        """The systems the request names, in declaration order (none named: all)."""
        return frameworks.select(self.frameworks)

    def design(self) -> Design:
        """The verdict design the run follows (a device plan: one look)."""
        return run_design(self.suite, self.repeats, bool(self.plan))

    def policy(self) -> dict:
        """The process-count policy run.json records."""
        return policy_record(self.suite, self.repeats, bool(self.plan))

    def cell(self, experiment: str, workload: str, framework: FrameworkId, *,
             timeout_s: float, device: str = "", **variant: Any) -> CellSpec:
        """A cell of this (resolved) request: the settings every experiment shares, the
        processes its suite gives `experiment` or `repeats` names (process_count decides),
        and the user's timeout, else the experiment's own `timeout_s`. `device` overrides
        the request's (export measures its artifacts on the CPU)."""
        return CellSpec(experiment=experiment, workload=workload, framework=framework.framework,
                        backend=framework.backend, device=device or self.device,
                        repeats=process_count(self.suite, experiment, self.repeats),
                        threads=self.thread_count,
                        timeout_s=self.timeout_s or timeout_s, data_dir=self.data_dir,
                        **variant)
