"""The methodology page states the protocol with the numbers the code runs: each figure in
the text is checked against the constant that decides it, so neither can change alone."""

from __future__ import annotations

import inspect
from pathlib import Path

from dlbench.core import stats
from dlbench.runner.driver.machine import load as machine_load
from dlbench.runner.worker.harness.sampling import MIN_WINDOW_S
from dlbench.runner.driver.plan.repeats import SUITE_PROCESSES
from dlbench.runner.driver.commands.run import DEFAULT_BUSY_RETRIES

METHOD = (Path(__file__).resolve().parent.parent / "templates" / "_method.md.j2").read_text()
TEXT = " ".join(METHOD.split())  # line breaks in the template are not meaningful


def test_process_counts_per_suite_are_the_repeat_policys():
    assert f"standard suite runs {SUITE_PROCESSES['standard']} processes per cell" in TEXT
    assert f"the full suite {SUITE_PROCESSES['full']}" in TEXT
    assert f"quick suite runs {SUITE_PROCESSES['quick']} and is a" in TEXT


def test_the_minimum_window_is_the_samplers():
    assert MIN_WINDOW_S["cpu"] == MIN_WINDOW_S["cuda"]
    assert f"lasts at least {MIN_WINDOW_S['cpu'] * 1000:g} ms" in TEXT


def test_the_busy_rule_and_its_retries_are_the_runners():
    assert f"more than {machine_load.CPU_SHARE_TOLERANCE_CORES:g} of a core" in TEXT
    assert f"more than {machine_load.MAX_STEAL_SHARE:.0%} CPU steal" in TEXT
    assert f"more than {machine_load.MAX_TIMED_STEAL_SHARE:.0%} CPU steal inside its timed" in TEXT
    assert f"(at most {DEFAULT_BUSY_RETRIES} times)" in TEXT


def test_the_interval_is_the_summarys():
    resamples = inspect.signature(stats.summarize).parameters["resamples"].default
    assert f"({resamples} resamples, fixed seed)" in TEXT
