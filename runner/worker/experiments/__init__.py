"""The experiments' code, the worker's side of each experiment: a package per experiment
(runner/worker/experiments/<folder>/) with a protocol.py holding what every framework shares
and one small module per framework (pytorch.py, tensorflow.py, keras.py) holding the code that
framework runs. Framework modules reach their framework through dlbench.runner.worker.adapters
and the process through dlbench.runner.worker.harness; no experiment imports another
experiment's code. Only the worker entry point imports a framework module, so a process only
ever imports the framework it measures. The plans live on the driver side
(dlbench.runner.driver.plan.experiments)."""

from __future__ import annotations

import importlib
from typing import Protocol

from dlbench.core.declarations import experiments as declared
from dlbench.runner.cell.outcome import CellOutcome
from dlbench.runner.cell.spec import CellSpec


class FrameworkCode(Protocol):
    """What `runner/worker/experiments/<experiment>/<framework>.py` offers the worker: a
    function that measures one process of a cell (the worker imports the module and calls it)."""

    def run(self, spec: CellSpec) -> CellOutcome: ...


def framework_code(spec: CellSpec) -> FrameworkCode:
    """The code `spec`'s framework runs for its experiment (imports that framework)."""
    return importlib.import_module(declared.by_name(spec.experiment).code_module(spec.framework))
