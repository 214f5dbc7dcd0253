"""The cells the standard suite on 2 CPU cores leaves to the full suite, to stay within its
150 minutes: one table, each entry with the measured or estimated cost that excluded it. The
machine suite (standard's measurement narrowed to what a machine answers, in 120 minutes)
leaves out the same cells, and those of MACHINE_CUTS.

A cut cell is still planned: dlbench.runner.driver.plan.experiments.not_measured_params records it as
"not measured" with its reason, so the page says what is missing and why (`python benchmarks/suite_estimate.py` prints the suite's
expected time with these cuts).
"""

from __future__ import annotations

from dlbench.core.declarations.modes import FASTEST, mode_class
from dlbench.runner.cell.spec import FrameworkId
from dlbench.runner.driver.plan.request import RunRequest

#: Any system, and (as a mode) every production mode of the experiment.
EVERY = "*"
_BERT_PRODUCTION = ("BERT-base's production paths cost about 25 minutes of cold compiles (a "
                    "12-layer transformer, two input shapes, three processes each); ResNet-50 "
                    "answers the production question")
_BERT_KERAS = ("BERT-base's plain path on {backend} projected about {minutes} minutes over the "
               "looks; Keras' BERT-base answer is measured on torch, and Keras on {backend} "
               "answers at ResNet-50")
_MLP_COMPILE = ("a cold {compiler} of the 17-thousand-parameter MLP in every process ({minutes} "
                "minutes a look) measures the compiler, not serving; the production question is "
                "answered at ResNet-50, and at the MLP by {stands_in}")

#: (experiment, workload, system or EVERY, mode or EVERY) -> why the standard CPU suite
#: leaves that cell out. Minutes are the suite estimate's (benchmarks/suite_estimate.py,
#: 2026-12-05): the projection over three looks was 191 min before these cuts.
STANDARD_CPU_CUTS: dict[tuple[str, str, str, str], str] = {
    ("inference", "bert-base-tokens", EVERY, EVERY): _BERT_PRODUCTION,
    ("inference", "bert-base-tokens", "keras-jax", "predict"): _BERT_KERAS.format(
        backend="JAX", minutes=9),
    ("inference", "bert-base-tokens", "keras-tensorflow", "predict"): _BERT_KERAS.format(
        backend="TensorFlow", minutes=6),
    ("inference", "resnet50-synthetic", "tensorflow", "xla"): (
        "TensorFlow's second production path (about 3.5 minutes); tf.function stands for it, "
        "the graph SavedModel serving runs"),
    ("inference", "resnet50-synthetic", "keras-torch", "jit_compile"): (
        "Keras' jit_compile on torch is the suite's dearest cell (about 11 minutes a look: a "
        "cold torch.compile of ResNet-50 in each of three processes, more at each top-up); "
        "Keras' production path is answered on TensorFlow and JAX, torch.compile answers "
        "torch's"),
    ("inference", "mlp-digits", "pytorch", "compiled"): _MLP_COMPILE.format(
        compiler="torch.compile", minutes=3, stands_in="TensorFlow's tf.function"),
    ("inference", "mlp-digits", "tensorflow", "xla"): _MLP_COMPILE.format(
        compiler="XLA compile", minutes=1, stands_in="TensorFlow's tf.function"),
    ("training", "resnet-synthetic", "pytorch", "compiled"): (
        "a cold torch.compile of the ResNet-20's training step in every process (measured "
        "2026-12-03: 172 s of a process's life, against 15-25 s in the other modes); "
        "torch.compile is answered by inference at ResNet-50"),
    ("training", "resnet-synthetic", "keras-tensorflow", "jit_compile"): (
        "Keras' jit_compile on TensorFlow in the ResNet-20's training: 50 s a process at 4 "
        "epochs (measured 2026-12-05), about 10 minutes at 12 processes; 7.2 minutes of run "
        "20261205T075341Z-cpu at 3 epochs; Keras' compiled training is answered on JAX (whose "
        "plain path is XLA already) and TensorFlow's by XLA"),
    ("training", "transformer-tokens", "keras-tensorflow", "default"): (
        "BERT-mini's training in Keras on TensorFlow took 7.6 of the 171 minutes of run "
        "20261205T075341Z-cpu (12 processes of 38 s, the suite's slowest BERT-mini system); "
        "Keras' BERT-mini training is answered on torch and JAX, and Keras on TensorFlow "
        "trains the MLP, the ResNet-20 and the LSTM"),
}


#: (experiment, workload, system or EVERY, mode or EVERY: here every mode) -> why the
#: machine suite on a CPU leaves those cells to the full suite, beyond standard's cuts.
#: Minutes are the suite estimate's (dlbench run --suite machine --dry-run, 2026-12-06).
MACHINE_CUTS: dict[tuple[str, str, str, str], str] = {
    ("inference", "resnet50-synthetic", "pytorch", "compiled"): (
        "a cold torch.compile of ResNet-50 for two input shapes in every process (59 s a "
        "process in release 2027.03, 3 minutes a look); the standard suite answers it"),
    ("execution-mode", "resnet50-synthetic", "tensorflow", "xla"): (
        "TensorFlow's second production path: an XLA compile of ResNet-50's training step, "
        "cold and warm, in every process (guessed at over 2 minutes a process on 2 cores, 8 "
        "minutes of the suite); tf.function, the graph Keras' fit runs, answers TensorFlow's "
        "production training here"),
    ("data-parallel", "mlp-digits", "keras-tensorflow", EVERY): (
        "Keras on TensorFlow distributes with TensorFlow's own MirroredStrategy, which "
        "TensorFlow's cells measure; Keras' own distribution API (keras.distribution."
        "DataParallel) is measured on JAX (4 minutes of the suite)"),
    ("execution-mode", "resnet50-synthetic", "keras-torch", EVERY): (
        "Keras on torch's production path (jit_compile: a cold torch.compile of ResNet-50's "
        "training step in every process, minutes each) is left to the full suite, so its "
        "plain path has nothing to be compared with here; torch.compile answers torch's"),
    ("execution-mode", "resnet50-synthetic", "keras-jax", EVERY): (
        "Keras on JAX's plain path is its compiled one (jit_compile='auto' resolves to True: "
        "XLA), so it has no second path to be compared with"),
    ("precision", "bert-base-tokens", EVERY, EVERY): (
        "BERT-base in fp32 and bf16 in five systems is about 25 minutes a look (two to three "
        "minutes a process: each trains and serves the 110-million-parameter model, and the "
        "bf16 cell its fp32 baseline too); ResNet-50 answers the bf16 question in the 75 "
        "minutes of the machine suite"),
}
#: The suites that leave out STANDARD_CPU_CUTS on a CPU.
CUT_SUITES = ("standard", "machine")


def standard_cpu_cut(request: RunRequest, experiment: str, workload: str,
                     framework: FrameworkId, mode: str) -> str:
    """Why the standard or the machine suite on a CPU leaves this cell to the full suite
    ("" when it measures it, and in every other suite and device)."""
    if request.suite not in CUT_SUITES or request.device != "cpu":
        return ""
    if request.suite == "machine":
        for (cut_experiment, cut_workload, cut_system, cut_mode), why in MACHINE_CUTS.items():
            if (cut_experiment, cut_workload) == (experiment, workload) and (
                    cut_system in (framework.name, EVERY) and cut_mode in (mode, EVERY)):
                return why
    production = mode_class(experiment, framework.framework, mode) == FASTEST
    for (cut_experiment, cut_workload, cut_system, cut_mode), why in STANDARD_CPU_CUTS.items():
        if (cut_experiment == experiment and cut_workload == workload
                and cut_system in (framework.name, EVERY)
                and (cut_mode == mode or (cut_mode == EVERY and production))):
            return why
    return ""
