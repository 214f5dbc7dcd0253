"""The precision protocol: the same training and inference in fp32, bf16-mixed or
fp16-mixed, compared with fp32 from the same weights in the same framework.

A framework supplies hooks (`PrecisionFramework`): its trainer class, built for one
precision, that can also predict (see `PrecisionTrainer`), the words of its manifest and the
exceptions by which it refuses a precision; `run_precision` and `measure_precision` own the
order of work, the fp32 baseline, the refusal probe and the metrics, and the harness the
clock, so every framework is judged alike. Each worker process is one repeat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Protocol

import numpy as np

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.worker.harness import Cell, open_cell
from dlbench.runner.worker.harness.data import CellData
from dlbench.runner.worker.harness.inference import (InferencePlan, Predictor, latencies_ms,
                                                     latency_summary, throughput)
from dlbench.runner.worker.epochs import Trainer
from dlbench.runner.worker.harness.training import train_once
from dlbench.runner.worker.measure import memory_baseline
from dlbench.runner.workloads.real_size import NO_ACCURACY_PARAM
from dlbench.core.machine.cpu_flags import bf16_units, cpu_flags, isa_features
from dlbench.runner.cell.outcome import CellOutcome, Fairness
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Layer, epoch_order

PRECISIONS = ("fp32", "bf16", "fp16")


class PrecisionTrainer(Trainer, Predictor, Protocol):
    """A harness Trainer and Predictor in one precision."""

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Forward pass in this precision, as float32 NumPy."""


class PrecisionFramework(Protocol):
    """What a framework supplies to `run_precision`."""

    #: Built as trainer_class(adapter, workload, input_shape, precision).
    trainer_class: Callable[..., PrecisionTrainer]
    #: What the timer holds in each epoch, in words.
    timer_includes: str

    def policy(self, spec: CellSpec) -> str:
        """How the framework computes in spec.precision, in words."""

    def compile_mode(self, spec: CellSpec) -> str:
        """How the framework runs training and inference, in words."""

    def refusals(self, spec: CellSpec) -> tuple[type[BaseException], ...]:
        """The exceptions by which the framework refuses a precision here."""

    def facts(self, make: Callable[[str], PrecisionTrainer], cell: Cell) -> dict:
        """What the framework made of the precision (a trainer from `make` may tell), added
        to an OK cell's details after the measurement; none by default."""
        return {}


class EvaluatedInBatches:
    """A precision trainer's logits and test accuracy in its precision, evaluated at the
    training batch size through its Predictor calls, as the training experiment's trainers
    evaluate: evaluating then never needs more memory than a training step (nor grows
    TensorFlow's oneDNN pool, which never shrinks). The working memory's region holds the
    evaluation after each epoch; until 2026-12-07 the whole test set went through in one
    call there, which weighs where a test set is many batches (real-size cells)."""

    batch_size: int

    def logits(self, x: np.ndarray) -> np.ndarray:
        """Forward passes in this precision, as float32 NumPy, one batch at a time."""
        predictor: Predictor = self  # type: ignore[assignment]
        return np.concatenate([predictor.predict(predictor.prepare(x[i:i + self.batch_size]))
                               for i in range(0, len(x), self.batch_size)])

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        return float((self.logits(x).argmax(axis=1) == y).mean())


def run_precision(spec: CellSpec, framework: PrecisionFramework) -> CellOutcome:
    """The precision cell of every framework: open it, then `measure_precision` with the
    framework's trainers, manifest and refusals; an OK cell gets the framework's facts."""
    cell = open_cell(spec)

    def make(precision: str) -> PrecisionTrainer:
        return framework.trainer_class(cell.adapter, cell.data.workload, cell.data.input_shape,
                                       precision)

    fairness = precision_fairness(cell, policy=framework.policy(spec),
                                  timer_includes=framework.timer_includes,
                                  compile_mode=framework.compile_mode(spec))
    outcome = measure_precision(cell, make, fairness, refusals=framework.refusals(spec))
    facts = framework.facts(make, cell) if outcome.status is CellStatus.OK else {}
    return replace(outcome, details=outcome.details | facts) if facts else outcome


def limited(data: CellData, train_samples: int | None) -> CellData:
    """`data` with only its first `train_samples` training samples (all when None)."""
    if not train_samples:
        return data
    dataset = replace(data.dataset, x_train=data.dataset.x_train[:train_samples],
                      y_train=data.dataset.y_train[:train_samples])
    return replace(data, dataset=dataset, x_train=data.x_train[:train_samples])


def probe(trainer: PrecisionTrainer, data: CellData, layers: list[Layer],
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


def fp32_baseline(make: Callable[[str], PrecisionTrainer], data: CellData,
                  epochs: int) -> tuple[np.ndarray, float | None]:
    """fp32 logits on the test inputs from the initial weights, and fp32 final accuracy
    (None for `epochs` 0: no training)."""
    trainer = make("fp32")
    trainer.reset(data.initial_layers())
    logits = trainer.logits(data.x_test)
    if not epochs:
        return logits, None
    for epoch in range(epochs):
        order = epoch_order(len(data.dataset.y_train), epoch, data.seed)
        trainer.train_epoch(data.x_train[order], data.dataset.y_train[order])
    return logits, trainer.accuracy(data.x_test, data.dataset.y_test)


def measure_precision(cell: Cell, make: Callable[[str], PrecisionTrainer], fairness: Fairness,
                      refusals: tuple[type[BaseException], ...]) -> CellOutcome:
    """Probe; training and inference in the cell's precision; then the fp32 baseline
    (fp32 cells: themselves) for output deviation and accuracy change."""
    spec = cell.spec
    epochs = int(spec.params["epochs"])
    data = limited(cell.data, spec.params.get("train_samples"))
    # the working memory's baseline, before the probe builds the model: as in training
    # (until 2026-12-07 it was read after the probe, so the model was left out of it)
    baseline = memory_baseline()
    trainer = make(spec.precision)
    refusal = probe(trainer, data, data.initial_layers(), spec.batch_size, refusals)
    if refusal:
        return CellOutcome(CellStatus.UNSUPPORTED, fairness=fairness, reason=refusal)
    trainer.reset(data.initial_layers())
    logits = trainer.logits(data.x_test)
    observations = train_once(cell, trainer, epochs, data, baseline)
    accuracy = next(o.value for o in observations if o.metric == "test_accuracy")
    plan = InferencePlan.of(spec)
    observations.append(cell.observe("inference_throughput",
                                     throughput(cell, trainer, data.x_test, plan)))
    observations += latency_summary(cell, latencies_ms(cell, trainer, data.x_test, plan),
                                    keep_calls=False)
    # the fp32 baseline runs last, so it cannot inflate this cell's peak memory
    base_epochs = 0 if spec.params.get(NO_ACCURACY_PARAM) else epochs
    base_logits, base_accuracy = ((logits, accuracy) if spec.precision == "fp32"
                                  else fp32_baseline(make, data, base_epochs))
    deviation = float(np.max(np.abs(logits - base_logits)))
    scale = float(np.max(np.abs(base_logits)))
    observations += [
        cell.observe("output_deviation_vs_fp32", deviation),
        cell.observe("output_deviation_rel_vs_fp32", deviation / scale if scale else deviation),
        cell.model_memory()]
    if base_accuracy is not None:
        observations.append(cell.observe("accuracy_change_vs_fp32", accuracy - base_accuracy))
    # the test set's size: the accuracy answer's interval holds its sampling error
    return cell.outcome(observations, fairness, cell.workload_details() | units_details(spec)
                        | {"test_samples": len(data.dataset.y_test)})


def units_details(spec: CellSpec) -> dict:
    """On a CPU, its bf16 arithmetic units in words: a CPU without them still runs the bf16
    cell, and its answer says that bf16 was converted to fp32 there."""
    if spec.device != "cpu":
        return {}
    return {"bf16_units": bf16_units(isa_features(cpu_flags()))}


def precision_fairness(cell: Cell, *, policy: str, timer_includes: str,
                       compile_mode: str) -> Fairness:
    """The manifest every precision cell carries."""
    spec, workload, plan = cell.spec, cell.data.workload, InferencePlan.of(cell.spec)
    return cell.fairness(
        timer_includes=timer_includes,
        precision_policy=policy,
        compile_mode=compile_mode,
        data_pipeline="in-memory arrays in the shared epoch order, batches sliced per step",
        notes=(f"same transferred initial weights; a probe (one forward pass, one training "
               f"step) decides whether the framework accepts the precision here; an fp32 "
               f"baseline from the same weights, run in the same process after the timed "
               f"work, gives the output deviation (logits on the test inputs before "
               f"training) and the accuracy change after {spec.params['epochs']} epochs on "
               f"{spec.params.get('train_samples') or 'all'} training samples "
               f"(SGD lr={workload.learning_rate} momentum={workload.momentum}); inference "
               f"in the same precision: {plan.latency_calls} batch-1 calls, "
               f"{plan.throughput_samples} calibrated windows at batch "
               f"{plan.throughput_batch}; peak memory over building and training the model"),
    )
