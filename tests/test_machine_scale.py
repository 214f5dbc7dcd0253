"""Earlier runs' process times brought to the machine a run is planned on: each kind's own
times where it measured a cell, the others' scaled by the cells both measured; and the
projection that would have been within 20% of release 2027.04's AMD EPYC run from the Intel
Xeon runs' times and a minute of the AMD EPYC's own cells (its 104 minutes were projected at
68 from the Intel times as they were)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dlbench.core.storage.tables import read_table, write_table
from dlbench.runner.driver.plan.estimate import machine_history, recorded_sources
from dlbench.runner.driver.plan.machine_scale import PROBE_COMMAND, Source, scaled_times

RELEASE = Path(__file__).resolve().parent.parent / "results" / "releases" / "2027.04"
INTEL_RUNS = ("20261206T063453Z-cpu", "20261206T134112Z-cpu")
AMD_RUN = "20261207T022029Z-cpu"
INTEL, AMD = "intel-xeon/amx", "amd-epyc/avx512-bf16"
#: What 2027.04 measured (runner/driver/plan/experiments MACHINE_EXPERIMENTS then).
EXPERIMENTS_2027_04 = ["training", "inference", "parity", "precision", "export"]


def test_a_kind_takes_its_own_times_and_scales_the_others_by_the_cells_both_measured():
    sources = [Source("2027.01", INTEL, {"a": 10.0, "b": 20.0, "c": 40.0}),
               Source("runs", AMD, {"a": 13.0, "b": 26.0})]
    history = scaled_times(sources, AMD)
    assert history.factor == pytest.approx(1.3) and history.shared == 2 and history.own == 2
    assert history.times == pytest.approx({"a": 13.0, "b": 26.0, "c": 52.0})
    assert "x 1.30" in history.sentence() and "2 cells measured on both" in history.sentence()
    back = scaled_times(sources, INTEL)
    assert back.times == pytest.approx({"a": 10.0, "b": 20.0, "c": 40.0})  # all its own


def test_the_factor_pairs_the_newest_group_that_measured_both_kinds():
    """An older release's cells of the same name (another suite, other code) do not dilute
    the factor when a newer release measured both kinds."""
    sources = [Source("2027.01", INTEL, {"a": 10.0}), Source("2027.02", AMD, {"a": 50.0}),
               Source("2027.04", INTEL, {"b": 10.0, "c": 30.0}),
               Source("2027.04", AMD, {"b": 12.0})]
    history = scaled_times(sources, AMD)
    assert history.factor == pytest.approx(1.2) and history.shared == 1
    assert history.times["c"] == pytest.approx(36.0) and history.times["a"] == 50.0


def test_a_kind_no_run_measured_takes_the_others_unscaled_and_says_how_to_scale_them():
    history = scaled_times([Source("2027.04", INTEL, {"a": 10.0})], AMD)
    assert history.factor == 1.0 and history.shared == 0 and history.times == {"a": 10.0}
    assert "unscaled" in history.sentence() and PROBE_COMMAND in history.sentence()


def _copy_run(run_id: str, into: Path, keep: str = "") -> None:
    """A 2027.04 run's environment and processes table (only the cells whose ID starts
    with `keep`, when given) as a run of the results folder `into`."""
    source, target = RELEASE / "runs" / run_id, into / "runs" / run_id
    target.mkdir(parents=True)
    shutil.copy(source / "environment.json", target / "environment.json")
    (target / "run.json").write_text("{}")
    table = read_table(source / "processes.parquet", "processes")
    if keep:
        table = table[table["cell_id"].astype(str).str.startswith(keep)]
    write_table(table, target / "processes", "processes")


def test_the_amd_epyc_run_of_2027_04_is_projected_within_20_percent_from_the_intel_runs(
        tmp_path):
    """The Intel Xeon runs' times, and the AMD EPYC's parity cells as `PROBE_COMMAND` would
    have measured them before the suite (one process each, half a minute): the projection
    scaled by them is within 20% of the 104 minutes it took; the Intel times as they were
    (the old projection) are 35% short."""
    from dlbench.runner.driver.plan.cells import RunRequest, plan_cells
    from dlbench.runner.driver.plan.projection import project

    for run_id in INTEL_RUNS:
        _copy_run(run_id, tmp_path)
    planned = json.loads((RELEASE / "runs" / AMD_RUN / "run.json").read_text())
    cells = [c for c in plan_cells(RunRequest(suite="machine", device="cpu", threads=2,
                                              experiments=EXPERIMENTS_2027_04), "cpu")
             if c.cell_id in set(planned["planned_cells"])]  # 2027.04's suite, as it ran
    assert {c.cell_id for c in cells} == set(planned["planned_cells"])
    measured_min = float(planned["wall_time_s"]) / 60

    unscaled = project(cells, "machine", machine_history(tmp_path, AMD).times)
    assert unscaled.projected_min < 0.8 * measured_min

    _copy_run(AMD_RUN, tmp_path, keep="parity:")
    assert {source.kind for source in recorded_sources(tmp_path)} == {INTEL, AMD}
    history = machine_history(tmp_path, AMD)
    assert history.shared == 5 and 1.2 < history.factor < 1.5
    projected = project(cells, "machine", history.times).projected_min
    assert abs(measured_min / projected - 1) <= 0.2, (projected, measured_min)
    # and the Intel Xeon is projected from its own runs, unchanged by the AMD EPYC's cells
    intel = project(cells, "machine", machine_history(tmp_path, INTEL).times).projected_min
    assert intel == pytest.approx(unscaled.projected_min)
