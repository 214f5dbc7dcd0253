"""Test-session settings shared by every test module: each test process's machine lock, the
expensive site builds shared by the modules that read them, and the grouping of tests that
lets `pytest -n` build each shared fixture once."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

#: Set when this file chose the lock, so each test process (pytest -n) chooses its own.
OWN_LOCK = "DLBENCH_TEST_OWN_LOCK"
#: Session-scoped fixtures of these tests that are expensive to build: every module using one
#: runs in one test process (pyproject's `--dist loadgroup`), so it is built once a session.
SHARED_BUILDS = ("served_committed_releases",)


def pytest_configure(config) -> None:
    """Each test process measures under a machine lock of its own: the tests' runs must not
    wait for a real measurement's lock, nor refuse each other when test processes run side
    by side (pytest -n). A test of the lock sets its own file."""
    if "DLBENCH_LOCK_FILE" not in os.environ or os.environ.get(OWN_LOCK):
        lock_dir = Path(tempfile.mkdtemp(prefix="dlbench-test-lock-"))
        os.environ["DLBENCH_LOCK_FILE"] = str(lock_dir / "measure.lock")
        os.environ[OWN_LOCK] = "1"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under `pytest -n --dist loadgroup` each module with a module-scoped fixture of these
    tests runs in one test process, and the modules sharing a SHARED_BUILDS fixture in one:
    such a fixture is built once, not once in each process that happens to run one of its
    tests (xdist reads the mark after this hook; without -n it changes nothing)."""
    for item, group in shared_fixture_groups(items).items():
        item.add_marker(pytest.mark.xdist_group(group))


def shared_fixture_groups(items: list[pytest.Item]) -> dict[pytest.Item, str]:
    """The group of each test that uses a module-scoped fixture of these tests or a
    SHARED_BUILDS one: tests whose fixtures overlap are in one group."""
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    def unite(first: str, second: str) -> None:  # a shared build names the group it joins
        kept, joined = root(first), root(second)
        if joined in SHARED_BUILDS:
            kept, joined = joined, kept
        parent[joined] = kept

    keys = {item: _shared_fixture_keys(item) for item in items}
    for found in keys.values():
        for key in found:
            unite(found[0], key)
    return {item: root(found[0]) for item, found in keys.items() if found}


def _shared_fixture_keys(item: pytest.Item) -> list[str]:
    """The module of a test using a module-scoped fixture of these tests, and the name of
    each SHARED_BUILDS fixture it uses."""
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    keys = []
    for name in getattr(item, "fixturenames", ()):
        found = definitions.get(name)
        baseid = found[-1].baseid if found else ""
        if not (isinstance(baseid, str) and baseid):  # a plugin's (tmp_path_factory) or a
            continue  # parameter's, not one these tests define
        if found[-1].scope == "module":
            keys.append(item.nodeid.split("::")[0])
        elif found[-1].scope == "session" and name in SHARED_BUILDS:
            keys.append(name)
    return keys


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
