"""defaults-accuracy in TensorFlow's own API: not run, and why (the plan records the cell as
unsupported with this reason; a worker asked to run it anyway says the same)."""

from __future__ import annotations

from dlbench.runner.cell.outcome import CellOutcome, unsupported
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.defaults_task import NO_DEFAULTS


def run(spec: CellSpec) -> CellOutcome:
    return unsupported(NO_DEFAULTS["tensorflow"])
