"""What `dlbench run` was asked, as a typed value the CLI builds from its flags.

runner/ never sees the command line: the CLI turns its parsed flags into a `RunArguments`,
and every default here is the flag's default, so a value built in code (a test, a script)
means what the same command line would. What to measure is its `request`, the one
RunRequest (dlbench.runner.driver.plan.request) that run.json records and the planner reads; the
other fields say how this invocation goes about it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from dlbench.runner.driver.plan.request import RunRequest


@dataclass(frozen=True)
class RunArguments:
    """The flags of `dlbench run`: what to measure (`request`: suite, selection, device,
    processes, threads, timeout, data; or a device plan file), which run to go on with
    (resume, remeasure) and how to measure (busy_retries to machine_kinds)."""

    request: RunRequest = field(default_factory=RunRequest)
    #: A device plan file (--plan) naming the cells instead of the selection above.
    plan_file: Path | None = None
    results_dir: Path = Path("results")
    progress: bool = True
    #: An earlier run to finish (--resume) ...
    resume: str | None = None
    #: ... or to measure `cells` of again (--remeasure), for `reason`.
    remeasure: str | None = None
    cells: tuple[str, ...] = ()
    reason: str = ""
    #: Re-runs of a process measured on a busy machine; None: the default count.
    busy_retries: int | None = None
    #: Seed of the interleaved process order; None: a random one, recorded.
    seed: int | None = None
    #: local or ray; None: local, or for --resume what the run was measured with.
    executor: str | None = None
    address: str | None = None
    machine_kinds: tuple[str, ...] = ()
    #: A user's model to measure (--model PATH.py:NAME or PATH.keras) in place of the suite's
    #: workloads, with its inputs (--input-shape/--input-dtype or --data) and batch.
    model: str = ""
    input_shape: str = ""
    input_dtype: str = "float32"
    data_file: str = ""
    batch_size: int | None = None
    #: Timed batch-1 calls and training steps per process of the model; None: the suite's.
    steps: int | None = None
