"""data-parallel in Keras 3: the same Sequential + compile/fit, distributed by Keras.

keras-data-parallel: keras.distribution.DataParallel (the Keras 3 distribution API; on a
CPU, JAX's host platform is split into N devices with XLA_FLAGS before JAX is imported).
mirrored: a tf.distribute.MirroredStrategy scope around compile/fit (TensorFlow backend).
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager

from dlbench.runner.worker.adapters.keras import compile_model
from dlbench.runner.worker.experiments.data_parallel.protocol import (EpochPlan, StrategyUnsupported,
                                                       TrainingRun, dp_fairness, epoch_plan,
                                                       measure_data_parallel)
from dlbench.runner.worker.harness import Cell, open_cell
from dlbench.runner.worker.measure import NS_PER_S, clock_ns
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


def prepare_devices(spec: CellSpec) -> None:
    """Before the backend is imported: make N replica devices exist on a CPU."""
    if spec.device != "cpu":
        return
    if spec.backend == "jax":
        flag = f"--xla_force_host_platform_device_count={spec.workers}"
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {flag}".strip()
    elif spec.backend == "tensorflow" and spec.mode == "mirrored":
        import tensorflow as tf

        cpu = tf.config.list_physical_devices("CPU")[0]
        tf.config.set_logical_device_configuration(
            cpu, [tf.config.LogicalDeviceConfiguration()] * spec.workers)


def distribution_scope(spec: CellSpec, workers: int) -> AbstractContextManager:
    """The scope that distributes a model built, compiled and fitted inside it."""
    try:
        if spec.mode == "mirrored":
            import tensorflow as tf

            kind = "GPU" if spec.device == "cuda" else "CPU"
            devices = [d.name for d in tf.config.list_logical_devices(kind)][:workers]
            reduction = None if kind == "GPU" else tf.distribute.ReductionToOneDevice()
            return tf.distribute.MirroredStrategy(devices, cross_device_ops=reduction).scope()
        import keras

        devices = keras.distribution.list_devices("gpu" if spec.device == "cuda" else "cpu")
        return keras.distribution.DataParallel(devices=devices[:workers]).scope()
    except Exception as error:  # noqa: BLE001 - the backend's refusal is the cell's result
        raise StrategyUnsupported(str(error)) from error


def train(cell: Cell, plan: EpochPlan, workers: int) -> TrainingRun:
    """One training from the initial weights with `workers` replicas."""
    import numpy as np

    spec, data = cell.spec, cell.data
    start = clock_ns()
    with distribution_scope(spec, workers):
        model = cell.adapter.build_model(data.workload, data.initial_layers(), data.input_shape)
        compile_model(model, data.workload)
        setup_s = (clock_ns() - start) / NS_PER_S
        times, loss = [], 0.0
        for batches in plan.batches:
            start = clock_ns()
            history = model.fit(data.x_train[batches.ravel()],
                                data.dataset.y_train[batches.ravel()],
                                batch_size=plan.global_batch, epochs=1, shuffle=False,
                                verbose=0)
            times.append((clock_ns() - start) / NS_PER_S)
            loss = float(history.history["loss"][-1])
        logits = model.predict(data.x_test, batch_size=plan.global_batch, verbose=0)
    accuracy = float((np.argmax(logits, axis=1) == data.dataset.y_test).mean())
    return TrainingRun(workers, tuple(times), plan.samples_per_epoch, accuracy, loss, setup_s)


def run(spec: CellSpec) -> CellOutcome:
    prepare_devices(spec)
    cell = open_cell(spec)
    data = cell.data
    plan = epoch_plan(len(data.dataset.y_train), spec.batch_size, int(spec.params["epochs"]),
                      data.seed)
    return measure_data_parallel(cell, lambda workers: train(cell, plan, workers),
                                 _fairness(cell))


def _fairness(cell: Cell):
    spec = cell.spec
    on_cpu = spec.device == "cpu"
    if spec.mode == "mirrored":
        replicas = ("tf.distribute.MirroredStrategy scope around build/compile/fit, one "
                    f"process, {spec.workers} replica(s) on "
                    + (f"logical CPU devices sharing {spec.threads} thread(s)" if on_cpu
                       else "GPUs"))
    else:
        replicas = ("keras.distribution.DataParallel, one process, "
                    f"{spec.workers} replica(s) on "
                    + (f"JAX host devices (XLA_FLAGS=--xla_force_host_platform_device_count"
                       f"={spec.workers}) sharing {spec.threads} core(s)" if on_cpu
                       else "GPUs"))
    return dp_fairness(
        cell, strategy=f"Keras defaults on {spec.backend} under {spec.mode}",
        replicas=replicas,
        timer_includes="one model.fit(epochs=1, shuffle=False) over the epoch's global "
                       "batches in the shared order (compiles on the first call)",
        settings={"XLA_FLAGS": os.environ.get("XLA_FLAGS", "")})
