"""What one process of a real-size cell (ResNet-50, BERT-base on the CPU) is expected to cost,
before any run recorded one: the framework's import, building the model and transferring
its weights, the cold compiles of its mode, and its forward FLOPs at an assumed fraction
of the peak.

The quick suite's per-framework defaults (dlbench.runner.driver.plan.estimate) describe small models, whose
processes are import and first use; a real-size process is arithmetic and compilation.
The compile and export seconds below are guesses scaled from the small models' measured
compiles (dlbench.core.declarations.systems, ProcessSeconds.compile_extra) by the models' depth; the
real-size processes tried while writing this ran on a machine shared by many sessions (load
12-25 on 2 cores) and only showed that they run: rough, not results. A run in a results
directory with history uses the recorded wall times instead.
"""

from __future__ import annotations

from dlbench.core.declarations.modes import FASTEST, mode_class
from dlbench.core.declarations.runtimes import export_seconds
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.models.weights import parameter_count
from dlbench.runner.workloads.catalog import device_profile, flops_per_sample, get_workload
from dlbench.runner.workloads.real_size import (NO_ACCURACY_PARAM, PARITY_REFERENCE_PASSES,
                                                PEAK_GFLOPS)

#: The fraction of the peak a real-size forward pass is assumed to reach (eager paths reach
#: a third to a half on 2 cores; the estimate is kept on the slow side).
ASSUMED_FRACTION = 0.35
#: Seconds per million parameters to draw the weights in NumPy and build the model in a
#: framework (transfer included).
BUILD_S_PER_MPARAM = 0.15
#: Seconds a cold compile of one input shape of a real-size model takes in a system's
#: production path (two shapes per inference process: batch 1 and the serving batch).
#: Keras on JAX compiles with XLA in its plain path too (its jit_compile is the same cell).
#: Fitted to release 2027.03's ResNet-50 inference processes (2-core AMD EPYC, measured
#: alone): each path's median process wall less its plain path's (PyTorch eager 12 s,
#: Keras on torch 20 s), over two shapes: torch.compile 59 s (about 25 s a shape),
#: tf.function 14 s, Keras' predict on TensorFlow 21 s and on JAX 23 s, jit_compile on
#: TensorFlow 23 s (a few seconds a shape at most). TensorFlow's XLA and Keras' jit_compile
#: on torch were not measured there (left to the full suite): guesses.
COMPILE_S_PER_SHAPE: dict[tuple[str, str], float] = {
    ("pytorch", "compiled"): 25.0, ("tensorflow", "tf.function"): 2.0,
    ("tensorflow", "xla"): 25.0, ("keras-tensorflow", "jit_compile"): 2.0,
    ("keras-torch", "jit_compile"): 100.0, ("keras-jax", "predict"): 2.0,
    ("keras-tensorflow", "predict"): 2.0,
}
#: Seconds writing and loading back a real-size artifact takes, for a format no runtime
#: declares a figure for (dlbench.core.declarations.runtimes declares each runtime's).
DEFAULT_EXPORT_S = 60.0
#: A training step costs about 3 forward passes (forward, and backward's two products).
STEP_FORWARDS = 3
#: A training compile (forward and backward, and the optimizer) against an inference one.
TRAINING_COMPILE_FACTOR = 2.5
#: GFLOP/s of the parity cell's float64 NumPy reference on one core: ResNet-50 ran at about
#: 0.9 on a loaded core of this project's shared 2-core machine (2026-12-07); a guess for a
#: quiet one, kept on the slow side.
REFERENCE_GFLOPS = 2.0


def forward_seconds(workload: str, samples: float) -> float:
    """Seconds `samples` forward samples take at the assumed fraction of the peak."""
    return samples * flops_per_sample(workload) / (ASSUMED_FRACTION * PEAK_GFLOPS * 1e9)


def inference_samples(params: dict) -> int:
    """Forward samples one inference process computes (dlbench.runner.worker.harness.inference): the first
    calls, warm-up, latency calls at batch 1, throughput warm-up, calibration and windows."""
    batch = int(params.get("throughput_batch", 1))
    warmup = int(params.get("warmup_calls", 0))
    return (1 + batch + warmup + int(params.get("latency_calls", 20))
            + batch * (max(1, warmup) + 1 + int(params.get("throughput_samples", 3))))


def export_samples(params: dict, batch: int) -> int:
    """Forward samples one export process computes: parity (framework and artifact), the
    warm-up, the latency windows (about 0.1 s each) and the throughput passes."""
    samples = int(params.get("export_samples", 16))
    return 2 * samples + 3 + 3 * batch + samples * 5


def training_samples(params: dict, train: int) -> float:
    """Forward-sample equivalents one real-size training process computes: its epochs of
    `train` samples and each epoch's evaluation on the test samples."""
    epochs = int(params.get("epochs", 1))
    return epochs * (STEP_FORWARDS * train + int(params.get("test_samples", 256)))


def real_size_process_s(spec: CellSpec, import_s: float) -> float:
    """A real-size process's expected seconds: import, build, compiles and arithmetic."""
    workload = get_workload(spec.workload)
    millions = parameter_count(device_profile(workload, spec.device).definition) / 1e6
    seconds = import_s + BUILD_S_PER_MPARAM * millions
    if spec.experiment == "export":
        seconds += export_seconds().get(spec.export_format, DEFAULT_EXPORT_S)
        return seconds + forward_seconds(spec.workload, export_samples(spec.params,
                                                                        spec.batch_size))
    if spec.experiment == "execution-mode":
        return seconds + execution_mode_s(spec)
    if spec.experiment == "parity":  # the framework's passes, then the float64 reference
        inputs = int(spec.params.get("forward_inputs", 1))
        return (seconds + BUILD_S_PER_MPARAM * millions
                + forward_seconds(spec.workload, inputs + STEP_FORWARDS * spec.batch_size)
                + PARITY_REFERENCE_PASSES * flops_per_sample(spec.workload)
                / (REFERENCE_GFLOPS * 1e9))
    if spec.experiment in ("training", "precision"):
        train = device_profile(workload, spec.device).small_samples
        samples = training_samples(spec.params, train)
        if spec.experiment == "precision":  # inference timed too, and fp32's own baseline
            baseline = (0 if spec.precision == "fp32" else int(spec.params.get(
                "test_samples", 256)) if spec.params.get(NO_ACCURACY_PARAM) else samples)
            samples += inference_samples(spec.params) + baseline
        return seconds + TRAINING_COMPILE_FACTOR * _compile_s(spec) + forward_seconds(
            spec.workload, samples)
    return seconds + 2 * _compile_s(spec) + forward_seconds(spec.workload,
                                                            inference_samples(spec.params))


#: Training steps an execution-mode process takes in one timed mode beyond its windows
#: (dlbench.runner.worker.experiments.execution_mode.protocol): the first step, the sampler's
#: calibration call, and the warm compile's first step; the eager baseline adds its warm-up.
MODE_EXTRA_STEPS = 3
EAGER_WARMUP_STEPS = 3
#: A warm compile (caches kept, a fresh model) against a cold one: a guess, on the slow side.
WARM_COMPILE_SHARE = 0.5


def execution_mode_s(spec: CellSpec) -> float:
    """An execution-mode process's steps and compiles beyond import and build: the eager
    baseline's warm-up and windows, then in a compiled mode its own windows, its cold and its
    warm compile of the training step."""
    windows = int(spec.params.get("step_samples", 5))
    steps = EAGER_WARMUP_STEPS + windows + MODE_EXTRA_STEPS
    compile_s = TRAINING_COMPILE_FACTOR * _compile_s(spec) * (1 + WARM_COMPILE_SHARE)
    if mode_class(spec.experiment, spec.framework, spec.mode) == FASTEST:
        steps += windows + MODE_EXTRA_STEPS
    return compile_s + forward_seconds(spec.workload, STEP_FORWARDS * spec.batch_size * steps)


def _compile_s(spec: CellSpec) -> float:
    """A cold compile of one input shape in the cell's mode (0 in a mode that does not)."""
    system = spec.framework_id.name
    plain = spec.mode in ("default", "mixed")  # precision's cells run Keras' plain path
    mode = "predict" if plain and system.startswith("keras") else spec.mode
    compile_s = COMPILE_S_PER_SHAPE.get((system, mode), 0.0)
    if not compile_s and mode_class(spec.experiment, spec.framework, spec.mode) == FASTEST:
        compile_s = COMPILE_S_PER_SHAPE.get((system, "compiled"), 30.0)
    return compile_s
