"""One declaration per system (dlbench.core.declarations.systems): every table reads it, every entry
point it promises exists, and a sixth system needs nothing but its declaration and its own files."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dlbench.core.declarations import systems
from dlbench.core.declarations.modes import FASTEST, MODES, SAME_AS
from dlbench.runner.cell import frameworks
from dlbench.runner.driver.plan.experiments import code_module, experiment_names, get_experiment
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.plan.experiments.export import (FORMATS, QUICK_FORMATS,
                                                           STANDARD_CPU_FORMATS)
from dlbench.runner.cell.frameworks import missing_modules

ROOT = Path(__file__).resolve().parents[1]
INSTALLED = [f for f in frameworks.FRAMEWORKS if not missing_modules(f)]


def test_every_system_is_declared_once_with_a_unique_name_label_and_colour():
    names = [s.name for s in systems.SYSTEMS]
    assert names == ["pytorch", "tensorflow", "keras-tensorflow", "keras-torch", "keras-jax"]
    assert len({s.label for s in systems.SYSTEMS}) == len(names)
    assert len({s.colour for s in systems.SYSTEMS}) == len(names)


def test_the_full_plan_measures_each_systems_declared_formats_and_strategies():
    request = RunRequest(suite="full", workloads=["mlp-digits"], device="cpu", threads=1)
    planned_formats: dict[str, set[str]] = {}
    for cell in get_experiment("export").plan(request):
        planned_formats.setdefault(cell.framework_id.name, set()).add(cell.export_format)
    strategies: dict[str, set[str]] = {}
    for cell in get_experiment("data-parallel").plan(request):
        strategies.setdefault(cell.framework_id.name, set()).add(cell.mode)
    assert planned_formats == {s.name: set(s.export.every) for s in systems.SYSTEMS}
    assert strategies == {s.name: set(s.data_parallel) for s in systems.SYSTEMS}
    for name, formats in FORMATS.items():  # the subsets are subsets
        assert set(QUICK_FORMATS[name]) <= set(formats)
        assert set(STANDARD_CPU_FORMATS[name]) <= set(formats)


def test_every_framework_has_a_production_mode_in_every_moded_experiment():
    for experiment, table in MODES.items():
        assert set(table) == set(systems.frameworks()), experiment
        for framework, modes in table.items():
            assert FASTEST in modes.values(), (experiment, framework)


def test_a_same_as_entry_names_modes_its_framework_declares():
    for name, entry in SAME_AS:
        system = systems.by_name(name)
        declared = system.framework.modes[entry.experiment]
        assert entry.mode in declared and entry.measured_as in declared, (name, entry)


def test_an_unsupported_entry_names_a_mode_its_system_offers_and_a_reason():
    offered = {"data-parallel": lambda system: system.data_parallel}
    declared = [(s, key, why) for s in systems.SYSTEMS for key, why in s.unsupported.items()]
    assert declared  # Keras on torch has no distribution API
    for system, (experiment, mode), why in declared:
        assert mode in offered[experiment](system) and len(why) > 20
        assert systems.unsupported_reason(system.name, experiment, mode) == why
    assert systems.unsupported_reason("pytorch", "data-parallel", "ddp") == ""


@pytest.mark.slow
@pytest.mark.parametrize("framework", sorted({f.framework for f in INSTALLED}))
def test_every_entry_point_the_declarations_promise_imports_and_offers_run(framework):
    """Each experiment plans every declared framework, so each must have its module; a
    missing file would otherwise show only at run time, as a failed cell."""
    for experiment in experiment_names():
        module = importlib.import_module(code_module(experiment, framework))
        assert callable(getattr(module, "run", None)), (experiment, framework)
    adapter = importlib.import_module(f"dlbench.runner.worker.adapters.{framework}")
    assert hasattr(adapter, "ADAPTER")


def test_an_unknown_system_reads_as_its_name_and_has_no_declaration():
    assert systems.label("keras-mlx") == "keras-mlx"
    with pytest.raises(ValueError, match="unknown framework 'keras-mlx'; valid: pytorch, "):
        systems.by_name("keras-mlx")
    assert systems.label("keras-jax") == "Keras on JAX"


SIXTH_SYSTEM = textwrap.dedent("""
    import json
    from dataclasses import replace
    from dlbench.core.declarations import systems
    flax = systems.Framework(
        name="flax", modes={e: {"default": "default", "jit": "fastest"}
                            for e in ("training", "inference", "execution-mode")},
        fastest_means="jax.jit of the whole step", eager_baseline="default",
        running_variance="biased")
    base = systems.SYSTEMS[0]
    systems.SYSTEMS = (*systems.SYSTEMS, replace(
        base, framework=flax, backend="", label="Flax", colour="#000000",
        required_modules=("flax",), same_as=(), slow_on_cpu={},
        export=systems.ExportPaths(every=("orbax",), quick=("orbax",), standard_cpu=("orbax",)),
        data_parallel=("pmap",)))

    from dlbench.report.render.charts import SYSTEM_COLOURS
    from dlbench.core.storage.schema import system_label
    from dlbench.runner.driver.plan.estimate import DEFAULT_PROCESS_S, IMPORT_S
    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest
    cells = {}
    for suite in ("quick", "standard", "full"):
        request = RunRequest(suite=suite, experiments=[], workloads=[], frameworks=["flax"],
                             device="cpu", repeats=None, threads=2, timeout_s=None,
                             data_dir="")
        cells[suite] = sorted({(c.experiment, c.mode, c.export_format)
                               for c in plan_cells(request, "cpu")})
    print(json.dumps({"cells": cells, "label": system_label("flax"),
                      "colour": SYSTEM_COLOURS["flax"],
                      "estimate": DEFAULT_PROCESS_S["training"]["flax"],
                      "import_s": IMPORT_S["flax"]}))
""")


def test_a_sixth_system_is_planned_labelled_coloured_and_estimated_from_its_declaration():
    """What issue 24 asks: adding a system is its declaration plus its own code files; no
    table elsewhere needs an edit (the code files are not needed to plan)."""
    done = subprocess.run([sys.executable, "-c", SIXTH_SYSTEM], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    facts = json.loads(done.stdout.splitlines()[-1])
    assert facts["label"] == "Flax" and facts["colour"] == "#000000"
    assert facts["estimate"] == systems.SYSTEMS[0].seconds.per_experiment["training"]
    assert facts["import_s"] == systems.SYSTEMS[0].seconds.import_s
    full = {tuple(cell) for cell in facts["cells"]["full"]}
    planned = {experiment for experiment, _, _ in full}
    assert planned == set(experiment_names())
    assert {("training", "jit", ""), ("inference", "jit", ""), ("export", "default", "orbax"),
            ("data-parallel", "pmap", "")} <= full
