"""One training from the initial weights, timed epoch by epoch: what training, precision
and the frameworks' own loops share, so every framework's epochs are timed alike."""

from __future__ import annotations

import statistics
from typing import Protocol

import numpy as np

from runner.harness import Cell
from runner.harness.data import CellData
from runner.measure import WorkingMemory, clock_ns, seconds_since
from runner.outcome import Observation
from runner.workloads import Layer, epoch_order


class Trainer(Protocol):
    """What a framework implements to be timed by this protocol."""

    def reset(self, layers: list[Layer]) -> None:
        """A fresh model holding exactly `layers` and a fresh optimizer."""

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        """One epoch over (x, y) in this order; returns the mean loss after syncing the device."""

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        """Fraction of correct predictions."""

    def peak_memory_mib(self) -> float | None:
        """Accelerator allocator peak since reset, or None on the CPU."""


def train_once(cell: Cell, trainer: Trainer, epochs: int,
               data: CellData | None = None) -> list[Observation]:
    """This process's repeat: build the model from the initial weights and train `epochs`
    epochs in the shared order, timing each (sub-samples, step = epoch)."""
    data = data or cell.data
    workload, dataset = data.workload, data.dataset
    times, observations = [], []
    time_to_target = None
    with WorkingMemory() as memory:
        trainer.reset(data.initial_layers())
        for epoch in range(epochs):
            order = epoch_order(len(dataset.y_train), epoch, workload.seed)
            x, y = data.x_train[order], dataset.y_train[order]
            start = clock_ns()
            loss = trainer.train_epoch(x, y)
            times.append(seconds_since(start))
            accuracy = trainer.accuracy(data.x_test, dataset.y_test)  # outside the timer
            if time_to_target is None and accuracy >= workload.target_accuracy:
                time_to_target = sum(times)
            observations += [cell.observe("epoch_time", times[-1], epoch),
                             cell.observe("epoch_loss", loss, epoch)]
    cell.sampler.once("epoch_time", "one training epoch per sub-sample", epochs)
    steady = statistics.median(times[1:]) if len(times) > 1 else times[0]
    peak = trainer.peak_memory_mib()
    observations += [
        cell.observe("first_epoch_time", times[0]),
        cell.observe("steady_epoch_time", steady),
        cell.observe("train_throughput", len(dataset.y_train) / steady),
        cell.observe("test_accuracy", accuracy),
        cell.observe("working_memory", peak if peak is not None else memory.peak_mib),
    ]
    if time_to_target is not None:
        observations.append(cell.observe("time_to_target", time_to_target))
    return observations
