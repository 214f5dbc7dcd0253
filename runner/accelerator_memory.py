"""Accelerator presence and allocator peak memory for whichever backend a Keras cell uses."""

from __future__ import annotations

from runner.spec import CellSpec


def _backend(spec: CellSpec) -> str:
    return spec.backend if spec.framework == "keras" else {"pytorch": "torch"}.get(
        spec.framework, spec.framework)


def missing_accelerator(spec: CellSpec) -> str:
    """Why a cuda cell cannot run with this backend here, or '' when it can."""
    if spec.device != "cuda":
        return ""
    backend = _backend(spec)
    if backend == "torch":
        import torch

        return "" if torch.cuda.is_available() else "PyTorch sees no CUDA device"
    if backend == "tensorflow":
        import tensorflow as tf

        return "" if tf.config.list_physical_devices("GPU") else "TensorFlow sees no GPU"
    import jax

    return "" if jax.default_backend() == "gpu" else "JAX sees no GPU"


def reset_peak(spec: CellSpec) -> None:
    """Start a new peak-memory window on the accelerator (no-op on the CPU)."""
    if spec.device != "cuda":
        return
    backend = _backend(spec)
    if backend == "torch":
        import torch

        torch.cuda.reset_peak_memory_stats()
    elif backend == "tensorflow":
        import tensorflow as tf

        tf.config.experimental.reset_memory_stats("GPU:0")


def peak_mib(spec: CellSpec) -> float | None:
    """Allocator peak on the accelerator since reset_peak, or None on the CPU."""
    if spec.device != "cuda":
        return None
    backend = _backend(spec)
    if backend == "torch":
        import torch

        return torch.cuda.max_memory_allocated() / 2**20
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.config.experimental.get_memory_info("GPU:0")["peak"] / 2**20
    import jax

    stats = jax.devices()[0].memory_stats() or {}
    return stats.get("peak_bytes_in_use", 0) / 2**20
