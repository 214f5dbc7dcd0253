"""Working memory checked against a known allocation: each system's training cell, run with
64 MiB of its own framework's tensors held through every epoch (fp32 and bf16), reports
that much more working memory than the same cell without them, within a stated tolerance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.cell.environment import cell_environment

ROOT = Path(__file__).resolve().parents[1]
KNOWN_MIB = 64
#: How far the metric may miss the known allocation: 3/16 of it (12 MiB: page rounding, the
#: allocator's own bookkeeping and the two processes' other differences; seen here 0-7 MiB
#: above the allocation, never below it by more than 1), far from the 64 MiB that a metric
#: blind to it misses.
TOLERANCE_MIB = KNOWN_MIB * 3 / 16
#: (framework, backend, TF_ENABLE_ONEDNN_OPTS): TensorFlow under its own default for this CPU
#: and with its oneDNN operations off, the two allocators it runs with on CPU kinds that
#: differ in AVX-512 VNNI/BF16, AVX-VNNI or AMX (its oneDNN allocator is a pool).
SYSTEMS = [("pytorch", "", ""), ("tensorflow", "", ""), ("tensorflow", "", "0"),
           ("keras", "tensorflow", ""), ("keras", "tensorflow", "0"), ("keras", "torch", ""),
           ("keras", "jax", "")]


@cache
def working_memory(framework: str, backend: str, onednn: str, mib: int, dtype: str) -> float:
    """The working memory (MiB) of one real training process holding `mib` MiB extra."""
    spec = CellSpec(experiment="training", workload="mlp-digits", framework=framework,
                    backend=backend, device="cpu", batch_size=32, repeats=1, threads=1)
    env = cell_environment(spec) | {"PYTHONPATH": str(ROOT)}
    if onednn:
        env["TF_ENABLE_ONEDNN_OPTS"] = onednn
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "known_allocation_worker.py"),
                           framework, backend, str(mib), dtype], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", result["reason"]
    return float(result["working_memory"])


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("framework", "backend", "onednn"), SYSTEMS)
def test_working_memory_sees_a_known_allocation_held_through_the_step(framework, backend,
                                                                      onednn, dtype):
    without = working_memory(framework, backend, onednn, 0, "float32")
    held = working_memory(framework, backend, onednn, KNOWN_MIB, dtype)
    print(f"without {without:.1f} MiB, holding {KNOWN_MIB} MiB {held:.1f} MiB")
    assert held - without == pytest.approx(KNOWN_MIB, abs=TOLERANCE_MIB), (held, without)
