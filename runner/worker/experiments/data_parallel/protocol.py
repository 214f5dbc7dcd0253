"""The data-parallel protocol, shared by every framework's strategy code.

A framework supplies `train(workers) -> TrainingRun` (one training from the shared initial
weights over the same global batches). This module owns the batch plan, the sharding rule,
the paired 1-worker baseline, the metrics and the accuracy tolerance, so every strategy is
measured alike. Each worker process is one repeat: it trains once at 1 worker and once at
N workers.
"""

from __future__ import annotations

import queue
import socket
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.worker.harness import Cell, cell_manifest
from dlbench.runner.cell.outcome import CellOutcome, Fairness, Observation
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import epoch_order

#: An N-worker run must reach the 1-worker run's final test accuracy within this
#: (absolute fraction): both compute the same averaged gradient of the same global batch,
#: only the order of floating-point reductions differs.
ACCURACY_TOLERANCE = 0.02


#: Errors that mean the code crashed, not that the framework refused: the cell failed.
CRASHES = (AttributeError, TypeError, NameError, KeyError, IndexError)


class StrategyUnsupported(Exception):
    """The framework refused to set up the strategy; the cell's result is "fails: ..."."""


@dataclass(frozen=True)
class TrainingRun:
    """One training from the initial weights at one worker count."""

    workers: int
    epoch_times: tuple[float, ...]
    samples_per_epoch: int
    accuracy: float
    final_loss: float
    setup_s: float | None = None  # process group / strategy creation and model placement
    launch_s: float | None = None  # multi-process strategies only

    @property
    def steady_epoch_time(self) -> float:
        """Median epoch time after the first (which includes tracing/compilation)."""
        times = self.epoch_times
        return statistics.median(times[1:]) if len(times) > 1 else times[0]

    @property
    def throughput(self) -> float:
        return self.samples_per_epoch / self.steady_epoch_time

    @property
    def time_to_accuracy(self) -> float:
        """Set-up and every epoch (the first with its tracing) to the final accuracy."""
        return (self.setup_s or 0.0) + sum(self.epoch_times)


@dataclass(frozen=True)
class EpochPlan:
    """Every epoch's global batches as sample indices, shape (epochs, steps, global batch).

    The tail of each epoch's permutation that does not fill a whole global batch is dropped,
    so every replica always gets an equal shard."""

    batches: np.ndarray = field(repr=False)

    @property
    def global_batch(self) -> int:
        return int(self.batches.shape[2])

    @property
    def samples_per_epoch(self) -> int:
        return int(self.batches.shape[1] * self.batches.shape[2])


def epoch_plan(n: int, global_batch: int, epochs: int, seed: int) -> EpochPlan:
    """The shared epoch order (dlbench.runner.workloads.catalog.epoch_order) cut into whole global
    batches."""
    steps = n // global_batch
    return EpochPlan(np.stack([
        epoch_order(n, epoch, seed)[: steps * global_batch].reshape(steps, global_batch)
        for epoch in range(epochs)]))


def shard(batch: np.ndarray, rank: int, workers: int) -> np.ndarray:
    """Replica `rank`'s contiguous equal share of one global batch."""
    size = len(batch) // workers
    return batch[rank * size:(rank + 1) * size]


def first_report(results, processes: list, poll_s: float = 0.5):
    """The first item a worker process puts on `results`; raises if a worker dies first."""
    while True:
        try:
            return results.get(timeout=poll_s)
        except queue.Empty:
            dead = [p.exitcode for p in processes if p.exitcode not in (None, 0)]
            if dead:
                for process in processes:
                    process.kill()
                raise RuntimeError(f"a worker process exited with status {dead[0]}") from None


def free_port() -> int:
    """A TCP port on the loopback interface that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def measure_data_parallel(cell: Cell, train: Callable[[int], TrainingRun],
                          fairness: Fairness) -> CellOutcome:
    """The 1-worker baseline (when N > 1), then the N-worker run; paired metrics."""
    spec = cell.spec
    try:
        baseline = train(1) if spec.workers > 1 else None
        run = train(spec.workers)
    except StrategyUnsupported as error:
        cause = error.__cause__ or error
        # A programming error (keras.distribution missing on a backend) is a crash, not
        # the framework refusing the strategy.
        status = CellStatus.FAILED if isinstance(cause, CRASHES) else CellStatus.UNSUPPORTED
        return CellOutcome(status, [], fairness,
                           reason=f"fails: {type(cause).__name__}: {cause}".splitlines()[0])
    observations = run_observations(run, spec.repeat_index, baseline)
    cell.sampler.once("epoch_time", "one training epoch per sub-sample", len(run.epoch_times))
    details = {"accuracy_tolerance": ACCURACY_TOLERANCE, "global_batch": spec.batch_size,
               "per_replica_batch": spec.batch_size // spec.workers}
    if baseline is not None:
        details["baseline_throughput"] = round(baseline.throughput, 3)
        details["baseline_accuracy"] = baseline.accuracy
        difference = abs(run.accuracy - baseline.accuracy)
        if difference > ACCURACY_TOLERANCE:
            return cell.outcome(observations, fairness, details, status=CellStatus.FAILED,
                                reason=f"accuracy differs from the 1-worker run by "
                                       f"{difference:.4f} > tolerance {ACCURACY_TOLERANCE}")
    return cell.outcome(observations, fairness, details)


def run_observations(run: TrainingRun, repeat: int,
                     baseline: TrainingRun | None) -> list[Observation]:
    """One process's observations, paired with its 1-worker baseline when there is one."""
    observations = [
        Observation("first_epoch_time", run.epoch_times[0], repeat),
        Observation("steady_epoch_time", run.steady_epoch_time, repeat),
        Observation("train_throughput", run.throughput, repeat),
        Observation("time_to_accuracy", run.time_to_accuracy, repeat),
        Observation("test_accuracy", run.accuracy, repeat),
    ]
    if run.setup_s is not None:
        observations.append(Observation("dp_setup_time", run.setup_s, repeat))
    if run.launch_s is not None:
        observations.append(Observation("dp_launch_time", run.launch_s, repeat))
    if baseline is not None:
        efficiency = run.throughput / (run.workers * baseline.throughput)
        observations += [Observation("scaling_efficiency", efficiency, repeat),
                         Observation("accuracy_delta", abs(run.accuracy - baseline.accuracy),
                                     repeat)]
    return observations


def dp_fairness(cell: Cell, *, strategy: str, replicas: str, timer_includes: str,
                settings: dict[str, str] | None = None) -> Fairness:
    """The manifest every data-parallel cell carries."""
    spec, workload = cell.spec, cell.data.workload
    return cell_manifest(
        spec, cell.settings | (settings or {}),
        timer_includes=timer_includes,
        precision_policy=f"{spec.precision} (float32 weights and activations)",
        compile_mode=strategy,
        data_pipeline=(f"global batch {spec.batch_size} from the shared epoch order, split "
                       f"into {spec.workers} equal contiguous shards (one per replica); the "
                       f"tail of each epoch that does not fill a global batch is dropped"),
        notes=(f"{replicas}. The 1-worker run gets all {spec.threads} thread(s) in one "
               f"process; N workers share the same cores. "
               f"SGD lr={workload.learning_rate} momentum={workload.momentum}, "
               f"softmax cross-entropy averaged over the global batch, same initial weights "
               f"and data as the 1-worker run; {spec.params['epochs']} epochs. Scaling "
               f"efficiency and accuracy delta compare with a 1-worker run measured in the "
               f"same process just before; accuracy must match it within "
               f"{ACCURACY_TOLERANCE}; time_to_accuracy = set-up and every epoch. On a CPU the "
               f"comparison is {spec.workers} worker(s) of "
               f"{replica_threads(spec, spec.workers)} thread(s) against 1 worker of "
               f"{spec.threads}, on the same cores: with a physical core per worker that is "
               f"data parallelism over cores; with fewer cores than workers they share cores "
               f"and show the strategy's overhead, not a speed-up."),
    )


def replica_threads(spec: CellSpec, workers: int) -> int:
    """Threads per worker process: the cell's threads shared out, at least 1."""
    return max(1, spec.threads // workers)
