"""CPU steal over a process's timed window: /proc/stat read just outside each timed region
(an epoch, the latency calls, the throughput windows), never inside it.

The runner (dlbench.runner.driver.machine.load.timed_steal_reason) flags a process whose timed regions saw
more steal than MAX_TIMED_STEAL_SHARE: it is measured again and, if it stays busy, left out
of the answers. Steal over the whole process (the runner's before/after readings) also counts
imports, data loading and evaluation, which no timing holds.
"""

from __future__ import annotations

from pathlib import Path

#: Where the kernel's readings are (a test points it at a folder of known files).
PROC_STAT = Path("/proc/stat")


def cpu_ticks(stat: Path = PROC_STAT) -> tuple[int, int]:
    """(steal, total) jiffies of all CPUs, from /proc/stat's first line; (0, 0) where the
    file cannot be read (not Linux)."""
    try:
        with open(stat) as handle:
            fields = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    user, nice, system, idle, iowait, irq, softirq, steal = (fields + [0] * 8)[:8]
    return steal, user + nice + system + idle + iowait + irq + softirq + steal


class TimedWindow:
    """Steal and total ticks summed over the timed regions of one process."""

    def __init__(self, stat: Path = PROC_STAT) -> None:
        self.stat = stat
        self.steal = self.total = self.regions = 0
        self._open: tuple[int, int] | None = None

    def start(self) -> None:
        """A timed region begins (call just before its clock starts)."""
        self._open = cpu_ticks(self.stat)

    def stop(self) -> None:
        """The timed region ends (call just after its clock stops)."""
        if self._open is None:
            return
        steal, total = cpu_ticks(self.stat)
        self.steal += steal - self._open[0]
        self.total += total - self._open[1]
        self.regions += 1
        self._open = None

    def __enter__(self) -> TimedWindow:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def steal_share(self) -> float | None:
        """Steal ticks over all ticks of the timed regions; None before any tick passed."""
        return self.steal / self.total if self.total > 0 else None

    def details(self) -> dict:
        """What the cell's details keep: the share and how many regions it sums."""
        share = self.steal_share
        return {"steal_share": None if share is None else round(share, 4),
                "regions": self.regions, "ticks": self.total}
