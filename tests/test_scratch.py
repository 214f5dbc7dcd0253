"""A runner killed before cleaning up (a cancelled Ray task) leaves its worker's scratch
folder; the next runner removes exactly those folders and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys

from dlbench.runner.driver.launch.scratch import PREFIX, scratch_folder, sweep_abandoned


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def test_only_folders_of_runners_that_are_gone_are_removed(tmp_path):
    dead = tmp_path / f"{PREFIX}{_dead_pid()}-abc123"
    live = tmp_path / f"{PREFIX}{os.getpid()}-def456"
    older = tmp_path / f"{PREFIX}xyz789"  # an older runner's name: no owner to check
    foreign = tmp_path / "mine"
    for folder in (dead, live, older, foreign):
        folder.mkdir()
        (folder / "spec-0.json").write_text("{}")
    not_a_folder = tmp_path / f"{PREFIX}{_dead_pid()}-file"
    not_a_folder.write_text("x")

    assert sweep_abandoned(tmp_path) == [dead]
    assert not dead.exists()
    assert all(path.exists() for path in (live, older, foreign, not_a_folder))


def test_a_scratch_folder_names_its_runner_and_is_removed_after_use():
    with scratch_folder() as scratch:
        assert os.path.basename(scratch).startswith(f"{PREFIX}{os.getpid()}-")
        assert os.path.isdir(scratch)
    assert not os.path.exists(scratch)
