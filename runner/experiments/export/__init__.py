"""export: what can each framework ship, does the artifact compute the same function, and
how fast does it run in its own runtime?

One cell per framework and export path (`export_format`): export to a temporary
directory, load back, compare with the eager model on the same inputs, time the artifact's
runtime. A path that fails at any stage is recorded as unsupported with "fails: <error>",
so the pages can show a works/fails matrix. Artifacts are measured on the CPU, the runtime
every one of them has.
"""

from __future__ import annotations

from dlbench.core.systems import SYSTEMS
from runner.experiments import MODEL_WORKLOADS, Experiment, PlanRequest, suite_grid
from runner.cell.spec import CellSpec

#: Every export path per system, and the smaller suites' subsets, from each system's
#: declaration (dlbench.core.systems). Keras: the formats model.export offers on that backend
#: (Keras itself refuses litert on jax and torch on anything but torch). The quick suite
#: exports one artifact per system (each cell pays its framework's import); standard on a
#: CPU adds each system's second documented path where it needs no optional package.
FORMATS: dict[str, tuple[str, ...]] = {s.name: s.export.every for s in SYSTEMS}
QUICK_FORMATS: dict[str, tuple[str, ...]] = {s.name: s.export.quick for s in SYSTEMS}
STANDARD_CPU_FORMATS: dict[str, tuple[str, ...]] = {s.name: s.export.standard_cpu
                                                    for s in SYSTEMS}

#: Standard (with a GPU in the machine) and full export the ResNet, Transformer and LSTM
#: too, at their CPU size: artifacts are measured on the CPU.
GRID: dict[str, dict] = {
    "quick": {"workloads": ("mlp-digits",), "formats": QUICK_FORMATS},
    "standard": {"workloads": ("mlp-digits", "cnn-digits", *MODEL_WORKLOADS),
                 "formats": FORMATS,
                 "cpu": {"workloads": ("cnn-digits",), "formats": STANDARD_CPU_FORMATS}},
    "full": {"workloads": ("mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS),
             "formats": FORMATS},
}


def plan(request: PlanRequest) -> list[CellSpec]:
    """One CPU cell per workload, framework and export path."""
    from runner.workloads.catalog import get_workload

    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or list(grid["workloads"]):
        workload = get_workload(name)
        for framework in request.frameworks:
            for export_format in grid["formats"][framework.name]:
                cells.append(request.cell(
                    "export", name, framework, timeout_s=300.0, device="cpu",
                    export_format=export_format, batch_size=workload.batch_size,
                ))
    return cells


EXPERIMENT = Experiment("export", plan)
