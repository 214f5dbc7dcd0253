"""One finished worker process of a cell, as the run store keeps it (its own module so the
store and the table builders both use it without importing each other)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


@dataclass(frozen=True)
class CellRecord:
    """One finished worker process of a cell: what was asked, what came back, when, and how
    quiet the machine was."""

    spec: CellSpec
    outcome: CellOutcome
    started_at: str
    wall_time_s: float
    stderr_tail: str
    code_path: str
    code_sha256: str
    ended_at: str = ""
    order_index: int = -1  # position in the run's interleaved order; -1: not run by the loop
    attempt: int = 0  # 0, or how many times a busy-machine re-run preceded it
    machine: dict = field(default_factory=dict)  # readings before/after and busy reasons

    @property
    def busy_reasons(self) -> list[str]:
        """Why the machine was not quiet around this process; empty when it was."""
        return list(self.machine.get("busy", []))

    @property
    def code_files(self) -> dict[str, str]:
        """Project path -> sha256 of every project file the process imported."""
        return self.outcome.code_files

    def to_dict(self) -> dict:
        return {
            "spec": asdict(self.spec),
            "outcome": self.outcome.to_dict(),
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "wall_time_s": self.wall_time_s,
            "stderr_tail": self.stderr_tail,
            "code_path": self.code_path,
            "code_sha256": self.code_sha256,
            "order_index": self.order_index,
            "attempt": self.attempt,
            "machine": self.machine,
        }

    @classmethod
    def from_dict(cls, value: dict) -> CellRecord:
        return cls(
            spec=CellSpec(**value["spec"]),
            outcome=CellOutcome.from_dict(_typed_outcome(value)),
            started_at=value["started_at"],
            wall_time_s=float(value["wall_time_s"]),
            stderr_tail=value["stderr_tail"],
            code_path=value["code_path"],
            code_sha256=value["code_sha256"],
            ended_at=value.get("ended_at", ""),
            order_index=int(value.get("order_index", -1)),
            attempt=int(value.get("attempt", 0)),
            machine=dict(value.get("machine", {})),
        )


def _typed_outcome(record: dict) -> dict:
    """A stored record's outcome with the code record and shared-process timing in their
    own fields: records written up to release 2027.02 kept the code record beside the
    outcome (and again in its details) and the shared-process timing in its details."""
    outcome = dict(record["outcome"])
    details = dict(outcome.get("details", {}))
    legacy_code_files = details.pop("code_files", None)
    legacy_shared = details.pop("shared_process", None)
    outcome.setdefault("code_files", record.get("code_files") or legacy_code_files or {})
    outcome.setdefault("shared_process", legacy_shared)
    return outcome | {"details": details}
