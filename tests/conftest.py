"""Test-session settings shared by every test module."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

#: Set when this file chose the lock, so each test process (pytest -n) chooses its own.
OWN_LOCK = "DLBENCH_TEST_OWN_LOCK"


def pytest_configure(config) -> None:
    """Each test process measures under a machine lock of its own: the tests' runs must not
    wait for a real measurement's lock, nor refuse each other when test processes run side
    by side (pytest -n). A test of the lock sets its own file."""
    if "DLBENCH_LOCK_FILE" not in os.environ or os.environ.get(OWN_LOCK):
        lock_dir = Path(tempfile.mkdtemp(prefix="dlbench-test-lock-"))
        os.environ["DLBENCH_LOCK_FILE"] = str(lock_dir / "measure.lock")
        os.environ[OWN_LOCK] = "1"
