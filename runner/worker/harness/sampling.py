"""The one sampling policy of every experiment: one repeat per process, and inside it
timed sub-samples that each last at least a minimum window (pyperf-style loop calibration).

A call too short for the clock and the scheduler tick is timed `loops` times in one window
and the window divided by `loops`; the loop count is calibrated by doubling until one
window lasts `min_window_s`. Measurements whose natural unit already lasts a window (an
epoch, a compile) are timed once each. Every measurement's loops and windows go into the
cell's details, so a reader sees what each sub-sample is.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from dlbench.runner.worker.measure import NS_PER_S, clock_ns
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.timed_window import TimedWindow

#: The shortest window a timed sub-sample may last, by device (pyperf's default is 100 ms).
MIN_WINDOW_S = {"cpu": 0.1, "cuda": 0.1}
MAX_LOOPS = 1 << 20

POLICY = ("one repeat per worker process (repeat = process index); before anything is "
          "timed, the framework's process-level first use is paid on a throwaway toy model; "
          "inside a process, timed sub-samples each last at least min_window_s: short calls "
          "are looped, loops calibrated by doubling; epochs, first calls and single-call "
          "latencies are timed once each")


def _window_s(call: Callable[[], object], sync: Callable[[], None], loops: int) -> float:
    start = clock_ns()
    for _ in range(loops):
        call()
    sync()
    return (clock_ns() - start) / NS_PER_S


@dataclass
class Sampler:
    """Times sub-samples under the policy and remembers how, for the cell's details."""

    spec: CellSpec
    record: dict[str, dict] = field(default_factory=dict)
    window: TimedWindow = field(default_factory=TimedWindow)  # steal over the timed regions

    @property
    def min_window_s(self) -> float:
        return float(self.spec.params.get("min_window_s", MIN_WINDOW_S[self.spec.device]))

    def calibrate(self, call: Callable[[], object], sync: Callable[[], None]) -> int:
        """The smallest power-of-two loop count whose window lasts min_window_s."""
        loops = 1
        while loops < MAX_LOOPS and _window_s(call, sync, loops) < self.min_window_s:
            loops *= 2
        return loops

    def per_call_s(self, name: str, call: Callable[[], object], sync: Callable[[], None],
                   samples: int) -> list[float]:
        """`samples` calibrated windows of `call`; each value is one window / its loops."""
        loops = self.calibrate(call, sync)
        windows = [_window_s(call, sync, loops) for _ in range(max(1, samples))]
        self.record[name] = {"loops": loops, "samples": len(windows),
                             "median_window_s": statistics.median(windows),
                             "per_call_s": [window / loops for window in windows]}
        return [window / loops for window in windows]

    def once(self, name: str, what: str, samples: int = 1) -> None:
        """Note a measurement timed once per sub-sample, in its own natural unit."""
        self.record[name] = {"loops": 1, "samples": samples, "unit": what}

    def details(self) -> dict:
        """The policy as it ran, for the cell's details."""
        return {"sampling": {"policy": POLICY, "min_window_s": self.min_window_s,
                             "repeat_index": self.spec.repeat_index,
                             "measurements": self.record,
                             "timed_window": self.window.details()}}
