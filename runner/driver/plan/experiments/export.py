"""export: what can each framework ship, does the artifact compute the same function, and
how fast does it run in its own runtime?

One cell per framework and export path (`export_format`): export to a temporary
directory, load back, compare with the eager model on the same inputs, time the artifact's
runtime. A path that fails at any stage is recorded as unsupported with "fails: <error>",
so the pages can show a works/fails matrix. Artifacts are measured on the CPU, the runtime
every one of them has.
"""

from __future__ import annotations

from dlbench.core.declarations.runtimes import real_size_formats
from dlbench.core.declarations.systems import SYSTEMS
from dlbench.runner.driver.plan.experiments import MODEL_WORKLOADS, Experiment, suite_grid
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads import real_size

#: Every export path per system, and the smaller suites' subsets, from each system's
#: declaration (dlbench.core.declarations.systems). Keras: the formats model.export offers on that
#: backend (Keras itself refuses litert on jax and torch on anything but torch). The quick suite
#: exports one artifact per system (each cell pays its framework's import); standard on a
#: CPU adds each system's second documented path where it needs no optional package.
FORMATS: dict[str, tuple[str, ...]] = {s.name: s.export.every for s in SYSTEMS}
QUICK_FORMATS: dict[str, tuple[str, ...]] = {s.name: s.export.quick for s in SYSTEMS}
STANDARD_CPU_FORMATS: dict[str, tuple[str, ...]] = {s.name: s.export.standard_cpu
                                                    for s in SYSTEMS}

#: The deployment runtimes at real size (ResNet-50 on 2 CPU cores), one documented export
#: path into each, from each runtime's declaration (dlbench.core.declarations.runtimes): ONNX
#: Runtime (torch.onnx's dynamo exporter), OpenVINO (reading that ONNX file), TensorFlow's
#: SavedModel, LiteRT (TFLiteConverter). Left out of the standard suite for its time (about
#: 3.5 minutes a cell): tf2onnx, Keras' model.export artifacts (the same runtimes again) and
#: BERT-base; the full suite measures them.
REAL_SIZE_FORMATS = real_size_formats([s.name for s in SYSTEMS], "standard")
FULL_REAL_SIZE_FORMATS = real_size_formats([s.name for s in SYSTEMS], "full")

#: Standard (with a GPU in the machine) and full export the ResNet, Transformer and LSTM
#: too, at their CPU size: artifacts are measured on the CPU. On a CPU, standard and full
#: add the real-size models ("real_size": workload -> the formats per system).
GRID: dict[str, dict] = {
    "quick": {"workloads": ("mlp-digits",), "formats": QUICK_FORMATS},
    "standard": {"workloads": ("mlp-digits", "cnn-digits", *MODEL_WORKLOADS),
                 "formats": FORMATS,
                 # on 2 CPU cores only the real-size runtimes: the digits CNN's artifacts
                 # measured per-call overhead, and the suite's 150 minutes go to ResNet-50
                 "cpu": {"workloads": (), "formats": STANDARD_CPU_FORMATS,
                         "real_size": {"resnet50-synthetic": REAL_SIZE_FORMATS}}},
    # machine: standard's CPU cells, the runtimes serving ResNet-50
    "machine": {"workloads": (), "formats": STANDARD_CPU_FORMATS,
                "real_size": {"resnet50-synthetic": REAL_SIZE_FORMATS}},
    "full": {"workloads": ("mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS),
             "formats": FORMATS,
             "cpu": {"real_size": {"resnet50-synthetic": FULL_REAL_SIZE_FORMATS,
                                   "bert-base-tokens": FULL_REAL_SIZE_FORMATS}}},
}


def plan(request: RunRequest) -> list[CellSpec]:
    """One CPU cell per workload, framework and export path."""
    from dlbench.runner.workloads.catalog import get_workload

    grid = suite_grid(GRID, request)
    real = grid.get("real_size", {})
    cells = []
    for name in request.workloads or [*grid["workloads"], *real]:
        if real_size.is_real_size(name):
            cells += _real_size_cells(request, name, real.get(name) or (
                FULL_REAL_SIZE_FORMATS if request.suite == "full" else REAL_SIZE_FORMATS))
            continue
        workload = get_workload(name)
        for framework in request.systems:
            for export_format in grid["formats"][framework.name]:
                cells.append(request.cell(
                    "export", name, framework, timeout_s=300.0, device="cpu",
                    export_format=export_format, batch_size=workload.batch_size,
                ))
    return cells


def _real_size_cells(request: RunRequest, name: str,
                     formats: dict[str, tuple[str, ...]]) -> list[CellSpec]:
    """A real-size model's export cells: throughput at its serving batch, parity and timing
    on a few samples."""
    return [request.cell("export", name, framework, timeout_s=real_size.TIMEOUT_S,
                         device="cpu", export_format=export_format,
                         batch_size=real_size.SERVING_BATCH[name],
                         params=real_size.export_params(name))
            for framework in request.systems
            for export_format in formats.get(framework.name, ())]


EXPERIMENT = Experiment("export", plan)
