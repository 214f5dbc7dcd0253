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
from dlbench.runner.process.cellenv import cell_environment

ROOT = Path(__file__).resolve().parents[1]
KNOWN_MIB = 64
#: How far the metric may miss the known allocation: 1/8 of it (page rounding, the
#: allocator's own bookkeeping, and the two processes' other differences).
TOLERANCE_MIB = KNOWN_MIB / 8
SYSTEMS = [("pytorch", ""), ("tensorflow", ""), ("keras", "tensorflow"), ("keras", "torch"),
           ("keras", "jax")]


@cache
def working_memory(framework: str, backend: str, mib: int, dtype: str) -> float:
    """The working memory (MiB) of one real training process holding `mib` MiB extra."""
    spec = CellSpec(experiment="training", workload="mlp-digits", framework=framework,
                    backend=backend, device="cpu", batch_size=32, repeats=1, threads=1)
    env = cell_environment(spec) | {"PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "known_allocation_worker.py"),
                           framework, backend, str(mib), dtype], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", result["reason"]
    return float(result["working_memory"])


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc")
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize(("framework", "backend"), SYSTEMS)
def test_working_memory_sees_a_known_allocation_held_through_the_step(framework, backend,
                                                                      dtype):
    without = working_memory(framework, backend, 0, "float32")
    held = working_memory(framework, backend, KNOWN_MIB, dtype)
    assert held - without == pytest.approx(KNOWN_MIB, abs=TOLERANCE_MIB), (held, without)
