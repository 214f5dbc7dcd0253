"""Run directories for the statistics tests, written with the runner's real store."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.cell.outcome import CellOutcome, Fairness, Observation
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord, RunStore

FRAMEWORKS = [("pytorch", "pytorch"), ("tensorflow", "tensorflow"), ("keras", "tensorflow"),
              ("keras", "torch")]


@dataclass(frozen=True)
class FakeCell:
    """A cell to write: its spec, per-repeat values by metric, and how it ended."""

    spec: CellSpec
    values: dict[str, list[float]] = field(default_factory=dict)
    status: CellStatus = CellStatus.OK
    reason: str = ""
    steps: dict[str, list[list[float]]] = field(default_factory=dict)  # metric -> repeat -> steps
    code_path: str = "runner/experiments/training/x.py"


def spec(framework: str, backend: str, experiment: str = "training",
         workload: str = "mlp-digits", device: str = "cpu", **variant) -> CellSpec:
    """A cell spec with the given identity and variant columns."""
    variant.setdefault("batch_size", 32)
    return CellSpec(experiment=experiment, workload=workload, framework=framework,
                    backend=backend, device=device, repeats=6, **variant)


def _outcome(cell: FakeCell) -> CellOutcome:
    if cell.status is not CellStatus.OK:
        return CellOutcome(status=cell.status, reason=cell.reason or "it failed")
    observations = [Observation(metric, float(v), repeat)
                    for metric, values in cell.values.items()
                    for repeat, v in enumerate(values)]
    observations += [Observation(metric, float(v), repeat, step)
                     for metric, repeats in cell.steps.items()
                     for repeat, steps in enumerate(repeats)
                     for step, v in enumerate(steps)]
    fairness = Fairness("train step", cell.spec.precision, cell.spec.mode, "arrays",
                        1, cell.spec.batch_size)
    return CellOutcome(status=CellStatus.OK, observations=observations, fairness=fairness)


def write_run(results_dir: Path, run_id: str, cells: list[FakeCell],
              environment: dict | None = None, code: bytes | None = None) -> Path:
    """Write a complete run directory the way the runner does; with `code`, every process
    record names its cell's code file at that text's hash (a code record can hold it)."""
    store = RunStore(results_dir / "runs" / run_id)
    store.save_run_info({"run_id": run_id, "suite": "test", "started_at": "2026-12-02T10:00",
                         "device": cells[0].spec.device if cells else "cpu"})
    store.save_environment(environment or {"python": "3.12.1", "frameworks": {"torch": "2.13.0"}})
    for cell in cells:
        digest = hashlib.sha256(code).hexdigest() if code is not None else "0" * 64
        store.save_record(CellRecord(cell.spec, _outcome(cell), "2026-12-02T10:00:00", 1.0, "",
                                     cell.code_path, digest))
    store.rebuild_tables()
    return store.root


def noisy(rng: np.random.Generator, centre: float, n: int = 6, spread: float = 0.03) -> list[float]:
    """`n` values around `centre` with relative noise `spread`."""
    return list(centre * (1 + rng.normal(0, spread, n)))


def training_cells(rng: np.random.Generator, times: dict[str, float],
                   accuracy: dict[str, float] | None = None, **spec_args) -> list[FakeCell]:
    """Training cells of every framework with steady epoch times around `times[name]`."""
    cells = []
    for framework, backend in FRAMEWORKS:
        name = f"keras-{backend}" if framework == "keras" else framework
        if name not in times:
            continue
        values = {"steady_epoch_time": noisy(rng, times[name])}
        if accuracy and name in accuracy:
            values["test_accuracy"] = noisy(rng, accuracy[name], spread=0.002)
        cells.append(FakeCell(spec(framework, backend, **spec_args), values,
                              steps={"epoch_time": [noisy(rng, times[name], 3)] * 6}))
    return cells
