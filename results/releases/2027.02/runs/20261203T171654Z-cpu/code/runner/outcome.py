"""What a worker reports back for one cell."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any

from dlbench.metrics import get_metric
from dlbench.schema import CellStatus


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
class CellOutcome:
    """A cell's status, its observations and the manifest it ran under."""

    status: CellStatus
    observations: list[Observation] = field(default_factory=list)
    fairness: Fairness | None = None
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        value = asdict(self)
        value["status"] = self.status.value
        return json.dumps(value, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> CellOutcome:
        value = json.loads(text)
        fairness = value.get("fairness")
        return cls(
            status=CellStatus(value["status"]),
            observations=[Observation(**o) for o in value.get("observations", [])],
            fairness=Fairness(**fairness) if fairness else None,
            reason=value.get("reason", ""),
            details=value.get("details", {}),
        )


def failed(reason: str) -> CellOutcome:
    return CellOutcome(status=CellStatus.FAILED, reason=reason)


def skipped(reason: str) -> CellOutcome:
    return CellOutcome(status=CellStatus.SKIPPED, reason=reason)
