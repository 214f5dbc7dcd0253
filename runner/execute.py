"""Run one cell in its own worker process, with a timeout, and turn whatever happens into a
CellRecord: a cell that raises, crashes or hangs becomes a failed record, never a lost run."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from dlbench.schema import CellStatus
from runner.cellenv import cell_environment
from runner.experiments import framework_code_path
from runner.frameworks import missing_modules
from runner.outcome import CellOutcome, failed, skipped
from runner.spec import CellSpec
from runner.store import CellRecord

PROJECT_ROOT = Path(__file__).resolve().parent.parent
STDERR_TAIL_CHARS = 2000


def code_of(spec: CellSpec) -> tuple[str, str, str]:
    """(relative path, text, sha256) of the framework code the cell runs."""
    relative = framework_code_path(spec)
    text = (PROJECT_ROOT / relative).read_text()
    return str(relative), text, hashlib.sha256(text.encode()).hexdigest()


def execute_cell(spec: CellSpec) -> CellRecord:
    """Measure `spec` in a fresh worker process (or record why it could not run)."""
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    relative, _, digest = code_of(spec)
    missing = missing_modules(spec.framework_id)
    begin = time.perf_counter()
    if missing:
        outcome, tail = skipped(f"not installed: {', '.join(missing)}"), ""
    else:
        outcome, tail = _run_worker(spec)
    return CellRecord(spec, outcome, started, round(time.perf_counter() - begin, 3), tail,
                      relative, digest)


def _run_worker(spec: CellSpec) -> tuple[CellOutcome, str]:
    with tempfile.TemporaryDirectory(prefix="dlbench-cell-") as scratch:
        spec_path, outcome_path = Path(scratch, "spec.json"), Path(scratch, "outcome.json")
        stderr_path = Path(scratch, "stderr.txt")
        spec_path.write_text(spec.to_json())
        command = [sys.executable, "-m", "runner.worker", str(spec_path), str(outcome_path)]
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=cell_environment(spec),
                                       stdout=stderr, stderr=subprocess.STDOUT,
                                       start_new_session=True)
            try:
                code = process.wait(timeout=spec.timeout_s)
            except subprocess.TimeoutExpired:
                _kill_group(process)
                return failed(f"timed out after {spec.timeout_s:g} s"), _tail(stderr_path)
            except BaseException:  # Ctrl-C: take the worker down with us, keep nothing partial
                _kill_group(process)
                raise
        tail = _tail(stderr_path)
        if outcome_path.exists():
            return CellOutcome.from_json(outcome_path.read_text()), tail
        return failed(_crash_reason(code)), tail


def _crash_reason(code: int) -> str:
    if code < 0:
        return f"worker process killed by signal {signal.Signals(-code).name}"
    return f"worker process exited with status {code} without reporting"


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def _tail(path: Path) -> str:
    data = path.read_bytes()[-STDERR_TAIL_CHARS:]
    return data.decode(errors="replace")


def status_counts(records: list[CellRecord]) -> dict[str, int]:
    """How many cells ended in each status."""
    return {status.value: sum(r.outcome.status is status for r in records)
            for status in CellStatus}
