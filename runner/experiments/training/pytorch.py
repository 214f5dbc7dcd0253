"""training in PyTorch: a plain training loop with torch.optim.SGD."""

from __future__ import annotations

from runner.adapters.pytorch import TorchTrainer
from runner.experiments.training.protocol import measure_training, training_fairness
from runner.harness import open_cell
from runner.outcome import CellOutcome
from runner.spec import CellSpec


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    trainer = TorchTrainer(cell.adapter, cell.data.workload, cell.data.input_shape)
    fairness = training_fairness(
        cell,
        timer_includes="converting the epoch's arrays to tensors on the device, every "
                       "forward/backward/SGD step, and reading the epoch loss (a device sync)",
        compile_mode="eager",
        data_pipeline="in-memory tensors sliced per batch in the shared epoch order",
    )
    return measure_training(cell, trainer, fairness)
