"""One training from the initial weights, timed epoch by epoch: what training, precision
and the frameworks' own loops share, so every framework's epochs are timed alike."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Protocol

import numpy as np

from dlbench.runner.harness import Cell
from dlbench.runner.harness.data import CellData
from dlbench.runner.harness.timed_window import TimedWindow
from dlbench.runner.process.measure import SteadyTrainingMemory, clock_ns, seconds_since
from dlbench.runner.cell.outcome import Observation
from dlbench.runner.workloads.catalog import Layer, epoch_order


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


def train_once(cell: Cell, trainer: Trainer, epochs: int,
               data: CellData | None = None) -> list[Observation]:
    """This process's repeat: build the model from the process's initial weights and train
    `epochs` epochs in the process's epoch order, timing each (sub-samples, step = epoch) and
    evaluating the test accuracy after each, outside the timer."""
    data = data or cell.data
    workload, dataset = data.workload, data.dataset

    def epoch_data(epoch: int) -> tuple[np.ndarray, np.ndarray]:
        order = epoch_order(len(dataset.y_train), epoch, data.seed)
        return data.x_train[order], dataset.y_train[order]

    memory = SteadyTrainingMemory(epochs)
    clock = EpochClock(lambda: trainer.accuracy(data.x_test, dataset.y_test),
                       after_first_epoch=memory.first_epoch_done, window=cell.sampler.window)
    with memory:
        trainer.reset(data.initial_layers())
        trainer.train(epochs, epoch_data, clock)
    if len(clock.times) != epochs:
        raise RuntimeError(f"the trainer timed {len(clock.times)} of {epochs} epochs")
    times, observations = clock.times, []
    for epoch, (seconds, loss, accuracy) in enumerate(
            zip(times, clock.losses, clock.accuracies, strict=True)):
        observations += [cell.observe("epoch_time", seconds, epoch),
                         cell.observe("epoch_loss", loss, epoch),
                         cell.observe("epoch_accuracy", accuracy, epoch)]
    cell.sampler.once("epoch_time", "one training epoch per sub-sample", epochs)
    steady = statistics.median(times[1:]) if len(times) > 1 else times[0]
    peak = trainer.peak_memory_mib()
    observations += [
        cell.observe("first_epoch_time", times[0]),
        cell.observe("steady_epoch_time", steady),
        cell.observe("train_throughput", len(dataset.y_train) / steady),
        cell.observe("test_accuracy", clock.accuracies[-1]),
        cell.observe("working_memory", peak if peak is not None else memory.peak_mib),
    ]
    return observations + target_observations(cell, clock, workload.target_accuracy)


def target_observations(cell: Cell, clock: EpochClock, target: float) -> list[Observation]:
    """reached_target: 1 when the final test accuracy is at or above `target`, else 0 (the
    accuracy a training cell reports is its final one); time_to_target: the training time
    until the first epoch whose accuracy reached `target`, when one did."""
    observations = [cell.observe("reached_target", float(clock.accuracies[-1] >= target))]
    reached = [i for i, a in enumerate(clock.accuracies) if a >= target]
    if reached:
        observations.append(cell.observe("time_to_target", sum(clock.times[:reached[0] + 1])))
    return observations
