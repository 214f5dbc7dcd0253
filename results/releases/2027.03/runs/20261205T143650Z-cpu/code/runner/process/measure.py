"""The timing protocol's building blocks: a monotonic clock and the process's own memory."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

NS_PER_S = 1_000_000_000
NS_PER_MS = 1_000_000


def clock_ns() -> int:
    """The only clock dlbench reads: monotonic, nanoseconds."""
    return time.perf_counter_ns()


def utc_timestamp() -> str:
    """Now, in UTC to the millisecond: when a process or cell started and ended (records
    only; durations come from the monotonic clock)."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


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

    Writing 5 to /proc/self/clear_refs resets VmHWM to the current RSS, so the region is
    measured without a sampling thread competing with the timed work.
    """

    reading = "VmHWM"

    def __enter__(self) -> WorkingMemory:
        Path("/proc/self/clear_refs").write_text("5")
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
    """Training's working memory on the CPU: the peak of the epochs after the first above what
    the first epoch left resident, so neither a compiler's memory (a compiled mode traces
    and compiles in its first steps) nor the state the first step allocates (weights,
    gradients, optimizer slots: model_memory counts those) is in it. A run of one epoch has
    no steady epochs and is measured over its whole training.

    The harness calls `first_epoch_done` after the first epoch, outside the timer."""

    def __init__(self, epochs: int) -> None:
        self._epochs = epochs
        self._whole = WorkingMemory()
        self._steady: WorkingMemory | None = None
        self.peak_mib = 0.0

    def __enter__(self) -> SteadyTrainingMemory:
        self._whole.__enter__()
        return self

    def first_epoch_done(self) -> None:
        if self._epochs > 1:
            self._steady = WorkingMemory().__enter__()

    def __exit__(self, *exc: object) -> None:
        region = self._steady or self._whole
        region.__exit__(*exc)
        self.peak_mib = region.peak_mib
