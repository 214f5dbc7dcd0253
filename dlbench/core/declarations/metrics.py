"""The registry of metrics: the single source of names, units, directions and the words a
reader sees.

The runner validates every observation against it; the site labels every axis from it;
the downloads page turns it into the data dictionary.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Direction(enum.Enum):
    """Which way is better for a metric."""

    LOWER = "lower"
    HIGHER = "higher"
    NEITHER = "neither"

    @property
    def phrase(self) -> str:
        """A reader's phrase such as "lower is better"."""
        if self is Direction.NEITHER:
            return "informational"
        return f"{self.value} is better"


@dataclass(frozen=True)
class Metric:
    """One measurable quantity with its unit and better direction."""

    name: str
    unit: str
    direction: Direction
    words: str  # what the metric is in a reader's words (page labels), e.g. 'time per epoch'
    description: str

    @property
    def label(self) -> str:
        """An axis label in a reader's words: what, unit and direction."""
        return f"{self.words} ({self.unit}, {self.direction.phrase})"

    @property
    def heading(self) -> str:
        """The label as a heading: 'Time per epoch (s, lower is better)'."""
        return self.label[:1].upper() + self.label[1:]


def _m(name: str, unit: str, direction: str, words: str, description: str) -> Metric:
    return Metric(name, unit, Direction(direction), words, description)


_ALL = [
    # training
    _m("first_epoch_time", "s", "lower", "first epoch time",
       "Wall time of the first training epoch, including tracing/compilation."),
    _m("steady_epoch_time", "s", "lower", "time per epoch",
       "Median wall time of the training epochs after the first one."),
    _m("epoch_time", "s", "lower", "epoch time",
       "Wall time of one training epoch (step = epoch index, 0 is the first)."),
    _m("train_throughput", "samples/s", "higher", "training throughput",
       "Training samples processed per second in steady state."),
    _m("time_to_target", "s", "lower", "time to target accuracy",
       "Cumulative training time until the test accuracy first reached the workload's target."),
    _m("test_accuracy", "fraction", "higher", "test accuracy",
       "Accuracy on the held-out test split after the last epoch."),
    _m("epoch_loss", "loss", "lower", "training loss",
       "Mean training loss over one epoch (step = epoch index)."),
    # training to a target: whether the workload's target accuracy was reached, and when
    _m("epoch_accuracy", "fraction", "higher", "test accuracy per epoch",
       "Accuracy on the held-out test split after one epoch (step = epoch index), evaluated "
       "outside the timer."),
    _m("reached_target", "bool", "higher", "reached target accuracy",
       "1 when the final test accuracy is at or above the workload's target accuracy, else "
       "0; a training cell any of whose processes missed it decides no accuracy question."),
    _m("working_memory", "MiB", "lower", "working memory",
       "Working memory of the model's training or inference: the allocator peak on a GPU; "
       "on a CPU the process's peak resident memory above a baseline (shared-library code "
       "excluded, the allocator's free pages returned first): in inference above what the "
       "first calls left; in training, of the epochs after the first above the memory before "
       "the model was built (from 2026-12-06; earlier releases read it above what the first "
       "epoch left). The Method page says what each framework's number holds."),
    _m("peak_memory", "MiB", "lower", "process peak memory",
       "The worker process's peak resident memory, imports and data included (release "
       "2026.12 published it as memory; new runs record working_memory and import_footprint "
       "instead)."),
    _m("import_footprint", "MiB", "lower", "import footprint",
       "Resident memory of the worker process after importing the framework, loading the "
       "data and the framework's first use, before the model is built."),
    # memory that compares (issue 22): compilation apart, and what a user pays
    _m("compile_memory", "MiB", "lower", "compile memory",
       "Memory a compiled mode's first calls leave resident (tracing and compiling each "
       "input shape), measured in modes that compile; inference's working_memory leaves "
       "it out."),
    _m("user_memory", "MiB", "lower", "memory a user pays",
       "What a user pays: import_footprint + working_memory of the same process."),
    _m("model_memory", "MiB", "neither", "model memory",
       "The model's own training state in fp32 (weights, gradients, SGD momentum), counted "
       "from its parameters: a lower bound of its parameter and activation memory; memory "
       "claims are judged only where it is at least 10x the runtime overhead."),
    # inference (latency and throughput are also measured by precision)
    _m("inference_latency", "ms", "lower", "latency per call",
       "Wall time of one batch-1 forward call, output synchronised to the host "
       "(step = call index)."),
    _m("latency_p50", "ms", "lower", "median latency",
       "Median batch-1 forward latency of one repeat."),
    _m("latency_p90", "ms", "lower", "90th percentile latency",
       "90th percentile batch-1 forward latency of one repeat."),
    _m("latency_p99", "ms", "lower", "99th percentile latency",
       "99th percentile batch-1 forward latency of one repeat."),
    _m("inference_throughput", "samples/s", "higher", "inference throughput",
       "Samples predicted per second at the cell's throughput (serving) batch, in steady "
       "state; its rows carry that batch as their batch size."),
    _m("first_call_time", "s", "lower", "first call time",
       "Wall time of the very first forward call, including tracing/compilation."),
    # precision
    _m("accuracy_change_vs_fp32", "fraction", "higher", "accuracy change against fp32",
       "Test accuracy minus the fp32 test accuracy reached from the same weights and data "
       "in the same framework (fp32 cells: against themselves, so 0)."),
    _m("output_deviation_vs_fp32", "abs", "lower", "output deviation from fp32",
       "Maximum absolute difference of the logits from the fp32 forward pass on the same "
       "weights and test inputs, before training."),
    _m("output_deviation_rel_vs_fp32", "ratio", "lower", "relative output deviation from fp32",
       "output_deviation_vs_fp32 divided by the largest absolute fp32 logit: the parity of the "
       "reduced precision's outputs, at any scale of logits."),
    # execution-mode
    _m("step_time", "ms", "lower", "step time",
       "Wall time of one training step, synchronised: step 0 is a fresh model's first step "
       "timed alone; steps 1.. are the per-step means of calibrated windows of steps."),
    _m("steady_step_time", "ms", "lower", "time per training step",
       "Median per-step time of the calibrated windows of steps after the first step."),
    _m("compile_time", "s", "lower", "compile time",
       "One-off cost of the first training step beyond a steady step: tracing and "
       "compilation for graph/compiled modes, first-use initialisation for eager ones."),
    _m("compile_time_cold", "s", "lower", "cold compile time",
       "First training step beyond a steady step, in a process whose compiler caches start "
       "empty (fresh inductor/triton directory, no XLA/JAX persistent cache): a cold "
       "tracing and compilation."),
    _m("compile_time_warm", "s", "lower", "warm compile time",
       "The same for a second compilation of a fresh model in the same process, with the "
       "compiler's in-memory and on-disk caches kept from the first: a warm compilation."),
    _m("eager_step_time", "ms", "lower", "eager step time",
       "Steady training step time of the framework's eager mode, measured in the same "
       "process as the baseline for break-even."),
    _m("break_even_steps", "steps", "lower", "break-even steps",
       "Training steps after which a faster compiled mode has paid back its extra first-step "
       "cost against the eager mode measured in the same process: ceil((compile_time - "
       "eager compile_time) / (eager - compiled steady step time))."),
    # parity
    _m("parity_forward_max_abs", "abs", "lower", "forward difference from float64",
       "Maximum absolute difference of the logits from the float64 reference, same weights."),
    _m("parity_forward_max_rel", "ratio", "lower", "relative forward difference from float64",
       "parity_forward_max_abs divided by the largest absolute reference logit."),
    _m("parity_step_max_abs", "abs", "lower", "step difference from float64",
       "Maximum absolute difference of the weight change made by one optimizer step from "
       "the float64 reference's SGD step."),
    _m("parity_step_max_rel", "ratio", "lower", "relative step difference from float64",
       "parity_step_max_abs divided by the largest absolute reference weight change."),
    _m("parity_tolerance", "ratio", "neither", "parity tolerance",
       "The largest normalised difference (rel) parity accepts."),
    _m("parity_pass", "bool", "higher", "parity passed",
       "1 when forward and step differences from the reference are within tolerance, else 0."),
    # data-parallel (also uses train_throughput, steady_epoch_time, first_epoch_time,
    # test_accuracy)
    _m("scaling_efficiency", "fraction", "higher", "scaling efficiency",
       "Throughput with N workers divided by N times the 1-worker throughput measured in the "
       "same cell just before (1.0 is perfect linear scaling)."),
    _m("dp_setup_time", "s", "lower", "set-up time",
       "Time to create the process group/strategy/distribution and place the model on it "
       "(in the first training process)."),
    _m("dp_launch_time", "s", "lower", "launch time",
       "Multi-process strategies: from starting the worker processes until every one is up "
       "and ready to join the group (interpreter start, framework import, data transfer)."),
    _m("time_to_accuracy", "s", "lower", "time to accuracy",
       "The whole training to its final test accuracy: strategy set-up (process group, "
       "replicas, model placement) and every epoch, the first with its tracing included; "
       "process launch and framework import are dp_launch_time's. An N-worker cell reaches "
       "its 1-worker run's accuracy within the protocol's tolerance or fails."),
    _m("accuracy_delta", "fraction", "lower", "accuracy change",
       "Absolute difference between this cell's final test accuracy and the 1-worker run's "
       "in the same cell, same data and weights."),
    # export
    _m("export_time", "s", "lower", "export time",
       "Time to export the model to the artifact on disk."),
    _m("artifact_size", "MiB", "lower", "artifact size",
       "Size of the exported artifact on disk (all its files)."),
    _m("artifact_load_time", "s", "lower", "artifact load time",
       "Time to load the artifact back into its runtime, ready to run."),
    _m("artifact_max_abs_diff", "abs", "lower", "artifact deviation",
       "Largest absolute difference between the artifact's outputs and the eager model's on "
       "the same test inputs."),
    _m("artifact_latency", "ms", "lower", "artifact latency",
       "Median time of one batch-1 inference call in the artifact's own runtime."),
    _m("artifact_throughput", "samples/s", "higher", "artifact throughput",
       "Samples per second in the artifact's own runtime, batch = the workload's batch size."),
]

METRICS: dict[str, Metric] = {metric.name: metric for metric in _ALL}


class UnknownMetricError(ValueError):
    """A metric name that is not in the registry."""


def get_metric(name: str) -> Metric:
    """The registered metric called `name`, or a clear error listing valid names."""
    try:
        return METRICS[name]
    except KeyError:
        raise UnknownMetricError(
            f"unknown metric {name!r}; registered metrics: {', '.join(sorted(METRICS))}"
        ) from None


def is_timing_unit(unit: str) -> bool:
    """True for a unit of time or of rate per second: its better side reads 'faster'."""
    return unit in ("s", "ms", "us") or unit.endswith("/s")


def reader_label(name: str) -> str:
    """A metric in a reader's words with its unit, e.g. 'time per epoch (s)'."""
    words = METRICS[name].words if name in METRICS else name.replace("_", " ")
    unit = METRICS[name].unit if name in METRICS else ""
    return f"{words} ({unit})" if unit and unit not in ("fraction", "bool") else words
