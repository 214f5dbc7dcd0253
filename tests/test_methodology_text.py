"""The methodology page states the protocol with the numbers the code runs: each figure in
the text is checked against the constant that decides it, so neither can change alone."""

from __future__ import annotations

import inspect
from pathlib import Path

from dlbench.core.judging import stats
from dlbench.runner.driver.machine import load as machine_load
from dlbench.runner.worker.harness.sampling import MIN_WINDOW_S
from dlbench.runner.driver.plan.repeats import SUITE_PROCESSES
from dlbench.runner.driver.commands.run import DEFAULT_BUSY_RETRIES

METHOD = (Path(__file__).resolve().parent.parent / "templates" / "_method.md.j2").read_text()
TEXT = " ".join(METHOD.split())  # line breaks in the template are not meaningful


def _methodology(release: str) -> str:
    """The methodology page of a committed release, rebuilt, in one line."""
    from dlbench.core.declarations.experiments import EXPERIMENTS
    from dlbench.report.inputs.labelled import labelled_results
    from dlbench.report.inputs.source import load_release
    from dlbench.report.pages.cite import release_citation
    from dlbench.report.pages.home import source_judgement
    from dlbench.report.pages.info import methodology_page
    from dlbench.report.pages.registry import PageInputs
    from dlbench.report.render.jinja import environment
    from dlbench.report.verdicts.verdict_table import Calibration
    from tests.site_fixtures import ROOT, TEMPLATES

    source = load_release(ROOT / "results", release)
    inputs = PageInputs(source, labelled_results(source), environment(TEMPLATES),
                        {e.name: {"question": e.question} for e in EXPERIMENTS},
                        source_judgement(source), Calibration([], None),
                        release_citation(source.root, source.name, source.date, "http://x/"),
                        None)
    return " ".join(methodology_page(inputs).text.split())


def test_each_release_s_methodology_states_the_design_its_runs_recorded():
    page = _methodology("2027.04")
    assert ("two looks: 3 processes per cell, then up to 5 for the cells of undecided pairs, "
            "each look at a level of 0.0294: 20261206T063453Z-cpu (machine suite), "
            "20261206T134112Z-cpu (machine suite), 20261207T022029Z-cpu (machine suite)") in page
    assert "0.0221" not in page and "three looks" not in page.lower()
    assert "up to 6" not in page and "standard suite runs" not in page
    assert "defaults-accuracy" not in page  # no release holds that experiment
    earlier = _methodology("2027.03")
    assert "three looks: 3 processes per cell, then up to 6, then 12" in earlier
    assert "each look at a level of 0.0221" in earlier and "0.0294" not in earlier


def test_the_suites_process_counts_are_not_written_into_the_method():
    assert SUITE_PROCESSES["standard"] and "standard suite runs" not in TEXT
    assert "quick suite is a **preview**" in TEXT


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
