"""A harness cell without a framework: for protocol tests on NumPy models."""

from __future__ import annotations

from dlbench.runner.worker.harness import Cell
from dlbench.runner.worker.harness.data import cell_data
from dlbench.runner.worker.harness.sampling import Sampler
from dlbench.runner.cell.spec import CellSpec


class NoDevice:
    """The adapter of a NumPy model: everything already runs on the host."""

    def sync(self) -> None:
        pass

    def compile_cache_files(self) -> None:
        return None


def numpy_cell(spec: CellSpec) -> Cell:
    """A real harness cell over the spec's real data, measured by NumPy code."""
    return Cell(spec, NoDevice(), {}, cell_data(spec), Sampler(spec), footprint_mib=0.0)
