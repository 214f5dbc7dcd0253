"""Repeats as processes, end to end with real PyTorch workers on tiny cells: interleaving,
intervals over processes, the lock against a concurrent run, resume after a plan change,
re-measurement, busy re-runs, and a worker that dies with a SIGKILLed runner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.core.judging.stats import summarize
from dlbench.core.storage.tables import read_table
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.commands.run import run_cells
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import RunStore
from tests.test_processes import DLBENCH

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parent.parent
REQUEST = RunRequest(suite="quick", experiments=["training"], workloads=["mlp-digits"],
                     frameworks=["pytorch"], device="cpu", repeats=None, threads=1,
                     timeout_s=None, data_dir="")


def tiny(batch_size: int, repeats: int = 2) -> CellSpec:
    """A PyTorch training cell of one epoch: a process is mostly the framework's import."""
    return CellSpec("training", "mlp-digits", "pytorch", "", "cpu", batch_size=batch_size,
                    repeats=repeats, threads=1, params={"epochs": 1})


def wait_for(condition, timeout: float = 240.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.1)


def test_two_cells_of_three_processes_interleave_and_a_concurrent_run_is_refused(tmp_path):
    env = os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "measure.lock")}
    command = [*DLBENCH, "run", "--experiment", "training", "--workload", "mlp-digits",
               "--framework", "pytorch", "--framework", "keras-torch", "--repeats", "3",
               "--threads", "1", "--seed", "5", "--busy-retries", "0", "--no-progress",
               "--results-dir", str(tmp_path)]
    first = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    wait_for(lambda: list(tmp_path.glob("runs/*/run.json")))
    second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=120)
    assert second.returncode == 2
    assert f"PID {first.pid}" in second.stderr and "--seed 5" in second.stderr
    _, stderr = first.communicate(timeout=900)
    assert first.returncode == 0, stderr
    (run_dir,) = (tmp_path / "runs").iterdir()  # the refused run wrote nothing

    processes = read_table(run_dir / "processes.parquet", "processes").sort_values("order_index")
    assert list(processes["order_index"]) == list(range(6))
    assert list(processes["repeat"]) == [0, 0, 1, 1, 2, 2]  # each round holds both cells
    assert (processes["started_at"].to_numpy()[1:] >= processes["ended_at"].to_numpy()[:-1]).all()
    info = json.loads((run_dir / "run.json").read_text())
    assert info["order_seed"] == 5
    assert info["process_order"] == [f"{c}#{r}" for c, r in
                                     zip(processes["cell_id"], processes["repeat"])]

    cells = read_table(run_dir / "cells.parquet", "cells")
    assert list(cells["repeats"]) == [3, 3] and set(cells["status"]) == {"ok"}
    observations = read_table(run_dir / "observations.parquet", "observations")
    steady = observations[(observations["metric"] == "steady_epoch_time")
                          & observations["step"].isna()]
    for cell_id, rows in steady.groupby("cell_id"):
        mine = processes[processes["cell_id"] == cell_id]
        per_process = rows.groupby("repeat")["value"].median()  # one value per process
        assert sorted(per_process.index) == sorted(mine["repeat"]) == [0, 1, 2]
        interval = summarize(per_process.to_numpy())
        assert interval.n == 3  # the interval is the spread between processes
        assert per_process.min() <= interval.ci_low <= interval.ci_high <= per_process.max()


def run_tiny(store: RunStore, cells: list[CellSpec]) -> list:
    return run_cells(store, REQUEST, "cpu", cells, progress=False, busy_retries=0, seed=1)


def test_resume_after_a_plan_change_measures_only_missing_processes(tmp_path, monkeypatch):
    store = RunStore(tmp_path / "runs" / "plan-change")
    store.root.mkdir(parents=True)
    kept, dropped, added = tiny(32), tiny(64), tiny(16)
    run_tiny(store, [kept, dropped])
    projected = store.load_run_info()  # a new run: its projection first, its error at the end
    assert projected["estimate"]["projected_min"] > 0 and "estimate_error" in projected
    before = {(r.spec.cell_id, r.spec.repeat_index): r for r in store.load_records()}
    assert len(before) == 4
    stopped = store.load_records()[0]
    assert stopped.spec.cell_id == kept.cell_id
    store.record_path(stopped.spec).unlink()  # as if the run stopped before it ended
    remaining = store.load_records()
    run_tiny(store, [kept, added])  # the plan changed: one cell removed, one added

    after = {(r.spec.cell_id, r.spec.repeat_index): r for r in store.load_records()}
    assert len(after) == 6
    remeasured = [key for key in after if after[key] != before.get(key)]
    assert sorted(remeasured) == sorted([(kept.cell_id, stopped.spec.repeat_index),
                                         (added.cell_id, 0), (added.cell_id, 1)])
    assert min(after[key].order_index for key in remeasured) > max(
        r.order_index for r in remaining)
    info = store.load_run_info()
    assert info["planned_cells"] == [kept.cell_id, added.cell_id] and info["status"] == "complete"
    assert info["estimate"] == projected["estimate"]  # going on keeps the first projection
    cells = read_table(store.root / "cells.parquet", "cells")
    assert sorted(cells["batch_size"]) == [16, 32, 64]  # the removed cell's finished processes stay

    monkeypatch.setenv("DLBENCH_LOCK_FILE", str(tmp_path / "measure.lock"))
    code = main(["run", "--remeasure", store.run_id, "--cell", added.cell_id, "--reason",
                 "checked by hand", "--busy-retries", "0", "--no-progress", "--results-dir",
                 str(tmp_path)])
    assert code == 0
    superseded = store.load_superseded()
    assert [e["reason"] for e in superseded] == ["checked by hand"] * 2
    assert {e["record"]["order_index"] for e in superseded} == {
        after[(added.cell_id, k)].order_index for k in range(2)}
    fresh = [r for r in store.load_records() if r.spec.cell_id == added.cell_id]
    assert min(r.order_index for r in fresh) > max(r.order_index for r in after.values())
    assert store.load_run_info()["remeasured"][0]["cells"] == [added.cell_id]
    assert main(["run", "--remeasure", store.run_id, "--cell", "no:such:cell",
                 "--results-dir", str(tmp_path)]) == 2


def test_a_process_measured_on_a_busy_machine_is_measured_again_and_stays_flagged(tmp_path):
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(2 * (os.cpu_count() or 1))]
    try:
        store = RunStore(tmp_path / "runs" / "busy")
        store.root.mkdir(parents=True)
        run_cells(store, REQUEST, "cpu", [tiny(32, repeats=1)], progress=False, busy_retries=1)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    (final,) = store.load_records()
    assert final.attempt == 1 and final.busy_reasons
    (earlier,) = store.load_superseded()
    assert earlier["reason"].startswith("machine busy: ")
    processes = read_table(store.root / "processes.parquet", "processes")
    assert processes["busy"].item() and processes["runnable_before"].item() >= 1


def worker_of(parent: int) -> tuple[int, list[str]] | None:
    """The worker process `parent` started, with its command line, if one runs."""
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().decode().split("\0")
        except (OSError, ValueError):
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and "dlbench.runner.worker.entry" in argv:
            return int(entry.name), argv
    return None


def test_a_worker_dies_with_a_sigkilled_runner(tmp_path):
    env = os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "measure.lock")}
    runner = subprocess.Popen(
        [*DLBENCH, "run", "--experiment", "training", "--workload", "mlp-digits", "--framework",
         "pytorch", "--repeats", "1", "--no-progress", "--results-dir", str(tmp_path)],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    found: list = []
    wait_for(lambda: found.append(worker_of(runner.pid)) or found[-1] is not None)
    pid, argv = found[-1]
    os.kill(runner.pid, signal.SIGKILL)
    runner.wait()
    wait_for(lambda: not Path(f"/proc/{pid}").exists(), timeout=10)
    assert not Path(argv[-2]).exists()  # killed mid-measurement: it never wrote its outcome
