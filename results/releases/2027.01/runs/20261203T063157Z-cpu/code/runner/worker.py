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
from dataclasses import replace
from pathlib import Path

from dlbench.atomic import atomic_write_bytes
from runner.experiments import framework_module_name
from runner.harness import CellSkipped
from runner.harness.code_record import imported_project_files
from runner.outcome import CellOutcome, failed, skipped
from runner.spec import CellSpec


def pin_affinity() -> None:
    """Restrict this process to the cores the parent chose for every framework alike."""
    cores = os.environ.get("DLBENCH_CPU_AFFINITY", "")
    if cores:
        os.sched_setaffinity(0, {int(c) for c in cores.split(",")})


def measure(spec: CellSpec) -> CellOutcome:
    """Run the cell's framework code (one repeat: spec.repeat_index); a skip becomes a
    skipped outcome, any other exception a failed one. The outcome's details carry the
    code record: {"code_files": {project-relative path: sha256}} of every project file
    this process imported."""
    try:
        module = importlib.import_module(framework_module_name(spec))
        outcome = module.run(spec)
    except CellSkipped as skip:
        outcome = skipped(str(skip))
    except Exception as error:  # noqa: BLE001 - a cell's fault must not crash the run
        traceback.print_exc()
        outcome = failed(f"{type(error).__name__}: {error}".splitlines()[0][:500])
    return replace(outcome, details=outcome.details | {"code_files": imported_project_files()})


def main(argv: list[str]) -> int:
    spec_path, outcome_path = Path(argv[0]), Path(argv[1])
    spec = CellSpec.from_json(spec_path.read_text())
    pin_affinity()
    outcome = measure(spec)
    atomic_write_bytes(outcome_path, outcome.to_json().encode())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
