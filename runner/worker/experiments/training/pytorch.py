"""training in PyTorch: a plain training loop with torch.optim.SGD, eager (default) or with
the whole step in torch.compile (compiled, the fastest documented mode)."""

from __future__ import annotations

from dlbench.runner.worker.adapters.pytorch import TorchTrainer
from dlbench.runner.worker.experiments.training.protocol import measure_training, training_fairness
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    compiled = spec.mode == "compiled"
    trainer = TorchTrainer(cell.adapter, cell.data.workload, cell.data.input_shape, compiled)
    fairness = training_fairness(
        cell,
        timer_includes="converting the epoch's arrays to tensors on the device, every "
                       "forward/backward/SGD step, and reading the epoch loss (a device sync)",
        compile_mode="torch.compile of the whole step: zero_grad, forward, loss, backward and "
                     "optimizer.step (inductor, default mode; compiled in the first epoch)"
                     if compiled else "eager",
        data_pipeline="in-memory tensors sliced per batch in the shared epoch order",
    )
    return measure_training(cell, trainer, fairness)
