"""Repeats as processes, without a framework: the interleaved order, the repeat policy, the
process records and the tables built from them, the machine lock and the quiet-machine rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from dlbench.cli import main
from dlbench.core.storage.code_archive import read_code_record
from dlbench.core.storage.schema import CellStatus
from dlbench.core.storage.tables import read_table
from dlbench.runner.driver.machine.lock import MachineLockedError, lock_file, measurement_lock
from dlbench.runner.driver.machine.load import LoadReading, assess, gpu_utilization, read_load
from dlbench.runner.cell.outcome import CellOutcome, Observation
from dlbench.runner.driver.plan.repeats import SUITE_PROCESSES, policy_record, process_count
from dlbench.runner.driver.plan.schedule import process_order
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.persist import persist_all
from dlbench.runner.driver.store.run_store import CellRecord, RunStore

ROOT = Path(__file__).resolve().parent.parent
#: The `dlbench` console script (`python -m dlbench.cli` would load the CLI module twice).
DLBENCH = [sys.executable, "-c", "import sys; from dlbench.cli import main; sys.exit(main())"]


def cell(batch_size: int = 32, repeats: int = 3, experiment: str = "training") -> CellSpec:
    return CellSpec(experiment, "mlp-digits", "pytorch", "pytorch", "cpu",
                    batch_size=batch_size, repeats=repeats)


def test_order_interleaves_every_cells_processes_in_seeded_rounds():
    cells = [cell(16), cell(32), cell(64), cell(128, repeats=2)]
    order = process_order(cells, seed=11)
    assert sorted((s.cell_id, s.repeat_index) for s in order) == sorted(
        (c.cell_id, k) for c in cells for k in range(c.repeats))
    assert [s.repeat_index for s in order] == [0] * 4 + [1] * 4 + [2] * 3
    assert process_order(cells, seed=11) == order
    shuffles = {tuple(s.cell_id for s in process_order(cells, seed)[:4]) for seed in range(20)}
    assert len(shuffles) > 1  # the seed changes the order within a round


def test_a_round_holds_every_experiment_so_a_cell_s_processes_span_the_run():
    """Process k of a training cell and of an inference cell run in round k together: a
    cell's processes are not all measured in its experiment's few minutes."""
    cells = [cell(16, experiment="training"), cell(32, experiment="training"),
             cell(16, experiment="inference"), cell(32, experiment="inference")]
    order = process_order(cells, seed=3)
    assert [s.repeat_index for s in order] == [0] * 4 + [1] * 4 + [2] * 4
    for index in range(3):
        assert {s.experiment for s in order[4 * index:4 * index + 4]} == {"training",
                                                                            "inference"}


@pytest.mark.parametrize("suite, expected", sorted(SUITE_PROCESSES.items()))
def test_the_suite_sets_the_number_of_processes(suite, expected):
    assert process_count(suite, "training") == expected
    assert process_count(suite, "training", override=7) == 7
    assert process_count(suite, "parity", override=7) == 1
    assert process_count("standard", "training") >= 3 and process_count("full", "inference") >= 5


def test_quick_is_a_preview_and_too_few_processes_are_not_citable():
    assert policy_record("quick") | {} == policy_record("quick")
    assert policy_record("quick")["citable"] is False and policy_record("quick")["preview"]
    assert policy_record("standard")["citable"] is True
    assert policy_record("full", override=5)["citable"] is True
    assert policy_record("standard", override=2)["citable"] is False


def record(spec: CellSpec, index: int, status: CellStatus = CellStatus.OK,
           busy: list[str] | None = None, order_index: int = 0,
           seeded: bool = True) -> CellRecord:
    process = CellSpec(**(json.loads(spec.to_json()) | {"repeat_index": index}))
    observations = [Observation("steady_epoch_time", 0.1 + index / 100, index)]
    outcome = CellOutcome(status, observations if status is CellStatus.OK else [],
                          reason="" if status is CellStatus.OK else f"{status.value} here",
                          code_files={"x.py": "0" * 64},
                          details={"seed": 7 + index} if seeded else {})
    return CellRecord(process, outcome, f"2026-12-02T10:00:0{index}", 1.0, "", "x.py", "0" * 64,
                      ended_at=f"2026-12-02T10:00:0{index}", order_index=order_index,
                      machine={"busy": busy or []})


def test_records_from_workers_that_reported_no_seed_rebuild_without_seeds(tmp_path):
    store = RunStore(tmp_path / "run")
    for index in range(3):
        store.save_record(record(cell(32), index, seeded=False))
    store.rebuild_tables()
    cells = read_table(store.root / "cells.parquet", "cells")
    assert "seeds" not in json.loads(cells.loc[0, "details_json"])["processes"]


def test_a_process_is_saved_the_moment_it_ends_and_the_tables_are_left_to_the_look(tmp_path):
    store = RunStore(tmp_path / "run")
    saved: list[int] = []
    persist_all(store, [record(cell(32), index) for index in range(3)],
                lambda: saved.append(len(store.finished_processes())))
    assert saved == [1, 2, 3]  # each record is on disk before the next process is saved
    assert not list(store.root.glob("*.parquet"))  # dlbench.runner.driver.commands.run rebuilds them per look


def test_tables_have_one_row_per_cell_and_per_process(tmp_path):
    store = RunStore(tmp_path / "run")
    good, broken = cell(32), cell(64)
    for index in range(3):
        store.save_record(record(good, index, busy=["loud"] if index == 1 else None,
                                 order_index=2 * index))
        status = CellStatus.FAILED if index == 2 else CellStatus.OK
        store.save_record(record(broken, index, status, order_index=2 * index + 1))
    store.rebuild_tables()
    cells = read_table(store.root / "cells.parquet", "cells").set_index("batch_size")
    assert cells.loc[32, "status"] == "ok" and cells.loc[32, "repeats"] == 3
    assert cells.loc[64, "status"] == "failed"
    assert cells.loc[64, "reason"] == "process 2: failed here"
    details = json.loads(cells.loc[32, "details_json"])["processes"]
    assert details == {"planned": 3, "recorded": 3, "ok": 3, "busy": [1], "order": [0, 2, 4],
                       "seeds": [7, 8, 9]}  # as each worker reported its seed
    observations = read_table(store.root / "observations.parquet", "observations")
    assert set(observations["cell_id"]) == {good.cell_id}  # a failed cell has no results
    assert sorted(observations["repeat"]) == [0, 1, 2]
    processes = read_table(store.root / "processes.parquet", "processes")
    assert list(processes["order_index"]) == list(range(6))
    assert list(processes["busy"]).count("loud") == 1


def test_a_superseded_record_moves_aside_with_its_reason(tmp_path):
    store = RunStore(tmp_path / "run")
    first = record(cell(), 0)
    store.save_record(first)
    moved = store.supersede(first, "checking")
    assert store.load_records() == []
    entry = json.loads(moved.read_text())
    assert entry["reason"] == "checking" and entry["record"]["spec"]["repeat_index"] == 0
    assert store.load_superseded()[0]["superseded_at"] == entry["superseded_at"]


def test_code_files_are_kept_once_by_content(tmp_path):
    store = RunStore(tmp_path / "run")
    digest = store.save_code_file("runner/a.py", b"print(1)\n")
    assert store.save_code_file("runner/b.py", b"print(1)\n") == digest
    record = read_code_record(store.root)
    assert list(record.objects) == [digest]
    assert record.data("runner/b.py") == b"print(1)\n"


def reading(runnable: float = 0.0, busy_ticks: int = 0, steal: int = 0, total: int = 0,
            t: float = 0.0, own: float = 0.0, gpu: float | None = None) -> LoadReading:
    return LoadReading(t, 0.5, runnable, busy_ticks, steal, total, own, gpu)


def test_a_quiet_machine_is_not_flagged():
    tick = os.sysconf("SC_CLK_TCK")
    after = reading(busy_ticks=10 * tick, total=20 * tick, t=10.0, own=10.0)
    assert assess(reading(), after, threads=2, cores=2)["busy"] == []


@pytest.mark.parametrize("before, after, threads, words", [
    (reading(runnable=1), reading(t=1.0, total=100), 2, "1 other runnable tasks before"),
    (reading(), reading(runnable=2, t=1.0, total=100), 1, "2 other runnable tasks after"),
    (reading(), reading(busy_ticks=3 * os.sysconf("SC_CLK_TCK"), t=2.0, total=400, own=2.0), 2,
     "other programs kept 0.50 cores busy"),
    (reading(), reading(steal=10, total=100, t=1.0), 1, "CPU steal 10%"),
    (reading(), reading(steal=3, total=100, t=1.0), 1, "CPU steal 3% (limit 2%)"),
    (reading(gpu=55.0), reading(t=1.0, total=100), 1, "GPU 55% busy before"),
])
def test_each_busy_rule_flags_with_its_reason(before, after, threads, words):
    reasons = assess(before, after, threads=threads, cores=2)["busy"]
    assert len(reasons) == 1 and words in reasons[0]


def test_steal_at_or_under_two_percent_is_quiet():
    assert assess(reading(), reading(steal=2, total=100, t=1.0), 1, 2)["busy"] == []


def test_the_one_free_core_tolerates_one_other_task():
    assert assess(reading(runnable=1), reading(runnable=1, t=1.0, total=100), 1, 2)["busy"] == []


def test_a_reading_is_what_the_kernel_files_say(tmp_path):
    (tmp_path / "stat").write_text("cpu  100 5 20 800 10 3 2 7 0 0\n"
                                   "cpu0 100 5 20 800 10 3 2 7 0 0\n"
                                   "ctxt 12345\nprocs_running 4\nprocs_blocked 0\n")
    (tmp_path / "loadavg").write_text("1.75 0.90 0.40 4/321 9876\n")
    reading = read_load(proc=tmp_path)
    assert reading.loadavg_1min == 1.75
    assert reading.other_runnable == 3.0  # procs_running counts the reader itself
    busy = 100 + 5 + 20 + 3 + 2  # user, nice, system, irq, softirq
    assert (reading.busy_ticks, reading.steal_ticks) == (busy, 7)
    assert reading.total_ticks == busy + 800 + 10 + 7  # idle, iowait and steal added
    assert reading.gpu_utilization is None


def test_readings_come_from_this_machine():
    first = read_load()
    assert first.total_ticks > 0 and first.gpu_utilization is None
    machine = assess(first, read_load(), threads=1)
    assert 0.0 <= machine["steal_share"] <= 1.0
    assert set(machine["before"]) == {"loadavg_1min", "other_runnable", "gpu_utilization"}
    assert machine["before"]["loadavg_1min"] == pytest.approx(first.loadavg_1min)


def has_nvml() -> bool:
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def test_gpu_utilization_is_none_without_nvml():
    if has_nvml():
        pytest.skip("this machine has NVML: the GPU reading is checked instead")
    assert gpu_utilization() is None and read_load(gpu=True).gpu_utilization is None


@pytest.mark.skipif(not has_nvml(), reason="needs an NVIDIA GPU with NVML (libnvidia-ml.so.1)")
def test_gpu_utilization_is_read_through_nvml():
    utilization = read_load(gpu=True).gpu_utilization
    assert utilization is not None and 0.0 <= utilization <= 100.0


def hold_lock(path: Path) -> subprocess.Popen:
    """Another process holding the machine lock at `path` until it is killed."""
    code = ("import time; from dlbench.runner.driver.machine.lock import measurement_lock\n"
            "with measurement_lock(['dlbench', 'run', '--suite', 'standard']):\n"
            "    print('held', flush=True); time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                              env=os.environ | {"DLBENCH_LOCK_FILE": str(path)}, text=True)
    assert holder.stdout.readline().strip() == "held"
    return holder


def test_a_second_measurement_is_refused_naming_the_holder(tmp_path, monkeypatch, capsys):
    path = tmp_path / "measure.lock"
    monkeypatch.setenv("DLBENCH_LOCK_FILE", str(path))
    assert lock_file() == path
    earlier = tmp_path / "runs" / "some-run"
    earlier.mkdir(parents=True)
    (earlier / "run.json").write_text(json.dumps({"run_id": "some-run"}))
    holder = hold_lock(path)
    try:
        assert main(["run", "--suite", "huge", "--results-dir", str(tmp_path)]) == 2
        assert "unknown suite 'huge'" in capsys.readouterr().err  # bad input said first
        assert main(["run", "--resume", "some-run", "--remeasure", "some-run", "--results-dir",
                     str(tmp_path)]) == 2
        assert "give one of them" in capsys.readouterr().err
        with pytest.raises(MachineLockedError, match=f"PID {holder.pid} since .*--suite standard"):
            with measurement_lock():
                pass
        for extra in (["--experiment", "training"], ["--resume", "some-run"]):
            refused = subprocess.run(
                [*DLBENCH, "run", *extra, "--results-dir",
                 str(tmp_path)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                env=os.environ | {"DLBENCH_LOCK_FILE": str(path)})
            assert refused.returncode == 2
            assert f"PID {holder.pid}" in refused.stderr and "lock" in refused.stderr
            assert [p.name for p in (tmp_path / "runs").rglob("*")] == ["some-run", "run.json"]
    finally:
        holder.kill()
        holder.communicate()
    time.sleep(0.1)
    with measurement_lock(["me"]) as held:  # the kernel released a dead holder's lock
        assert json.loads(held.read_text())["command"] == "me"


def test_every_imported_project_file_is_kept_once_and_listed_by_its_process(tmp_path):
    import hashlib

    from dlbench.runner.driver.store.persist import persist

    def sha(relative: str) -> str:
        return hashlib.sha256((ROOT / relative).read_bytes()).hexdigest()

    files = {"runner/cell/spec.py": sha("runner/cell/spec.py"),
             "runner/cell/outcome.py": sha("runner/cell/outcome.py"),
             "runner/driver/store/run_store.py": "f" * 64}  # the last was edited after the process ran
    store = RunStore(tmp_path / "run")
    for index in range(2):
        measured = record(cell(), index)
        persist(store, replace(measured, outcome=replace(measured.outcome, code_files=files)))
    code = read_code_record(store.root)
    assert sorted(code.objects) == sorted([files["runner/cell/spec.py"],
                                           files["runner/cell/outcome.py"]])
    assert code.data("runner/cell/spec.py") == (ROOT / "runner" / "cell" / "spec.py").read_bytes()
    assert "runner/driver/store/run_store.py" not in code.files
    store.rebuild_tables()  # as the run does once per look
    processes = read_table(store.root / "processes.parquet", "processes")
    assert [json.loads(v) for v in processes["code_files_json"]] == [files, files]


def test_a_refused_cell_starts_no_more_processes(tmp_path):
    from dlbench.runner.driver.plan.request import RunRequest
    from dlbench.runner.driver.commands.run import run_cells

    request = RunRequest("quick", ["training"], [], ["pytorch"], "cpu", None, 1, None, "")
    store = RunStore(tmp_path / "run")
    refused = cell(repeats=3)
    store.save_record(record(refused, 0, CellStatus.UNSUPPORTED))
    run_cells(store, request, "cpu", [refused], progress=False, busy_retries=0, seed=2)
    later = store.load_records()[1:]
    assert [r.spec.repeat_index for r in later] == [1, 2]
    assert all(r.outcome.status is CellStatus.UNSUPPORTED and r.wall_time_s == 0 for r in later)
    assert later[0].outcome.reason == "unsupported here (not started: process 0 ended unsupported)"
    info = json.loads((store.root / "run.json").read_text())
    assert info["order_seed"] == 2 and info["citable"] is False
    assert info["processes_policy"]["preview"] is True
    assert info["process_order"] == [f"{refused.cell_id}#{k}" for k in range(3)]


def test_a_worker_is_told_its_process_index_not_the_count(tmp_path):
    from dlbench.runner.driver.launch.execute import Launch, execute_cell

    told = tmp_path / "told.json"
    # the worker's command runs under a prefix that keeps the spec file it was given (found
    # by its name among the command's arguments, wherever the interpreter's options put it)
    keep_spec = Launch(prefix=("sh", "-c", 'for a; do case "$a" in */spec-*.json) '
                                           'cp "$a" "$0";; esac; done', str(told)))
    spec = CellSpec(experiment="training", workload="mlp-digits", framework="pytorch",
                    backend="pytorch", device="cpu", repeats=3, repeat_index=2)
    record = execute_cell(spec, keep_spec)
    given = json.loads(told.read_text())
    assert given["repeat_index"] == 2 and given["repeats"] is None
    assert record.spec.repeats == 3  # the runner keeps the count it planned and records
