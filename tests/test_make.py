"""The newcomer path: `make test` sets up what the tests need, or says the one command to run."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


#: What a parent make (`make test` running this suite) passes down; a child that inherits it
#: prints 'make[1]:' and takes the parent's flags, so each test starts make afresh.
PARENT_MAKE_VARIABLES = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")


def _make(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in PARENT_MAKE_VARIABLES}
    return subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT), *args],
                          capture_output=True, text=True, check=False, timeout=60, env=env)


def test_test_target_sets_up_the_browser_first() -> None:
    plan = _make("-n", "-o", ".venv/.installed", "test")  # the environment taken as made
    lines = plan.stdout.splitlines()
    setup = next(i for i, line in enumerate(lines) if "command -v" in line)
    tests = next(i for i, line in enumerate(lines) if "-m pytest" in line)
    assert setup < tests


def test_a_missing_chromium_without_root_names_the_command_and_fails() -> None:
    done = _make("test-deps", "CHROMIUM=no-such-chromium-here", "USER_ID=1000")
    assert done.returncode != 0
    ours = [line for line in done.stderr.splitlines() if not line.startswith("make:")]
    assert ours == ["make test needs Chromium for the browser tests: run "
                    "'sudo apt-get install -y chromium', then 'make test' again"]
    assert not done.stdout


def test_an_installed_chromium_needs_nothing() -> None:
    done = _make("test-deps", "CHROMIUM=sh", "USER_ID=1000")
    assert done.returncode == 0 and not done.stdout and not done.stderr


def test_ci_runs_the_readme_test_command() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    commands = [line for line in script.splitlines()
                if line.strip() and not line.startswith(("#", "set ", "cd "))]
    assert commands == ["make test"]
    assert "make test" in (ROOT / "README.md").read_text()


def test_make_leaves_the_tests_packages_to_make_test() -> None:
    """A newcomer's `make` installs what the run and the site need; pytest, Playwright and
    Ray come with `make test` (issue 40's five minutes)."""
    run = _make("-n", "-B", "-o", "pyproject.toml", "all").stdout
    test = _make("-n", "-B", "-o", "pyproject.toml", "test").stdout
    assert "-e '.[jax,openvino]'" in run and "test,cluster" not in run
    assert "-e '.[jax,openvino,test,cluster]'" in test
