"""Trains one real training cell in this process with a known allocation held through every
epoch (the framework's own tensors, in 2 MiB pieces as activations come), and prints the
cell's working memory as JSON: the working-memory tests run one such process per system and
size (a fresh process each, under the cell's own environment)."""

from __future__ import annotations

import importlib
import json
import sys

from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.epochs import Trainer

#: Size of each piece of the known allocation: an activation's size, not one large block
#: (a block above glibc's mmap threshold is always returned to the system when freed).
PIECE_MIB = 2


def allocate(library: str, mib: int, dtype: str) -> list:
    """`mib` MiB of `dtype` tensors of `library` (torch | tensorflow | jax), every page
    written, in PIECE_MIB pieces."""
    itemsize = 4 if dtype == "float32" else 2
    elements = PIECE_MIB * 2**20 // itemsize
    pieces = mib // PIECE_MIB
    if library == "torch":
        import torch

        return [torch.full((elements,), float(i), dtype=getattr(torch, dtype))
                for i in range(pieces)]
    if library == "tensorflow":
        import tensorflow as tf

        return [tf.fill([elements], tf.constant(float(i), getattr(tf, dtype)))
                for i in range(pieces)]
    import jax.numpy as jnp

    return [jnp.full((elements,), float(i), getattr(jnp, dtype)).block_until_ready()
            for i in range(pieces)]


class AllocatingClock:
    """The harness's epoch clock, with the known allocation made before each epoch begins and
    released once its steps are done, before the clock ends the epoch (where the harness
    may start a new memory region): held through every step of the epoch."""

    def __init__(self, clock, make) -> None:
        self._clock, self._make, self._held = clock, make, []

    def begin(self, epoch: int) -> None:
        self._held = self._make()
        self._clock.begin(epoch)

    def end(self, epoch: int, loss: float) -> None:
        self._held = []
        self._clock.end(epoch, loss)

    def __getattr__(self, name: str):
        return getattr(self._clock, name)


class AllocatingTrainer:
    """A framework's trainer whose epochs run under an AllocatingClock."""

    def __init__(self, trainer: Trainer, make) -> None:
        self._trainer, self._make = trainer, make

    def train(self, epochs: int, epoch_data, clock) -> None:
        self._trainer.train(epochs, epoch_data, AllocatingClock(clock, self._make))

    def __getattr__(self, name: str):
        return getattr(self._trainer, name)


def main(framework: str, backend: str, mib: int, dtype: str) -> None:
    """Print {"working_memory": MiB, "status": ...} of one training process."""
    module = importlib.import_module(f"dlbench.runner.worker.experiments.training.{framework}")
    measure = module.measure_training
    library = backend or ("torch" if framework == "pytorch" else framework)

    def measure_with_allocation(cell, trainer, fairness):
        return measure(cell, AllocatingTrainer(trainer, lambda: allocate(library, mib, dtype)),
                       fairness)

    module.measure_training = measure_with_allocation
    spec = CellSpec(experiment="training", workload="mlp-digits", framework=framework,
                    backend=backend, device="cpu", batch_size=32, repeats=1, threads=1,
                    params={"epochs": 3})
    outcome = module.run(spec)
    values = {o.metric: o.value for o in outcome.observations if o.step is None}
    print(json.dumps({"status": outcome.status.value, "reason": outcome.reason,
                      "working_memory": values.get("working_memory")}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4])
