"""One training from the initial weights, timed epoch by epoch: what training, precision
and the frameworks' own loops share, so every framework's epochs are timed alike (the clock
and the trainer protocol: dlbench.runner.worker.epochs)."""

from __future__ import annotations

import statistics

import numpy as np

from dlbench.runner.cell.outcome import Observation
from dlbench.runner.worker.epochs import EpochClock, Trainer
from dlbench.runner.worker.harness import Cell
from dlbench.runner.worker.harness.data import CellData
from dlbench.runner.worker.measure import SteadyTrainingMemory
from dlbench.runner.workloads.catalog import epoch_order


def train_once(cell: Cell, trainer: Trainer, epochs: int, data: CellData | None = None,
               baseline: dict[str, int] | None = None) -> list[Observation]:
    """This process's repeat: build the model from the process's initial weights and train
    `epochs` epochs in the process's epoch order, timing each (sub-samples, step = epoch) and
    evaluating the test accuracy after each, outside the timer. The working memory is over
    `baseline` when given (read before a model was built), else over the memory at the start."""
    data = data or cell.data
    workload, dataset = data.workload, data.dataset

    def epoch_data(epoch: int) -> tuple[np.ndarray, np.ndarray]:
        order = epoch_order(len(dataset.y_train), epoch, data.seed)
        return data.x_train[order], dataset.y_train[order]

    memory = SteadyTrainingMemory(epochs, baseline)
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
