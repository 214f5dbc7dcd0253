"""tests/conftest.py's grouping under `pytest -n --dist loadgroup`, on a small suite of its
own run by a real pytest with two test processes: the tests sharing a module-scoped fixture
run in one process, so do the modules sharing a SHARED_BUILDS fixture; the others are not
grouped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = {
    "conftest.py": """
import pytest
from tests.conftest import pytest_collection_modifyitems  # the hook under test

@pytest.fixture(scope="session")
def served_committed_releases():
    return object()

@pytest.fixture(scope="session")
def cheap_session_value():
    return 1
""",
    "test_module_fixture.py": """
import pytest

@pytest.fixture(scope="module")
def built():
    return object()

@pytest.mark.parametrize("n", range(6))
def test_shares_the_module_fixture(built, n):
    pass

@pytest.mark.parametrize("n", range(6))
def test_needs_nothing_shared(tmp_path_factory, cheap_session_value, n):
    pass
""",
    **{f"test_session_{name}.py": """
import pytest

@pytest.mark.parametrize("n", range(3))
def test_reads_the_shared_build(served_committed_releases, n):
    pass
""" for name in ("one", "two")},
}
#: One line of `pytest -v` under xdist: the process, the outcome, the test's id.
LINE = re.compile(r"^\[(gw\d)\] \[\s*\d+%\] PASSED (\S+)$", re.MULTILINE)


def test_tests_sharing_an_expensive_fixture_run_in_one_process(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    for name, text in SUITE.items():
        (suite / name).write_text(text)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not the project's options
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup",
                           "-v", "-p", "no:cacheprovider", "suite"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
                          | {"PYTHONPATH": str(ROOT)})  # not this test process's own xdist
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = {test: worker for worker, test in LINE.findall(done.stdout)}
    assert len(ran) == 18, done.stdout[-3000:]
    module = {w for t, w in ran.items() if "test_shares_the_module_fixture" in t}
    assert len(module) == 1 and all(t.endswith("@suite/test_module_fixture.py")
                                    for t in ran if "test_shares_the_module_fixture" in t)
    shared = {w for t, w in ran.items() if "test_reads_the_shared_build" in t}
    assert len(shared) == 1 and all(t.endswith("@served_committed_releases")
                                    for t in ran if "test_reads_the_shared_build" in t)
    alone = [t for t in ran if "test_needs_nothing_shared" in t]
    assert len(alone) == 6 and not [t for t in alone if "@" in t.rsplit("]", 1)[-1]]
    assert module != shared  # two processes: the two groups are not one
