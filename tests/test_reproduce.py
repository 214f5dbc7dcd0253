"""`dlbench reproduce RESULT_ID`: rerun a published cell and judge it against its interval."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dlbench.cli import main
from dlbench.core.storage.schema import CellStatus
from dlbench.core.storage.tables import read_json
from dlbench.core.storage.releases import freeze_release
from dlbench.runner.cell.outcome import CellOutcome, Observation
from dlbench.runner.driver.commands.reproduce import (ReproduceError, explain, load_published,
                                                      reproduce)
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord
from tests.stats_fixtures import FakeCell, spec, write_run

PUBLISHED_ENV = {"python": "3.12.1", "frameworks": {"torch": "2.13.0"}}
STEADY = [1.0, 1.02, 0.98, 1.01, 0.99, 1.0]


@pytest.fixture()
def release(tmp_path):
    cells = [FakeCell(spec("pytorch", "pytorch"), {"steady_epoch_time": STEADY,
                                                   "test_accuracy": [0.96] * 6})]
    write_run(tmp_path, "20261201T100000Z-cpu", cells, environment=PUBLISHED_ENV)
    freeze_release(tmp_path, "2026.12", ["20261201T100000Z-cpu"], "2026-12-02", "Test",
                   "cff-version: 1.2.0\n")
    ids = pd.read_csv(tmp_path / "releases" / "2026.12" / "result_ids.csv", dtype=str)
    result_id = ids.loc[ids["metric"] == "steady_epoch_time", "result_id"].iloc[0]
    return tmp_path, result_id


def measuring(centre: float, status: CellStatus = CellStatus.OK):
    """A measuring function that returns a record of the asked spec with given values."""
    def measure(cell: CellSpec) -> CellRecord:
        rng = np.random.default_rng(0)
        observations = [Observation("steady_epoch_time", float(centre * (1 + e)), repeat)
                        for repeat, e in enumerate(rng.normal(0, 0.01, cell.repeats))]
        outcome = (CellOutcome(CellStatus.OK, observations) if status is CellStatus.OK
                   else CellOutcome(status, reason="worker crashed (signal 9)"))
        return CellRecord(cell, outcome, "2026-12-02T12:00:00", 1.0, "",
                          "runner/worker/experiments/training/pytorch.py", "0" * 64)
    return measure


def test_published_result_carries_its_recorded_configuration(release):
    results, result_id = release
    published = load_published(result_id, results)
    assert published.cell_id == "training:mlp-digits:pytorch:fp32-default-b32:cpu"
    assert published.metric == "steady_epoch_time"
    assert published.spec == spec("pytorch", "pytorch")
    assert published.values == tuple(STEADY)


def test_a_rerun_like_the_published_one_is_reproduced(release):
    results, result_id = release
    asked = []

    def measure(cell: CellSpec) -> CellRecord:
        asked.append(cell)
        return measuring(1.0)(cell)

    result = reproduce(result_id, results, measure=measure, environment=PUBLISHED_ENV)
    assert asked == [spec("pytorch", "pytorch")]
    assert result.inside and not result.code_changed
    assert result.environment.empty
    assert "reproduced: the new median lies inside" in "\n".join(explain(result))
    stored = read_json(results / "runs" / result.new_run_id / "run.json")
    assert stored["reproduces"] == result_id
    assert (results / "runs" / result.new_run_id / "observations.parquet").is_file()


def test_a_slower_rerun_is_outside_and_says_what_differs(release):
    results, result_id = release
    here = {"python": "3.12.9", "frameworks": {"torch": "2.14.0"}}
    slower = measuring(1.5)

    def changed_code(cell: CellSpec) -> CellRecord:
        return dataclasses.replace(slower(cell), code_sha256="1" * 64)

    result = reproduce(result_id, results, measure=changed_code, environment=here)
    assert not result.inside
    assert result.comparison.named and result.comparison.ratio > 1.4
    text = "\n".join(explain(result))
    assert "not reproduced" in text
    assert "framework code differs" in text
    assert "environment: frameworks.torch: 2.13.0 → 2.14.0" in text


def test_a_rerun_that_fails_says_why(release):
    results, result_id = release
    result = reproduce(result_id, results, measure=measuring(1.0, CellStatus.FAILED),
                       environment=PUBLISHED_ENV)
    assert not result.inside and result.new_summary is None
    assert "failed: worker crashed (signal 9)" in "\n".join(explain(result))


@pytest.mark.parametrize("bad", ["2026.12-9999", "1999.01-0001", "nonsense"])
def test_unknown_result_id_is_a_one_line_error(release, bad, capsys):
    results, _ = release
    with pytest.raises(ReproduceError):
        load_published(bad, results)
    assert main(["reproduce", bad, "--results-dir", str(results)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and repr(bad) in err
    assert "2026.12" in err


def test_each_rerun_is_kept_as_its_own_run(release):
    results, result_id = release
    first = reproduce(result_id, results, measure=measuring(1.0), environment=PUBLISHED_ENV)
    second = reproduce(result_id, results, measure=measuring(1.5), environment=PUBLISHED_ENV)
    assert first.new_run_id != second.new_run_id
    assert {first.new_run_id, second.new_run_id} <= {p.name for p in (results / "runs").iterdir()}


@pytest.mark.slow
def test_a_real_cell_published_here_is_reproduced_or_explained(tmp_path):
    from dlbench.runner.driver.machine.environment import capture_environment
    from dlbench.runner.driver.launch.execute import PROJECT_ROOT, execute_cell
    from dlbench.runner.driver.store.run_store import RunStore

    cell = CellSpec("training", "mlp-digits", "pytorch", "", "cpu", batch_size=32, repeats=2,
                    threads=1, params={"epochs": 2})
    store = RunStore(tmp_path / "runs" / "20261202T000000Z-cpu")
    store.save_run_info({"run_id": store.run_id})
    store.save_environment(capture_environment(PROJECT_ROOT))
    store.save_record(execute_cell(cell))
    store.rebuild_tables()
    freeze_release(tmp_path, "here", [store.run_id], "2026-12-02", "Here", "cff-version: 1.2.0\n")
    ids = pd.read_csv(tmp_path / "releases" / "here" / "result_ids.csv", dtype=str)
    result_id = ids.loc[ids["metric"] == "steady_epoch_time", "result_id"].iloc[0]
    result = reproduce(result_id, tmp_path)
    assert result.status is CellStatus.OK, result.reason
    assert not result.code_changed
    text = "\n".join(explain(result))
    assert result.inside or "possible reasons" in text or "no recorded difference" in text


def test_the_rerun_says_it_measures_the_published_configuration(release):
    results, result_id = release
    result = reproduce(result_id, results, measure=measuring(1.0), environment=PUBLISHED_ENV)
    published = result.published
    text = "\n".join(explain(result))
    assert f"configuration {published.config_id}: rerun exactly as published" in text
    assert "batch_size=32" in text and "precision=fp32" in text
    assert result.config_changes == ""


def test_a_rerun_of_another_configuration_gets_no_verdict(release):
    from dataclasses import replace

    results, result_id = release

    def other_size(cell: CellSpec) -> CellRecord:
        return measuring(1.0)(replace(cell, params={"epochs": 99}))

    result = reproduce(result_id, results, measure=other_size, environment=PUBLISHED_ENV)
    text = "\n".join(explain(result))
    assert not result.inside
    assert "not comparable: the rerun measured another configuration (params.epochs —→99)" in text
    assert "reproduced" not in text
