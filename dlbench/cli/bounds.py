"""Bounds of the numeric flags: each is a value a run can meet, finite, or a one-line
UsageError naming the flag, what it got and what is accepted."""

from __future__ import annotations

import math

from dlbench.core.text.errors import UsageError

#: Worker processes per cell (--repeats, reproduce --processes): more than any suite uses.
MAX_PROCESSES = 1000
#: Threads per framework.
MAX_THREADS = 4096
#: Seconds allowed per cell: one week.
MAX_TIMEOUT_S = 7 * 24 * 3600.0
#: Re-runs of a process measured on a busy machine.
MAX_BUSY_RETRIES = 100
#: Timed calls and training steps per process of a user's model (--steps).
MAX_MODEL_STEPS = 100_000
#: A TCP port; 0 lets the system pick a free one.
MAX_PORT = 65535


def bounded_int(flag: str, value: int | None, low: int, high: int) -> int | None:
    """`value` if it lies in [low, high] (None: the default); else UsageError."""
    if value is not None and not low <= value <= high:
        raise UsageError(f"{flag} {value} is out of range; expected {low} to {high}")
    return value


def bounded_seconds(flag: str, value: float | None, high: float) -> float | None:
    """`value` if finite, positive and at most `high` (None: the default); else UsageError."""
    if value is not None and not (math.isfinite(value) and 0 < value <= high):
        raise UsageError(f"{flag} {value} is not a number of seconds; expected more than 0 "
                         f"and at most {high:.0f}")
    return value
