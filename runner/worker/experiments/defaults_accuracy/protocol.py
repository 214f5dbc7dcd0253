"""The defaults-accuracy protocol, shared by every framework's code: the task below its
ceiling, the model each system builds with its framework's own defaults, the process's seed,
and what a cell records.

Unlike training (the same initial weights and data order in every framework: a parity
question), each system here draws its own initial weights with its own initialisers, shuffles
with its own generator, and uses its own optimiser and BatchNorm constants; only what a user
chooses is the same for all: the task, the architecture, Adam with its default learning rate,
the batch, the loss and the epochs. Process k of every system seeds its framework with k.

The task is generated, never downloaded: scikit-learn's make_classification, 4 classes of 20
features (8 informative, 4 redundant, 2 clusters each) with 10% of the labels drawn at random,
so that no model reaches 1.0 (0.73-0.76 per process in the standard suite's first run,
20261206T075136Z; 0.25 by chance); a fixed pool of samples, the test set the 20000 after the
training pool (a large one: its own sampling error enters every interval).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from dlbench.core.declarations.systems import frameworks
from dlbench.runner.cell.outcome import CellOutcome, Fairness
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.defaults_task import BATCH_SIZE, TASK, TASKS
from dlbench.runner.worker.harness import Cell, configured_adapter
from dlbench.runner.worker.harness.data import CellData
from dlbench.runner.worker.harness.sampling import Sampler
from dlbench.runner.worker.measure import process_memory_kib
from dlbench.runner.workloads.catalog import Workload
from dlbench.runner.workloads.datasets import Dataset

#: The task (the experiment's own, not a catalog workload: TASK) and its step batch (BATCH_SIZE,
#: Keras fit's default; PyTorch's DataLoader is given it, its own is 1) are the package's.
TASK_WORDS = TASKS[TASK]
FEATURES, CLASSES, HIDDEN = 20, 4, 64
TRAIN_SAMPLES, TEST_SAMPLES = 4000, 20000
LEARNING_RATE = 1e-3  # Adam's default learning rate in both frameworks
DEFAULT_EPOCHS = 10
TASK_SEED = 2027  # the task's samples, the same for every system and process
LABEL_NOISE = 0.1  # make_classification's flip_y: the share of labels drawn at random

#: The task as a workload (what the harness's cell holds), declared here, not in the
#: catalog: no other experiment trains on it.
TASK_WORKLOAD = Workload(
    TASK, "mlp", "noisy-classes", BATCH_SIZE, LEARNING_RATE, 0.0, 0.5,
    f"MLP {FEATURES}-{HIDDEN}(BatchNorm)-{HIDDEN}-{CLASSES} on a generated 4-class task with "
    f"{LABEL_NOISE:.0%} label noise", hidden=(HIDDEN, HIDDEN), words=TASK_WORDS)

#: The settings this experiment leaves to each framework, as its documentation gives them;
#: each framework's code reads its values back from the objects it built (pytorch.py,
#: keras.py) and a cell records what it read.
DOCUMENTED_DEFAULTS: dict[str, dict[str, str]] = {
    "pytorch": {
        "dense kernel initialiser": "kaiming_uniform(a=sqrt(5)): U(-1/sqrt(fan_in), "
                                    "1/sqrt(fan_in))",
        "dense bias initialiser": "U(-1/sqrt(fan_in), 1/sqrt(fan_in))",
        "Adam epsilon": "1e-08",
        "where Adam's epsilon enters": "sqrt(v / (1 - beta2^t)) + eps",
        "BatchNorm momentum (as the framework defines it)": "0.1",
        "BatchNorm running statistics: share kept per step": "0.9",
        "BatchNorm epsilon": "1e-05",
        "BatchNorm running variance": "unbiased",
        "shuffling": "DataLoader(shuffle=True): a torch.randperm per epoch from torch's "
                     "generator, seeded by torch.manual_seed(k)",
    },
    "keras": {
        "dense kernel initialiser": "GlorotUniform",
        "dense bias initialiser": "Zeros",
        "Adam epsilon": "1e-07",
        "where Adam's epsilon enters": "sqrt(v) + epsilon, the bias correction folded into "
                                       "the step size",
        "BatchNorm momentum (as the framework defines it)": "0.99",
        "BatchNorm running statistics: share kept per step": "0.99",
        "BatchNorm epsilon": "0.001",
        "BatchNorm running variance": "biased",
        "shuffling": "fit(shuffle=True), its default: the backend's data adapter shuffles "
                     "each epoch, seeded by keras.utils.set_random_seed(k)",
    },
}


def recorded_defaults(framework: str, read: Mapping[str, str]) -> dict[str, str]:
    """What a cell records of `framework`'s defaults: the values `read` back from the built
    objects, and the documented words where a value cannot be read (where Adam's epsilon
    enters, the shuffling) with the framework's declared BatchNorm running variance, in
    DOCUMENTED_DEFAULTS' order."""
    documented = DOCUMENTED_DEFAULTS[framework]
    unread = {"where Adam's epsilon enters": documented["where Adam's epsilon enters"],
              "BatchNorm running variance": frameworks()[framework].running_variance,
              "shuffling": documented["shuffling"]}
    values = {**unread, **read}
    return {setting: values[setting] for setting in documented}

#: What every system shares: what a user chooses, not a default.
SHARED_SETTINGS = (f"the same task and samples; Dense {HIDDEN} -> BatchNorm -> ReLU -> Dense "
                   f"{HIDDEN} -> ReLU -> Dense {CLASSES} logits; Adam at its default learning "
                   f"rate {LEARNING_RATE:g} and betas 0.9/0.999 (the same in both frameworks); "
                   f"batch {BATCH_SIZE}; softmax cross-entropy (mean)")


def differing_defaults(documented: Mapping[str, Mapping[str, str]] = DOCUMENTED_DEFAULTS
                       ) -> dict[str, dict[str, str]]:
    """{setting: {framework: value}} for each setting whose documented default differs."""
    settings = dict.fromkeys(s for values in documented.values() for s in values)
    return {setting: {framework: values.get(setting, "") for framework, values
                      in documented.items()}
            for setting in settings
            if len({values.get(setting, "") for values in documented.values()}) > 1}


def task_data(train: int = TRAIN_SAMPLES, test: int = TEST_SAMPLES) -> Dataset:
    """The task's first `train` samples and the first `test` of its test pool (the pool is
    fixed, so a smaller size is a subset of the real one)."""
    if not 2 <= train <= TRAIN_SAMPLES or not 1 <= test <= TEST_SAMPLES:
        raise ValueError(f"train_samples {train} / test_samples {test}: expected 2-"
                         f"{TRAIN_SAMPLES} / 1-{TEST_SAMPLES}")
    if train % BATCH_SIZE == 1:
        raise ValueError(f"train_samples {train} leaves a last batch of 1 sample, which "
                         f"BatchNorm cannot normalise in training; choose another size")
    from sklearn.datasets import make_classification

    x, y = make_classification(n_samples=TRAIN_SAMPLES + TEST_SAMPLES, n_features=FEATURES,
                               n_informative=8, n_redundant=4, n_classes=CLASSES,
                               n_clusters_per_class=2, class_sep=1.0, flip_y=LABEL_NOISE,
                               random_state=TASK_SEED)
    x, y = x.astype(np.float32), y.astype(np.int64)
    return Dataset("noisy-classes", x[:train], y[:train], x[TRAIN_SAMPLES:TRAIN_SAMPLES + test],
                   y[TRAIN_SAMPLES:TRAIN_SAMPLES + test], CLASSES)


def open_defaults_cell(spec: CellSpec) -> Cell:
    """Configure the framework (CellSkipped when it cannot run here), generate the task at
    the spec's sizes and hold process k's seed k."""
    adapter, settings = configured_adapter(spec)
    dataset = task_data(int(spec.params.get("train_samples", TRAIN_SAMPLES)),
                        int(spec.params.get("test_samples", TEST_SAMPLES)))
    data = CellData(TASK_WORKLOAD, dataset, dataset.x_train, dataset.x_test,
                    seed=spec.repeat_index)
    return Cell(spec, adapter, settings, data, Sampler(spec),
                process_memory_kib()["VmRSS"] / 1024)


@dataclass(frozen=True)
class TrainedWithDefaults:
    """What one framework's training reports: each epoch's mean loss, the final test
    accuracy, and its defaults as read back from the objects it built."""

    epoch_losses: list[float]
    test_accuracy: float
    defaults: dict[str, str]


def mismatches(framework: str, read: Mapping[str, str]) -> dict[str, str]:
    """{setting: what was read} where the built objects disagree with the documented
    default (a framework version that changed one)."""
    documented = DOCUMENTED_DEFAULTS[framework]
    return {k: read.get(k, "(not read)") for k, v in documented.items() if read.get(k) != v}


def defaults_fairness(cell: Cell, framework: str, *, compile_mode: str,
                      data_pipeline: str) -> Fairness:
    """The manifest every defaults-accuracy cell carries: what is shared, and each setting
    that differs by default between the frameworks, with both values."""
    words = "; ".join(f"{setting}: " + ", ".join(f"{name} {value}" for name, value
                                                in values.items())
                      for setting, values in differing_defaults().items())
    spec, dataset = cell.spec, cell.data.dataset
    return cell.fairness(
        timer_includes="nothing: this experiment measures accuracy only, no time",
        precision_policy=f"{spec.precision} (float32 weights and activations)",
        compile_mode=compile_mode, data_pipeline=data_pipeline,
        notes=(f"each system with its framework's own defaults ({framework}'s here), seeded "
               f"with the process index k; shared: {SHARED_SETTINGS}; "
               f"{spec.params.get('epochs', DEFAULT_EPOCHS)} epochs of "
               f"{len(dataset.y_train)} samples, final accuracy on {len(dataset.y_test)} test "
               f"samples; settings that differ by default: {words}"))


def defaults_outcome(cell: Cell, framework: str, trained: TrainedWithDefaults,
                     fairness: Fairness) -> CellOutcome:
    """The cell's outcome: the final test accuracy, each epoch's loss, and in its details
    the test set's size (the answer's binomial error needs it), the defaults read back and
    any that disagree with the documented ones."""
    observations = [cell.observe("epoch_loss", loss, epoch)
                    for epoch, loss in enumerate(trained.epoch_losses)]
    observations.append(cell.observe("test_accuracy", trained.test_accuracy))
    dataset = cell.data.dataset
    return cell.outcome(observations, fairness, {
        "task": TASK_WORDS, "test_samples": len(dataset.y_test),
        "train_samples": len(dataset.y_train), "classes": dataset.classes,
        "defaults": dict(trained.defaults),
        "defaults_not_as_documented": mismatches(framework, trained.defaults)})


#: A framework's training with its own defaults: (seed, epochs, x, y, x_test, y_test) -> what
#: it reached and the defaults it read back.
Trainer = Callable[[int, int, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
                   TrainedWithDefaults]


def run_defaults_cell(spec: CellSpec, framework: str, train: Trainer, *, label: str,
                      compile_mode: str, data_pipeline: str) -> CellOutcome:
    """One cell: the task and the process's seed, `train` with the framework's own
    defaults, and the outcome with its fairness manifest (`label` names the framework)."""
    cell = open_defaults_cell(spec)
    data = cell.data
    trained = train(data.seed, epochs_of(spec), data.x_train, data.dataset.y_train,
                    data.x_test, data.dataset.y_test)
    fairness = defaults_fairness(cell, label, compile_mode=compile_mode,
                                 data_pipeline=data_pipeline)
    return defaults_outcome(cell, framework, trained, fairness)


def epochs_of(spec: CellSpec) -> int:
    """The epochs the cell trains (its "epochs" parameter, else DEFAULT_EPOCHS)."""
    return int(spec.params.get("epochs", DEFAULT_EPOCHS))
