"""The epoch clock and the trainer protocol: how a framework's training loop is timed epoch by
epoch (a loop trainer calls `loop_epochs`; Keras calls the clock from a callback). The
adapters implement it; dlbench.runner.worker.harness.training trains with it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from dlbench.runner.worker.measure import clock_ns, seconds_since
from dlbench.runner.worker.timed_window import TimedWindow
from dlbench.runner.workloads.catalog import Layer


class EpochClock:
    """The harness's clock for epochs: a trainer calls `begin` just before an epoch's first
    step and `end` just after reading its loss; `end` stops the clock first, then evaluates
    the test accuracy outside the timer."""

    def __init__(self, evaluate: Callable[[], float],
                 after_first_epoch: Callable[[], None] = lambda: None,
                 window: TimedWindow | None = None) -> None:
        self.evaluate = evaluate
        self.after_first_epoch = after_first_epoch
        self.window = window or TimedWindow()
        self.times: list[float] = []
        self.losses: list[float] = []
        self.accuracies: list[float] = []
        self._start: int | None = None

    def begin(self, epoch: int) -> None:
        """Epoch `epoch` starts now."""
        if epoch != len(self.times):
            raise ValueError(f"epoch {epoch} began after {len(self.times)} timed epochs")
        self.window.start()
        self._start = clock_ns()

    def end(self, epoch: int, loss: float) -> None:
        """Epoch `epoch` ended now with mean loss `loss` (already read from the device)."""
        if self._start is None or epoch != len(self.times):
            raise ValueError(f"epoch {epoch} ended without beginning")
        self.times.append(seconds_since(self._start))
        self.window.stop()
        self._start = None
        self.losses.append(float(loss))
        self.accuracies.append(self.evaluate())
        if epoch == 0:
            self.after_first_epoch()


#: Epoch index -> that epoch's training inputs and labels, in the shared order.
EpochData = Callable[[int], tuple[np.ndarray, np.ndarray]]


class Trainer(Protocol):
    """What a framework implements to be timed by this protocol."""

    def reset(self, layers: list[Layer]) -> None:
        """A fresh model holding exactly `layers` and a fresh optimizer."""

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        """One epoch over (x, y) in this order; returns the mean loss after syncing the device."""

    def train(self, epochs: int, epoch_data: EpochData, clock: EpochClock) -> None:
        """Train `epochs` epochs, calling clock.begin/end around each (a loop trainer:
        `loop_epochs`; Keras: one fit with a callback)."""

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        """Fraction of correct predictions."""

    def peak_memory_mib(self) -> float | None:
        """Accelerator allocator peak since reset, or None on the CPU."""


def loop_epochs(trainer: Trainer, epochs: int, epoch_data: EpochData,
                clock: EpochClock) -> None:
    """The `train` of a trainer with its own loop: one train_epoch call per epoch, each
    epoch's arrays gathered before the clock starts."""
    for epoch in range(epochs):
        x, y = epoch_data(epoch)
        clock.begin(epoch)
        loss = trainer.train_epoch(x, y)
        clock.end(epoch, loss)
