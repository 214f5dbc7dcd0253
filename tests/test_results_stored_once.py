"""Results stored once: a release holds its runs (results/runs keeps no copy of them), and
its tables as Parquet only, each CSV built from its Parquet twin and checked against the
checksum it was published with."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

from dlbench.cli import main
from dlbench.core.storage.code_archive import CodeRecord, read_code_record, write_code_record
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.layout import (
    find_run, latest_run_id, release_names, released_runs, run_dir, all_run_ids, run_ids,
)
from dlbench.core.storage.releases import DERIVED, freeze_release, release_file, verify_manifest
from tests.site_fixtures import RUN_A, RUN_B, freeze, golden_results
from tests.stats_fixtures import training_cells, write_run

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results"


def test_freezing_moves_the_runs_into_the_release_and_every_reader_still_finds_them(
        tmp_path, capsys):
    results = golden_results(tmp_path)
    root = freeze(results, "2026.12", [RUN_A], "2026-12-01")
    assert not run_dir(results, RUN_A).exists()  # no second copy under results/runs
    assert run_ids(results) == [RUN_B] and all_run_ids(results) == [RUN_A, RUN_B]
    assert find_run(results, RUN_A) == root / "runs" / RUN_A
    assert latest_run_id(results) == RUN_B  # the run still being worked on
    assert main(["results", "show", RUN_A, "--results-dir", str(results)]) == 0
    assert RUN_A in capsys.readouterr().out
    again = freeze(results, "2026.13", [RUN_A, RUN_B], "2026-12-02")  # a released run again
    assert read_code_record(again / "runs" / RUN_A) == read_code_record(root / "runs" / RUN_A)
    assert run_ids(results) == [] and latest_run_id(results) == RUN_B
    assert main(["run", "--resume", RUN_B, "--results-dir", str(results)]) == 2
    assert "is released" in capsys.readouterr().err


def test_a_csv_built_otherwise_than_published_is_refused(tmp_path):
    results = golden_results(tmp_path)
    root = freeze(results, "2026.12", [RUN_A], "2026-12-01")
    verify_manifest(root)
    manifest = json.loads((root / "MANIFEST.json").read_text())
    assert not list(root.rglob("*.parquet"))[0].with_suffix(".csv").exists()
    assert hashlib.sha256(release_file(root, "cells.csv")).hexdigest() == \
        manifest[DERIVED]["cells.csv"]
    manifest[DERIVED]["cells.csv"] = "0" * 64
    (root / "MANIFEST.json").write_text(json.dumps(manifest))
    with pytest.raises(ResultsFileError, match="differs from the published file"):
        release_file(root, "cells.csv")


def test_the_committed_runs_folder_holds_no_copy_of_a_released_run():
    assert not set(run_ids(RESULTS)) & set(released_runs(RESULTS))


@pytest.mark.parametrize("name", release_names(RESULTS))
def test_each_committed_release_builds_every_published_csv_from_its_parquet(name):
    root = RESULTS / "releases" / name
    verify_manifest(root)
    derived = json.loads((root / "MANIFEST.json").read_text())[DERIVED]
    assert "observations.csv" in derived and "cells.csv" in derived
    for relative, published in derived.items():
        assert hashlib.sha256(release_file(root, relative)).hexdigest() == published


def test_no_table_is_committed_twice_as_csv_and_parquet():
    tracked = subprocess.run(["git", "ls-files", "results"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.splitlines()
    twins = {path.removesuffix(".csv") for path in tracked if path.endswith(".csv")} & {
        path.removesuffix(".parquet") for path in tracked if path.endswith(".parquet")}
    assert tracked and not twins


def test_runs_of_one_code_share_one_archive_and_export_as_whole_runs(tmp_path):
    results = tmp_path / "results"
    cells = training_cells(np.random.default_rng(3), {"pytorch": 1.0, "tensorflow": 1.3})
    ids = ["20261206T100000Z-cpu", "20261206T110000Z-cpu"]
    for run_id in ids:
        root = write_run(results, run_id, cells, environment={"cpu": {"model": "x"}},
                         code=b"print(1)\n")
        write_code_record(root, CodeRecord().with_file(cells[0].code_path, b"print(1)\n"))
    release = freeze_release(results, "2026.12", ids, "2026-12-06", "t", "cff")
    archives = list((release / "code-archives").iterdir())
    assert len(archives) == 1 and not list(release.rglob("code.tar"))  # one, shared
    assert main(["export-run", ids[0], "--results-dir", str(results),
                 "--out", str(tmp_path / "out")]) == 0  # its code.tar packed from the store
    assert main(["import-run", str(tmp_path / "out" / f"{ids[0]}.tar.gz"),
                 "--results-dir", str(tmp_path / "elsewhere")]) == 0
    imported = tmp_path / "elsewhere" / "runs" / ids[0] / "code.tar"
    assert imported.read_bytes() == archives[0].read_bytes()


def test_the_committed_release_of_three_runs_keeps_their_one_code_archive_once():
    release = RESULTS / "releases" / "2027.04"
    assert len(list((release / "code-archives").iterdir())) == 1
    assert not list(release.rglob("code.tar"))
