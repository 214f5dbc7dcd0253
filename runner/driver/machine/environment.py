"""Capture the environment of a run: hardware, software versions, settings. Called explicitly,
never as a side effect of building a record."""

from __future__ import annotations

import hashlib
import os
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import psutil

from dlbench.core.declarations.runtimes import runtime_packages
from dlbench.core.declarations.systems import SYSTEMS
from dlbench.core.machine.cpu_flags import isa_features
from dlbench.runner.cell.environment import PINNED_VARIABLES
from dlbench.runner.driver.machine.kernels import cpu_info, framework_kernels, vendor_name
from dlbench.runner.driver.machine.peak import kept_cpu_peak

#: The packages whose versions a run records: every system's required modules
#: (dlbench.core.declarations.systems), the libraries the experiments share, and every runtime's
#: package (dlbench.core.declarations.runtimes).
FRAMEWORK_PACKAGES = tuple(dict.fromkeys(
    (*(m for s in SYSTEMS for m in s.required_modules), "jaxlib", "numpy", "onnx",
     "scikit-learn", *runtime_packages())))


def capture_environment(project_root: Path) -> dict:
    """Everything a reader needs to know about the machine and software of a run."""
    cpu = cpu_facts()
    return {
        "cpu": cpu,
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "gpus": gpu_facts(),
        "os": f"{platform.system()} {platform.release()}",
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "packages": package_versions(),
        "git": git_state(project_root),
        "environment_variables": {name: os.environ.get(name, "") for name in
                                  PINNED_VARIABLES + ("CUDA_VERSION", "NVIDIA_DRIVER_VERSION")},
        "hostname_sha256": hashlib.sha256(platform.node().encode()).hexdigest()[:12],
        "compute_peak": compute_peak(cpu),
    }


#: Square matrix size of the GPU peak probe: large enough to reach the matmul kernels' speed.
GPU_PROBE_SIZE = 8192


def compute_peak(cpu: dict | None = None) -> dict:
    """The machine's compute peak, the yardstick of achieved FLOP/s: on a GPU (torch, in a
    child process) fp32 and bf16 matmul rates, else the CPU's bound (cores x measured clock x
    its core's FMA FLOP per cycle) beside its large matmul probes
    (dlbench.runner.driver.machine.peak; kept for a test session)."""
    if gpu_facts():
        measured = _gpu_peak()
        if measured:
            return measured
    return kept_cpu_peak(cpu or cpu_facts())


_GPU_PROBE = """
import json, time, torch
torch.backends.cuda.matmul.allow_tf32 = False
n, peaks = {size}, {{}}
for name, dtype in (("fp32_flops", torch.float32), ("bf16_flops", torch.bfloat16)):
    a, b = (torch.randn(n, n, device="cuda", dtype=dtype) for _ in range(2))
    a @ b; torch.cuda.synchronize(); best = float("inf")
    for _ in range(5):
        start = time.perf_counter(); a @ b; torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    peaks[name] = 2.0 * n ** 3 / best
peaks["cuda_runtime"] = torch.version.cuda
peaks["cudnn"] = torch.backends.cudnn.version()
peaks["device"] = torch.cuda.get_device_name(0)
print(json.dumps(peaks))
"""


def _gpu_peak() -> dict | None:
    """fp32 (TF32 off) and bf16 torch matmul on GPU 0, or None where torch cannot run it."""
    import json

    try:
        done = subprocess.run([sys.executable, "-c", _GPU_PROBE.format(size=GPU_PROBE_SIZE)],
                              capture_output=True, text=True, timeout=120)
        peaks = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return None
    if not peaks:
        return None
    runtime = {key: peaks.pop(key, None) for key in ("cuda_runtime", "cudnn", "device")}
    return peaks | {"probe": f"torch {GPU_PROBE_SIZE}x{GPU_PROBE_SIZE} matmul on GPU 0 "
                             f"({runtime['device']}, CUDA runtime {runtime['cuda_runtime']}, "
                             f"cuDNN {runtime['cudnn']}), fp32 with TF32 off and bf16, best of "
                             "5 after one warm-up"}


def cpu_facts() -> dict:
    """The CPU: vendor, model, cores, the ISA features that decide the frameworks' kernels
    (dlbench.runner.driver.machine.kernels; the keys of earlier runs kept) and each framework's own
    kernel choice on it."""
    info = cpu_info()
    flags = set(info.get("flags", []))
    return {
        "vendor": vendor_name(info.get("vendor_id_raw", "")),
        "model": info.get("brand_raw", platform.processor()),
        "arch": info.get("arch", platform.machine()),
        "logical_cores": psutil.cpu_count(logical=True),
        "physical_cores": psutil.cpu_count(logical=False),
        "usable_cores": len(os.sched_getaffinity(0)),
        # the core's microarchitecture, which sets its FMA FLOP per cycle
        # (dlbench.core.machine.fma_peak)
        "family": info.get("family"), "model_number": info.get("model"),
        # avx512_vnni, avx512_bf16, avx_vnni and amx decide TensorFlow's default for its
        # oneDNN custom operations on Linux (on where any is present; cellenv.py)
        **isa_features(flags),
        "framework_kernels": framework_kernels(),
    }


def gpu_facts() -> list[dict]:
    """NVIDIA GPUs through NVML; an empty list where there are none."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # noqa: BLE001 - no driver, no library: no GPU to describe
        return []
    try:
        driver = pynvml.nvmlSystemGetDriverVersion()
        cuda = pynvml.nvmlSystemGetCudaDriverVersion()
        gpus = []
        for index in range(pynvml.nvmlDeviceGetCount()):
            handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            gpus.append({
                "index": index,
                "model": pynvml.nvmlDeviceGetName(handle),
                "memory_gib": round(pynvml.nvmlDeviceGetMemoryInfo(handle).total / 2**30, 1),
                "driver": driver,
                "cuda_driver": f"{cuda // 1000}.{cuda % 1000 // 10}",
            } | _gpu_clocks(pynvml, handle))
        return gpus
    finally:
        pynvml.nvmlShutdown()


def _gpu_clocks(pynvml, handle) -> dict:
    """The GPU's maximum SM and memory clocks and its power limit, each where NVML gives it."""
    readings = {
        "sm_clock_max_mhz": lambda: pynvml.nvmlDeviceGetMaxClockInfo(handle,
                                                                     pynvml.NVML_CLOCK_SM),
        "memory_clock_max_mhz": lambda: pynvml.nvmlDeviceGetMaxClockInfo(handle,
                                                                         pynvml.NVML_CLOCK_MEM),
        "sm_clock_mhz": lambda: pynvml.nvmlDeviceGetClockInfo(handle, pynvml.NVML_CLOCK_SM),
        "power_limit_w": lambda: pynvml.nvmlDeviceGetPowerManagementLimit(handle) / 1000,
    }
    facts = {}
    for name, read in readings.items():
        try:
            facts[name] = read()
        except pynvml.NVMLError:  # not supported on this GPU or driver
            facts[name] = None
    return facts


def package_versions() -> dict[str, str]:
    versions = {}
    for name in FRAMEWORK_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


#: What decides a measurement: a change here, uncommitted, makes a run irreproducible.
MEASUREMENT_CODE = ("runner", "dlbench", "pyproject.toml")


def git_state(project_root: Path) -> dict:
    """The project's commit, whether the tree had uncommitted changes, and whether the
    measuring code itself did (report/ edits do not change a measurement)."""
    def git(*args: str) -> str:
        result = subprocess.run(["git", *args], cwd=project_root, capture_output=True,
                                text=True, timeout=30)
        return result.stdout.strip() if result.returncode == 0 else ""

    commit = git("rev-parse", "HEAD")
    if not commit:
        return {"commit": "unknown", "dirty": None, "measurement_code_dirty": None}
    return {"commit": commit,
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "measurement_code_dirty": bool(git("status", "--porcelain", "--", *MEASUREMENT_CODE))}
