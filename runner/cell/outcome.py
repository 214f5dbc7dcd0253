"""What a worker reports back for one cell."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from dlbench.core.declarations.metrics import get_metric
from dlbench.core.storage.schema import CellStatus


def utc_timestamp() -> str:
    """Now, in UTC to the millisecond: when a process or cell started and ended (records
    only; durations come from the monotonic clock), as every outcome and record writes it."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


@dataclass(frozen=True)
class Observation:
    """One measured value of one metric in one repeat (and optionally one step)."""

    metric: str
    value: float
    repeat: int
    step: int | None = None

    def __post_init__(self) -> None:
        get_metric(self.metric)  # fail at the source on an unregistered metric


@dataclass(frozen=True)
class Fairness:
    """The fairness manifest: what a reader needs to judge the comparison."""

    timer_includes: str
    precision_policy: str
    compile_mode: str
    data_pipeline: str
    threads: int
    batch_size: int
    notes: str = ""
    settings: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SharedProcess:
    """The worker process a cell shared with other cells of its framework (dlbench.runner.driver.plan.sharing):
    which process, the cell's place in it, and the cell's own slice of its time."""

    pid: int
    position: int  # 0 for the first cell, which pays the framework's one-time warm-up
    cells: int  # how many cells the process measured
    started_at: str
    ended_at: str
    wall_time_s: float


@dataclass(frozen=True)
class CellOutcome:
    """A cell's status, its observations and the manifest it ran under; the code record
    (every project file the process imported) and, when the cell shared its worker
    process, that process's timing."""

    status: CellStatus
    observations: list[Observation] = field(default_factory=list)
    fairness: Fairness | None = None
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    code_files: dict[str, str] = field(default_factory=dict)  # project path -> sha256
    shared_process: SharedProcess | None = None

    def to_dict(self) -> dict[str, Any]:
        """The outcome as plain JSON values (the worker's report, a process record's part)."""
        return asdict(self) | {"status": self.status.value}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, value: dict[str, Any]) -> CellOutcome:
        fairness, shared = value.get("fairness"), value.get("shared_process")
        return cls(
            status=CellStatus(value["status"]),
            observations=[Observation(**o) for o in value.get("observations", [])],
            fairness=Fairness(**fairness) if fairness else None,
            reason=value.get("reason", ""),
            details=dict(value.get("details", {})),
            code_files=dict(value.get("code_files", {})),
            shared_process=SharedProcess(**shared) if shared else None,
        )

    @classmethod
    def from_json(cls, text: str) -> CellOutcome:
        return cls.from_dict(json.loads(text))


def failed(reason: str) -> CellOutcome:
    return CellOutcome(status=CellStatus.FAILED, reason=reason)


def skipped(reason: str) -> CellOutcome:
    return CellOutcome(status=CellStatus.SKIPPED, reason=reason)


def unsupported(reason: str) -> CellOutcome:
    """The framework does not implement the cell (known when it was planned)."""
    return CellOutcome(status=CellStatus.UNSUPPORTED, reason=reason)
