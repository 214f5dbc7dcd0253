"""Test-session settings shared by every test module: each test process's machine lock, one
framework-kernel probe and CPU peak a session, the expensive site build shared by the modules
that read it, and the scheduling that lets `pytest -n` build each module's and each shared
fixture once."""

from __future__ import annotations

import json
import os
import shutil
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

#: Set when this file chose the lock, so each test process (pytest -n) chooses its own.
OWN_LOCK = "DLBENCH_TEST_OWN_LOCK"
#: Folders the session's test processes share, by the variable that names them (named here:
#: conftest imports no project module): runner/driver/machine/kernels.py's PROBE_CACHE, the
#: frameworks' kernel choices and the CPU peak; report/site/cache.py's SHARED_BLOBS, the
#: site builds' static SVGs and Vega bundle.
SESSION_FOLDERS = {"DLBENCH_PROBE_CACHE": "dlbench-test-probes-",
                   "DLBENCH_SHARED_BLOBS": "dlbench-test-blobs-"}
#: The session folders this process chose (removed when it ends).
OWN_SESSION_FOLDERS = pytest.StashKey[list]()
#: Modules that read one expensive session-scoped build, by the name of the build: under
#: `pytest -n` they run in one test process, so it is built once a session.
SHARED_BUILD_MODULES = {
    "tests/test_site_browser_founding.py": "served_committed_releases",
    "tests/test_site_browser_reader.py": "served_committed_releases",
    "tests/test_site_browser_releases.py": "served_committed_releases",
    "tests/test_site_build.py": "served_committed_releases",
}
#: Each scheduling group's seconds in a recent `make test` (benchmarks/test_time_profile.py
#: --write writes it from a --durations=0 log): the longest groups start first.
GROUP_SECONDS = Path(__file__).parent / "group_seconds.json"


def pytest_configure(config) -> None:
    """Each test process measures under a machine lock of its own: the tests' runs must not
    wait for a real measurement's lock, nor refuse each other when test processes run side
    by side (pytest -n). A test of the lock sets its own file."""
    if "DLBENCH_LOCK_FILE" not in os.environ or os.environ.get(OWN_LOCK):
        lock_dir = Path(tempfile.mkdtemp(prefix="dlbench-test-lock-"))
        os.environ["DLBENCH_LOCK_FILE"] = str(lock_dir / "measure.lock")
        os.environ[OWN_LOCK] = "1"
    # Every `dlbench run` the tests start reads the frameworks' kernel choices (10-16 s of
    # framework imports) and measures the CPU's peak (seconds of matmuls), and every site
    # build renders its charts and bundles Vega's script (seconds each): the session's
    # processes share one of each per key. Chosen once, by the first process; the test
    # processes (pytest -n) inherit them.
    config.stash[OWN_SESSION_FOLDERS] = []
    for variable, prefix in SESSION_FOLDERS.items():
        if variable not in os.environ:
            os.environ[variable] = tempfile.mkdtemp(prefix=prefix)
            config.stash[OWN_SESSION_FOLDERS].append(os.environ[variable])


def pytest_unconfigure(config) -> None:
    """The session's shared folders go with the process that chose them."""
    for folder in config.stash.get(OWN_SESSION_FOLDERS, []):
        shutil.rmtree(folder, ignore_errors=True)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one test process more than the usable cores. The longest modules spend
    much of their time waiting on the processes, servers and browsers they start (the
    cluster and browser modules used about 0.4 of a core each in a profile), so a third
    process on 2 cores took `make test` from 19:25 to 15:09 alone; a fourth made it 16:52,
    the suite being then CPU-bound (2026-12-06)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """Under `pytest -n --dist loadscope` (pyproject's addopts): each module's tests in one
    test process, so its module-scoped fixtures are built once, and the modules of one
    SHARED_BUILD_MODULES build in one process; the longest groups first (GROUP_SECONDS), so
    no long module starts last while the other processes have nothing left. (xdist's
    loadgroup cannot do it with pytest 9: it renames node IDs through an attribute pytest no
    longer reads.)"""
    if config.getvalue("dist") != "loadscope":
        return None
    seconds = json.loads(GROUP_SECONDS.read_text()) if GROUP_SECONDS.exists() else {}
    return shared_build_scheduler(config, log, SHARED_BUILD_MODULES, seconds)


def shared_build_scheduler(config: pytest.Config, log: object, builds: dict[str, str],
                           seconds: dict[str, float] | None = None) -> object:
    """xdist's loadscope scheduling with a module as the unit of work, the modules named in
    `builds` (module path -> build) one unit per build, and each process given the longest
    unit left by `seconds` (unit -> expected seconds; a unit it does not name counts as its
    median): the longest-first rule that keeps the last process's tail short."""
    from xdist.scheduler import LoadScopeScheduling

    expected = seconds or {}
    unknown = statistics.median(expected.values()) if expected else 0.0

    class SharedBuildScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return builds.get(module, module)

        def _assign_work_unit(self, node: object) -> None:
            if expected and self.workqueue:
                longest = max(self.workqueue, key=lambda unit: expected.get(unit, unknown))
                self.workqueue.move_to_end(longest, last=False)
            super()._assign_work_unit(node)

    return SharedBuildScheduling(config, log)


@pytest.fixture(scope="session")
def served_committed_releases(tmp_path_factory: pytest.TempPathFactory
                              ) -> Iterator[Callable[[tuple[str, ...]], str]]:
    """serve(releases): the address of those committed releases deployed with mike, exported
    and served on localhost; built once a session for each tuple of releases, for the
    browser modules that read them and the test that builds every committed release."""
    from tests.site_fixtures import served_releases

    sites: dict[tuple[str, ...], str] = {}
    cache = tmp_path_factory.mktemp("site-cache")  # the builds' Vega bundle, made once
    with ExitStack() as servers:
        def serve(releases: tuple[str, ...]) -> str:
            if releases not in sites:
                tmp = tmp_path_factory.mktemp("released")
                sites[releases] = servers.enter_context(served_releases(tmp, releases, cache))
            return sites[releases]

        yield serve


@pytest.fixture(scope="session")
def committed_release_walks() -> dict:
    """(address, width) -> what a walk of every page of the served committed releases saw
    (tests/test_site_browser_releases.py's `walked`): each width walked once a session for
    the two browser modules that read it, which run in one test process
    (SHARED_BUILD_MODULES)."""
    return {}
