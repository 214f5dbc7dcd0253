"""`dlbench export-run RUN`: a run of this machine packed as the archive `import-run` takes,
checked as `import-run` would before it is written; a run holding anything the runner does
not write is refused with one line and nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from tests.stats_fixtures import training_cells, write_run

from dlbench.cli import main


@pytest.fixture
def results(tmp_path) -> Path:
    folder = tmp_path / "results"
    cells = training_cells(np.random.default_rng(3), {"pytorch": 1.0, "tensorflow": 1.3})
    write_run(folder, "20261206T100000Z-cpu", cells, environment={"cpu": {"model": "x"}})
    return folder


def test_the_latest_run_is_packed_and_imports_elsewhere(results, tmp_path, capsys):
    out = tmp_path / "send"
    assert main(["export-run", "latest", "--results-dir", str(results), "--out", str(out)]) == 0
    archive = out / "20261206T100000Z-cpu.tar.gz"
    assert archive.is_file() and f"wrote {archive}" in capsys.readouterr().out
    elsewhere = tmp_path / "project-results"
    assert main(["import-run", str(archive), "--results-dir", str(elsewhere)]) == 0
    imported = elsewhere / "runs" / "20261206T100000Z-cpu"
    original = results / "runs" / "20261206T100000Z-cpu"
    assert sorted(p.relative_to(imported) for p in imported.rglob("*")) == sorted(
        p.relative_to(original) for p in original.rglob("*"))


def _refused(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1
    return error


def test_a_run_holding_a_link_is_refused_and_nothing_is_written(results, tmp_path, capsys):
    secret = tmp_path / "secret.txt"
    secret.write_text("not the run's")
    os.symlink(secret, results / "runs" / "20261206T100000Z-cpu" / "notes.txt")
    out = tmp_path / "send"
    error = _refused(["export-run", "20261206T100000Z-cpu", "--results-dir", str(results),
                      "--out", str(out)], capsys)
    assert "notes.txt: not a regular file" in error
    assert not out.exists()


def test_a_run_that_would_not_import_is_refused(results, tmp_path, capsys):
    (results / "runs" / "20261206T100000Z-cpu" / "environment.json").write_text("[1, 2")
    error = _refused(["export-run", "latest", "--results-dir", str(results), "--out",
                      str(tmp_path / "send")], capsys)
    assert "the run would not import" in error and "environment.json" in error
    assert not (tmp_path / "send").exists()


def test_an_unknown_run_lists_the_runs_and_an_existing_archive_is_kept(results, tmp_path,
                                                                       capsys):
    error = _refused(["export-run", "nope", "--results-dir", str(results)], capsys)
    assert "unknown run 'nope'" in error and "20261206T100000Z-cpu" in error
    out = tmp_path / "send"
    out.mkdir()
    (out / "20261206T100000Z-cpu.tar.gz").write_text("kept")
    error = _refused(["export-run", "latest", "--results-dir", str(results), "--out",
                      str(out)], capsys)
    assert "exists" in error and (out / "20261206T100000Z-cpu.tar.gz").read_text() == "kept"
