"""Framework adapters: one module per framework, the only code that knows its API.

An adapter configures its framework (threads, pinned numerics flags, a fresh compiler
cache), says whether it can run a cell and why not (benchopt-style declarative skip: a
package missing, an accelerator missing), builds a workload's model from the canonical
weights, moves data to the device, synchronises, and reads accelerator memory.
Experiments reach a framework only through its adapter and their own <framework>.py file;
adding a framework means one adapter here plus one small file per experiment.
"""

from __future__ import annotations

import atexit
import importlib
import shutil
import tempfile
from typing import Any

import numpy as np

from dlbench.runner.cell.environment import recorded_settings
from dlbench.runner.cell.frameworks import missing_modules
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, Workload


class Adapter:
    """What every framework adapter offers; each method a framework lacks says so."""

    def __init__(self, spec: CellSpec) -> None:
        self.spec = spec

    def skip_reason(self) -> str:
        """Why this cell cannot run here ('' when it can): packages first, then devices."""
        missing = missing_modules(self.spec.framework_id)
        if missing:
            return f"not installed: {', '.join(missing)}"
        return self.missing_accelerator()

    #: How the framework's count of accelerators reads in a skip reason ("{seen}" its count).
    accelerators_seen = ""

    def missing_accelerator(self) -> str:
        """Why the cell's device is not usable by this framework here, or '': a cuda cell
        needs one accelerator per worker (at least one)."""
        if self.spec.device != "cuda":
            return ""
        seen, needed = self.visible_accelerators(), max(1, self.spec.workers)
        if seen < needed:
            return self.accelerators_seen.format(seen=seen, needed=needed)
        return ""

    def visible_accelerators(self) -> int:
        """How many CUDA accelerators the framework sees."""
        raise NotImplementedError

    def configure(self) -> dict[str, str]:
        """Apply threads and pinned flags; return them as strings for the fairness manifest."""
        import os

        return recorded_settings(dict(os.environ)) | {"threads": str(self.spec.threads)}

    def build_model(self, workload: Workload, layers: list[Layer],
                    input_shape: tuple[int, ...]) -> Any:
        """The workload's model holding exactly `layers`: the runner's one route from a
        workload to a framework's model (parity's float64 reference forward is
        dlbench.runner.models.reference_forward)."""
        raise NotImplementedError

    def to_device(self, x: np.ndarray) -> Any:
        """`x` as this framework's tensor on the cell's device (images in its layout)."""
        raise NotImplementedError

    def sync(self) -> None:
        """Wait until the device has finished all queued work."""

    def warm_up(self) -> None:
        """Pay the framework's process-level first use (lazy kernels, allocator pools) on a
        throwaway toy model, so that the memory baseline taken after it holds them."""

    def reset_peak(self) -> None:
        """Start a new accelerator peak-memory window (no-op on the CPU)."""

    def accelerator_peak_mib(self) -> float | None:
        """Accelerator allocator peak since reset_peak, or None on the CPU."""
        return None

    def compile_cache_files(self) -> int | None:
        """Files in this process's on-disk compiler cache, or None without one."""
        return None


def adapter_for(spec: CellSpec) -> Adapter:
    """The adapter of `spec`'s framework, in dlbench.runner.worker.adapters.<framework> (imports that
    framework)."""
    module = importlib.import_module(f"dlbench.runner.worker.adapters.{spec.framework}")
    return module.ADAPTER(spec)


def fresh_cache_dir(prefix: str) -> str:
    """A new empty directory for a compiler cache, removed when the process ends."""
    path = tempfile.mkdtemp(prefix=f"dlbench-{prefix}-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def cache_files(path: str) -> int:
    """How many files a compiler cache directory holds."""
    from pathlib import Path

    root = Path(path)
    return sum(1 for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0
