"""The process environment a cell runs under: set before the framework is imported.

Every framework gets the same thread count, and settings that silently change numerics
or speed are pinned to stated values; all of it is recorded with the cell.

TensorFlow's oneDNN custom operations are the exception: TensorFlow decides them per CPU
(on Linux: on for CPUs with AVX-512 VNNI or BF16, AVX-VNNI or AMX, off on others), so the
cell runs under that default, whatever the caller's shell set, and the TensorFlow adapter
records what TensorFlow chose (`tf.onednn_custom_ops`). Forcing them on
(`TF_ENABLE_ONEDNN_OPTS=1`, pinned until 2026-12-05) made TensorFlow's graph path serve
ResNet-50 at batch 1 17x slower than its default on a 2-core AMD EPYC without AVX-512
(1.07 s against 62 ms), a setting no reader runs.

Their arithmetic is not TensorFlow's to choose: oneDNN (in TensorFlow and PyTorch) may compute
fp32 operations in bf16 when its fpmath mode allows it (ONEDNN_DEFAULT_FPMATH_MODE, and
TensorFlow's TF_SET_ONEDNN_FPMATH_MODE=BF16), so the mode is pinned strict: an fp32 cell
computes fp32 on every CPU kind, and a bf16 cell's bf16 comes from its own casts.
"""

from __future__ import annotations

import os

from dlbench.runner.cell.spec import CellSpec

#: Variables dlbench pins for every cell, whatever the caller's shell had.
PINNED_VARIABLES = (
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "TF_NUM_INTRAOP_THREADS",
    "TF_NUM_INTEROP_THREADS",
    "TF_ENABLE_ONEDNN_OPTS",
    "ONEDNN_DEFAULT_FPMATH_MODE",
    "TF_SET_ONEDNN_FPMATH_MODE",
    "TF_DETERMINISTIC_OPS",
    "TF_CPP_MIN_LOG_LEVEL",
    "KERAS_BACKEND",
    "CUDA_VISIBLE_DEVICES",
    "XLA_PYTHON_CLIENT_PREALLOCATE",
    "PYTHONHASHSEED",
    "DLBENCH_CPU_AFFINITY",
)


def cell_environment(spec: CellSpec, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a worker process measuring `spec`."""
    env = dict(os.environ if base is None else base)
    threads = str(spec.threads)
    env.update(
        {
            "OMP_NUM_THREADS": threads,
            "MKL_NUM_THREADS": threads,
            "OPENBLAS_NUM_THREADS": threads,
            "TF_NUM_INTRAOP_THREADS": threads,
            "TF_NUM_INTEROP_THREADS": "1",
            "TF_DETERMINISTIC_OPS": "0",
            "TF_CPP_MIN_LOG_LEVEL": "2",
            "ONEDNN_DEFAULT_FPMATH_MODE": "STRICT",  # fp32 computed in fp32 by oneDNN
            "KERAS_BACKEND": spec.backend or "tensorflow",
            "XLA_PYTHON_CLIENT_PREALLOCATE": "false",
            "PYTHONHASHSEED": "0",
            "DLBENCH_CPU_AFFINITY": ",".join(str(c) for c in affinity_cores(spec.threads)),
        }
    )
    env.pop("TF_ENABLE_ONEDNN_OPTS", None)  # TensorFlow's own default for this CPU
    env.pop("TF_SET_ONEDNN_FPMATH_MODE", None)  # TensorFlow's own: no implicit bf16
    if spec.device == "cpu":
        env["CUDA_VISIBLE_DEVICES"] = ""  # no framework may quietly use a GPU in a CPU cell
    else:
        env.setdefault("CUDA_VISIBLE_DEVICES", base_visible_devices(env, spec.workers))
    return env


def base_visible_devices(env: dict[str, str], workers: int = 1) -> str:
    """The caller's GPUs if it named them, else the first `workers` GPUs (data-parallel)."""
    return env.get("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(max(1, workers))))


def affinity_cores(threads: int) -> list[int]:
    """The first `threads` cores this process may use: a hard cap no framework can exceed."""
    available = sorted(os.sched_getaffinity(0))
    return available[: max(1, threads)]


def recorded_settings(env: dict[str, str]) -> dict[str, str]:
    """The pinned variables as they were set, for the fairness manifest."""
    return {name: env.get(name, "") for name in PINNED_VARIABLES}
