"""The data every experiment loads: the workload's dataset, shaped for its model."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from runner.datasets import Dataset
from runner.spec import CellSpec
from runner.workloads import Layer, Workload, get_workload, initial_layers
from runner.workloads import load_workload_data, model_input


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

    def initial_layers(self) -> list[Layer]:
        """The shared initial weights of the workload's model."""
        return initial_layers(self.workload, self.dataset)


def cell_data(spec: CellSpec) -> CellData:
    """Load the workload's dataset and shape it for its model."""
    workload = get_workload(spec.workload)
    dataset = load_workload_data(workload, spec.data_dir, size=spec.params.get("data_size", ""))
    return CellData(workload, dataset, model_input(workload, dataset.x_train),
                    model_input(workload, dataset.x_test))
