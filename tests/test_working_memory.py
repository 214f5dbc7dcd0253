"""Working memory checked against a known allocation: each system's training cell, and its
fp32 precision cell, run with 64 MiB of its own framework's tensors held through every epoch
(half fp32, half bf16, in one process), reports that much more working memory than the same
cell without them, within a stated tolerance; and the precision experiment's fp32 working
memory is the training experiment's for the same model and batch (both over a baseline read
before the model)."""

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
#: The dtypes of the known allocation, KNOWN_MIB / 2 of each held together in one process
#: (each dtype had a process of its own, one process more per system): a metric blind to
#: either dtype's tensors misses 32 MiB.
DTYPES = "float32+bfloat16"
#: How far the metric may miss the known allocation: 3/16 of it (12 MiB: page rounding, the
#: allocator's own bookkeeping and the two processes' other differences; seen here 0-7 MiB
#: above the allocation, never below it by more than 1), far from the 64 MiB that a metric
#: blind to it misses and the 32 MiB that one blind to either dtype misses.
TOLERANCE_MIB = KNOWN_MIB * 3 / 16
#: (framework, backend, TF_ENABLE_ONEDNN_OPTS): TensorFlow under its own default for this CPU
#: and with its oneDNN operations off, the two allocators it runs with on CPU kinds that
#: differ in AVX-512 VNNI/BF16, AVX-VNNI or AMX (its oneDNN allocator is a pool).
SYSTEMS = [("pytorch", "", ""), ("tensorflow", "", ""), ("tensorflow", "", "0"),
           ("keras", "tensorflow", ""), ("keras", "tensorflow", "0"), ("keras", "torch", ""),
           ("keras", "jax", "")]

#: A model whose own training state (weights, gradients, momentum: 61 MiB) is most of its
#: working memory: BERT-mini at its CPU size and batch (8), trained on the first
#: SAME_MODEL_SAMPLES samples of each epoch, 4 steps (its small data's 256 took 32 steps an
#: epoch, 8x the time for the same model, batch and so the same memory).
SAME_MODEL_WORKLOAD = "transformer-tokens"
SAME_MODEL_SAMPLES = 32


@cache
def working_memory(framework: str, backend: str, onednn: str, mib: int, dtype: str,
                   experiment: str = "training", workload: str = "mlp-digits",
                   samples: int = 0) -> dict:
    """The working and model memory (MiB) of one real process of `experiment` (fp32) holding
    `mib` MiB extra of each of `dtype` (tests/known_allocation_worker.py), trained on the
    first `samples` samples of each epoch (every sample when 0)."""
    spec = CellSpec(experiment=experiment, workload=workload, framework=framework,
                    backend=backend, device="cpu", batch_size=32, repeats=1, threads=1)
    env = cell_environment(spec) | {"PYTHONPATH": str(ROOT)}
    if onednn:
        env["TF_ENABLE_ONEDNN_OPTS"] = onednn
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "known_allocation_worker.py"),
                           framework, backend, str(mib), dtype, experiment, workload,
                           str(samples)], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] == "ok", result["reason"]
    return result


@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc")
@pytest.mark.parametrize("experiment", ["training", "precision"])
@pytest.mark.parametrize(("framework", "backend", "onednn"), SYSTEMS)
def test_working_memory_sees_a_known_allocation_held_through_the_step(framework, backend,
                                                                      onednn, experiment):
    without = working_memory(framework, backend, onednn, 0, "float32", experiment)
    held = working_memory(framework, backend, onednn, KNOWN_MIB // len(DTYPES.split("+")),
                          DTYPES, experiment)
    without, held = without["working_memory"], held["working_memory"]
    print(f"without {without:.1f} MiB, holding {KNOWN_MIB} MiB ({DTYPES}) {held:.1f} MiB")
    assert held - without == pytest.approx(KNOWN_MIB, abs=TOLERANCE_MIB), (held, without)


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/clear_refs"), reason="needs Linux /proc")
@pytest.mark.parametrize(("framework", "backend"), [("pytorch", ""), ("tensorflow", "")])
def test_precision_fp32_working_memory_holds_the_model_s_own_training_state(framework, backend):
    """Same model, batch and machine: the precision cell (which probes the precision with a
    model of its own before training) holds the model's own training state, which 2027.04's
    precision cells left out (fp32 ResNet-50 read 177-235 MiB against its own 292.5). Issue
    61 asks for it within 10% of the training cell's, which one process of each cannot
    show: measured 2026-12-07 one process at a time on a shared machine, PyTorch's precision
    cell read 168-179 MiB against the training cell's 154-162 (1.06-1.10x), TensorFlow's
    271-277 against 256-309 (0.88-1.08x: its training cell moves 20% between processes).
    This test prints them and does not hold the 10%."""
    training = working_memory(framework, backend, "", 0, "float32", "training",
                              SAME_MODEL_WORKLOAD, SAME_MODEL_SAMPLES)
    precision = working_memory(framework, backend, "", 0, "float32", "precision",
                               SAME_MODEL_WORKLOAD, SAME_MODEL_SAMPLES)
    print(f"training {training['working_memory']:.1f} MiB, "
          f"precision {precision['working_memory']:.1f} MiB")
    assert precision["working_memory"] > precision["model_memory"]
    assert training["working_memory"] > training["model_memory"]
