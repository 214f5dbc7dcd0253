"""data-parallel in TensorFlow's own API: tf.distribute strategies around a GradientTape loop.

mirrored: MirroredStrategy, one process with one replica per device (GPUs, or on a CPU
logical CPU devices carved out of the one physical CPU). multi-worker-mirrored:
MultiWorkerMirroredStrategy, one process per replica, meeting on loopback through TF_CONFIG.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from dataclasses import replace

import numpy as np
import tensorflow as tf

from dlbench.runner.worker.adapters.tensorflow import TfAdapter
from dlbench.runner.worker.experiments.data_parallel.protocol import (EpochPlan, TrainingRun, dp_fairness,
                                                       epoch_plan, first_report, free_port,
                                                       measure_data_parallel, replica_threads)
from dlbench.runner.worker.harness import Cell, open_cell
from dlbench.runner.worker.harness.data import CellData
from dlbench.runner.worker.measure import NS_PER_S, clock_ns
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


def _first_replica_updates(next_creator, **kwargs):
    """Replicated variables whose replica-context updates take the first replica's value
    (every replica computes the same update from the all-reduced gradient)."""
    kwargs["aggregation"] = tf.VariableAggregation.ONLY_FIRST_REPLICA
    return next_creator(**kwargs)


class ReplicatedTrainer:
    """The training model's variables replicated by `strategy`, trained with SGD+momentum."""

    def __init__(self, strategy: tf.distribute.Strategy, spec: CellSpec, data: CellData,
                 global_batch: int) -> None:
        self.strategy, self.global_batch = strategy, global_batch
        self.learning_rate = data.workload.learning_rate
        self.momentum = data.workload.momentum
        with strategy.scope(), tf.variable_creator_scope(_first_replica_updates):
            self.model = TfAdapter(spec).build_model(data.workload, data.initial_layers(),
                                                     data.input_shape)
            self.velocities = [tf.Variable(tf.zeros_like(v))
                               for v in self.model.trainable_variables]
        self.step = tf.function(self._step)

    def _replica_step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        context = tf.distribute.get_replica_context()
        size = self.global_batch // context.num_replicas_in_sync
        begin = context.replica_id_in_sync_group * size  # the protocol's contiguous shard
        with tf.GradientTape() as tape:
            logits = self.model(x[begin:begin + size])
            loss = tf.reduce_sum(tf.nn.sparse_softmax_cross_entropy_with_logits(
                labels=y[begin:begin + size], logits=logits)) / self.global_batch
        variables = self.model.trainable_variables
        grads = context.all_reduce(tf.distribute.ReduceOp.SUM, tape.gradient(loss, variables))
        for variable, velocity, grad in zip(variables, self.velocities, grads):
            new_velocity = self.momentum * velocity + grad
            velocity.assign(new_velocity)
            variable.assign_sub(self.learning_rate * new_velocity)
        return loss

    def _step(self, x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        losses = self.strategy.run(self._replica_step, args=(x, y))
        return self.strategy.reduce(tf.distribute.ReduceOp.SUM, losses, axis=None)

    def train_epoch(self, x: np.ndarray, y: np.ndarray, batches: np.ndarray) -> float:
        inputs, labels = tf.constant(x[batches.ravel()]), tf.constant(y[batches.ravel()])
        total = tf.constant(0.0)
        for step in range(len(batches)):
            begin = step * self.global_batch
            total += self.step(inputs[begin:begin + self.global_batch],
                               labels[begin:begin + self.global_batch])
        return float((total / len(batches)).numpy())  # .numpy() waits for every replica

    def accuracy(self, data: CellData) -> float:
        predictions = tf.argmax(self.model(tf.constant(data.x_test)), axis=1).numpy()
        return float((predictions == data.dataset.y_test).mean())


def train_once(strategy: tf.distribute.Strategy, spec: CellSpec, data: CellData,
               plan: EpochPlan, workers: int, strategy_s: float) -> TrainingRun:
    """One training from the initial weights under `strategy`."""
    start = clock_ns()
    trainer = ReplicatedTrainer(strategy, spec, data, plan.global_batch)
    setup_s = strategy_s + (clock_ns() - start) / NS_PER_S
    times, loss = [], 0.0
    for batches in plan.batches:
        start = clock_ns()
        loss = trainer.train_epoch(data.x_train, data.dataset.y_train, batches)
        times.append((clock_ns() - start) / NS_PER_S)
    return TrainingRun(workers, tuple(times), plan.samples_per_epoch, trainer.accuracy(data),
                       loss, setup_s)


def mirrored(spec: CellSpec, data: CellData, plan: EpochPlan, workers: int) -> TrainingRun:
    """MirroredStrategy over the first `workers` devices of this process."""
    kind = "GPU" if spec.device == "cuda" else "CPU"
    devices = [d.name for d in tf.config.list_logical_devices(kind)][:workers]
    start = clock_ns()
    strategy = tf.distribute.MirroredStrategy(
        devices, cross_device_ops=None if kind == "GPU" else tf.distribute.ReductionToOneDevice())
    return train_once(strategy, spec, data, plan, workers, (clock_ns() - start) / NS_PER_S)


def multi_worker_replica(rank: int, ports: list[int], spec: CellSpec, data: CellData,
                         plan: EpochPlan, started, results) -> None:
    """One MultiWorkerMirroredStrategy worker process (rank 0 reports the runs)."""
    workers = len(ports)
    os.environ["TF_CONFIG"] = json.dumps({
        "cluster": {"worker": [f"127.0.0.1:{port}" for port in ports]},
        "task": {"type": "worker", "index": rank}})
    tf.config.threading.set_intra_op_parallelism_threads(replica_threads(spec, workers))
    tf.config.threading.set_inter_op_parallelism_threads(1)
    if spec.device == "cuda":
        tf.config.set_visible_devices(tf.config.list_physical_devices("GPU")[rank], "GPU")
    started.wait()  # every worker is up: the strategy's setup is timed from here
    start = clock_ns()
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    run = train_once(strategy, spec, data, plan, workers, (clock_ns() - start) / NS_PER_S)
    if rank == 0:
        results.put((run, start))


def multi_worker(spec: CellSpec, data: CellData, plan: EpochPlan, workers: int) -> TrainingRun:
    """1 worker: a local MultiWorkerMirroredStrategy here; N: N spawned worker processes."""
    if workers == 1:
        start = clock_ns()
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        return train_once(strategy, spec, data, plan, 1, (clock_ns() - start) / NS_PER_S)
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    ports = [free_port() for _ in range(workers)]
    start = clock_ns()
    started = context.Barrier(workers)
    processes = [context.Process(target=multi_worker_replica,
                                 args=(rank, ports, spec, data, plan, started, results),
                                 daemon=True)
                 for rank in range(workers)]
    for process in processes:
        process.start()
    run, ready = first_report(results, processes)
    for process in processes:
        process.join()
    return replace(run, launch_s=(ready - start) / NS_PER_S)


def run(spec: CellSpec) -> CellOutcome:
    if spec.mode == "mirrored" and spec.device == "cpu":
        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * spec.workers)
    cell = open_cell(spec)
    data = cell.data
    plan = epoch_plan(len(data.dataset.y_train), spec.batch_size, int(spec.params["epochs"]),
                      data.seed)
    train = mirrored if spec.mode == "mirrored" else multi_worker
    return measure_data_parallel(cell, lambda workers: train(spec, data, plan, workers),
                                 _fairness(cell))


def _fairness(cell: Cell):
    spec = cell.spec
    if spec.mode == "mirrored":
        where = ("GPUs" if spec.device == "cuda" else
                 f"{spec.workers} logical CPU devices (tf.config.set_logical_device_"
                 f"configuration) sharing one CPU and its {spec.threads} thread(s)")
        replicas = f"MirroredStrategy, one process, {spec.workers} replica(s) on {where}"
    else:
        replicas = (f"MultiWorkerMirroredStrategy, {spec.workers} worker process(es) on "
                    f"loopback via TF_CONFIG, each with {replica_threads(spec, spec.workers)} "
                    f"thread(s)" + (" and one GPU" if spec.device == "cuda" else ""))
    return dp_fairness(
        cell, strategy=f"tf.distribute {spec.mode} strategy, tf.function step (no XLA)",
        replicas=replicas,
        timer_includes="gathering the epoch's global batches into tensors, every replicated "
                       "tf.function step (gradient all-reduce and SGD update; traced on the "
                       "first call), and reading the epoch loss")
