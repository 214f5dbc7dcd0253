"""The Ray executor on a real local cluster of nodes of two machine kinds on loopback: a
node that dies and a Ray worker killed mid-process (each process is measured again on a
node of its kind, nothing lost), tables shaped like a local run's, Ctrl-C and --resume of a
cluster run, a node whose code differs from the driver's refused, and the install hint
where Ray is missing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from dlbench.tables import read_table
from runner.cluster import INSTALL_HINT
from tests.test_processes import DLBENCH

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("alpha", "beta")
TINY_RUN = ["run", "--executor", "ray", "--experiment", "training", "--workload", "mlp-digits",
            "--framework", "pytorch", "--repeats", "2", "--threads", "1", "--device", "cpu",
            "--busy-retries", "0", "--no-progress"]


def test_without_ray_the_command_says_how_to_install_it(tmp_path):
    blocked = ("import sys; sys.modules['ray'] = None; from dlbench.cli import main; "
               f"sys.exit(main({[*TINY_RUN, '--results-dir', str(tmp_path)]!r}))")
    done = subprocess.run([sys.executable, "-c", blocked], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env=os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "lock")})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"dlbench: error: {INSTALL_HINT}"]
    assert "pip install -e '.[cluster]'" in done.stderr
    assert not (tmp_path / "runs").exists()


def _fake_run(results: Path, run_id: str, **info: str) -> None:
    (results / "runs" / run_id).mkdir(parents=True)
    (results / "runs" / run_id / "run.json").write_text(json.dumps({"run_id": run_id} | info))


@pytest.mark.parametrize(("arguments", "message"), [
    (["--address", "127.0.0.1:6379"], "--address and --machine-kind need --executor ray"),
    (["--machine-kind", "h100"], "--address and --machine-kind need --executor ray"),
    (["--executor", "ray", "--remeasure", "latest", "--cell", "c"],
     "--remeasure measures on this machine: leave out --executor ray"),
    (["--resume", "20260101T000000Z-cpu", "--executor", "ray"],
     "run 20260101T000000Z-cpu was measured with --executor local: resume it with that "
     "executor, or leave out --executor"),
    (["--resume", "20260101T000000Z-cpu-alpha", "--machine-kind", "beta"],
     "--resume goes on with the run's own machine kind: leave out --machine-kind"),
    (["--executor", "ray", "--machine-kind", "a/b"],
     "--machine-kind 'a/b': letters, digits, '_', '.' and '-' only"),
])
def test_bad_executor_arguments_are_refused_in_one_line(tmp_path, arguments, message):
    pytest.importorskip("ray", reason="the cluster extra is not installed")
    _fake_run(tmp_path, "20260101T000000Z-cpu")
    _fake_run(tmp_path, "20260101T000000Z-cpu-alpha", executor="ray", machine_kind="alpha")
    before = sorted(tmp_path.rglob("*"))
    done = subprocess.run([*DLBENCH, "run", *arguments, "--results-dir", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "lock")})
    assert done.returncode == 2
    assert done.stderr.strip() == f"dlbench: error: {message}"
    assert sorted(p for p in tmp_path.rglob("*") if p.name != "lock") == before


def node(kind: str) -> dict:
    """A Ray node of machine kind `kind` with one CPU and a small object store."""
    return {"num_cpus": 1, "object_store_memory": 80 * 2**20,
            "resources": {"dlbench_slot": 1, f"dlbench_kind_{kind}": 1}}


@pytest.fixture(scope="module")
def cluster():
    """A head of kind alpha and a node of kind beta, one CPU each, on this machine."""
    pytest.importorskip("ray", reason="the cluster extra is not installed")
    os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")  # no OOM killer on 2 cores
    from ray.cluster_utils import Cluster

    started = Cluster(initialize_head=True,
                      head_node_args=node(KINDS[0]) | {"include_dashboard": False})
    try:
        started.add_node(**node(KINDS[1]))
        started.wait_for_nodes()
        yield started
    finally:
        started.shutdown()


def measuring_ray_worker(driver: subprocess.Popen, under: int | None = None,
                         timeout: float = 240.0) -> psutil.Process:
    """The Ray worker of the first task seen running a dlbench worker process (on the node
    whose raylet has PID `under`, if given)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and driver.poll() is None:
        for process in psutil.process_iter(["cmdline"]):
            if "runner.worker" not in (process.info["cmdline"] or []):
                continue
            try:
                parent = process.parent()
                if (parent is not None and parent.cmdline()[0].startswith("ray::measure_on_node")
                        and under in (None, parent.ppid())):
                    return parent
            except (psutil.NoSuchProcess, IndexError):
                continue
        time.sleep(0.1)
    if driver.poll() is not None:
        _, stderr = driver.communicate()
        raise AssertionError(f"the driver exited {driver.returncode} before a Ray worker was "
                             f"seen measuring: {stderr[-2000:]}")
    raise AssertionError("no Ray worker was seen measuring")


def raylet_pid(ray_node) -> int:
    """The PID of a node's raylet (a Ray worker's parent)."""
    (raylet,) = ray_node.all_processes["raylet"]
    return raylet.process.pid


@pytest.mark.slow
def test_a_cluster_run_survives_a_killed_worker_and_writes_local_shaped_tables(cluster,
                                                                             tmp_path):
    env = os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "lock")}
    command = [*DLBENCH, *TINY_RUN, "--address", cluster.address, "--results-dir",
               str(tmp_path / "cluster")]
    second_alpha = cluster.add_node(**node("alpha"))
    try:
        cluster.wait_for_nodes()
        driver = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        measuring_ray_worker(driver, under=raylet_pid(second_alpha))
    finally:
        cluster.remove_node(second_alpha)  # the node dies mid-process
    measuring_ray_worker(driver, under=raylet_pid(cluster.head_node)).send_signal(signal.SIGKILL)
    _, stderr = driver.communicate(timeout=600)
    assert driver.returncode == 0, stderr
    assert stderr.count("measuring it again") == 2

    runs = sorted((tmp_path / "cluster" / "runs").iterdir())
    assert [run.name.rsplit("-", 1)[1] for run in runs] == list(KINDS)  # one run per kind
    superseded = []
    for run in runs:
        info = json.loads((run / "run.json").read_text())
        assert info["status"] == "complete" and info["executor"] == "ray"
        assert info["address"] == cluster.address and run.name.endswith(info["machine_kind"])
        assert json.loads((run / "environment.json").read_text())["machine_kind"] in KINDS
        processes = read_table(run / "processes.parquet", "processes")
        assert sorted(processes["repeat"]) == [0, 1]  # nothing lost
        cells = read_table(run / "cells.parquet", "cells")
        assert list(cells["status"]) == ["ok"], cells["reason"].tolist()
        superseded += [json.loads(p.read_text()) for p in (run / "superseded").glob("*.json")]
    assert len(superseded) == 2  # the process of the dead node, the one of the killed worker
    for entry in superseded:
        assert "died" in entry["reason"] and entry["record"]["outcome"]["status"] == "failed"

    local = _local_run(tmp_path / "local", env)
    for stem in ("cells", "observations", "processes"):
        mine, theirs = (read_table(r / f"{stem}.parquet", stem) for r in (runs[0], local))
        assert list(mine.columns) == list(theirs.columns), stem
        assert mine.dtypes.astype(str).tolist() == theirs.dtypes.astype(str).tolist(), stem


@pytest.mark.slow
def test_processes_of_a_kind_whose_last_node_died_are_recorded_failed(cluster, tmp_path):
    gamma = cluster.add_node(**node("gamma"))
    command = [*DLBENCH, *TINY_RUN, "--address", cluster.address, "--machine-kind", "gamma",
               "--results-dir", str(tmp_path)]
    try:
        cluster.wait_for_nodes()
        driver = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True,
                                  env=os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "lock")})
        measuring_ray_worker(driver, under=raylet_pid(gamma))
    finally:
        cluster.remove_node(gamma)
    _, stderr = driver.communicate(timeout=300)
    assert driver.returncode == 0, stderr  # the run ends, with what it could not measure
    (run,) = (tmp_path / "runs").iterdir()
    processes = read_table(run / "processes.parquet", "processes")
    assert sorted(processes["repeat"]) == [0, 1]
    cells = read_table(run / "cells.parquet", "cells")
    assert list(cells["status"]) == ["failed"]
    assert "no alive node of machine kind gamma" in cells["reason"].iloc[0]

@pytest.mark.slow
def test_ctrl_c_stops_the_tasks_keeps_what_finished_and_resume_finishes(cluster, tmp_path):
    env = os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "lock")}
    command = [*DLBENCH, *TINY_RUN, "--address", cluster.address, "--machine-kind", "alpha",
               "--results-dir", str(tmp_path)]
    driver = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
    records = tmp_path / "runs"
    deadline = time.monotonic() + 240
    while not list(records.glob("*/processes/*.json")):  # the first process finished
        assert time.monotonic() < deadline and driver.poll() is None, "no process finished"
        time.sleep(0.1)
    worker = measuring_ray_worker(driver)  # the second one is measuring
    driver.send_signal(signal.SIGINT)
    _, stderr = driver.communicate(timeout=120)
    assert driver.returncode == 130, stderr
    psutil.wait_procs([worker], timeout=30)
    assert not worker.is_running()  # the task in flight was cancelled
    (run,) = records.iterdir()
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    assert len(list((run / "processes").glob("*.json"))) == 1  # what finished is kept
    assert f"dlbench run --resume {run.name}" in " ".join(stderr.split())

    resumed = subprocess.run([*DLBENCH, "run", "--resume", run.name, "--no-progress",
                              "--results-dir", str(tmp_path)], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    info = json.loads((run / "run.json").read_text())
    assert info["status"] == "complete" and info["machine_kind"] == "alpha"
    processes = read_table(run / "processes.parquet", "processes")
    assert sorted(processes["repeat"]) == [0, 1] and list(records.iterdir()) == [run]


def _local_run(results: Path, env: dict) -> Path:
    local = [arg for arg in TINY_RUN if arg not in ("--executor", "ray")]
    local[local.index("--repeats") + 1] = "1"
    done = subprocess.run([*DLBENCH, *local, "--results-dir", str(results)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    (run,) = (results / "runs").iterdir()
    return run


@pytest.mark.slow
def test_a_node_whose_code_differs_from_the_drivers_is_refused(cluster):
    import ray

    from dlbench.errors import UsageError
    from runner.cluster.executor import capture_kind_environment
    from runner.cluster.node_identity import mismatch, node_identity

    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    try:
        here = node_identity()
        assert mismatch(here, here, "alpha") is None
        other = here | {"commit": "0" * 40, "code_hash": "f" * 64}
        with pytest.raises(UsageError, match=r"^node .* \(machine kind beta\) runs commit .* "
                                             r"the driver commit 000000000000 with code hash "
                                             r"ffffffffffff: check out"):
            capture_kind_environment("beta", "cpu", other)
        assert "machine_kind" in capture_kind_environment("beta", "cpu", here)
    finally:
        ray.shutdown()
