"""A release holds runs of one measurement code (dlbench/core/storage/measurement_code.py): runs
whose processes imported a project file in two versions are refused, naming the files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from tests.stats_fixtures import training_cells, write_run

from dlbench.core.text.errors import ReleaseError
from dlbench.core.storage.layout import release_dir, run_dir
from dlbench.core.storage.measurement_code import refuse_mixed_code, run_code_record
from dlbench.core.storage.releases import freeze_release

RELEASES = Path(__file__).resolve().parent.parent / "results" / "releases"
RUN_2027_02 = RELEASES / "2027.02" / "runs" / "20261203T171654Z-cpu"
RUN_2027_03 = RELEASES / "2027.03" / "runs" / "20261205T143650Z-cpu"


def _cells() -> list:
    return training_cells(np.random.default_rng(1), {"pytorch": 1.0, "tensorflow": 1.2})


def _record(run_root: Path, index: int, code_files: dict[str, str]) -> None:
    """The `index`-th process record of the run (in name order) says it imported
    `code_files`."""
    path = sorted((run_root / "processes").glob("*.json"))[index]
    record = json.loads(path.read_text())
    record["outcome"]["code_files"] = code_files
    path.write_text(json.dumps(record))


def test_the_committed_runs_record_the_code_their_processes_imported():
    record = run_code_record(RUN_2027_03)
    assert "runner/process/worker.py" in record
    assert all(len(hashes) == 1 for hashes in record.values())  # one code for the whole run


def test_runs_of_two_releases_measured_by_different_code_are_refused_naming_the_files():
    with pytest.raises(ReleaseError) as refused:
        refuse_mixed_code({"20261203T171654Z-cpu": RUN_2027_02,
                           "20261205T143650Z-cpu": RUN_2027_03})
    message = str(refused.value)
    assert message.startswith("runs 20261203T171654Z-cpu and 20261205T143650Z-cpu were "
                              "measured by different code (")
    assert "more)" in message and "\n" not in message


def test_one_run_under_two_ids_is_one_measurement_code():
    refuse_mixed_code({"a": RUN_2027_03, "b": RUN_2027_03})


def test_a_release_of_runs_with_different_code_is_refused_and_leaves_nothing(tmp_path):
    cells = _cells()
    for run_id, digest in (("m1", "a" * 64), ("m2", "b" * 64)):
        write_run(tmp_path, run_id, cells, environment={"cpu": {"model": run_id}})
        _record(run_dir(tmp_path, run_id), 0, {"runner/harness/timed_window.py": digest,
                                                  "dlbench/__init__.py": "c" * 64})
    with pytest.raises(ReleaseError, match=r"\(runner/harness/timed_window\.py\)"):
        freeze_release(tmp_path, "2027.04", ["m1", "m2"], "2027-01-01", "T", "cff\n")
    assert not release_dir(tmp_path, "2027.04").exists()
    assert [p.name for p in release_dir(tmp_path, "2027.04").parent.iterdir()] == []


def test_a_run_whose_processes_ran_two_versions_of_a_file_is_refused(tmp_path):
    write_run(tmp_path, "m1", _cells())
    _record(run_dir(tmp_path, "m1"), 0, {"runner/worker.py": "a" * 64})
    _record(run_dir(tmp_path, "m1"), 1, {"runner/worker.py": "b" * 64})
    with pytest.raises(ReleaseError, match=r"^run m1 were measured by different code"):
        freeze_release(tmp_path, "2027.04", ["m1"], "2027-01-01", "T", "cff\n")


def test_runs_that_share_their_files_hashes_or_keep_no_record_may_be_released_together(
        tmp_path):
    cells = _cells()
    for run_id in ("m1", "m2", "old"):
        write_run(tmp_path, run_id, cells)
    _record(run_dir(tmp_path, "m1"), 0, {"runner/worker.py": "a" * 64})
    _record(run_dir(tmp_path, "m2"), 0, {"runner/worker.py": "a" * 64,
                                           "runner/adapters/keras.py": "d" * 64})
    assert freeze_release(tmp_path, "2027.04", ["m1", "m2", "old"], "2027-01-01", "T",
                          "cff\n").is_dir()
