"""The precision protocol: the same training and inference in fp32, bf16-mixed or
fp16-mixed, compared with fp32 from the same weights in the same framework.

A framework supplies `make(precision)`, a trainer in that precision that can also predict
(see `PrecisionTrainer`); this module owns the order of work, the clock, the fp32
baseline, the refusal probe and the metrics, so every framework is judged alike.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

import numpy as np

from dlbench.schema import CellStatus
from runner.experiments.inference.protocol import (InferencePlan, Predictor, budget_note,
                                                   budgeted_repeats, latency_summary,
                                                   latencies_ms, throughput)
from runner.experiments.training.protocol import Trainer, TrainingData, one_training
from runner.outcome import CellOutcome, Fairness, Observation
from runner.spec import CellSpec
from runner.workloads import Layer, epoch_order, initial_layers

PRECISIONS = ("fp32", "bf16", "fp16")


class PrecisionTrainer(Trainer, Predictor, Protocol):
    """A training.protocol Trainer and inference.protocol Predictor in one precision."""

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Forward pass in this precision, as float32 NumPy."""


def limited(data: TrainingData, train_samples: int | None) -> TrainingData:
    """`data` with only its first `train_samples` training samples (all when None)."""
    if not train_samples:
        return data
    dataset = replace(data.dataset, x_train=data.dataset.x_train[:train_samples],
                      y_train=data.dataset.y_train[:train_samples])
    return replace(data, dataset=dataset, x_train=data.x_train[:train_samples])


def probe(trainer: PrecisionTrainer, data: TrainingData, layers: list[Layer],
          batch_size: int, refusals: tuple[type[BaseException], ...]) -> str:
    """'' when one forward pass and one training step run; else the framework's refusal."""
    try:
        trainer.reset(layers)
        trainer.logits(data.x_test[:2])
        trainer.train_epoch(data.x_train[:batch_size], data.dataset.y_train[:batch_size])
    except refusals as error:
        lines = str(error).strip().splitlines() or [type(error).__name__]
        return f"{type(error).__name__}: {lines[0][:400]}"
    return ""


def fp32_baseline(make: Callable[[str], PrecisionTrainer], data: TrainingData,
                  layers: list[Layer], epochs: int) -> tuple[np.ndarray, float]:
    """fp32 logits on the test inputs from the initial weights, and fp32 final accuracy."""
    trainer = make("fp32")
    trainer.reset(layers)
    logits = trainer.logits(data.x_test)
    for epoch in range(epochs):
        order = epoch_order(len(data.dataset.y_train), epoch, data.workload.seed)
        trainer.train_epoch(data.x_train[order], data.dataset.y_train[order])
    return logits, trainer.accuracy(data.x_test, data.dataset.y_test)


def measure_precision(spec: CellSpec, make: Callable[[str], PrecisionTrainer],
                      data: TrainingData, fairness: Fairness,
                      refusals: tuple[type[BaseException], ...]) -> CellOutcome:
    """Probe; per repeat, training and inference in the cell's precision; then the fp32
    baseline (fp32 cells: their first repeat) for output deviation and accuracy change."""
    epochs = int(spec.params["epochs"])
    data = limited(data, spec.params.get("train_samples"))
    layers = initial_layers(data.workload, data.dataset)
    trainer = make(spec.precision)
    refusal = probe(trainer, data, layers, spec.batch_size, refusals)
    if refusal:
        return CellOutcome(CellStatus.UNSUPPORTED, fairness=fairness, reason=refusal)
    plan = InferencePlan.of(spec)
    results: list[tuple[np.ndarray, float]] = []

    def one_repeat(repeat: int) -> list[Observation]:
        trainer.reset(layers)
        logits = trainer.logits(data.x_test)
        trained = one_training(trainer, data, layers, epochs, repeat)
        results.append((logits, next(o.value for o in trained if o.metric == "test_accuracy")))
        return trained + [
            Observation("inference_throughput", throughput(trainer, data.x_test, plan), repeat),
        ] + [o for o in latency_summary(latencies_ms(trainer, data.x_test, plan), repeat)
             if o.step is None]

    observations, details = budgeted_repeats(spec, one_repeat)
    # the fp32 baseline runs last, so it cannot inflate this cell's peak memory
    base_logits, base_accuracy = (results[0] if spec.precision == "fp32"
                                  else fp32_baseline(make, data, layers, epochs))
    for repeat, (logits, accuracy) in enumerate(results):
        observations += [
            Observation("output_deviation_vs_fp32",
                        float(np.max(np.abs(logits - base_logits))), repeat),
            Observation("accuracy_change_vs_fp32", accuracy - base_accuracy, repeat)]
    return CellOutcome(CellStatus.OK, observations, fairness, details=details)


def precision_fairness(spec: CellSpec, data: TrainingData, *, policy: str, timer_includes: str,
                       compile_mode: str, settings: dict[str, str]) -> Fairness:
    """The manifest every precision cell carries."""
    workload, plan = data.workload, InferencePlan.of(spec)
    return Fairness(
        timer_includes=timer_includes,
        precision_policy=policy,
        compile_mode=compile_mode,
        data_pipeline="in-memory arrays in the shared epoch order, batches sliced per step",
        threads=spec.threads,
        batch_size=spec.batch_size,
        notes=(f"same transferred initial weights; a probe (one forward pass, one training "
               f"step) decides whether the framework accepts the precision here; an fp32 "
               f"baseline from the same weights, run in the same process after the timed "
               f"repeats, gives the output "
               f"deviation (logits on the test inputs before training) and the accuracy "
               f"change after {spec.params['epochs']} epochs on "
               f"{spec.params.get('train_samples') or 'all'} training samples "
               f"(SGD lr={workload.learning_rate} "
               f"momentum={workload.momentum}); inference in the same precision: "
               f"{plan.latency_calls} batch-1 calls, {plan.throughput_calls} calls at batch "
               f"{plan.throughput_batch}; peak memory over the training epochs"
               + budget_note(spec)),
        settings=settings,
    )
