"""The cell: the unit of measurement that runs in one process."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from dlbench.core.declarations.identity import config_id
from dlbench.core.declarations.systems import system_name


#: The CellSpec parameter holding why a planned cell is not measured (dlbench.runner.driver.launch.execute records
#: it as skipped without starting a worker).
NOT_MEASURED = "not_measured"
#: The CellSpec parameter holding why the framework does not implement a planned cell
#: (dlbench.core.declarations.systems declares it; dlbench.runner.driver.launch.execute records it
#: as unsupported without starting a worker).
UNSUPPORTED = "unsupported"
#: Parameters that mean no worker process starts for the cell.
NOT_RUN = (NOT_MEASURED, UNSUPPORTED)


@dataclass(frozen=True)
class FrameworkId:
    """A framework and, for Keras, the backend it runs on."""

    framework: str  # pytorch | tensorflow | keras
    backend: str  # the framework itself, or tensorflow | torch | jax for keras

    @property
    def name(self) -> str:
        """The name used on the command line and in cell IDs, e.g. keras-torch."""
        return system_name(self.framework, self.backend)


@dataclass(frozen=True)
class CellSpec:
    """Everything a worker needs to measure one cell, and nothing it has to guess."""

    experiment: str
    workload: str
    framework: str
    backend: str
    device: str  # cpu | cuda
    precision: str = "fp32"  # fp32 | bf16 | fp16
    mode: str = "default"
    batch_size: int = 0
    workers: int = 1
    export_format: str = ""
    #: how many independent worker processes measure this cell (dlbench.runner.driver.plan.repeats
    #: decides); None in a worker's copy, which is told its process index, not the count
    repeats: int | None = field(kw_only=True)
    repeat_index: int = 0  # which of those processes this spec is for (not part of cell_id)
    threads: int = 1
    timeout_s: float = 300.0
    data_dir: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    #: "aa" for an A/A control: the same configuration as the cell without it, measured as a
    #: cell of its own (runner/driver/plan/controls.py); empty for every other cell.
    control: str = ""

    @property
    def runs(self) -> bool:
        """Whether a worker process measures this cell (not when it is planned as not
        measured on this device or as unsupported by its framework)."""
        return not any(self.params.get(key) for key in NOT_RUN)

    @property
    def framework_id(self) -> FrameworkId:
        return FrameworkId(self.framework, self.backend)

    @property
    def variant(self) -> str:
        """A short, stable label of the variant columns."""
        parts = [self.precision, self.mode, f"b{self.batch_size}"]
        if self.workers != 1:
            parts.append(f"w{self.workers}")
        if self.export_format:
            parts.append(self.export_format)
        if self.control:
            parts.append(self.control)
        return "-".join(parts)

    @property
    def cell_id(self) -> str:
        """Stable across runs, so runs and releases can be compared cell by cell."""
        return ":".join(
            [self.experiment, self.workload, self.framework_id.name, self.variant, self.device]
        )

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    def worker_json(self) -> str:
        """The spec a worker process reads: its process index, not how many processes
        measure the cell (the runner plans and records that)."""
        return replace(self, repeats=None).to_json()

    @classmethod
    def from_json(cls, text: str) -> CellSpec:
        return cls(**json.loads(text))

    def key_columns(self, run_id: str) -> dict[str, Any]:
        """The identifying columns shared by this cell's rows in every table."""
        return {
            "run_id": run_id,
            "cell_id": self.cell_id,
            "config_id": config_id(self.to_json()),
            "experiment": self.experiment,
            "workload": self.workload,
            "framework": self.framework,
            "backend": self.backend,
            "precision": self.precision,
            "mode": self.mode,
            "batch_size": self.batch_size,
            "workers": self.workers,
            "export_format": self.export_format,
            "device": self.device,
        }
