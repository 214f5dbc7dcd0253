"""The CPU's compute peak as a run records it: the theoretical FMA peak with its assumptions
(dlbench.core.fma_peak), and large matrix-multiply probes through NumPy and torch's own
kernels. The recorded peak is the largest of them; the report raises it further to any rate a
cell achieved (dlbench.core.conditions), so no cell can exceed it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

from dlbench.core.cpu_flags import cpu_flags
from dlbench.core.fma_peak import Clock, theoretical_peak

#: Square matrix size of the CPU probes: large enough for the sgemm kernels' full speed.
CPU_PROBE_SIZE = 2048

_TORCH_PROBE = """
import json, time, torch
n, rates = {size}, {{}}
for name, dtype, tries in (("fp32", torch.float32, 5), ("bf16", torch.bfloat16, 3)):
    a, b = (torch.randn(n, n, dtype=dtype) for _ in range(2))
    a @ b; best = float("inf")
    for _ in range(tries):
        start = time.perf_counter(); a @ b; best = min(best, time.perf_counter() - start)
    rates[name] = 2.0 * n ** 3 / best
rates["version"] = torch.__version__
rates["threads"] = torch.get_num_threads()
print(json.dumps(rates))
"""


def cpu_peak(flags: set[str] | None = None) -> dict:
    """The CPU's peak record: the theoretical FMA figure, the probes, and for fp32 and bf16
    the largest of them with what set it."""
    flags = cpu_flags() if flags is None else flags
    theory = theoretical_peak(flags, len(os.sched_getaffinity(0)), read_clock())
    probes = {"numpy_fp32_flops": numpy_probe(CPU_PROBE_SIZE)} | torch_probe(CPU_PROBE_SIZE)
    return combined_peak(theory, probes)


def kept_cpu_peak() -> dict:
    """cpu_peak(); where PROBE_CACHE names a folder (a test session: many runs on one machine
    within minutes) the one measured first there under this machine's probe key, its core
    count and NumPy's version (dlbench.runner.driver.machine.kernels.kept_answer), kept only with
    every probe's rate."""
    from dlbench.runner.driver.machine.kernels import PROBE_CACHE, kept_answer

    folder = os.environ.get(PROBE_CACHE)
    if not folder:
        return cpu_peak()
    return kept_answer(Path(folder), peak_key(), cpu_peak,
                       keep=lambda peak: len(peak["probes"]) == 5)


def peak_key() -> str:
    """The key of a kept CPU peak: the frameworks' probe facts, the cores it may use, NumPy's
    version and the probes' own code."""
    from importlib import metadata

    from dlbench.runner.driver.machine.kernels import decisive_facts, probe_key

    facts = decisive_facts() | {"peak": [CPU_PROBE_SIZE, sorted(os.sched_getaffinity(0)),
                                         metadata.version("numpy"), _TORCH_PROBE]}
    return f"peak-{probe_key(facts)}"


def combined_peak(theory: dict, probes: dict) -> dict:
    """The recorded peak per precision: the largest of the theoretical figure and the probes,
    with the name of the one that set it."""
    record = {"theoretical": theory, "probes": probes,
              "probe": f"{CPU_PROBE_SIZE}x{CPU_PROBE_SIZE} matmul through NumPy (fp32) and "
                       "torch (fp32 and bf16) on every usable core, best of several after one "
                       "warm-up"}
    for key in ("fp32", "bf16"):
        candidates = {f"theoretical FMA peak ({theory[f'{key}_unit']})": theory[f"{key}_flops"]}
        candidates |= {f"probe {name.removesuffix('_flops')}": value
                       for name, value in probes.items()
                       if name.endswith(f"{key}_flops") and value}
        known = {name: float(value) for name, value in candidates.items() if value}
        basis = max(known, key=known.get) if known else None
        record[f"{key}_flops"] = known[basis] if basis else None
        record[f"{key}_flops_basis"] = basis or "not known"
    return record


def read_clock() -> Clock | None:
    """The core clock: the maximum from cpufreq or lscpu where given, else the nominal clock
    from the brand string or /proc/cpuinfo (a hypervisor often shows only that)."""
    maximum = Path("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    try:
        return Clock(int(maximum.read_text()) / 1e6, str(maximum), True)
    except (OSError, ValueError):
        pass
    lscpu = _lscpu_max_mhz()
    if lscpu:
        return Clock(lscpu / 1000, "lscpu 'CPU max MHz'", True)
    return nominal_clock(_cpuinfo_text())


def _lscpu_max_mhz() -> float | None:
    try:
        done = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"^CPU max MHz:\s*([\d.]+)", done.stdout, re.MULTILINE)
    return float(found.group(1)) if found and float(found.group(1)) > 0 else None


def _cpuinfo_text() -> str:
    try:
        return Path("/proc/cpuinfo").read_text()
    except OSError:
        return ""


def nominal_clock(cpuinfo: str) -> Clock | None:
    """The nominal clock of /proc/cpuinfo's text: the brand string's '@ 2.10GHz', else the
    first 'cpu MHz' line; None where neither is there."""
    brand = re.search(r"^model name\s*:.*@\s*([\d.]+)\s*GHz", cpuinfo, re.MULTILINE)
    if brand:
        return Clock(float(brand.group(1)), "the brand string's nominal clock", False)
    mhz = re.search(r"^cpu MHz\s*:\s*([\d.]+)", cpuinfo, re.MULTILINE)
    if mhz and float(mhz.group(1)) > 0:
        return Clock(round(float(mhz.group(1)) / 1000, 3),
                     "/proc/cpuinfo 'cpu MHz' (the clock the kernel reports, nominal)", False)
    return None


def numpy_probe(size: int, tries: int = 5) -> float:
    """NumPy float32 size x size matmul rate (FLOP/s), best of `tries` after a warm-up."""
    import numpy as np

    a, b = np.random.default_rng(0).standard_normal((2, size, size), dtype=np.float32)
    a @ b
    best = float("inf")
    for _ in range(tries):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2.0 * size ** 3 / best


def torch_probe(size: int) -> dict:
    """torch's own fp32 and bf16 matmul rates on the CPU (a child process, so the driver never
    imports torch); empty where torch cannot run it."""
    try:
        done = subprocess.run([sys.executable, "-c", _TORCH_PROBE.format(size=size)],
                              capture_output=True, text=True, timeout=180)
        rates = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError):
        return {}
    if not rates:
        return {}
    return {"torch_fp32_flops": rates["fp32"], "torch_bf16_flops": rates["bf16"],
            "torch_version": rates["version"], "torch_threads": rates["threads"]}
