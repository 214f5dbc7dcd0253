"""No file of the project names one machine's paths (a checkout's folder, a home folder): a
newcomer's clone lives elsewhere. Frozen releases are left out: their recorded data name the
machine they were measured on and never change, and so are the committed runs waiting for
their release (results/runs/: a machine suite's run, kept as measured)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: Folders of machines this project is worked on: the checkout's and a user's home (written
#: as alternatives, so this file holds no such path itself).
MACHINE_PATH = re.compile(rb"/(?:work|root)/|/home/[a-z_][a-z0-9_-]*/")
#: Measured data, frozen: what a run recorded about its machine stays as measured.
FROZEN = ("results/releases/", "results/runs/")


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                          check=False)
    if done.returncode != 0:
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    return [name for name in done.stdout.decode().split("\0")
            if name and not name.startswith(FROZEN)]


def test_no_tracked_file_names_a_machines_paths():
    found = []
    for name in tracked_files():
        path = ROOT / name
        if path.is_file() and MACHINE_PATH.search(path.read_bytes()):
            found.append(name)
    assert found == []


def test_the_pattern_finds_a_checkout_path_and_spares_the_projects_own_paths():
    checkout = b"/".join([b"", b"work", b"main"])
    assert MACHINE_PATH.search(b"git clone " + checkout + b" /tmp/fresh")
    assert MACHINE_PATH.search(b"/".join([b"", b"home", b"alice", b"dlbench"]))
    assert not MACHINE_PATH.search(b"/tmp/dlbench-measure.lock results/runs/ /usr/bin/chromium")
