"""The timing protocol's building blocks: a monotonic clock, device sync, peak memory."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psutil

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
    """Samples this process's resident memory in a thread; `peak_mib` is the highest seen."""

    def __init__(self, interval_s: float = 0.005) -> None:
        self._process = psutil.Process()
        self._interval_s = interval_s
        self._peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self._peak = max(self._peak, self._process.memory_info().rss)
            self._stop.wait(self._interval_s)

    def __enter__(self) -> PeakRss:
        self._peak = self._process.memory_info().rss
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._peak = max(self._peak, self._process.memory_info().rss)

    @property
    def peak_mib(self) -> float:
        return self._peak / 2**20
