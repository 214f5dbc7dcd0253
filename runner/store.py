"""The run directory: one JSON record per finished cell, and the tables built from them.

Each finished cell is written as its own atomic record the moment it ends, so an
interrupted run loses at most the cell in progress; the Parquet/CSV tables are rebuilt
from the records after every cell.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.schema import CellStatus
from dlbench.atomic import atomic_write_bytes, atomic_write_json
from dlbench.tables import ResultsFileError, read_json, read_table, write_table
from runner.outcome import CellOutcome
from runner.spec import CellSpec

RUNS_DIR = Path("results") / "runs"


@dataclass(frozen=True)
class CellRecord:
    """A finished cell: what was asked, what came back, and how long it took."""

    spec: CellSpec
    outcome: CellOutcome
    started_at: str
    wall_time_s: float
    stderr_tail: str
    code_path: str
    code_sha256: str

    def to_dict(self) -> dict:
        return {
            "spec": json.loads(self.spec.to_json()),
            "outcome": json.loads(self.outcome.to_json()),
            "started_at": self.started_at,
            "wall_time_s": self.wall_time_s,
            "stderr_tail": self.stderr_tail,
            "code_path": self.code_path,
            "code_sha256": self.code_sha256,
        }

    @classmethod
    def from_dict(cls, value: dict) -> CellRecord:
        return cls(
            spec=CellSpec(**value["spec"]),
            outcome=CellOutcome.from_json(json.dumps(value["outcome"])),
            started_at=value["started_at"],
            wall_time_s=float(value["wall_time_s"]),
            stderr_tail=value["stderr_tail"],
            code_path=value["code_path"],
            code_sha256=value["code_sha256"],
        )


def record_filename(cell_id: str) -> str:
    """A file name for a cell ID (which contains ':')."""
    return cell_id.replace(":", "__") + ".json"


class RunStore:
    """Reads and writes one run directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.run_id = root.name

    @property
    def cells_dir(self) -> Path:
        return self.root / "cells"

    def save_run_info(self, info: dict) -> None:
        atomic_write_json(self.root / "run.json", info)

    def load_run_info(self) -> dict:
        return read_json(self.root / "run.json")

    def save_environment(self, environment: dict) -> None:
        atomic_write_json(self.root / "environment.json", environment)

    def save_record(self, record: CellRecord) -> None:
        atomic_write_json(self.cells_dir / record_filename(record.spec.cell_id), record.to_dict())

    def load_records(self) -> list[CellRecord]:
        records = []
        for path in sorted(self.cells_dir.glob("*.json")):
            try:
                records.append(CellRecord.from_dict(read_json(path)))
            except (KeyError, TypeError, ValueError) as error:
                raise ResultsFileError(f"{path}: not a dlbench cell record ({error})") from None
        return records

    def finished_cell_ids(self) -> set[str]:
        return {record.spec.cell_id for record in self.load_records()}

    def save_code(self, relative_path: str, text: str) -> None:
        """Keep a copy of the code a cell ran, so the site shows exactly that code."""
        target = self.root / "code" / relative_path
        if not target.exists():
            atomic_write_bytes(target, text.encode())

    def rebuild_tables(self) -> None:
        """Rewrite cells and observations tables from the records; never clobber a bad file."""
        for stem in ("cells", "observations"):
            existing = self.root / f"{stem}.parquet"
            if existing.exists():
                read_table(existing, stem)  # raises on a corrupt or foreign file
        records = self.load_records()
        write_table(cells_frame(records, self.run_id), self.root / "cells", "cells")
        write_table(observations_frame(records, self.run_id), self.root / "observations",
                    "observations")


def cells_frame(records: list[CellRecord], run_id: str) -> pd.DataFrame:
    """One row per cell."""
    rows = []
    for record in records:
        spec, outcome = record.spec, record.outcome
        fairness = json.dumps(
            json.loads(outcome.to_json())["fairness"] or {}, sort_keys=True
        )
        rows.append(
            spec.key_columns(run_id)
            | {
                "status": outcome.status.value,
                "reason": outcome.reason,
                "stderr_tail": record.stderr_tail,
                "repeats": spec.repeats,
                "wall_time_s": record.wall_time_s,
                "started_at": record.started_at,
                "threads": spec.threads,
                "code_path": record.code_path,
                "code_sha256": record.code_sha256,
                "config_json": spec.to_json(),
                "fairness_json": fairness,
                "details_json": json.dumps(outcome.details, sort_keys=True),
            }
        )
    return _frame(rows, "cells")


def observations_frame(records: list[CellRecord], run_id: str) -> pd.DataFrame:
    """One row per observation, for cells that produced any."""
    from dlbench.metrics import get_metric

    rows = []
    for record in records:
        if record.outcome.status is not CellStatus.OK:
            continue
        keys = record.spec.key_columns(run_id)
        for obs in record.outcome.observations:
            rows.append(
                keys
                | {
                    "repeat": obs.repeat,
                    "step": obs.step,
                    "metric": obs.metric,
                    "value": obs.value,
                    "unit": get_metric(obs.metric).unit,
                }
            )
    return _frame(rows, "observations")


def _frame(rows: list[dict], kind: str) -> pd.DataFrame:
    from dlbench.tables import TABLE_COLUMNS

    columns = [c for c in TABLE_COLUMNS[kind] if c != "schema_version"]
    return pd.DataFrame(rows, columns=columns)
