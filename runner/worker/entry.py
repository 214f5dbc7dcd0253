"""The worker: one OS process measures one cell (or, in the quick suite, several cells of
one framework: dlbench.runner.driver.plan.sharing) and writes each outcome as JSON.

Usage: python -m dlbench.runner.worker.entry SPEC.json OUTCOME.json [SPEC.json OUTCOME.json ...]
The parent has already set the environment (threads, backend, pinned flags); the worker
pins CPU affinity, imports only the framework module each cell needs, and runs the cells in
the order given, writing each outcome as soon as its cell ends.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import replace
from pathlib import Path

from dlbench.core.storage.atomic import atomic_write_bytes
from dlbench.runner.cell.outcome import CellOutcome, SharedProcess, failed, skipped, utc_timestamp
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.experiments import framework_code
from dlbench.runner.worker.harness import CellSkipped
from dlbench.runner.worker.harness.code_record import imported_project_files


def pin_affinity() -> None:
    """Restrict this process to the cores the parent chose for every framework alike."""
    cores = os.environ.get("DLBENCH_CPU_AFFINITY", "")
    if cores:
        os.sched_setaffinity(0, {int(c) for c in cores.split(",")})


def measure(spec: CellSpec) -> CellOutcome:
    """Run the cell's framework code (one repeat: spec.repeat_index); a skip becomes a
    skipped outcome, any other exception a failed one. The outcome carries the code record:
    {project-relative path: sha256} of every project file this process imported."""
    try:
        outcome = framework_code(spec).run(spec)
    except CellSkipped as skip:
        outcome = skipped(str(skip))
    except Exception as error:  # noqa: BLE001 - a cell's fault must not crash the run
        traceback.print_exc()
        outcome = failed(f"{type(error).__name__}: {error}".splitlines()[0][:500])
    return replace(outcome, code_files=imported_project_files())


def shared_process(position: int, cells: int, started_at: str, wall_s: float) -> SharedProcess:
    """This process as the cell at `position` of `cells` sharing it saw it, ending now."""
    return SharedProcess(pid=os.getpid(), position=position, cells=cells,
                         started_at=started_at, ended_at=utc_timestamp(),
                         wall_time_s=round(wall_s, 3))


def main(argv: list[str]) -> int:
    if not argv or len(argv) % 2:
        raise SystemExit("usage: python -m dlbench.runner.worker.entry SPEC.json OUTCOME.json "
                         "[SPEC.json OUTCOME.json ...]")
    pairs = [(Path(a), Path(b)) for a, b in zip(argv[0::2], argv[1::2], strict=True)]
    pin_affinity()
    for position, (spec_path, outcome_path) in enumerate(pairs):
        spec = CellSpec.from_json(spec_path.read_text())
        started_at = utc_timestamp()
        begin = time.perf_counter()
        outcome = measure(spec)
        if len(pairs) > 1:
            outcome = replace(outcome, shared_process=shared_process(
                position, len(pairs), started_at, time.perf_counter() - begin))
        atomic_write_bytes(outcome_path, outcome.to_json().encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
