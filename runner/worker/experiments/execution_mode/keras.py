"""execution-mode in Keras 3: compile(run_eagerly=True) vs the default vs jit_compile=True."""

from __future__ import annotations

import numpy as np

from dlbench.runner.worker.adapters.keras import KerasAdapter, KerasTrainer
from dlbench.runner.worker.experiments.execution_mode.protocol import execution_fairness, measure_execution_mode
from dlbench.runner.worker.harness import open_cell
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import Workload

#: Mode name -> the compile() options it stands for.
COMPILE_OPTIONS: dict[str, dict] = {
    "run_eagerly": {"run_eagerly": True},
    "default": {},
    "jit_compile": {"jit_compile": True},
}


class KerasStepper(KerasTrainer):
    """A compiled Sequential model stepped with train_on_batch."""

    def __init__(self, adapter: KerasAdapter, workload: Workload, input_shape: tuple[int, ...],
                 mode: str) -> None:
        super().__init__(adapter, workload, input_shape, **COMPILE_OPTIONS[mode])

    def prepare(self, x: np.ndarray, y: np.ndarray) -> tuple[object, object]:
        """Backend tensors, converted before timing as every framework's batches are."""
        return self.adapter.to_device(x), self.adapter.to_device(y)

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(self.model.train_on_batch(x, y))  # returns host values after the step


def run(spec: CellSpec) -> CellOutcome:
    cell = open_cell(spec)
    workload, shape = cell.data.workload, cell.data.input_shape
    stepper = KerasStepper(cell.adapter, workload, shape, spec.mode)
    eager = None if spec.mode == "run_eagerly" else KerasStepper(cell.adapter, workload, shape,
                                                                 "run_eagerly")
    stepper.reset(cell.data.initial_layers())  # resolves Keras' defaults
    fairness = execution_fairness(
        cell,
        timer_includes="one model.train_on_batch(x, y) call on backend tensors (Keras runs "
                       "its train function and returns the loss on the host)",
        compile_mode=f"compile({_options(spec.mode)}) on {spec.backend}: "
                     f"{stepper.describe()}",
        eager_mode="compile(run_eagerly=True)",
        data_pipeline="batches converted to backend tensors before timing",
    )
    return measure_execution_mode(cell, stepper, eager, fairness)


def _options(mode: str) -> str:
    return ", ".join(f"{k}={v}" for k, v in COMPILE_OPTIONS[mode].items()) or "defaults"
