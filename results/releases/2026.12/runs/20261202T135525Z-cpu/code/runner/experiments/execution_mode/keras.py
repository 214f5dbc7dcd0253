"""execution-mode in Keras 3: compile(run_eagerly=True) vs the default vs jit_compile=True."""

from __future__ import annotations

import numpy as np

from runner.experiments.execution_mode.protocol import execution_fairness, measure_execution_mode
from runner.experiments.training.keras import build_model, compile_model
from runner.experiments.training.protocol import training_data
from runner.framework_setup import configure_keras
from runner.outcome import CellOutcome, skipped
from runner.spec import CellSpec
from runner.workloads import Layer, initial_layers

#: Mode name -> the compile() options it stands for.
COMPILE_OPTIONS: dict[str, dict] = {
    "run_eagerly": {"run_eagerly": True},
    "default": {},
    "jit_compile": {"jit_compile": True},
}


class KerasStepper:
    """A compiled Sequential model stepped with train_on_batch."""

    def __init__(self, learning_rate: float, momentum: float, input_shape: tuple[int, ...],
                 mode: str) -> None:
        self.learning_rate, self.momentum = learning_rate, momentum
        self.input_shape, self.options = input_shape, COMPILE_OPTIONS[mode]

    def prepare(self, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return x, y

    def reset(self, layers: list[Layer]) -> None:
        self.model = build_model(layers, self.input_shape)
        compile_model(self.model, self.learning_rate, self.momentum, **self.options)

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        return float(self.model.train_on_batch(x, y))  # returns host values after the step

    def describe(self) -> str:
        return f"run_eagerly={self.model.run_eagerly}, jit_compile={self.model.jit_compile}"


def run(spec: CellSpec) -> CellOutcome:
    settings = configure_keras(spec)
    from runner.accelerator_memory import missing_accelerator

    reason = missing_accelerator(spec)
    if reason:
        return skipped(reason)
    data = training_data(spec)
    workload, shape = data.workload, data.x_train.shape[1:]
    stepper = KerasStepper(workload.learning_rate, workload.momentum, shape, spec.mode)
    eager = None if spec.mode == "run_eagerly" else KerasStepper(
        workload.learning_rate, workload.momentum, shape, "run_eagerly")
    stepper.reset(initial_layers(data.workload, data.dataset))  # resolves Keras' defaults
    if spec.backend == "torch" and stepper.model.jit_compile:
        from runner.experiments.execution_mode.pytorch import inductor_cache_state

        settings |= {"torch.inductor_cache": inductor_cache_state()}
    fairness = execution_fairness(
        spec, data,
        timer_includes="one model.train_on_batch(x, y) call on NumPy batches (Keras converts "
                       "them, runs its train function, and returns the loss on the host)",
        compile_mode=f"compile({_options(spec.mode)}) on {spec.backend}: "
                     f"{stepper.describe()}",
        eager_mode="compile(run_eagerly=True)",
        data_pipeline="NumPy batches passed to train_on_batch",
        settings=settings,
    )
    return measure_execution_mode(spec, stepper, eager, data, fairness)


def _options(mode: str) -> str:
    return ", ".join(f"{k}={v}" for k, v in COMPILE_OPTIONS[mode].items()) or "defaults"
