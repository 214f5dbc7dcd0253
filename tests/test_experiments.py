"""One declaration per experiment (dlbench.core.declarations.experiments): every name it promises
exists, and a new experiment needs nothing but its declaration and its own package."""

from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest

from dlbench.core.declarations import experiments
from dlbench.core.declarations.metrics import METRICS
from dlbench.runner.driver.plan.experiments import get_experiment

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "data" / "golden"


@pytest.mark.parametrize("declared", experiments.EXPERIMENTS, ids=lambda e: e.name)
def test_each_declaration_names_defined_metrics_a_question_and_its_package(declared):
    assert set(declared.metrics) <= set(METRICS)
    assert declared.question.endswith("?")
    assert set(declared.sections) <= set(experiments.SECTIONS)
    assert importlib.import_module(declared.plans).EXPERIMENT is get_experiment(declared.name)
    assert importlib.util.find_spec(declared.code_module("pytorch")) is not None
    assert get_experiment(declared.name).question == declared.question


@pytest.mark.parametrize("declared", experiments.REQUESTED_ONLY, ids=lambda e: e.name)
def test_a_requested_only_experiment_is_declared_alike_and_no_suite_plans_it(declared):
    from dlbench.runner.cell.spec import CellSpec
    from dlbench.runner.driver.plan.experiments import code_module, suite_experiments
    from dlbench.runner.driver.plan.estimate import default_process_s

    assert declared.requested_only and experiments.by_name(declared.name) is declared
    assert set(declared.metrics) <= set(METRICS) and declared.question.endswith("?")
    assert declared.name not in experiments.experiment_names()
    assert not any(declared.name in suite_experiments(s) for s in ("quick", "standard", "full"))
    assert importlib.util.find_spec(code_module(declared.name, "keras")) is not None
    cell = CellSpec(experiment=declared.name, workload="my-model", framework="keras",
                    backend="jax", device="cpu", repeats=1)
    mirrored = replace(cell, experiment=declared.estimated_as)
    assert default_process_s(cell) == default_process_s(mirrored) > 0  # estimated as it


def test_an_unknown_experiment_is_refused_naming_the_valid_ones():
    with pytest.raises(ValueError, match="unknown experiment 'speed'; valid: training, "):
        experiments.by_name("speed")


#: A package of its own for the new experiment: its grid and plan (no framework code is
#: needed to plan it or to page its results).
PACKAGE = textwrap.dedent("""
    from dlbench.runner.driver.plan.experiments import Experiment
    from dlbench.runner.driver.plan.request import RunRequest

    BATCHES = {"quick": (1, 64), "standard": (1, 64, 256), "full": (1, 64, 256, 1024)}

    def plan(request: RunRequest):
        return [request.cell("memory-at-batch", "mlp-digits", framework, timeout_s=60.0,
                             mode="predict", batch_size=batch)
                for framework in request.systems for batch in BATCHES[request.suite]]

    EXPERIMENT = Experiment("memory-at-batch", plan)
""")

NEW_EXPERIMENT = textwrap.dedent("""
    import json, sys
    from dataclasses import replace
    from pathlib import Path
    sys.path.insert(0, sys.argv[1])
    from dlbench.core.declarations import experiments
    experiments.EXPERIMENTS = (*experiments.EXPERIMENTS, experiments.Experiment(
        "memory-at-batch", "memory_at_batch",
        "How much memory does each framework's inference take as the batch grows?",
        ("working_memory", "import_footprint"), estimate_s=42.0,
        cpu_caveat="**Host memory.** On a CPU this is the process's resident memory.",
        plan_module="memory_at_batch"))

    from dlbench.runner.driver.plan.experiments import framework_code_path
    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest
    from dlbench.runner.driver.plan.estimate import default_process_s
    request = RunRequest(suite="quick", experiments=["memory-at-batch"], workloads=[],
                         frameworks=["pytorch"], device="cpu", repeats=None, threads=1,
                         timeout_s=None, data_dir="")
    cells = plan_cells(request, "cpu")

    from dlbench.report.inputs.source import load_draft
    from dlbench.report.inputs.labelled import labelled_results
    from dlbench.report.render.jinja import environment
    from dlbench.report.pages.registry import SourceInputs, render_pages_before_verdicts
    source = load_draft(Path(sys.argv[2]), ["20261201T100000Z-fixture"])
    def moved(frame):
        return frame.assign(experiment=frame["experiment"].replace("training",
                                                                   "memory-at-batch"))
    source = replace(source, cells=moved(source.cells), observations=moved(source.observations))
    pages = render_pages_before_verdicts(
        SourceInputs(source, labelled_results(source), environment(Path("templates")), None))
    print(json.dumps({"cells": [[c.experiment, c.batch_size, c.repeats] for c in cells],
                      "estimate": default_process_s(cells[0]),
                      "code": str(framework_code_path(cells[0])),
                      "page": pages["experiments/memory-at-batch.md"].text}))
""")


def test_a_new_experiment_is_planned_estimated_and_paged_from_its_declaration(tmp_path):
    """What issue 33 asks: adding an experiment is its package plus one declaration; no
    table elsewhere needs an edit."""
    package = tmp_path / "memory_at_batch"
    package.mkdir()
    (package / "__init__.py").write_text(PACKAGE)
    done = subprocess.run([sys.executable, "-c", NEW_EXPERIMENT, str(tmp_path), str(GOLDEN)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    facts = json.loads(done.stdout.splitlines()[-1])
    assert facts["cells"] == [["memory-at-batch", 1, 3], ["memory-at-batch", 64, 3]]  # quick: 3 each
    assert facts["estimate"] == 42.0  # no system declares a figure: the declaration's own
    assert facts["code"] == "memory_at_batch/pytorch.py"
    page = facts["page"]
    assert "Memory at batch" in page
    assert "How much memory does each framework's inference take as the batch grows?" in page
    assert "**Host memory.**" in page  # the golden run ran on a CPU
