"""The training timing protocol, shared by every framework's training code.

A framework supplies a `Trainer` (its own model, loop and evaluation); this module owns
the clock, the epoch order, the repeats and the metrics, so every framework is timed alike.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from dlbench.schema import CellStatus
from runner.datasets import Dataset
from runner.measure import NS_PER_S, PeakRss, clock_ns
from runner.outcome import CellOutcome, Fairness, Observation
from runner.repeats import adaptive_repeats, decision_details
from runner.spec import CellSpec
from runner.workloads import Layer, Workload, epoch_order, get_workload, initial_layers
from runner.workloads import load_workload_data, model_input


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


@dataclass(frozen=True)
class TrainingData:
    """The arrays a cell trains on, already shaped for the model."""

    workload: Workload
    dataset: Dataset
    x_train: np.ndarray
    x_test: np.ndarray


def training_data(spec: CellSpec) -> TrainingData:
    """Load the workload's dataset and shape it for its model."""
    workload = get_workload(spec.workload)
    dataset = load_workload_data(workload, spec.data_dir, size=spec.params.get("data_size", ""))
    return TrainingData(workload, dataset, model_input(workload, dataset, dataset.x_train),
                        model_input(workload, dataset, dataset.x_test))


def measure_training(spec: CellSpec, trainer: Trainer, data: TrainingData,
                     fairness: Fairness) -> CellOutcome:
    """Train repeatedly from the same initial weights, recording every epoch, until the
    steady epoch time's interval is tight enough (runner.repeats)."""
    epochs = int(spec.params["epochs"])
    layers = initial_layers(data.workload, data.dataset)
    observations, decision = adaptive_repeats(
        spec, lambda repeat: one_training(trainer, data, layers, epochs, repeat),
        key_metric="steady_epoch_time")
    return CellOutcome(CellStatus.OK, observations, fairness,
                       details=decision_details(decision, "steady_epoch_time"))


def one_training(trainer: Trainer, data: TrainingData, layers: list[Layer], epochs: int,
                 repeat: int) -> list[Observation]:
    """One repeat: train `epochs` epochs from `layers`, timing each; returns its observations."""
    trainer.reset(layers)
    workload, dataset = data.workload, data.dataset
    times, observations = [], []
    time_to_target = None
    with PeakRss() as rss:
        for epoch in range(epochs):
            order = epoch_order(len(dataset.y_train), epoch, workload.seed)
            x, y = data.x_train[order], dataset.y_train[order]
            start = clock_ns()
            loss = trainer.train_epoch(x, y)
            times.append((clock_ns() - start) / NS_PER_S)
            accuracy = trainer.accuracy(data.x_test, dataset.y_test)  # outside the timer
            if time_to_target is None and accuracy >= workload.target_accuracy:
                time_to_target = sum(times)
            observations += [Observation("epoch_time", times[-1], repeat, epoch),
                             Observation("epoch_loss", float(loss), repeat, epoch)]
    steady = statistics.median(times[1:]) if len(times) > 1 else times[0]
    peak = trainer.peak_memory_mib()
    observations += [
        Observation("first_epoch_time", times[0], repeat),
        Observation("steady_epoch_time", steady, repeat),
        Observation("train_throughput", len(dataset.y_train) / steady, repeat),
        Observation("test_accuracy", accuracy, repeat),
        Observation("peak_memory", peak if peak is not None else rss.peak_mib, repeat),
    ]
    if time_to_target is not None:
        observations.append(Observation("time_to_target", time_to_target, repeat))
    return observations


def training_fairness(spec: CellSpec, data: TrainingData, *, timer_includes: str,
                      compile_mode: str, data_pipeline: str, settings: dict[str, str]) -> Fairness:
    """The manifest every training cell carries."""
    workload = data.workload
    return Fairness(
        timer_includes=timer_includes,
        precision_policy=f"{spec.precision} (float32 weights and activations)",
        compile_mode=compile_mode,
        data_pipeline=data_pipeline,
        threads=spec.threads,
        batch_size=spec.batch_size,
        notes=(f"SGD lr={workload.learning_rate} momentum={workload.momentum}, softmax "
               f"cross-entropy (mean), same initial weights and epoch order in every "
               f"framework; {spec.params['epochs']} epochs; test accuracy evaluated after "
               f"each epoch, outside the timer"),
        settings=settings,
    )
