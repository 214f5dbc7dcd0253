"""The timing protocol's building blocks: a monotonic clock and the process's own memory."""

from __future__ import annotations

import ctypes
import gc
import time
from pathlib import Path

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000


def clock_ns() -> int:
    """The only clock dlbench reads: monotonic, nanoseconds."""
    return time.perf_counter_ns()


def seconds_since(start_ns: int) -> float:
    """Seconds on the clock since `start_ns`."""
    return (clock_ns() - start_ns) / NS_PER_S


def process_memory_kib() -> dict[str, int]:
    """This process's resident memory (VmRSS), high-water mark (VmHWM) and file-backed
    resident pages (RssFile: mapped code and data files), in KiB, from /proc."""
    wanted = ("VmRSS", "VmHWM", "RssFile")
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key = line.split(":", 1)[0]
        if key in wanted:
            values[key] = int(line.split()[1])
    missing = [key for key in wanted if key not in values]
    if missing:
        raise RuntimeError(f"/proc/self/status has no {', '.join(missing)} line")
    return values


def return_free_memory() -> bool:
    """Hand the pages the C allocator holds free back to the system (glibc's malloc_trim(0),
    every arena), so that a region's high-water mark sees each page its work touches instead
    of reusing pages freed before it; False where the C library has no malloc_trim.

    Python's unreachable cycles are collected first: a model that a trainer's `reset`
    replaced lives on in a reference cycle until a collection (a PyTorch module does), and
    the precision probe's model, trained one step, was counted as a second model's memory."""
    gc.collect()
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return False
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    trim(0)
    return True


def added_kib(start: dict[str, int], end: dict[str, int], reading: str) -> int:
    """KiB that `end[reading]` (VmHWM or VmRSS) holds above the resident memory at `start`,
    less the file-backed pages (shared library code) first touched in between."""
    code_kib = max(0, end["RssFile"] - start["RssFile"])
    return max(0, end[reading] - start["VmRSS"] - code_kib)


class MemoryRegion:
    """A region's memory: `added_kib` of the `reading` at its end over its start."""

    reading = ""

    def __init__(self) -> None:
        self._start: dict[str, int] = {}
        self._kib = 0

    def __enter__(self) -> MemoryRegion:
        self._start = process_memory_kib()
        return self

    def __exit__(self, *exc: object) -> None:
        self._kib = added_kib(self._start, process_memory_kib(), self.reading)


class WorkingMemory(MemoryRegion):
    """Memory a region adds to the process on the CPU: the kernel's high-water mark over
    the region minus the resident memory at its start, less the file-backed pages (shared
    library code) first touched inside it.

    The allocator's free pages are returned to the system first (`return_free_memory`):
    glibc keeps freed blocks of up to 32 MiB in its arenas, and a region that reused what
    earlier work freed left no trace in the high-water mark (a training epoch after the first
    showed 0-2 MiB of a 64 MiB allocation it held; how much glibc kept depended on the
    framework's block sizes and threads, so on the kernels it chose for the CPU). Writing 5
    to /proc/self/clear_refs then resets VmHWM to the current RSS, so the region is measured
    without a sampling thread competing with the timed work.
    """

    reading = "VmHWM"

    def __enter__(self) -> WorkingMemory:
        _restart_high_water_mark()
        return super().__enter__()

    @property
    def peak_mib(self) -> float:
        return self._kib / 1024


class RetainedMemory(MemoryRegion):
    """Memory a region leaves resident on the CPU: the resident memory at its end minus at
    its start, less the file-backed pages (shared library code) first touched inside it."""

    reading = "VmRSS"

    @property
    def retained_mib(self) -> float:
        return self._kib / 1024


class SteadyTrainingMemory:
    """Training's working memory on the CPU: the peak resident memory of the epochs after the
    first above the resident memory before the model was built (after imports, data loading
    and the framework's first use), less shared-library code paged in between. The model's
    state, what the framework's allocator keeps from the first epoch (TensorFlow's oneDNN
    allocator is a pool that never shrinks) and every step's activations are in it; the
    first epoch's passing peak (tracing, a compiler's memory) is not: the high-water mark
    restarts after the first epoch, once the allocator's free pages are returned. A run of
    one epoch has no steady epochs and is measured over its whole training.

    Until 2026-12-06 the baseline was what the first epoch left resident, so a pool filled
    in the first epoch was never seen: TensorFlow held a 64 MiB allocation invisibly with
    its oneDNN allocator (on by default on CPUs with AVX-512 VNNI or BF16, AVX-VNNI or AMX)
    and showed it with oneDNN off, one cause of its working memory moving 8x between CPUs.

    The harness calls `first_epoch_done` after the first epoch, outside the timer. A protocol
    that builds a model before the region (precision's probe) passes the `baseline` it read
    before building one (`memory_baseline`), so the model is inside the measure either way."""

    def __init__(self, epochs: int, baseline: dict[str, int] | None = None) -> None:
        self._epochs = epochs
        self._baseline = baseline
        self._start: dict[str, int] = {}
        self.peak_mib = 0.0

    def __enter__(self) -> SteadyTrainingMemory:
        _restart_high_water_mark()
        self._start = self._baseline or process_memory_kib()
        return self

    def first_epoch_done(self) -> None:
        if self._epochs > 1:
            _restart_high_water_mark()

    def __exit__(self, *exc: object) -> None:
        self.peak_mib = added_kib(self._start, process_memory_kib(), "VmHWM") / 1024


def memory_baseline() -> dict[str, int]:
    """The process's memory readings with the allocator's free pages returned: the baseline
    of a working memory whose model is built later (SteadyTrainingMemory's `baseline`)."""
    return_free_memory()
    return process_memory_kib()


def _restart_high_water_mark() -> None:
    """Return the allocator's free pages, then reset VmHWM to the current resident memory."""
    return_free_memory()
    Path("/proc/self/clear_refs").write_text("5")
