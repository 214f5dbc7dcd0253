"""export: what can each framework ship, does the artifact compute the same function, and
how fast does it run in its own runtime?

One cell per framework and export path (`export_format`): export to a temporary
directory, load back, compare with the eager model on the same inputs, time the artifact's
runtime. A path that fails at any stage is recorded as unsupported with "fails: <error>",
so the pages can show a works/fails matrix. Artifacts are measured on the CPU, the runtime
every one of them has.
"""

from __future__ import annotations

from dlbench.questions import QUESTIONS
from runner.experiments import MODEL_WORKLOADS, Experiment, PlanRequest, suite_grid
from runner.spec import CellSpec

#: Every export path per framework. Keras: the formats model.export offers on that backend
#: (Keras itself refuses litert on jax and torch on anything but torch).
FORMATS: dict[str, tuple[str, ...]] = {
    "pytorch": ("torch.export", "onnx-dynamo", "torchscript"),
    "tensorflow": ("savedmodel", "tflite", "onnx-tf2onnx"),
    "keras-tensorflow": ("tf_saved_model", "onnx", "litert", "openvino"),
    "keras-torch": ("tf_saved_model", "onnx", "litert", "torch", "openvino"),
    "keras-jax": ("tf_saved_model", "onnx", "openvino"),
}

#: The quick suite's subset (each cell pays its framework's import): one artifact per
#: framework, its main one (ONNX for Keras on TensorFlow and torch, whose SavedModel export
#: would import TensorFlow beside torch).
QUICK_FORMATS: dict[str, tuple[str, ...]] = {
    "pytorch": ("torch.export",),
    "tensorflow": ("savedmodel",),
    "keras-tensorflow": ("onnx",),
    "keras-torch": ("onnx",),
    "keras-jax": ("tf_saved_model",),
}

#: Standard's subset on a CPU (90 minutes on 2 cores): the quick suite's artifact plus each
#: framework's second documented path where it has one that needs no optional package.
STANDARD_CPU_FORMATS: dict[str, tuple[str, ...]] = {
    "pytorch": ("torch.export", "onnx-dynamo"),
    "tensorflow": ("savedmodel", "tflite"),
    "keras-tensorflow": ("onnx", "tf_saved_model"),
    "keras-torch": ("onnx",),
    "keras-jax": ("tf_saved_model",),  # its ONNX path needs jax2onnx, an optional package
}

#: Standard (with a GPU in the machine) and full export the ResNet, Transformer and LSTM
#: too, at their CPU size: artifacts are measured on the CPU.
GRID: dict[str, dict] = {
    "quick": {"workloads": ("mlp-digits",), "repeats": 2, "formats": QUICK_FORMATS},
    "standard": {"workloads": ("mlp-digits", "cnn-digits", *MODEL_WORKLOADS), "repeats": 5,
                 "formats": FORMATS,
                 "cpu": {"workloads": ("cnn-digits",), "formats": STANDARD_CPU_FORMATS}},
    "full": {"workloads": ("mlp-digits", "cnn-digits", "cnn-synthetic", *MODEL_WORKLOADS),
             "repeats": 10,
             "formats": FORMATS},
}


def plan(request: PlanRequest) -> list[CellSpec]:
    """One CPU cell per workload, framework and export path."""
    from runner.workloads import get_workload

    grid = suite_grid(GRID, request)
    cells = []
    for name in request.workloads or list(grid["workloads"]):
        workload = get_workload(name)
        for framework in request.frameworks:
            for export_format in grid["formats"][framework.name]:
                cells.append(CellSpec(
                    experiment="export", workload=name, framework=framework.framework,
                    backend=framework.backend, device="cpu", export_format=export_format,
                    batch_size=workload.batch_size,
                    repeats=request.repeats or grid["repeats"], threads=request.threads,
                    timeout_s=request.timeout_s or 300.0, data_dir=request.data_dir,
                ))
    return cells


EXPERIMENT = Experiment(
    name="export",
    question=QUESTIONS["export"],
    metrics=("export_time", "artifact_size", "artifact_load_time", "artifact_max_abs_diff",
             "artifact_latency", "artifact_throughput", "import_footprint"),
    plan=plan,
)
