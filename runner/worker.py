"""The worker: one OS process measures one cell and writes its outcome as JSON.

Usage: python -m runner.worker SPEC.json OUTCOME.json
The parent has already set the environment (threads, backend, pinned flags); the worker
pins CPU affinity, imports only the framework module the cell needs, and runs it.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback
from pathlib import Path

from dlbench.atomic import atomic_write_bytes
from runner.experiments import framework_module_name
from runner.outcome import CellOutcome, failed
from runner.spec import CellSpec


def pin_affinity() -> None:
    """Restrict this process to the cores the parent chose for every framework alike."""
    cores = os.environ.get("DLBENCH_CPU_AFFINITY", "")
    if cores:
        os.sched_setaffinity(0, {int(c) for c in cores.split(",")})


def measure(spec: CellSpec) -> CellOutcome:
    """Run the cell's framework code; any exception becomes a failed outcome."""
    try:
        module = importlib.import_module(framework_module_name(spec))
        return module.run(spec)
    except Exception as error:  # noqa: BLE001 - a cell's fault must not crash the run
        traceback.print_exc()
        return failed(f"{type(error).__name__}: {error}".splitlines()[0][:500])


def main(argv: list[str]) -> int:
    spec_path, outcome_path = Path(argv[0]), Path(argv[1])
    spec = CellSpec.from_json(spec_path.read_text())
    pin_affinity()
    outcome = measure(spec)
    atomic_write_bytes(outcome_path, outcome.to_json().encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
