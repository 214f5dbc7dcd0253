"""`dlbench export-run` on a full or read-only disk, or into its own run's folder: one line,
exit status 2, and no archive, half archive or temporary folder left; the same command
run again once there is room writes the whole archive. Stopped while it packs (SIGTERM),
it ends as an interrupt with no temporary folder and no archive."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from tests.site_fixtures import ROOT
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


@contextlib.contextmanager
def _small_disk(root: Path, size: str, read_only: bool = False) -> Iterator[SmallDisk]:
    """A tmpfs at `root` for the test, unmounted after it (skipped where none mounts)."""
    disk = SmallDisk(root, size, read_only)
    if not disk.mounted:
        pytest.skip("no tmpfs can be mounted here (not root)")
    try:
        yield disk
    finally:
        disk.close()


def test_a_full_disk_leaves_no_archive_and_a_retry_writes_it_whole(results, tmp_path,
                                                                   capsys):
    with _small_disk(tmp_path / "disk", "256k") as disk:
        disk.fill()
        error = _refused(_export(results, disk.root), capsys)
        assert "cannot save the archive of run" in error and "No space left" in error, error
        assert sorted(p.name for p in disk.root.iterdir()) == ["ballast"]
        disk.free()
        assert main(_export(results, disk.root)) == 0  # not "exists"
        assert main(["import-run", str(disk.root / f"{RUN}.tar.gz"), "--results-dir",
                     str(tmp_path / "elsewhere")]) == 0


def test_a_read_only_out_is_one_line(results, tmp_path, capsys):
    with _small_disk(tmp_path / "ro", "64k", read_only=True) as disk:
        error = _refused(_export(results, disk.root), capsys)
        assert "Read-only file system" in error, error


def test_a_full_temporary_folder_is_one_line_and_left_empty(results, tmp_path, capsys,
                                                            monkeypatch):
    with _small_disk(tmp_path / "tmp", "64k") as disk:
        disk.fill()
        monkeypatch.setattr(tempfile, "tempdir", str(disk.root))
        error = _refused(_export(results, tmp_path / "out"), capsys)
        assert "No space left" in error, error
        assert sorted(p.name for p in disk.root.iterdir()) == ["ballast"]
        assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


@pytest.mark.parametrize("inside", ["", "exports", "processes/x"])
def test_out_inside_the_runs_own_folder_is_refused(results, capsys, inside):
    run = results / "runs" / RUN
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    error = _refused(_export(results, run / inside if inside else run), capsys)
    assert "inside run" in error and "own folder" in error, error
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


def test_sigterm_while_packing_leaves_no_temporary_file(results, tmp_path):
    export_stopped(results, tmp_path, signal.SIGTERM)


def export_stopped(results: Path, tmp_path: Path, stop: signal.Signals) -> None:
    """Stop `dlbench export-run` with `stop` while it packs a run made large (a 40 MB code
    object): exit status 130, no temporary folder, no archive."""
    objects = results / "runs" / RUN / "code-objects"
    objects.mkdir()
    (objects / ("ab" * 32)).write_bytes(os.urandom(40 << 20))
    temporary, out = tmp_path / "tmp", tmp_path / "out"
    temporary.mkdir()
    export = subprocess.Popen([sys.executable, "-m", "dlbench.cli", *_export(results, out)],
                              stderr=subprocess.PIPE, text=True, cwd=ROOT,
                              env=os.environ | {"TMPDIR": str(temporary)},
                              preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 60
    while not list(temporary.iterdir()) and export.poll() is None:
        assert time.monotonic() < deadline, "export-run never started packing"
        time.sleep(0.005)
    export.send_signal(stop)
    error = export.communicate(timeout=60)[1]
    assert export.returncode == 130, error
    assert "Traceback" not in error, error
    assert not list(temporary.iterdir()), list(temporary.iterdir())
    assert not out.exists() or not list(out.iterdir())
