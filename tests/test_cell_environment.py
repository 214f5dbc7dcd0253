"""The process environment of a cell, the git state recorded with a run, and suite grids."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from dlbench.runner.cell.environment import affinity_cores, cell_environment, recorded_settings
from dlbench.runner.driver.machine.environment import git_state
from dlbench.runner.driver.plan.experiments import suite_grid
from dlbench.runner.driver.plan.request import RunRequest
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
    assert env["TF_DETERMINISTIC_OPS"] == "0"
    assert recorded_settings(env)["OMP_NUM_THREADS"] == "1"


def test_tensorflow_chooses_its_own_onednn_default_whatever_the_shell_forced():
    env = cell_environment(_spec(framework="tensorflow", backend=""),
                           base={"TF_ENABLE_ONEDNN_OPTS": "1"})
    assert "TF_ENABLE_ONEDNN_OPTS" not in env
    assert recorded_settings(env)["TF_ENABLE_ONEDNN_OPTS"] == ""


def test_onednn_computes_fp32_in_fp32_whatever_the_shell_allowed():
    env = cell_environment(_spec(framework="tensorflow", backend=""),
                           base={"TF_SET_ONEDNN_FPMATH_MODE": "BF16",
                                 "ONEDNN_DEFAULT_FPMATH_MODE": "BF16"})
    assert "TF_SET_ONEDNN_FPMATH_MODE" not in env
    assert env["ONEDNN_DEFAULT_FPMATH_MODE"] == "STRICT"
    assert recorded_settings(env)["ONEDNN_DEFAULT_FPMATH_MODE"] == "STRICT"
    assert recorded_settings(env)["TF_SET_ONEDNN_FPMATH_MODE"] == ""


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


def _recorded_onednn(env: dict[str, str]) -> str:
    """What a TensorFlow cell records about oneDNN, in a fresh process under `env`."""
    code = ("from dlbench.runner.worker.adapters.tensorflow import configure_tensorflow\n"
            "from dlbench.runner.cell.spec import CellSpec\n"
            "spec = CellSpec(experiment='inference', workload='mlp-digits', "
            "framework='tensorflow', backend='', device='cpu', threads=1, repeats=1)\n"
            "print(configure_tensorflow(spec)['tf.onednn_custom_ops'])")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    return done.stdout.split()[-1]


def test_a_tensorflow_cell_records_the_onednn_choice_tensorflow_made_not_the_shells():
    forced = dict(os.environ, TF_ENABLE_ONEDNN_OPTS="1")
    default = {key: value for key, value in os.environ.items() if key != "TF_ENABLE_ONEDNN_OPTS"}
    assert _recorded_onednn(forced) == "True"
    cell_env = cell_environment(_spec(framework="tensorflow", backend=""), base=forced)
    assert _recorded_onednn(cell_env) == _recorded_onednn(default)


def test_the_machine_record_names_the_isa_and_each_frameworks_own_kernel_choice():
    """The CPU record keeps its earlier keys and adds the vendor, every kernel-deciding ISA
    flag and what each framework chose on this CPU (read in child processes)."""
    from dlbench.core.machine.machines import machine_kind
    from dlbench.runner.driver.machine.environment import cpu_facts

    cpu = cpu_facts()
    for key in ("model", "arch", "logical_cores", "physical_cores", "usable_cores",
                "avx512f", "avx512_bf16", "avx512_vnni", "avx_vnni", "amx", "vendor", "avx2",
                "avx512_fp16", "amx_bf16", "neon", "sve"):
        assert key in cpu, key
    kernels = cpu["framework_kernels"]
    assert set(kernels) == {"tensorflow", "torch", "openvino"}
    tensorflow, openvino = kernels["tensorflow"], kernels["openvino"]
    if not str(cpu["arch"]).upper().startswith("X86"):
        return  # the rules below are x86's (on ARM oneDNN is on and OpenVINO prefers f16)
    # TensorFlow's own rule: oneDNN custom operations on with VNNI, BF16 or AMX units
    decides = cpu["avx512_vnni"] or cpu["avx512_bf16"] or cpu["avx_vnni"] or cpu["amx"]
    assert tensorflow["onednn_custom_ops"] is bool(decides)
    assert kernels["torch"]["cpu_capability"] in {"AVX2", "AVX512", "DEFAULT", "NO AVX",
                                                  "ZVECTOR", "VSX", "SVE256"}
    if "error" not in openvino:  # OpenVINO's default precision follows the bf16 units
        native = cpu["avx512_bf16"] or cpu["amx"]
        assert openvino["default_inference_precision"] == ("bf16" if native else "f32")
    assert machine_kind({"cpu": cpu}).words.startswith(cpu["vendor"])
