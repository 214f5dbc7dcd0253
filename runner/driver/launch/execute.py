"""Run one process of a cell in its own worker process, with a timeout, and turn whatever
happens into a CellRecord: a process that raises, crashes or hangs becomes a failed record,
never a lost run. The machine is read before and after (dlbench.runner.driver.machine.load),
and the worker (dlbench.runner.worker.entry) is started so that it dies with its parent (PR_SET_PDEATHSIG on Linux).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from dlbench.runner import PROJECT_ROOT
from dlbench.runner.cell.environment import cell_environment
from dlbench.runner.cell.frameworks import missing_modules
from dlbench.runner.cell.outcome import CellOutcome, failed, skipped, unsupported, utc_timestamp
from dlbench.runner.cell.spec import NOT_MEASURED, UNSUPPORTED, CellSpec
from dlbench.runner.driver.machine.fresh_memory import fresh_memory_rate
from dlbench.runner.driver.machine.load import assess, read_load, with_timed_steal
from dlbench.runner.driver.plan.experiments import framework_code_path
from dlbench.runner.driver.launch.scratch import scratch_folder
from dlbench.runner.driver.launch.stop import raise_if_stop_requested
from dlbench.runner.driver.store.run_store import CellRecord

STDERR_TAIL_CHARS = 2000
#: How often a waiting runner checks whether a stop was requested, in seconds.
STOP_POLL_S = 0.2


def code_of(spec: CellSpec) -> tuple[str, str, str]:
    """(relative path, text, sha256) of the framework code the cell runs."""
    relative = framework_code_path(spec)
    text = (PROJECT_ROOT / relative).read_text()
    return str(relative), text, hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Launch:
    """How a worker is started beyond the cell's own environment: what
    benchmarks/process_noise.py varies one suspect at a time (the runner uses the default)."""

    prefix: tuple[str, ...] = ()  # a command the worker runs under, e.g. setarch -R
    environment: Callable[[dict[str, str]], dict[str, str]] | None = None
    thp_disabled: bool = False  # prctl(PR_SET_THP_DISABLE) before the worker starts


DEFAULT_LAUNCH = Launch()


def execute_cell(spec: CellSpec, launch: Launch = DEFAULT_LAUNCH) -> CellRecord:
    """Measure process `spec.repeat_index` of `spec` in a fresh worker process (or record why
    it could not run), with the machine's readings before and after."""
    return execute_cells([spec], launch)[0]


def execute_cells(specs: list[CellSpec], launch: Launch = DEFAULT_LAUNCH) -> list[CellRecord]:
    """Measure `specs` (cells of one framework that may share a process: dlbench.runner.driver.plan.sharing) in
    one worker process, one record each (none is started for a cell planned as not
    measured on this device or as unsupported by its framework); the machine's readings before and after the process
    are every record's. A cell the process did not report on (it crashed or timed out
    before) is a failed record."""
    first = specs[0]
    missing = missing_modules(first.framework_id)
    gpu = first.device == "cuda"
    fresh_memory = fresh_memory_rate() if not (missing or first.params.get(UNSUPPORTED)
                                               or first.params.get(NOT_MEASURED)) else None
    before = read_load(gpu)
    started, begin = utc_timestamp(), time.perf_counter()
    if missing:
        results = [(skipped(f"not installed: {', '.join(missing)}"), "")] * len(specs)
    elif first.params.get(UNSUPPORTED):
        results = [(unsupported(str(first.params[UNSUPPORTED])), "")] * len(specs)
    elif first.params.get(NOT_MEASURED):
        results = [(skipped(str(first.params[NOT_MEASURED])), "")] * len(specs)
    else:
        results = _run_worker(specs, launch)
    wall, ended = round(time.perf_counter() - begin, 3), utc_timestamp()
    machine = assess(before, read_load(gpu), first.threads) | {
        "fresh_memory_gibs": fresh_memory}
    records = []
    for spec, (outcome, tail) in zip(specs, results, strict=True):
        relative, _, digest = code_of(spec)
        if not outcome.code_files:  # no worker reported: the code it would have run
            outcome = replace(outcome, code_files={relative: digest})
        shared = outcome.shared_process  # a shared process's cell has its own slice of time
        records.append(CellRecord(
            spec, outcome, shared.started_at if shared else started,
            shared.wall_time_s if shared else wall, tail, relative, digest,
            ended_at=shared.ended_at if shared else ended,
            machine=with_timed_steal(machine, outcome.details)))
    return records


_PR_SET_PDEATHSIG = 1
_PR_SET_THP_DISABLE = 41


def _die_with_parent(parent_pid: int, thp_disabled: bool = False) -> Callable[[], None] | None:
    """A preexec_fn: the worker gets SIGKILL the moment the runner dies, however it dies
    (and, when asked, no transparent huge pages)."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)  # resolved here, not in the forked child
    prctl = libc.prctl

    def set_death_signal() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if thp_disabled:
            prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0)
        if os.getppid() != parent_pid:  # the runner died before prctl took effect
            os._exit(1)

    return set_death_signal


def _run_worker(specs: list[CellSpec], launch: Launch = DEFAULT_LAUNCH
                ) -> list[tuple[CellOutcome, str]]:
    """Each spec's outcome and the worker's output tail; the process gets the sum of the
    cells' timeouts."""
    with scratch_folder() as scratch:
        paths = [(Path(scratch, f"spec-{i}.json"), Path(scratch, f"outcome-{i}.json"))
                 for i in range(len(specs))]
        for spec, (spec_path, _) in zip(specs, paths, strict=True):
            spec_path.write_text(spec.worker_json())
        stderr_path = Path(scratch, "stderr.txt")
        # -P: the worker imports dlbench as this process does (its install, PYTHONPATH),
        # never from the folder it starts in
        command = [*launch.prefix, sys.executable, "-P", "-m", "dlbench.runner.worker.entry",
                   *(str(path) for pair in paths for path in pair)]
        environment = cell_environment(specs[0])
        if launch.environment is not None:
            environment = launch.environment(environment)
        timeout_s = sum(spec.timeout_s for spec in specs)
        with stderr_path.open("wb") as stderr:
            process = subprocess.Popen(command, cwd=PROJECT_ROOT, env=environment,
                                       stdout=stderr, stderr=subprocess.STDOUT,
                                       start_new_session=True,
                                       preexec_fn=_die_with_parent(os.getpid(),
                                                                   launch.thp_disabled))
            try:
                ended = _crash_reason(_wait_for(process, timeout_s))
            except subprocess.TimeoutExpired:
                ended = f"timed out after {timeout_s:g} s"
            finally:  # Ctrl-C, a timeout, or an end that left children (a forward that
                kill_group(process)  # forked): the worker's whole group ends with it
        tail = _tail(stderr_path)
        return [(CellOutcome.from_json(outcome_path.read_text()) if outcome_path.exists()
                 else failed(ended), tail) for _, outcome_path in paths]


def _wait_for(process: subprocess.Popen, timeout_s: float) -> int:
    """The worker's exit code; TimeoutExpired after `timeout_s`. Checks for a stop request
    every fraction of a second, so that a Ctrl-C whose exception was swallowed still stops."""
    deadline = time.monotonic() + timeout_s
    while True:
        raise_if_stop_requested()
        remaining = deadline - time.monotonic()
        try:
            return process.wait(timeout=max(0.0, min(remaining, STOP_POLL_S)))
        except subprocess.TimeoutExpired:
            if remaining <= STOP_POLL_S:
                raise


def _crash_reason(code: int) -> str:
    if code < 0:
        return f"worker process killed by signal {signal.Signals(-code).name}"
    return f"worker process exited with status {code} without reporting"


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL to the worker's session (its own process group, start_new_session) and
    every process left in it; then reap the worker."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # none left in the group
        pass
    process.wait()


def _tail(path: Path) -> str:
    data = path.read_bytes()[-STDERR_TAIL_CHARS:]
    return data.decode(errors="replace")

