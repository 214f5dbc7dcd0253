"""The deployment runtimes an exported artifact is served in, each declared once.

A runtime's declaration is read by the export plan (which system exports into it by which
format, and from which suite on: runner/driver/plan/experiments/export.py), the real-size
estimate (seconds writing and loading back an artifact: runner/driver/plan/
real_size_estimate.py), the pages (its name in a runtime contest: report/render/labels.py)
and the machine record (the package whose version a run records: runner/driver/machine/
environment.py). Adding a runtime is one `Runtime` here, plus its loader on the worker side
(runner/worker/experiments/export/runtimes.py) and the export path of each system that
serves it (runner/worker/experiments/export/<framework>.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

#: The smallest suite that measures a real-size path on a CPU: the standard suite (and the
#: machine suite, its CPU cells) or only the full one.
Suite = Literal["standard", "full"]


@dataclass(frozen=True)
class RealSizePath:
    """One system's export into a runtime at real size, and the smallest suite measuring it."""

    system: str  # a system's name (dlbench.core.declarations.systems), e.g. keras-tensorflow
    export_format: str
    suite: Suite


@dataclass(frozen=True)
class Runtime:
    """A runtime that serves exported artifacts."""

    name: str
    label: str  # how a page names it where runtimes contend (ONNX Runtime, LiteRT)
    package: str  # the distribution whose version a run records
    #: export format -> seconds writing and loading back a real-size artifact takes
    export_s: Mapping[str, float]
    #: the formats a runtime contest names by `label` (the others keep their own words,
    #: dlbench.core.declarations.systems: two paths into one runtime by one system must stay apart)
    labelled: tuple[str, ...] = ()
    real_size: tuple[RealSizePath, ...] = field(default_factory=tuple)


def _paths(suite: Suite, *pairs: tuple[str, str]) -> tuple[RealSizePath, ...]:
    return tuple(RealSizePath(system, fmt, suite) for system, fmt in pairs)


#: Every runtime, in the order a system's real-size paths are planned.
RUNTIMES: tuple[Runtime, ...] = (
    Runtime("savedmodel", "SavedModel", "tensorflow",
            {"savedmodel": 30.0, "tf_saved_model": 35.0},
            labelled=("savedmodel", "tf_saved_model"),
            real_size=(*_paths("standard", ("tensorflow", "savedmodel")),
                       *_paths("full", ("keras-tensorflow", "tf_saved_model")))),
    Runtime("litert", "LiteRT", "ai-edge-litert", {"tflite": 40.0, "litert": 45.0},
            labelled=("tflite",),
            real_size=(*_paths("standard", ("tensorflow", "tflite")),
                       *_paths("full", ("keras-tensorflow", "litert")))),
    Runtime("onnxruntime", "ONNX Runtime", "onnxruntime",
            {"onnx-dynamo": 60.0, "onnx": 50.0, "onnx-tf2onnx": 45.0},
            labelled=("onnx-dynamo", "onnx"),
            real_size=(*_paths("standard", ("pytorch", "onnx-dynamo")),
                       *_paths("full", ("tensorflow", "onnx-tf2onnx")))),
    Runtime("openvino", "OpenVINO", "openvino", {"onnx-openvino": 70.0, "openvino": 45.0},
            labelled=("onnx-openvino",),
            real_size=(*_paths("standard", ("pytorch", "onnx-openvino")),
                       *_paths("full", ("keras-tensorflow", "openvino"),
                               ("keras-torch", "openvino"), ("keras-jax", "openvino")))),
    Runtime("pytorch", "torch.export", "torch",
            {"torch.export": 40.0, "torch": 60.0, "torchscript": 40.0},
            labelled=("torch.export",)),
)


def runtime_labels() -> dict[str, str]:
    """{export format: its runtime's name} for the formats a runtime contest names so."""
    return {fmt: runtime.label for runtime in RUNTIMES for fmt in runtime.labelled}


def export_seconds() -> dict[str, float]:
    """{export format: seconds writing and loading back a real-size artifact}."""
    return {fmt: s for runtime in RUNTIMES for fmt, s in runtime.export_s.items()}


def runtime_packages() -> tuple[str, ...]:
    """The packages whose versions a run records for its runtimes, each once."""
    return tuple(dict.fromkeys(runtime.package for runtime in RUNTIMES))


def real_size_formats(systems: list[str], suite: Suite) -> dict[str, tuple[str, ...]]:
    """{system: its real-size export formats} a suite measures: the standard suite its own
    paths, the full suite every path; every system in `systems` named, even with none."""
    wanted = ("standard",) if suite == "standard" else ("standard", "full")
    return {system: tuple(path.export_format for runtime in RUNTIMES
                          for path in runtime.real_size
                          if path.system == system and path.suite in wanted)
            for system in systems}
