"""The process environment of a cell, the git state recorded with a run, and suite grids."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from dlbench.runner.process.cellenv import affinity_cores, cell_environment, recorded_settings
from dlbench.runner.machine.environment import git_state
from dlbench.runner.experiments import suite_grid
from dlbench.runner.plan.request import RunRequest
from dlbench.runner.cell.spec import CellSpec


def _spec(**changes) -> CellSpec:
    values = {"experiment": "training", "workload": "mlp-digits", "framework": "keras",
              "backend": "jax", "device": "cpu", "threads": 1, "repeats": 3} | changes
    return CellSpec(**values)


def test_every_framework_gets_the_same_threads_and_the_backend_it_asked_for():
    env = cell_environment(_spec(threads=1), base={"OMP_NUM_THREADS": "16"})
    assert {env[name] for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                   "OPENBLAS_NUM_THREADS", "TF_NUM_INTRAOP_THREADS")} == {"1"}
    assert env["KERAS_BACKEND"] == "jax"
    assert env["TF_ENABLE_ONEDNN_OPTS"] == "1" and env["TF_DETERMINISTIC_OPS"] == "0"
    assert recorded_settings(env)["OMP_NUM_THREADS"] == "1"


def test_a_cpu_cell_hides_every_gpu_even_when_the_caller_named_some():
    env = cell_environment(_spec(device="cpu"), base={"CUDA_VISIBLE_DEVICES": "0,1"})
    assert env["CUDA_VISIBLE_DEVICES"] == ""


def test_a_gpu_cell_keeps_the_callers_gpus_or_takes_one_per_worker():
    assert cell_environment(_spec(device="cuda"), base={"CUDA_VISIBLE_DEVICES": "3"}
                            )["CUDA_VISIBLE_DEVICES"] == "3"
    assert cell_environment(_spec(device="cuda", workers=2), base={}
                            )["CUDA_VISIBLE_DEVICES"] == "0,1"


def test_affinity_caps_the_cores_to_the_thread_count():
    available = sorted(os.sched_getaffinity(0))
    assert affinity_cores(1) == available[:1]
    assert affinity_cores(len(available) + 8) == available
    env = cell_environment(_spec(threads=1), base={})
    assert env["DLBENCH_CPU_AFFINITY"] == str(available[0])


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid", *args],
                   cwd=root, check=True, capture_output=True)


def test_git_state_tells_a_clean_tree_from_edited_measuring_code(tmp_path):
    assert git_state(tmp_path)["commit"] == "unknown"
    _git(tmp_path, "init", "-q")
    (tmp_path / "runner").mkdir()
    (tmp_path / "runner" / "x.py").write_text("a = 1\n")
    (tmp_path / "README.md").write_text("hello\n")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-qm", "first")
    clean = git_state(tmp_path)
    assert len(clean["commit"]) == 40 and clean["dirty"] is False
    assert clean["measurement_code_dirty"] is False
    (tmp_path / "README.md").write_text("edited\n")
    prose = git_state(tmp_path)
    assert prose["dirty"] is True and prose["measurement_code_dirty"] is False
    (tmp_path / "runner" / "x.py").write_text("a = 2\n")
    assert git_state(tmp_path)["measurement_code_dirty"] is True


def _request(suite: str, device: str) -> RunRequest:
    return RunRequest(suite=suite, device=device, threads=1)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_a_suite_grid_takes_its_cpu_sizes_only_on_a_cpu(device):
    grids = {"standard": {"epochs": 20, "params": {"a": 1, "b": 2},
                          "cpu": {"epochs": 5, "params": {"b": 3}}}}
    grid = suite_grid(grids, _request("standard", device))
    if device == "cpu":
        assert grid == {"epochs": 5, "params": {"a": 1, "b": 3}}
    else:
        assert grid == {"epochs": 20, "params": {"a": 1, "b": 2}}
