"""`dlbench export-run` on a full or read-only disk, or into its own run's folder: one line,
exit status 2, and no archive, half archive or temporary folder left; the same command
run again once there is room writes the whole archive."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from tests.small_disk import SmallDisk
from tests.stats_fixtures import training_cells, write_run

from dlbench.cli import main

RUN = "20261206T100000Z-cpu"


@pytest.fixture
def results(tmp_path) -> Path:
    folder = tmp_path / "results"
    cells = training_cells(np.random.default_rng(3), {"pytorch": 1.0, "tensorflow": 1.3})
    write_run(folder, RUN, cells, environment={"cpu": {"model": "x"}})
    return folder


def _export(results: Path, out: Path) -> list[str]:
    return ["export-run", RUN, "--results-dir", str(results), "--out", str(out)]


def _refused(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1, error
    return error


def test_a_full_disk_leaves_no_archive_and_a_retry_writes_it_whole(results, tmp_path,
                                                                   capsys):
    disk = SmallDisk(tmp_path / "disk", "256k")
    if not disk.mounted:
        pytest.skip("no tmpfs can be mounted here (not root)")
    try:
        disk.fill()
        error = _refused(_export(results, disk.root), capsys)
        assert "cannot save the archive of run" in error and "No space left" in error, error
        assert sorted(p.name for p in disk.root.iterdir()) == ["ballast"]
        disk.free()
        assert main(_export(results, disk.root)) == 0  # not "exists"
        assert main(["import-run", str(disk.root / f"{RUN}.tar.gz"), "--results-dir",
                     str(tmp_path / "elsewhere")]) == 0
    finally:
        disk.close()


def test_a_read_only_out_is_one_line(results, tmp_path, capsys):
    disk = SmallDisk(tmp_path / "ro", "64k", read_only=True)
    if not disk.mounted:
        pytest.skip("no tmpfs can be mounted here (not root)")
    try:
        error = _refused(_export(results, disk.root), capsys)
        assert "Read-only file system" in error, error
    finally:
        disk.close()


def test_a_full_temporary_folder_is_one_line_and_left_empty(results, tmp_path, capsys,
                                                            monkeypatch):
    disk = SmallDisk(tmp_path / "tmp", "64k")
    if not disk.mounted:
        pytest.skip("no tmpfs can be mounted here (not root)")
    try:
        disk.fill()
        monkeypatch.setattr(tempfile, "tempdir", str(disk.root))
        error = _refused(_export(results, tmp_path / "out"), capsys)
        assert "No space left" in error, error
        assert sorted(p.name for p in disk.root.iterdir()) == ["ballast"]
        assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())
    finally:
        disk.close()


@pytest.mark.parametrize("inside", ["", "exports", "processes/x"])
def test_out_inside_the_runs_own_folder_is_refused(results, capsys, inside):
    run = results / "runs" / RUN
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    error = _refused(_export(results, run / inside if inside else run), capsys)
    assert "inside run" in error and "own folder" in error, error
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before
