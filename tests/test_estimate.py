"""The expected duration printed before a run: earlier runs' wall times of the same cells
where there are some, per-framework defaults otherwise."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from dlbench.core.tables import write_table
from dlbench.runner.plan.estimate import DEFAULT_PROCESS_S, estimate, recorded_process_seconds
from dlbench.runner.cell.spec import CellSpec


def spec(framework: str, backend: str = "", epochs: int = 2) -> CellSpec:
    return CellSpec(experiment="training", workload="mlp-digits", framework=framework,
                    backend=backend, device="cpu", batch_size=32, repeats=1, threads=2,
                    params={"epochs": epochs})


def write_processes(results: Path, run_id: str, walls: dict[str, list[float]]) -> None:
    from dlbench.core.tables import PROCESS_COLUMNS

    rows = []
    for cell_id, values in walls.items():
        for index, wall in enumerate(values):
            row = {column: None for column in PROCESS_COLUMNS}
            row |= {"run_id": run_id, "cell_id": cell_id, "repeat": index,
                    "order_index": index, "attempt": 0, "status": "ok",
                    "started_at": "2026-12-01T00:00:00", "ended_at": "2026-12-01T00:00:09",
                    "wall_time_s": wall, "busy": "", "code_files_json": "{}"}
            rows.append(row)
    run = results / "runs" / run_id
    run.mkdir(parents=True)
    (run / "run.json").write_text("{}")  # what makes the folder a run; not read here
    write_table(pd.DataFrame(rows, columns=list(PROCESS_COLUMNS)), run / "processes",
                "processes")


def test_cells_measured_before_are_estimated_from_their_median_wall_time(tmp_path):
    torch_cell, tf_cell = spec("pytorch"), spec("tensorflow")
    write_processes(tmp_path, "20261201T000000Z-cpu", {torch_cell.cell_id: [3.0, 5.0, 100.0]})
    history = recorded_process_seconds(tmp_path)
    assert history == {torch_cell.cell_id: 5.0}
    result = estimate([[torch_cell], [torch_cell], [tf_cell]], history)
    assert result.seconds == 5.0 + 5.0 + DEFAULT_PROCESS_S["training"]["tensorflow"]
    assert result.from_history == 2 and result.processes == 3
    assert "3 processes (2 from earlier runs" in result.sentence()


def test_without_history_every_process_takes_its_frameworks_default(tmp_path):
    cells = [spec("keras", "jax"), spec("pytorch", epochs=3)]
    result = estimate([[c] for c in cells], recorded_process_seconds(tmp_path))
    assert result.seconds == (DEFAULT_PROCESS_S["training"]["keras-jax"]
                              + DEFAULT_PROCESS_S["training"]["pytorch"])
    assert result.sentence().startswith(
        f"expected duration: about {result.seconds / 60:.0f} min for 2 processes")
    assert "defaults measured on 2 cores" in result.sentence()


def test_cells_sharing_a_process_pay_their_frameworks_import_once(tmp_path):
    from dlbench.runner.plan.estimate import IMPORT_S

    cells = [spec("keras", "jax"), spec("keras", "jax", epochs=3)]
    alone = estimate([[c] for c in cells], recorded_process_seconds(tmp_path))
    shared = estimate([cells], recorded_process_seconds(tmp_path))
    assert alone.seconds - shared.seconds == IMPORT_S["keras-jax"]
    assert shared.processes == alone.processes == 2
    assert "2 processes in 1 worker processes" in shared.sentence()
    assert "worker processes" not in alone.sentence()
