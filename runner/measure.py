"""The timing protocol's building blocks: a monotonic clock, device sync, peak memory."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

NS_PER_S = 1_000_000_000


def clock_ns() -> int:
    """The only clock dlbench reads: monotonic, nanoseconds."""
    return time.perf_counter_ns()


def timed(work: Callable[[], object], sync: Callable[[], None]) -> float:
    """Seconds taken by `work()`, with the device synchronised before the clock is read."""
    start = clock_ns()
    work()
    sync()
    return (clock_ns() - start) / NS_PER_S


class PeakRss:
    """Peak resident memory of this process over a region, from the kernel's high-water mark.

    Linux keeps VmHWM per process; writing 5 to /proc/self/clear_refs resets it, so the
    region is measured without a sampling thread competing with the timed work.
    """

    def __init__(self) -> None:
        self._peak_kib = 0

    @staticmethod
    def _high_water_kib() -> int:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise RuntimeError("/proc/self/status has no VmHWM line")

    def __enter__(self) -> PeakRss:
        Path("/proc/self/clear_refs").write_text("5")
        return self

    def __exit__(self, *exc: object) -> None:
        self._peak_kib = self._high_water_kib()

    @property
    def peak_mib(self) -> float:
        return self._peak_kib / 1024
