"""Trains one real training or precision cell in this process with a known allocation held
through every epoch (the framework's own tensors of one or more dtypes, in 2 MiB pieces as
activations come), and prints the cell's working memory as JSON: the working-memory tests run
one such process per system, experiment and size (a fresh process each, under the cell's own
environment)."""

from __future__ import annotations

import importlib
import json
import sys

from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.worker.epochs import Trainer

#: Size of each piece of the known allocation: an activation's size, not one large block
#: (a block above glibc's mmap threshold is always returned to the system when freed).
PIECE_MIB = 2


def allocate_each(library: str, mib: int, dtypes: str) -> list:
    """`mib` MiB of tensors of `library` of each of `dtypes` ("float32", or several joined by
    "+": "float32+bfloat16" holds `mib` MiB of each), so one process checks every dtype's."""
    return [piece for dtype in dtypes.split("+") for piece in allocate(library, mib, dtype)]


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


def first_samples(epoch_data, samples: int):
    """`epoch_data` (epoch -> (x, y) in the epoch's order) cut to its first `samples`."""
    def cut(epoch: int) -> tuple:
        return tuple(part[:samples] for part in epoch_data(epoch))

    return cut


class AllocatingTrainer:
    """A framework's trainer whose epochs run under an AllocatingClock, on the first
    `samples` of each epoch's order when `samples` is given (fewer steps of the same model
    and batch: what the working memory holds does not grow with the steps)."""

    def __init__(self, trainer: Trainer, make, samples: int = 0) -> None:
        self._trainer, self._make, self._samples = trainer, make, samples

    def train(self, epochs: int, epoch_data, clock) -> None:
        if self._samples:
            epoch_data = first_samples(epoch_data, self._samples)
        self._trainer.train(epochs, epoch_data, AllocatingClock(clock, self._make))

    def __getattr__(self, name: str):
        return getattr(self._trainer, name)


#: The cell parameters of each experiment's measured process (epochs: one steady epoch and
#: more after the first; precision: a few inference calls after its training).
PARAMS = {"training": {"epochs": 3},
          "precision": {"epochs": 3, "warmup_calls": 2, "latency_calls": 5,
                        "throughput_batch": 8, "throughput_samples": 1, "min_window_s": 0.02,
                        "no_accuracy_vs_fp32": True}}


def with_allocation(experiment: str, module, make, samples: int = 0) -> None:
    """Hold the known allocation through every epoch of `experiment`'s training (on its first
    `samples` training samples when given): the training experiment's measure, or the
    `train_once` of the precision protocol."""
    if experiment == "training":
        measure = module.measure_training
        module.measure_training = lambda cell, trainer, fairness: measure(
            cell, AllocatingTrainer(trainer, make, samples), fairness)
        return
    from dlbench.runner.worker.experiments.precision import protocol

    train_once = protocol.train_once
    protocol.train_once = lambda cell, trainer, *rest: train_once(
        cell, AllocatingTrainer(trainer, make, samples), *rest)


def cell_spec(experiment: str, workload: str, framework: str, backend: str) -> CellSpec:
    """The measured cell: one fp32 process at the workload's CPU batch, small data."""
    from dlbench.runner.workloads.catalog import device_batch_size, get_workload

    params = dict(PARAMS[experiment])
    if get_workload(workload).profiles:
        params |= {"data_size": "small", "test_samples": 16}
    return CellSpec(experiment=experiment, workload=workload, framework=framework,
                    backend=backend, device="cpu",
                    batch_size=device_batch_size(get_workload(workload), "cpu"), repeats=1,
                    threads=1, params=params)


def main(framework: str, backend: str, mib: int, dtype: str, experiment: str = "training",
         workload: str = "mlp-digits", samples: str = "0") -> None:
    """Print {"working_memory": MiB, "model_memory": MiB, "status": ...} of one process of
    `experiment` (training | precision, fp32) holding `mib` MiB of each dtype of `dtype`,
    training on the first `samples` samples of each epoch (every sample when 0)."""
    module = importlib.import_module(f"dlbench.runner.worker.experiments.{experiment}."
                                     f"{framework}")
    library = backend or ("torch" if framework == "pytorch" else framework)
    with_allocation(experiment, module, lambda: allocate_each(library, mib, dtype),
                    int(samples))
    outcome = module.run(cell_spec(experiment, workload, framework, backend))
    values = {o.metric: o.value for o in outcome.observations if o.step is None}
    print(json.dumps({"status": outcome.status.value, "reason": outcome.reason,
                      "working_memory": values.get("working_memory"),
                      "model_memory": values.get("model_memory")}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], *sys.argv[5:])
