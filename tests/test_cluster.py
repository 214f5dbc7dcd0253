"""The Ray executor on a real local cluster of nodes of two machine kinds on loopback: a
node that dies and a Ray worker killed mid-process (each process is measured again on a
node of its kind, nothing lost), tables shaped like a local run's, Ctrl-C and --resume of a
cluster run, a node whose code differs from the driver's refused, and the install hint
where Ray is missing."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from dlbench.core.storage.tables import read_table
from dlbench.runner.driver.cluster import INSTALL_HINT
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


def test_a_cluster_address_that_does_not_answer_is_refused_in_one_line(tmp_path):
    pytest.importorskip("ray", reason="the cluster extra is not installed")
    done = subprocess.run([*DLBENCH, "run", "--executor", "ray", "--address", "127.0.0.1:1",
                           "--results-dir", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120,
                          env=os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "lock")})
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "no Ray cluster answers at 127.0.0.1:1 within 10 s" in done.stderr
    assert not (tmp_path / "runs").exists()


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
            if "dlbench.runner.worker.entry" not in (process.info["cmdline"] or []):
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
                              "--busy-retries", "0", "--results-dir", str(tmp_path)], cwd=ROOT,
                             env=env, capture_output=True, text=True, timeout=300)
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

    from dlbench.core.text.errors import UsageError
    from dlbench.runner.driver.cluster.executor import capture_kind_environment
    from dlbench.runner.driver.cluster.node_identity import mismatch, node_identity

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


def free_ports(count: int) -> list[int]:
    """`count` TCP ports free on loopback now."""
    sockets = [socket.socket() for _ in range(count)]
    for sock in sockets:
        sock.bind(("127.0.0.1", 0))
    ports = [sock.getsockname()[1] for sock in sockets]
    for sock in sockets:
        sock.close()
    return ports


class RayStart:
    """One Ray node started by `ray start --block` as an operator would, on ports of its own
    (a temp dir of its own, so no other cluster on this machine is touched)."""

    def __init__(self, kind: str, temp_dir: Path, head: str | None = None) -> None:
        node_manager, objects, agent, agent_grpc, runtime_env, metrics, low, gcs, client = \
            free_ports(9)
        command = [str(Path(sys.executable).parent / "ray"), "start", "--block",
                   "--num-cpus", "1", "--resources", json.dumps(node(kind)["resources"]),
                   "--object-store-memory", str(80 * 2**20), "--disable-usage-stats",
                   "--node-ip-address", "127.0.0.1", "--temp-dir", str(temp_dir),
                   "--node-manager-port", str(node_manager),
                   "--object-manager-port", str(objects),
                   "--dashboard-agent-listen-port", str(agent),
                   "--dashboard-agent-grpc-port", str(agent_grpc),
                   "--runtime-env-agent-port", str(runtime_env),
                   "--metrics-export-port", str(metrics),
                   "--min-worker-port", str(low), "--max-worker-port", str(low + 40)]
        if head is None:
            self.address = f"127.0.0.1:{gcs}"
            command += ["--head", "--port", str(gcs), "--include-dashboard", "false",
                        "--ray-client-server-port", str(client)]
        else:
            self.address = head
            command += ["--address", head]
        env = os.environ | {"RAY_memory_monitor_refresh_ms": "0",
                            "RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S": "0"}  # stops at once
        self.process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True)

    def raylet_pid(self, timeout: float = 120.0) -> int:
        """The PID of this node's raylet, once started."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process.poll() is None, "ray start exited"
            for child in psutil.Process(self.process.pid).children():
                try:
                    if "raylet" in " ".join(child.cmdline()[:1]):
                        return child.pid
                except psutil.NoSuchProcess:
                    continue
            time.sleep(0.2)
        raise AssertionError("the node's raylet did not start")

    def stop(self) -> None:
        """Stop the node as `ray stop` would stop it on its machine (SIGTERM), and wait."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


def wait_for_alive_nodes(address: str, count: int, timeout: float = 120.0) -> None:
    """Wait until the cluster at `address` has `count` alive nodes."""
    probe = "\n".join([
        "import sys, time, ray",
        "ray.init(address=sys.argv[1], log_to_driver=False, configure_logging=False)",
        "deadline = time.monotonic() + float(sys.argv[3])",
        "while sum(n['Alive'] for n in ray.nodes()) < int(sys.argv[2]):",
        "    assert time.monotonic() < deadline, ray.nodes()",
        "    time.sleep(0.5)"])
    done = subprocess.run([sys.executable, "-c", probe, address, str(count), str(timeout)],
                          capture_output=True, text=True, timeout=timeout + 60)
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.slow
def test_a_ray_start_node_stopped_mid_process_loses_nothing_and_the_run_resumes(tmp_path):
    pytest.importorskip("ray", reason="the cluster extra is not installed")
    temp_dir = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))  # short: socket paths
    head = RayStart("alpha", temp_dir)
    second = RayStart("alpha", temp_dir, head=head.address)
    try:
        wait_for_alive_nodes(head.address, 2)
        env = os.environ | {"DLBENCH_LOCK_FILE": str(tmp_path / "lock")}
        tiny = [*TINY_RUN[:TINY_RUN.index("--repeats") + 1], "3",
                *TINY_RUN[TINY_RUN.index("--repeats") + 2:]]
        driver = subprocess.Popen([*DLBENCH, *tiny, "--address", head.address,
                                   "--results-dir", str(tmp_path)], cwd=ROOT, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        measuring_ray_worker(driver, under=second.raylet_pid())
        second.stop()  # the node goes away while a process runs on it
        runs = tmp_path / "runs"
        deadline = time.monotonic() + 240
        while not list(runs.glob("*/superseded/*.json")):  # the lost process is queued again
            assert time.monotonic() < deadline and driver.poll() is None, "no loss recorded"
            time.sleep(0.1)
        driver.send_signal(signal.SIGINT)
        _, stderr = driver.communicate(timeout=120)
        assert driver.returncode == 130, stderr
        assert "lost (the Ray worker or node measuring it died" in " ".join(stderr.split())
        (run,) = runs.iterdir()
        kept = {p.name: json.loads(p.read_text())["started_at"]
                for p in (run / "processes").glob("*.json")}
        (lost,) = [json.loads(p.read_text()) for p in (run / "superseded").glob("*.json")]
        assert "died" in lost["reason"] and "node of kind alpha" in lost["reason"]

        resumed = subprocess.run([*DLBENCH, "run", "--resume", run.name, "--no-progress",
                                  "--busy-retries", "0", "--results-dir", str(tmp_path)],
                                 cwd=ROOT, env=env, capture_output=True, text=True,
                                 timeout=400)
        assert resumed.returncode == 0, resumed.stderr  # on the node of kind alpha left
        assert json.loads((run / "run.json").read_text())["status"] == "complete"
        processes = read_table(run / "processes.parquet", "processes")
        assert sorted(processes["repeat"]) == [0, 1, 2]
        assert set(processes["status"]) == {"ok"}
        for name, started in kept.items():  # nothing saved before the loss is lost or redone
            assert json.loads((run / "processes" / name).read_text())["started_at"] == started
    finally:
        second.stop()
        head.stop()
        shutil.rmtree(temp_dir, ignore_errors=True)


@pytest.mark.slow
def test_a_full_disk_under_a_cluster_run_is_one_line_and_resume_finishes(cluster, tmp_path):
    from tests.small_disk import SmallDisk

    disk = SmallDisk(tmp_path / "disk", "4m")
    try:
        results, env = disk.root / "results", disk.env | {
            "DLBENCH_LOCK_FILE": str(tmp_path / "lock")}
        driver = subprocess.Popen([*disk.command, *TINY_RUN, "--address", cluster.address,
                                   "--machine-kind", "alpha", "--results-dir", str(results)],
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 240
        # the first process's record is saved (tables are rebuilt once per look)
        while not list(results.glob("runs/*/processes/*.json")):
            assert time.monotonic() < deadline and driver.poll() is None, "nothing saved"
            time.sleep(0.1)
        disk.fill()
        _, stderr = driver.communicate(timeout=300)
        assert driver.returncode == 2, stderr
        assert "Traceback" not in stderr
        line = stderr.strip().splitlines()[-1]
        print(line)
        assert line.startswith("dlbench: error: cannot save ") and "No space left" in line
        (run,) = (results / "runs").iterdir()
        assert line.endswith(f"then `dlbench run --resume {run.name}`")
        kept = {p.name: json.loads(p.read_text())["started_at"]
                for p in (run / "processes").glob("*.json")}
        assert kept and not [p for p in run.rglob("*") if p.name.endswith(".tmp")]

        disk.free()
        resumed = subprocess.run([*disk.command, "run", "--resume", run.name, "--no-progress",
                                  "--busy-retries", "0", "--results-dir", str(results)],
                                 cwd=ROOT, env=env,
                                 capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        processes = read_table(run / "processes.parquet", "processes")
        assert sorted(processes["repeat"]) == [0, 1]
        for name, started in kept.items():
            assert json.loads((run / "processes" / name).read_text())["started_at"] == started
    finally:
        disk.close()
