"""The CPU's compute peak as a run records it: the bound (cores x the clock measured under
load x the core's FMA FLOP per cycle, dlbench.core.machine.fma_peak) beside large matrix-multiply
probes through NumPy and torch's own kernels. The probes are measurements to read against the
bound, never part of it: a probe above the bound is a defect the report flags."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

from dlbench.core.machine.fma_peak import bound_of
from dlbench.runner.driver.machine.clock import sustained_clock

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


def cpu_peak(cpu: Mapping) -> dict:
    """The CPU's peak record for its cpu record (dlbench.runner.driver.machine.environment):
    the measured clock, the bound per precision with its derivation, and the probes."""
    probes = {"numpy_fp32_flops": numpy_probe(CPU_PROBE_SIZE)} | torch_probe(CPU_PROBE_SIZE)
    return peak_record(cpu, sustained_clock(), probes)


def kept_cpu_peak(cpu: Mapping) -> dict:
    """cpu_peak(cpu); where PROBE_CACHE names a folder (a test session: many runs on one
    machine within minutes) the one measured first there under this machine's probe key, its
    core count and NumPy's version (dlbench.runner.driver.machine.kernels.kept_answer), kept
    only with every probe's rate."""
    from dlbench.runner.driver.machine.kernels import PROBE_CACHE, kept_answer

    folder = os.environ.get(PROBE_CACHE)
    if not folder:
        return cpu_peak(cpu)
    return kept_answer(Path(folder), peak_key(), lambda: cpu_peak(cpu),
                       keep=lambda peak: len(peak["probes"]) == 5)


def peak_key() -> str:
    """The key of a kept CPU peak: the frameworks' probe facts, the cores it may use, NumPy's
    version and the probes' own code."""
    from importlib import metadata

    from dlbench.runner.driver.machine.kernels import decisive_facts, probe_key

    facts = decisive_facts() | {"peak": [CPU_PROBE_SIZE, sorted(os.sched_getaffinity(0)),
                                         metadata.version("numpy"), _TORCH_PROBE]}
    return f"peak-{probe_key(facts)}"


def peak_record(cpu: Mapping, clock: dict, probes: dict) -> dict:
    """The recorded peak: the measured clock, per precision the bound and how it was derived
    (None where no clock is known), and the probes beside it."""
    record = {"clock": clock, "probes": probes,
              "probe": f"{CPU_PROBE_SIZE}x{CPU_PROBE_SIZE} matmul through NumPy (fp32) and "
                       "torch (fp32 and bf16) on every usable core, best of several after one "
                       "warm-up"}
    for key in ("fp32_flops", "bf16_flops"):
        bound = bound_of(cpu, clock, key)
        record[key] = bound.flops if bound else None
        record[f"{key}_basis"] = bound.derivation if bound else "no clock known: no bound"
    return record


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
