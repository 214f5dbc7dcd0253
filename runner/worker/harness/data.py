"""The data every experiment loads: the workload's dataset, shaped for its model."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from dlbench.runner.workloads.datasets import Dataset
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.models.weights import parameter_count
from dlbench.runner.workloads.catalog import (Layer, ModelStart, SizeProfile, Workload, device_profile,
                              get_workload, initial_layers, load_workload_data, model_input,
                              model_start, process_seed, size_profile)


@dataclass(frozen=True)
class CellData:
    """The arrays a cell works on, already shaped for the model, and its initial weights."""

    workload: Workload
    dataset: Dataset
    x_train: np.ndarray
    x_test: np.ndarray

    @property
    def input_shape(self) -> tuple[int, ...]:
        return tuple(self.x_train.shape[1:])

    profile: str = ""  # the size profile of a dlbench.runner.models workload ("" for mlp/cnn)
    #: this process's seed of weights and epoch order (dlbench.runner.workloads.catalog.process_seed)
    seed: int = 0

    def initial_layers(self) -> list[Layer] | ModelStart:
        """The initial weights of the workload's model drawn from this process's seed (a
        dlbench.runner.models workload's definition and weights at the cell's size profile)."""
        if self.workload.profiles:
            return model_start(self.workload, self.model_profile(), self.seed)
        return initial_layers(self.workload, self.dataset, self.seed)

    def parameters(self) -> int:
        """Trainable parameters of the workload's model at the cell's size."""
        start = self.initial_layers()
        if isinstance(start, ModelStart):
            return parameter_count(start.definition)
        return sum(int(layer.kernel.size + layer.bias.size) for layer in start)

    def model_profile(self) -> SizeProfile:
        """The size profile of a dlbench.runner.models workload."""
        return size_profile(self.workload, self.profile)


def cell_workload(spec: CellSpec) -> Workload:
    """The spec's workload, at the learning rate its "learning_rate" parameter names (a
    suite's choice for the size it trains at), else at the workload's own."""
    workload = get_workload(spec.workload)
    if "learning_rate" not in spec.params:
        return workload
    learning_rate = spec.params["learning_rate"]
    if not isinstance(learning_rate, (int, float)) or isinstance(learning_rate, bool) \
            or not learning_rate > 0:
        raise ValueError(f"learning_rate {learning_rate!r} of {spec.cell_id}: expected a "
                         "positive number")
    return replace(workload, learning_rate=float(learning_rate))


def cell_data(spec: CellSpec) -> CellData:
    """Load the workload's dataset and shape it for its model, with the seed of the spec's
    process."""
    workload = cell_workload(spec)
    profile = str(spec.params.get("profile", ""))
    dataset = load_workload_data(workload, spec.data_dir, size=spec.params.get("data_size", ""),
                                 device=spec.device, profile=profile)
    profile = device_profile(workload, spec.device, profile).name if workload.profiles else ""
    dataset = fewer_tests(dataset, int(spec.params.get("test_samples", 0)))
    return CellData(workload, dataset, model_input(workload, dataset.x_train),
                    model_input(workload, dataset.x_test), profile,
                    process_seed(workload, spec.repeat_index))


def fewer_tests(dataset: Dataset, samples: int) -> Dataset:
    """`dataset` with its first `samples` test samples only (all when 0): a real-size model
    evaluates a few, as its timing needs no accuracy."""
    if not samples:
        return dataset
    return replace(dataset, x_test=dataset.x_test[:samples], y_test=dataset.y_test[:samples])
