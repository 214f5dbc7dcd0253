"""The results layout: one reader, schemas checked on read, `latest`, one order of releases."""

from __future__ import annotations

import json

import numpy as np
import pytest
from tests.stats_fixtures import training_cells, write_run

from dlbench.cli import main
from dlbench.core.text.errors import LayoutError, ResultsFileError
from dlbench.core.storage.layout import (
    load_run, read_environment, read_run_info, release_names, resolve_run_id, run_dir,
)
from dlbench.core.storage.releases import freeze_release


@pytest.fixture()
def two_runs(tmp_path):
    rng = np.random.default_rng(3)
    for run_id in ("20261201T100000Z-cpu", "20261202T100000Z-cpu"):
        write_run(tmp_path, run_id, training_cells(rng, {"pytorch": 1.0, "tensorflow": 1.2}))
    return tmp_path


def test_latest_is_the_newest_run(two_runs):
    assert resolve_run_id(two_runs, "latest") == "20261202T100000Z-cpu"
    assert resolve_run_id(two_runs, "20261201T100000Z-cpu") == "20261201T100000Z-cpu"
    with pytest.raises(LayoutError, match="runs: 20261201T100000Z-cpu, 20261202T100000Z-cpu"):
        resolve_run_id(two_runs, "nope")


def test_latest_with_no_runs_says_there_are_none(tmp_path):
    with pytest.raises(LayoutError, match="holds no runs yet"):
        resolve_run_id(tmp_path, "latest")


@pytest.mark.parametrize(("field", "value", "expected"), [
    ("run_id", None, "missing field 'run_id'"),
    ("started_at", 20261201, "field 'started_at' is int, expected str"),
    ("wall_time_s", True, "field 'wall_time_s' is bool, expected int or float"),
    ("planned_cells", "all", "field 'planned_cells' is str, expected list"),
])
def test_run_json_is_checked_on_read_with_one_line(two_runs, field, value, expected):
    root = run_dir(two_runs, "20261201T100000Z-cpu")
    info = json.loads((root / "run.json").read_text())
    if value is None:
        del info[field]
    else:
        info[field] = value
    (root / "run.json").write_text(json.dumps(info))
    with pytest.raises(ResultsFileError, match=expected):
        read_run_info(root)


def test_environment_json_is_checked_on_read(two_runs):
    root = run_dir(two_runs, "20261201T100000Z-cpu")
    (root / "environment.json").write_text(json.dumps({"cpu": "fast", "python": "3.11"}))
    with pytest.raises(ResultsFileError, match="field 'cpu' is str, expected dict"):
        read_environment(root)
    (root / "environment.json").unlink()
    assert load_run(root).environment == {}


def test_releases_sort_by_date_then_name(two_runs):
    freeze_release(two_runs, "zeta", ["20261201T100000Z-cpu"], "2026-11-01", "Z", "cff\n")
    freeze_release(two_runs, "alpha", ["20261202T100000Z-cpu"], "2026-12-01", "A", "cff\n")
    assert release_names(two_runs) == ["zeta", "alpha"]


def test_results_show_accepts_latest(two_runs, capsys):
    assert main(["results", "show", "latest", "--results-dir", str(two_runs)]) == 0
    out = capsys.readouterr().out
    assert "run 20261202T100000Z-cpu" in out and "steady_epoch_time" in out


def test_results_show_of_a_broken_run_is_one_line(two_runs, capsys):
    root = run_dir(two_runs, "20261202T100000Z-cpu")
    (root / "run.json").write_text(json.dumps({"run_id": 7, "started_at": "x"}))
    assert main(["results", "show", "latest", "--results-dir", str(two_runs)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "field 'run_id' is int" in err


def test_results_show_of_an_unknown_run_lists_the_runs(two_runs, capsys):
    assert main(["results", "show", "nope", "--results-dir", str(two_runs)]) == 2
    assert "runs: 20261201T100000Z-cpu, 20261202T100000Z-cpu" in capsys.readouterr().err


def test_compare_accepts_latest(two_runs, capsys):
    assert main(["compare", "20261201T100000Z-cpu", "latest", "--results-dir",
                 str(two_runs)]) == 0
