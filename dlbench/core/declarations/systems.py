"""The systems dlbench measures, each declared once.

A system is a framework on a backend: PyTorch, TensorFlow, and Keras on TensorFlow, torch
and JAX. Its declaration holds everything the runner and the report need to know of it:
its label and colour, the packages it needs, its modes per experiment and which of them is
its production path, its export paths, its data-parallel strategies and the defaults that
estimate its processes. Every table keyed by a system or a framework reads these
declarations: dlbench.core.declarations.modes, dlbench.core.storage.schema's labels,
dlbench.runner.cell.frameworks, dlbench.runner.driver.plan.estimate,
dlbench.runner.driver.machine.environment, dlbench.runner.models.conventions, the export and
data-parallel grids, and the charts' colours.

A framework's code lives where its name points: `runner/worker/adapters/<framework>.py` and
`runner/worker/experiments/<experiment>/<framework>.py`, each experiment module honouring
`dlbench.runner.worker.experiments.FrameworkCode`. Adding a system is a declaration here (appended
to `SYSTEMS`, with a `Framework` of its own if its code is new) and those files; README
"Adding a system" lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

ModeClass = Literal["default", "fastest", "other"]
DEFAULT: ModeClass = "default"  # plain: what a user writes first
FASTEST: ModeClass = "fastest"  # production: the documented compiled path
OTHER: ModeClass = "other"  # measured and shown, never standing for its framework

DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class Framework:
    """What every system of one framework shares: its code files, its modes and its
    numerical conventions."""

    name: str  # the name of its code files: runner/worker/experiments/<experiment>/<name>.py
    #: experiment -> {mode: class}, in the order cells are planned
    modes: Mapping[str, Mapping[str, ModeClass]]
    fastest_means: str  # what its production modes compile, in words
    #: the execution-mode mode that every graph/compiled cell also times in its own process
    #: (eager_step_time), so the quick suite does not measure it as a cell of its own
    eager_baseline: str
    running_variance: str  # how its BatchNorm computes the running variance (not settable)
    #: how a page names its own modes and data-parallel strategies
    mode_words: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SameAs:
    """A mode of a system that is the same configuration as another of its modes: measured
    once, under the other mode's name, standing for both."""

    experiment: str
    mode: str  # not measured on its own
    measured_as: str  # the mode whose cell measures it
    why: str
    devices: tuple[str, ...] = DEVICES


@dataclass(frozen=True)
class ExportPaths:
    """The export formats a system offers, and the subsets the smaller suites measure."""

    every: tuple[str, ...]
    quick: tuple[str, ...]  # one artifact: its main one
    standard_cpu: tuple[str, ...]  # standard on 2 CPU cores (90 minutes for the suite)
    words: Mapping[str, str] = field(default_factory=dict)  # how a page names a format


@dataclass(frozen=True)
class ProcessSeconds:
    """Defaults that estimate a worker process before any earlier run recorded one."""

    #: seconds one quick-suite process took on 2 cores, by experiment name
    #: (dlbench.runner.driver.plan.estimate); an experiment left out is estimated from its
    #: declaration's estimate_s (dlbench.core.declarations.experiments)
    per_experiment: Mapping[str, float]
    compile_extra: float  # seconds a cold compile adds to a process in a production mode
    import_s: float  # seconds starting Python and importing the framework and the harness


@dataclass(frozen=True)
class System:
    """One system as the command line, cell IDs, tables and pages name it."""

    framework: Framework
    backend: str  # the backend Keras runs on; "" for a framework that is its own backend
    label: str  # how a page names it
    colour: str  # its colour in every chart
    required_modules: tuple[str, ...]  # Python modules it needs before any cell can run
    export: ExportPaths
    data_parallel: tuple[str, ...]  # its data-parallel strategies, as cell modes
    seconds: ProcessSeconds
    same_as: tuple[SameAs, ...] = ()
    #: modes only the full suite measures on a CPU, with the measured cost that keeps them
    #: out of the others
    slow_on_cpu: Mapping[str, str] = field(default_factory=dict)
    #: (experiment, mode) -> why the framework does not implement it: planned, and recorded
    #: as unsupported with that reason without starting a process
    unsupported: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The name on the command line and in cell IDs: keras-<backend> for Keras."""
        return system_name(self.framework.name, self.backend)


def system_name(framework: str, backend: str) -> str:
    """A framework as the command line and cell IDs name it: keras-<backend> for Keras (the
    one owner of this rule; tables and cells reach it through system_of and systems_of)."""
    return f"keras-{backend}" if framework == "keras" else str(framework)


def system_of(cell: Mapping) -> str:
    """The system of a cell or table row that holds a framework and a backend."""
    return system_name(cell["framework"], cell["backend"])


def systems_of(table: Mapping) -> list[str]:
    """The system of each row of a table (a DataFrame) with framework and backend columns."""
    return [system_name(f, b) for f, b in zip(table["framework"], table["backend"], strict=True)]


PYTORCH = Framework(
    name="pytorch",
    modes={"training": {"default": DEFAULT, "compiled": FASTEST},
           "inference": {"inference_mode": DEFAULT, "compiled": FASTEST},
           "execution-mode": {"eager": DEFAULT, "compiled": FASTEST}},
    fastest_means="torch.compile of the whole step",
    eager_baseline="eager",
    running_variance="unbiased",
    mode_words={"compiled": "torch.compile", "inference_mode": "inference mode",
                "ddp": "DistributedDataParallel"},
)
TENSORFLOW = Framework(
    name="tensorflow",
    modes={"training": {"default": DEFAULT, "xla": FASTEST},
           "inference": {"eager": DEFAULT, "tf.function": FASTEST, "xla": FASTEST},
           "execution-mode": {"eager": DEFAULT, "tf.function": FASTEST, "xla": FASTEST}},
    fastest_means="tf.function, and tf.function(jit_compile=True) (XLA)",
    eager_baseline="eager",
    running_variance="unbiased",
    mode_words={"xla": "XLA", "tf.function": "tf.function graph", "mirrored": "MirroredStrategy"},
)
KERAS = Framework(
    name="keras",
    modes={"training": {"default": DEFAULT, "jit_compile": FASTEST},
           "inference": {"predict": DEFAULT, "jit_compile": FASTEST, "call": OTHER},
           "execution-mode": {"run_eagerly": OTHER, "default": DEFAULT,
                              "jit_compile": FASTEST}},
    fastest_means="compile(jit_compile=True): the backend's compiler (XLA on TensorFlow and "
                  "JAX, torch.compile on torch)",
    eager_baseline="run_eagerly",
    running_variance="biased",
    mode_words={"jit_compile": "jit-compiled", "call": "direct call",
                "run_eagerly": "run eagerly", "keras-data-parallel": "Keras DataParallel",
                "mirrored": "MirroredStrategy"},
)

_KERAS_FORMAT_WORDS = {"onnx": "ONNX", "tf_saved_model": "TF SavedModel"}
_JAX_AUTO = "Keras on JAX resolves compile(jit_compile='auto') to True: its default is XLA"
_TF_GPU_AUTO = ("Keras on TensorFlow resolves compile(jit_compile='auto') to True where a GPU "
                "is visible: its default there is XLA")
_TORCH_EAGER = ("Keras on torch resolves jit_compile='auto' to False, and its train function "
                "does not read run_eagerly: both run eagerly")
_TORCH_COMPILE_COST = ("one process takes minutes of cold torch.compile on 2 cores "
                       "(measured 2026-12-03: 172 s for one ResNet-20 training process, "
                       "235 s for the digits MLP in execution-mode, which compiles "
                       "twice, against 15-25 s for the same cells in the other modes)")

_NO_TORCH_DISTRIBUTION = ("Keras 3's distribution API (keras.distribution.DataParallel) has "
                          "no torch implementation: the torch backend provides no "
                          "distribution library")


#: Every system, in the order the command line, tables and pages list them.
SYSTEMS: tuple[System, ...] = (
    System(PYTORCH, "", label="PyTorch", colour="#c0392b", required_modules=("torch",),
           export=ExportPaths(every=("torch.export", "onnx-dynamo", "torchscript",
                                     "onnx-openvino"),
                              quick=("torch.export",),
                              standard_cpu=("torch.export", "onnx-dynamo"),
                              words={"onnx-dynamo": "ONNX (dynamo)",
                                     "torch.export": "torch.export",
                                     "onnx-openvino": "ONNX in OpenVINO"}),
           data_parallel=("ddp",),  # DistributedDataParallel, gloo on CPU, nccl on GPU
           seconds=ProcessSeconds({"training": 5.0, "inference": 5.4, "precision": 7,
                                   "execution-mode": 8, "parity": 4.9, "data-parallel": 15,
                                   "export": 9}, compile_extra=50, import_s=3.9)),
    System(TENSORFLOW, "", label="TensorFlow", colour="#e67e22",
           required_modules=("tensorflow",),
           export=ExportPaths(every=("savedmodel", "tflite", "onnx-tf2onnx"),
                              quick=("savedmodel",), standard_cpu=("savedmodel", "tflite"),
                              words={"savedmodel": "SavedModel", "tflite": "TFLite"}),
           data_parallel=("mirrored", "multi-worker-mirrored"),
           seconds=ProcessSeconds({"training": 8.6, "inference": 8.0, "precision": 15,
                                   "execution-mode": 15, "parity": 8.8, "data-parallel": 13,
                                   "export": 13}, compile_extra=5, import_s=7.0)),
    System(KERAS, "tensorflow", label="Keras on TensorFlow", colour="#2471a3",
           required_modules=("keras", "tensorflow"),
           # ONNX is the small suites' artifact: a SavedModel export imports TensorFlow
           export=ExportPaths(every=("tf_saved_model", "onnx", "litert", "openvino"),
                              quick=("onnx",), standard_cpu=("onnx", "tf_saved_model"),
                              words=_KERAS_FORMAT_WORDS),
           data_parallel=("mirrored",),  # tf.distribute strategy scope around compile/fit
           seconds=ProcessSeconds({"training": 12.1, "inference": 19.8, "precision": 17,
                                   "execution-mode": 15, "parity": 7.8, "data-parallel": 26,
                                   "export": 14}, compile_extra=5, import_s=6.8),
           same_as=tuple(SameAs(experiment, "jit_compile", measured_as, _TF_GPU_AUTO, ("cuda",))
                         for experiment, measured_as in (("training", "default"),
                                                         ("inference", "predict"),
                                                         ("execution-mode", "default")))),
    System(KERAS, "torch", label="Keras on torch", colour="#7d3c98",
           required_modules=("keras", "torch"),
           export=ExportPaths(every=("tf_saved_model", "onnx", "litert", "torch", "openvino"),
                              quick=("onnx",), standard_cpu=("onnx",),
                              words=_KERAS_FORMAT_WORDS),
           data_parallel=("keras-data-parallel",),
           seconds=ProcessSeconds({"training": 11.1, "inference": 8.6, "precision": 13,
                                   "execution-mode": 13, "parity": 7.2, "data-parallel": 12,
                                   "export": 13}, compile_extra=155, import_s=6.2),
           same_as=(SameAs("execution-mode", "run_eagerly", "default", _TORCH_EAGER),),
           slow_on_cpu={"jit_compile": _TORCH_COMPILE_COST},
           unsupported={("data-parallel", "keras-data-parallel"): _NO_TORCH_DISTRIBUTION}),
    System(KERAS, "jax", label="Keras on JAX", colour="#1e8449",
           required_modules=("keras", "jax"),
           # its ONNX path needs jax2onnx, an optional package
           export=ExportPaths(every=("tf_saved_model", "onnx", "openvino"),
                              quick=("tf_saved_model",), standard_cpu=("tf_saved_model",),
                              words=_KERAS_FORMAT_WORDS),
           data_parallel=("keras-data-parallel",),  # keras.distribution.DataParallel
           seconds=ProcessSeconds({"training": 7.3, "inference": 7.6, "precision": 25,
                                   "execution-mode": 18, "parity": 6.4, "data-parallel": 17,
                                   "export": 17}, compile_extra=0, import_s=5.4),
           same_as=tuple(SameAs(experiment, "jit_compile", measured_as, _JAX_AUTO)
                         for experiment, measured_as in (("training", "default"),
                                                         ("inference", "predict"),
                                                         ("execution-mode", "default")))),
)


def frameworks() -> dict[str, Framework]:
    """Every declared framework by name, in the order of their first system."""
    return {system.framework.name: system.framework for system in SYSTEMS}


def mode_words() -> dict[str, str]:
    """Every framework's words for its modes and strategies."""
    return {mode: words for framework in frameworks().values()
            for mode, words in framework.mode_words.items()}


def format_words() -> dict[str, str]:
    """Every system's words for its export formats."""
    return {fmt: words for system in SYSTEMS for fmt, words in system.export.words.items()}


def keras_backends() -> list[str]:
    """The backends Keras is measured on."""
    return [system.backend for system in SYSTEMS if system.framework is KERAS]


def by_name(name: str) -> System:
    """The system called `name` (e.g. keras-torch); ValueError naming the valid ones."""
    system = next((system for system in SYSTEMS if system.name == name), None)
    if system is None:
        valid = ", ".join(s.name for s in SYSTEMS)
        raise ValueError(f"unknown framework {name!r}; valid: {valid}, keras")
    return system


def unsupported_reason(name: str, experiment: str, mode: str) -> str:
    """Why system `name` does not implement `mode` of `experiment`; "" where it does."""
    system = next((system for system in SYSTEMS if system.name == name), None)
    return system.unsupported.get((experiment, mode), "") if system else ""


def label(name: str) -> str:
    """How a page names a system; an undeclared name (an older release's) as it is."""
    return next((system.label for system in SYSTEMS if system.name == name), name)
