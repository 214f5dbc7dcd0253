"""The training protocol, shared by every framework's training code.

A framework supplies a `Trainer` (dlbench.runner.worker.harness.training: its own model, loop and
evaluation); the harness owns the clock, the epoch order and the metrics, so every framework
is timed alike. Each worker process trains once: repeats are independent processes.
"""

from __future__ import annotations

from dlbench.core.judging.seeds import PER_PROCESS_SEEDS
from dlbench.runner.worker.harness import Cell
from dlbench.runner.worker.epochs import Trainer
from dlbench.runner.worker.harness.training import train_once
from dlbench.runner.models.conventions import fairness_note
from dlbench.runner.cell.outcome import CellOutcome, Fairness
from dlbench.runner.workloads.real_size import is_real_size


def measure_training(cell: Cell, trainer: Trainer, fairness: Fairness) -> CellOutcome:
    """Train once from the shared initial weights, recording every epoch."""
    observations = train_once(cell, trainer, int(cell.spec.params["epochs"]))
    return cell.outcome([*observations, cell.model_memory()], fairness,
                        cell.workload_details())


def model_note(cell: Cell) -> str:
    """A dlbench.runner.models workload's conventions made equal across frameworks ("" for mlp/cnn)."""
    if not cell.data.workload.profiles:
        return ""
    return f"; {fairness_note(cell.data.model_profile().definition)}"


def training_fairness(cell: Cell, *, timer_includes: str, compile_mode: str,
                      data_pipeline: str) -> Fairness:
    """The manifest every training cell carries."""
    spec, workload = cell.spec, cell.data.workload
    return cell.fairness(
        timer_includes=timer_includes,
        precision_policy=f"{spec.precision} (float32 weights and activations)",
        compile_mode=compile_mode,
        data_pipeline=data_pipeline,
        notes=(f"SGD lr={workload.learning_rate} momentum={workload.momentum}, softmax "
               f"cross-entropy (mean); {PER_PROCESS_SEEDS}; "
               f"{spec.params['epochs']} epochs of "
               f"{len(cell.data.dataset.y_train)} samples; test accuracy on "
               f"{len(cell.data.dataset.y_test)} samples evaluated after each epoch, outside "
               f"the timer; target: final test accuracy >= {workload.target_accuracy:g}; "
               f"one training per worker process{model_note(cell)}{real_size_note(cell)}"),
    )


def real_size_note(cell: Cell) -> str:
    """What a real-size model's training cell is for ("" for the others)."""
    if not is_real_size(cell.spec.workload):
        return ""
    return ("; a real-size model: it times training steps (steady epoch time / steps an "
            "epoch), and its accuracy after a few steps is no result: accuracy is judged on "
            "the small models")
