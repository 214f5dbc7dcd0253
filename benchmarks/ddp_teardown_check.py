"""PyTorch DDP teardown check: the quick suite's PyTorch data-parallel cell, measured N
times in a row as the runner measures it (each in a fresh worker process that spawns the
replicas), counting the processes that ended other than ok (an abort at gloo's teardown
shows as "process 0 terminated with signal SIGABRT").

A functional check, not a timing: fine beside other work.

Record. The abort ("terminate called without an active exception" at gloo's teardown, one
quick run in two in issue 40) came from a replica leaving while a peer still used or destroyed
the group; fixed at its cause by tearing the group down in step (pytorch.leave_group, commit
eb91e7a), not retried away: 20 of 20 runs ok after the fix (2026-12-05), and 20 of 20 again on
2026-12-07 17:58-18:15 UTC with load average 8-11 on the 2 cores (other sessions' tests
beside it, the harshest timing for a teardown race); the data-parallel cells of releases
2026.12 and 2027.01 all ended ok.
Run: .venv/bin/python benchmarks/ddp_teardown_check.py [--runs 20]
Prints one line per run and the count; exits 1 if any run did not end ok.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dlbench.core.storage.schema import CellStatus  # noqa: E402
from dlbench.runner.driver.plan.cells import plan_cells  # noqa: E402
from dlbench.runner.driver.plan.request import RunRequest  # noqa: E402
from dlbench.runner.driver.launch.execute import execute_cell  # noqa: E402


def ddp_cells() -> list:
    """The quick suite's PyTorch data-parallel cells on the CPU (one process each)."""
    request = RunRequest(suite="quick", experiments=["data-parallel"], workloads=[],
                         frameworks=["pytorch"], device="cpu", repeats=1, threads=None,
                         timeout_s=None, data_dir="")
    return plan_cells(request, "cpu")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    cells = ddp_cells()
    not_ok = 0
    for index in range(runs):
        for cell in cells:
            record = execute_cell(replace(cell, repeat_index=index))
            status = record.outcome.status
            not_ok += status is not CellStatus.OK
            reason = record.outcome.reason or ""
            print(f"run {index + 1}/{runs} {cell.cell_id}: {status.value} "
                  f"{record.wall_time_s:.1f} s {reason}".rstrip(), flush=True)
            if status is not CellStatus.OK:
                print(record.stderr_tail, flush=True)
    print(f"{runs * len(cells) - not_ok} of {runs * len(cells)} runs ok, {not_ok} not ok")
    return 1 if not_ok else 0


if __name__ == "__main__":
    sys.exit(main())
