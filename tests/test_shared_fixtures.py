"""tests/conftest.py's scheduling under `pytest -n --dist loadscope`, on a small suite of its
own run by a real pytest with three test processes: a module's tests run in one process (its
module-scoped fixture built once), and the modules sharing one build run in one process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONFTEST = """
import pytest
from tests.conftest import shared_build_scheduler

SHARED = {"suite/test_reads_one.py": "build", "suite/test_reads_two.py": "build"}

def pytest_xdist_make_scheduler(config, log):
    return shared_build_scheduler(config, log, SHARED)

@pytest.fixture(scope="session")
def build():
    return object()
"""
MODULE = """
import pytest

@pytest.fixture(scope="module")
def built():
    return object()

@pytest.mark.parametrize("n", range(6))
def test_uses_the_module_fixture(built, n):
    pass
"""
READS = """
import pytest

@pytest.mark.parametrize("n", range(4))
def test_reads_the_build(build, n):
    pass
"""
#: One line of `pytest -v` under xdist: the process, the outcome, the test's id.
LINE = re.compile(r"^\[(gw\d)\] \[\s*\d+%\] PASSED (\S+)", re.MULTILINE)


def _run_suite(tmp_path: Path, files: dict[str, str], processes: int) -> list[tuple[str, str]]:
    """(test process, test ID) of each test of a small suite of `files` run by a real pytest
    on `processes` test processes under loadscope, in the order they passed."""
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, text in files.items():
        (suite / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not the project's options
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", str(processes), "--dist",
                           "loadscope", "-v", "-p", "no:cacheprovider", "suite"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env=environment | {"PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return LINE.findall(done.stdout)


def test_a_module_and_the_modules_of_one_build_each_run_in_one_process(tmp_path: Path) -> None:
    passed = _run_suite(tmp_path, {"conftest.py": CONFTEST, "test_module.py": MODULE,
                                   "test_reads_one.py": READS, "test_reads_two.py": READS}, 3)
    ran = {test: worker for worker, test in passed}
    assert len(ran) == 14, passed
    module = {w for t, w in ran.items() if t.startswith("suite/test_module.py")}
    reads = {w for t, w in ran.items() if t.startswith("suite/test_reads_")}
    # three processes and three modules: alone, each module would have had a process of its own
    assert len(module) == 1 and len(reads) == 1 and module != reads, ran


ORDERED_CONFTEST = """
from tests.conftest import shared_build_scheduler

SECONDS = {seconds}

def pytest_xdist_make_scheduler(config, log):
    return shared_build_scheduler(config, log, {{}}, SECONDS)
"""
FEW = """
def test_the_one_long_test():
    pass
"""


def _first_module(tmp_path: Path, seconds: dict) -> str:
    """The module whose test ran first in one test process, under `seconds`."""
    passed = _run_suite(tmp_path, {"conftest.py": ORDERED_CONFTEST.format(seconds=seconds),
                                   "test_many.py": MODULE, "test_few.py": FEW}, 1)
    return passed[0][1].split("::")[0]


@pytest.mark.parametrize(("seconds", "first"), [
    ({"suite/test_few.py": 100.0, "suite/test_many.py": 1.0}, "suite/test_few.py"),
    ({}, "suite/test_many.py"),  # without seconds: xdist's order, the most tests first
])
def test_the_longest_unit_by_its_recorded_seconds_starts_first(tmp_path: Path, seconds: dict,
                                                               first: str) -> None:
    assert _first_module(tmp_path, seconds) == first
