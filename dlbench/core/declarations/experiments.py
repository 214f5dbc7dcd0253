"""The experiments dlbench runs, each declared once.

A declaration holds everything outside its package that the runner and the site need to know
of an experiment: its name, the package that holds its framework code, the question it answers,
its metrics (each defined in dlbench.core.declarations.metrics), the seconds one quick-suite process
takes where a system declares no figure of its own (dlbench.runner.driver.plan.estimate), and what
its page adds to every experiment page's sections. The runner's plan, estimates and code files, the
command line's listing, and the site's titles, questions, navigation and page sections read
it here.

Adding an experiment is a plan module on the driver side
(runner/driver/plan/experiments/<folder>.py: its grid and plan, found by its folder's name), a
package on the worker side (runner/worker/experiments/<folder>/: its protocol, one module per
framework) plus one declaration appended to EXPERIMENTS; README "Adding an experiment"
lists them. An experiment only a request plans (a user's own model: `dlbench run --model`)
is declared alike in REQUESTED_ONLY, flagged so: no suite plans it, no page or listing shows
it, and its package holds only the code each framework runs (the request that names it
plans its cells).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Page sections an experiment may add (dlbench.report.pages.experiment renders each).
#: "formats": the works/fails matrix of export formats; "defaults": the answer to "does the
#: framework you use change accuracy?" with the settings that differ by default;
#: "precision-accuracy": whether reduced precision cost accuracy against fp32, per system.
SECTIONS = ("formats", "defaults", "precision-accuracy")


@dataclass(frozen=True)
class Experiment:
    """One experiment as the command line, cell IDs, tables and pages name it."""

    name: str  # on the command line and in cell IDs
    package: str  # the worker package holding each framework's code (<package>.<framework>)
    question: str  # what it answers, as a page heads it
    metrics: tuple[str, ...]
    #: seconds one quick-suite process takes on 2 cores where a system declares none
    estimate_s: float = 10.0
    cpu_caveat: str = ""  # what its page says first when every cell ran on a CPU
    sections: tuple[str, ...] = ()  # page sections of its own, from SECTIONS
    #: planned only by a request that names it, never by a suite (REQUESTED_ONLY)
    requested_only: bool = False
    #: the suite experiment whose estimates it takes, where it declares none of its own
    estimated_as: str = ""
    #: the driver module whose EXPERIMENT plans it, where it is not the one in PLANS named as
    #: its package's folder (an experiment kept outside the tree)
    plan_module: str = ""

    @property
    def title(self) -> str:
        """How a page names it: 'execution-mode' -> 'Execution mode'."""
        return title(self.name)

    def code_module(self, framework: str) -> str:
        """The module of `framework`'s code for this experiment (the worker imports it)."""
        return f"{self.package}.{framework}"

    @property
    def plans(self) -> str:
        """The driver module whose EXPERIMENT plans it: its plan_module, else the one in PLANS
        named as its package's folder ("" for one only a request plans)."""
        if self.plan_module or self.requested_only:
            return self.plan_module
        return f"{PLANS}.{self.package.rpartition('.')[2]}"


def title(name: str) -> str:
    """An experiment's page title from its name, declared or not (an older release's)."""
    return name.replace("-", " ").capitalize()


_IMPORT = "import_footprint"

#: Where the driver side keeps each experiment's plan (Experiment.plans).
PLANS = "dlbench.runner.driver.plan.experiments"

#: Every experiment, in the order suites run them and the site lists them.
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        "training", "dlbench.runner.worker.experiments.training",
        "Which framework trains the same model fastest, and do they reach the same accuracy?",
        ("first_epoch_time", "steady_epoch_time", "train_throughput", "time_to_target",
         "test_accuracy", "reached_target", "epoch_loss", "epoch_accuracy", "epoch_time",
         "working_memory", _IMPORT)),
    Experiment(
        "inference", "dlbench.runner.worker.experiments.inference",
        "Which framework predicts fastest, per sample and in bulk, on its plain and its fast "
        "path?",
        ("latency_p50", "latency_p90", "latency_p99", "inference_latency",
         "inference_throughput", "first_call_time", "working_memory", "compile_memory",
         "user_memory", _IMPORT)),
    Experiment(
        "precision", "dlbench.runner.worker.experiments.precision",
        "Does mixed precision (bf16, fp16) make training and inference faster or leaner, what "
        "does it cost in accuracy, and does each framework support it?",
        ("steady_epoch_time", "first_epoch_time", "train_throughput", "working_memory",
         "test_accuracy", "accuracy_change_vs_fp32", "output_deviation_vs_fp32",
         "output_deviation_rel_vs_fp32", "inference_throughput", "latency_p50", "latency_p90",
         "latency_p99", "user_memory", "model_memory", _IMPORT),
        sections=("precision-accuracy",)),
    Experiment(
        "execution-mode", "dlbench.runner.worker.experiments.execution_mode",
        "Do graph and compiled modes train faster than eager execution, and after how many "
        "steps has compilation paid for itself?",
        ("steady_step_time", "compile_time_cold", "compile_time_warm", "eager_step_time",
         "break_even_steps", "step_time", "compile_memory", _IMPORT)),
    Experiment(
        "parity", "dlbench.runner.worker.experiments.parity",
        "Do the frameworks compute the same function from the same weights, before and after "
        "one optimizer step?",
        ("parity_forward_max_abs", "parity_forward_max_rel", "parity_step_max_abs",
         "parity_step_max_rel", "parity_tolerance", "parity_pass", _IMPORT)),
    Experiment(
        "data-parallel", "dlbench.runner.worker.experiments.data_parallel",
        "How well does each framework's data parallelism scale across workers, and does it "
        "reach the 1-worker accuracy?",
        ("train_throughput", "scaling_efficiency", "time_to_accuracy", "dp_setup_time",
         "dp_launch_time", "test_accuracy", "accuracy_delta", "steady_epoch_time",
         "first_epoch_time", _IMPORT),
        cpu_caveat="**On a CPU, cores are the devices.** Each strategy's 2 workers of 1 thread "
                   "are compared with its single worker of 2 threads on the same cores (a "
                   "physical core per worker: dlbench.core.judging.conditions); on a CPU with "
                   "fewer cores than workers they share cores and show the strategy's overhead, "
                   "not "
                   "a speed-up."),
    Experiment(
        "export", "dlbench.runner.worker.experiments.export",
        "Which export formats work in each framework, do the artifacts compute the same "
        "function, and how fast do they run in their own runtimes?",
        ("export_time", "artifact_size", "artifact_load_time", "artifact_max_abs_diff",
         "artifact_latency", "artifact_throughput", _IMPORT),
        sections=("formats",)),
    Experiment(
        "defaults-accuracy", "dlbench.runner.worker.experiments.defaults_accuracy",
        "Does the framework you use change accuracy, each trained with its own defaults?",
        ("test_accuracy", "epoch_loss", _IMPORT), estimate_s=12.0,
        sections=("defaults",)),
)


_MODEL_CELLS = "dlbench.runner.worker.user_model.cells"

#: The experiments of a user's own model (runner/driver/user_model/plan.py plans their cells),
#: each measured as the suite experiment it mirrors and estimated as it.
REQUESTED_ONLY: tuple[Experiment, ...] = (
    Experiment(
        "model-parity", _MODEL_CELLS,
        "Does every system compute the user's model's function from the same weights?",
        ("parity_forward_max_abs", "parity_forward_max_rel", "parity_tolerance",
         "parity_pass", _IMPORT), requested_only=True, estimated_as="parity"),
    Experiment(
        "model-inference", _MODEL_CELLS,
        "Which system and mode predict the user's model fastest, per request and in bulk?",
        ("latency_p50", "latency_p90", "latency_p99", "inference_latency",
         "inference_throughput", "first_call_time", "working_memory", "compile_memory",
         "user_memory", _IMPORT), requested_only=True, estimated_as="inference"),
    Experiment(
        "model-training", _MODEL_CELLS,
        "Which system and mode take the user's model's training step fastest?",
        ("step_time", "steady_step_time", "compile_time", "working_memory", _IMPORT),
        requested_only=True, estimated_as="training"),
)


def experiment_names() -> list[str]:
    """Every experiment a suite plans, in suite order (not the requested-only ones)."""
    return [experiment.name for experiment in EXPERIMENTS]


def by_name(name: str) -> Experiment:
    """The experiment called `name`, a suite's or a requested-only one; ValueError naming
    the suites' experiments."""
    found = next((e for e in (*EXPERIMENTS, *REQUESTED_ONLY) if e.name == name), None)
    if found is None:
        raise ValueError(f"unknown experiment {name!r}; valid: {', '.join(experiment_names())}")
    return found
