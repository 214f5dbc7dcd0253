"""Faults: a cell that raises or hangs is recorded as failed; an interrupted run resumes
without losing or repeating a finished cell."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dlbench.core.storage.schema import CellStatus
from dlbench.core.storage.tables import ResultsFileError, read_table
from dlbench.runner.driver.launch.execute import execute_cell
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import RunStore

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent


def torch_cell(**overrides) -> CellSpec:
    values = dict(experiment="training", workload="mlp-digits", framework="pytorch",
                  backend="", device="cpu", batch_size=32, repeats=1, threads=1,
                  params={"epochs": 2})
    return CellSpec(**(values | overrides))


def test_a_hanging_cell_times_out_as_failed():
    record = execute_cell(torch_cell(timeout_s=0.5))
    assert record.outcome.status is CellStatus.FAILED
    assert record.outcome.reason == "timed out after 0.5 s"


def test_a_raising_cell_is_failed_with_its_error_and_stderr(tmp_path):
    (tmp_path / "mnist.npz").write_bytes(b"not an npz")
    record = execute_cell(torch_cell(workload="mlp-mnist", data_dir=str(tmp_path)))
    assert record.outcome.status is CellStatus.FAILED
    assert record.outcome.reason.startswith("DatasetError:")
    assert "Traceback" in record.stderr_tail


def test_rebuilding_tables_never_overwrites_a_corrupt_table(tmp_path):
    store = RunStore(tmp_path / "run")
    (store.root).mkdir()
    (store.root / "cells.parquet").write_bytes(b"garbage")
    with pytest.raises(ResultsFileError):
        store.rebuild_tables()
    assert (store.root / "cells.parquet").read_bytes() == b"garbage"


def start_run(results: Path, *extra: str) -> subprocess.Popen:
    command = [sys.executable, "-m", "dlbench.cli", "run", "--experiment", "training",
               "--workload", "mlp-digits", "--repeats", "1", "--no-progress",
               "--busy-retries", "0",
               "--results-dir", str(results), *extra]
    return subprocess.Popen(command, cwd=ROOT, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_for(condition, timeout=240.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.2)


def test_killed_mid_cell_then_resumed_loses_and_repeats_nothing(tmp_path):
    frameworks = ["--framework", "pytorch", "--framework", "keras-jax", "--framework", "tensorflow"]
    process = start_run(tmp_path, *frameworks)
    runs = tmp_path / "runs"
    wait_for(lambda: len(list(runs.glob("*/processes/*.json"))) == 1)
    time.sleep(1.0)  # the second cell's worker is now importing/running
    os.killpg(process.pid, signal.SIGKILL)  # the harshest interruption: no cleanup at all
    process.communicate()
    (run_dir,) = runs.iterdir()
    first = json.loads(next((run_dir / "processes").glob("*.json")).read_text())
    assert len(list((run_dir / "processes").glob("*.json"))) == 1

    resumed = subprocess.run([sys.executable, "-m", "dlbench.cli", "run", "--resume",
                              run_dir.name, "--no-progress", "--busy-retries", "0",
                              "--results-dir", str(tmp_path)],
                             cwd=ROOT, capture_output=True, text=True, timeout=400)
    assert resumed.returncode == 0, resumed.stderr
    cells = read_table(run_dir / "cells.parquet", "cells")
    assert sorted(cells["framework"]) == ["keras", "pytorch", "tensorflow"]
    assert cells["cell_id"].is_unique
    kept = cells[cells["cell_id"] == CellSpec(**first["spec"]).cell_id]  # the order is random
    assert kept["started_at"].item() == first["started_at"]  # not re-measured
    assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_keeps_finished_cells_and_marks_the_run_interrupted(tmp_path, stop_signal):
    process = start_run(tmp_path, "--framework", "pytorch", "--framework", "keras-jax")
    runs = tmp_path / "runs"
    wait_for(lambda: len(list(runs.glob("*/processes/*.json"))) == 1)
    os.kill(process.pid, stop_signal)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr.decode(errors="replace")[-2000:]
    assert b"--resume" in stderr
    (run_dir,) = runs.iterdir()
    assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    assert len(read_table(run_dir / "cells.parquet", "cells")) == 1


SWALLOWED_STOP = """
import os, signal, sys, time
from dlbench.runner.driver.launch.stop import raise_if_stop_requested, stop_on_signals
stop_on_signals()
class Finalized:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(0.2)  # the handler runs here, inside __del__, and its exception is dropped
Finalized()
print("the run went on", flush=True)
raise_if_stop_requested()
"""


def test_a_stop_whose_exception_a_finalizer_swallowed_still_stops_the_run():
    result = subprocess.run([sys.executable, "-c", SWALLOWED_STOP], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert "Exception ignored" in result.stderr  # the handler's own exception was lost...
    assert "the run went on" in result.stdout
    assert result.returncode != 0 and "KeyboardInterrupt" in result.stderr  # ...not the stop


HANGUP = """
import os, signal, sys, time
from dlbench.runner.driver.launch.stop import stop_on_signals
started, sent = sys.argv[1], getattr(signal, sys.argv[2])
if started == "nohup":
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
if started == "in the background":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # as a shell starts a job with &
stop_on_signals()
try:
    os.kill(os.getpid(), sent)
    time.sleep(0.2)
    print("went on", flush=True)
except KeyboardInterrupt:
    print("stopped", flush=True)
"""


@pytest.mark.parametrize(("started", "sent", "expected"), [
    ("in a terminal", "SIGHUP", "stopped"), ("nohup", "SIGHUP", "went on"),
    ("in the background", "SIGINT", "stopped"), ("nohup", "SIGTERM", "stopped")])
def test_a_closed_terminal_stops_a_run_unless_it_was_started_under_nohup(started, sent,
                                                                          expected):
    result = subprocess.run([sys.executable, "-c", HANGUP, started, sent], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == expected, result.stderr
