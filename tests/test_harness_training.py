"""The shared epoch clock: one training per process, timed by the harness whichever way a
framework drives its epochs (its own loop, or one fit with a callback)."""

from __future__ import annotations

import mmap

import numpy as np
import pytest

from dlbench.runner.worker.experiments.parity import reference
from dlbench.runner.worker.epochs import EpochClock, loop_epochs
from dlbench.runner.worker.harness.training import train_once
from dlbench.runner.cell.spec import CellSpec
from tests.harness_fixtures import numpy_cell

SPEC = CellSpec(experiment="training", workload="mlp-digits", framework="pytorch", backend="",
                device="cpu", batch_size=32, repeats=3, params={"epochs": 3})


class OneCallTrainer:
    """A NumPy model whose `train` drives every epoch itself, as Keras' fit does."""

    def __init__(self, loop: bool) -> None:
        self.loop, self.train_calls, self.seen = loop, 0, []

    def reset(self, layers) -> None:
        self.layers = layers

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        self.seen.append(y.copy())
        return float(np.mean(y))

    def train(self, epochs: int, epoch_data, clock: EpochClock) -> None:
        self.train_calls += 1
        if self.loop:
            loop_epochs(self, epochs, epoch_data, clock)
            return
        for epoch in range(epochs):  # one call, epochs inside, the clock around each
            clock.begin(epoch)
            loss = self.train_epoch(*epoch_data(epoch))
            clock.end(epoch, loss)

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(np.mean(np.argmax(reference.forward(self.layers, x), axis=1) == y))

    def peak_memory_mib(self) -> None:
        return None


@pytest.mark.parametrize("loop", [True, False])
def test_both_ways_of_driving_epochs_give_the_same_epochs_in_the_same_order(loop):
    cell = numpy_cell(SPEC)
    trainer = OneCallTrainer(loop)
    observations = train_once(cell, trainer, 3)
    assert trainer.train_calls == 1
    assert sorted(o.step for o in observations if o.metric == "epoch_time") == [0, 1, 2]
    assert not np.array_equal(trainer.seen[0], trainer.seen[1])  # each epoch's own order
    reference_trainer = OneCallTrainer(not loop)
    train_once(numpy_cell(SPEC), reference_trainer, 3)
    for a, b in zip(trainer.seen, reference_trainer.seen, strict=True):
        np.testing.assert_array_equal(a, b)


def test_a_trainer_that_times_fewer_epochs_than_asked_is_an_error():
    class Lazy(OneCallTrainer):
        def train(self, epochs, epoch_data, clock) -> None:
            clock.begin(0)
            clock.end(0, 0.0)

    with pytest.raises(RuntimeError, match="timed 1 of 3 epochs"):
        train_once(numpy_cell(SPEC), Lazy(True), 3)


def test_an_epoch_that_ends_without_beginning_is_refused():
    clock = EpochClock(lambda: 1.0)
    with pytest.raises(ValueError, match="ended without beginning"):
        clock.end(0, 0.1)
    clock.begin(0)
    clock.end(0, 0.1)
    assert clock.accuracies == [1.0] and len(clock.times) == 1


def test_process_k_starts_from_weights_k_and_order_k_in_every_framework():
    from dataclasses import replace

    cells = [numpy_cell(SPEC), numpy_cell(replace(SPEC, framework="keras", backend="jax")),
             numpy_cell(replace(SPEC, repeat_index=1))]
    assert [cell.data.seed for cell in cells] == [0, 0, 1]
    first, same, other = (cell.data.initial_layers() for cell in cells)
    assert all(np.array_equal(a.kernel, b.kernel) for a, b in zip(first, same, strict=True))
    assert not np.array_equal(first[0].kernel, other[0].kernel)
    trainers = [OneCallTrainer(True) for _ in cells]
    for cell, trainer in zip(cells, trainers, strict=True):
        train_once(cell, trainer, 1)
    np.testing.assert_array_equal(trainers[0].seen[0], trainers[1].seen[0])
    assert not np.array_equal(trainers[0].seen[0], trainers[2].seen[0])


class CompilingTrainer(OneCallTrainer):
    """A first epoch that needs 160 MiB for a moment (as a compiler does) and leaves 96 MiB
    resident (as a framework's pool and an optimizer's slots do), and later epochs that each
    need 24 MiB for a moment."""

    def train_epoch(self, x: np.ndarray, y: np.ndarray) -> float:
        if not hasattr(self, "kept"):
            _touch_fresh_pages(160)
            self.kept = np.ones(96 * 2**20, dtype=np.uint8)
        else:
            _touch_fresh_pages(24)
        return super().train_epoch(x, y)


def _touch_fresh_pages(mib: int) -> None:
    """Fresh pages from the kernel, each touched, then returned."""
    with mmap.mmap(-1, mib * 2**20) as transient:
        np.frombuffer(transient, dtype=np.uint8)[::4096] = 1


def _working_memory(observations) -> float:
    return next(o.value for o in observations if o.metric == "working_memory")


def test_training_working_memory_holds_what_the_first_epoch_kept_not_its_passing_peak():
    working = _working_memory(train_once(numpy_cell(SPEC), CompilingTrainer(True), 3))
    assert 110 <= working < 150  # the 96 MiB kept and the steady epochs' 24, not the 160


def test_one_epoch_has_no_steady_epochs_and_is_measured_whole():
    working = _working_memory(train_once(numpy_cell(SPEC), CompilingTrainer(True), 1))
    assert working >= 150  # the first epoch's passing 160 MiB: no steady epoch to leave it out
