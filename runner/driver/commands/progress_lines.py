"""Plain progress lines for a log or CI: where no progress bar can be drawn (stdout is not
a terminal, or --no-progress), the run says which process finished, how, in how many
seconds, and about how long the rest will take. Lines are throttled: processes that end
within a few seconds of the last line are told together in the next one."""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from dlbench.runner.driver.store.run_store import CellRecord

#: The least time between two lines, in seconds.
MIN_INTERVAL_S = 5.0


def lines_wanted(progress_bar: bool, stream: TextIO | None = None) -> bool:
    """Whether a run prints progress lines: when the bar is off or stdout is not a terminal."""
    stream = stream or sys.stdout
    return not progress_bar or not stream.isatty()


def remaining_words(seconds: float) -> str:
    """An estimate of what remains, in words."""
    if seconds <= 0:
        return "nothing left to measure"
    if seconds < 60:
        return "under a minute left"
    return f"about {seconds / 60:.0f} min left"


@dataclass
class ProgressLines:
    """Writes one line per finished process, at most one every `min_interval_s`."""

    total: int  # the processes of the run's order
    done: int  # those finished before this log started
    stream: TextIO = field(default_factory=lambda: sys.stdout)
    min_interval_s: float = MIN_INTERVAL_S
    clock: Callable[[], float] = time.monotonic
    _held: list[CellRecord] = field(default_factory=list)
    _remaining_s: float = 0.0
    _last: float | None = None

    def finished(self, records: list[CellRecord], remaining_s: float) -> None:
        """`records` ended; `remaining_s` is the estimate of what is left after them."""
        self.done += len(records)
        self._held += records
        self._remaining_s = remaining_s
        if self._last is None or self.clock() - self._last >= self.min_interval_s:
            self.flush()

    def flush(self) -> None:
        """Write the line for every process held back by the throttle."""
        if not self._held:
            return
        self.stream.write(self.line(self._held) + "\n")
        self.stream.flush()
        self._held, self._last = [], self.clock()

    def line(self, records: list[CellRecord]) -> str:
        """`[done/total] cell process N: status in S s; about M min left` (processes that
        ended together: how many, by status, and the last of them)."""
        last = records[-1]
        told = (f"{last.spec.cell_id} process {last.spec.repeat_index}: "
                f"{last.outcome.status.value} in {last.wall_time_s:.1f} s")
        if len(records) > 1:
            counts = Counter(r.outcome.status.value for r in records)
            statuses = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
            told = f"{len(records)} processes finished ({statuses}), the last {told}"
        return f"[{self.done}/{self.total}] {told}; {remaining_words(self._remaining_s)}"
