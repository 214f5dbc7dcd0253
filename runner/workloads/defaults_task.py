"""The defaults-accuracy experiment's own task as a cell names it (not a catalog workload), its
step batch and the systems without training defaults of their own: read by its plan
(dlbench.runner.driver.plan.experiments.defaults_accuracy) and by its code on the worker side
(dlbench.runner.worker.experiments.defaults_accuracy, which declares the task itself)."""

from __future__ import annotations

#: The task's name in cell IDs (the worker's protocol.py declares the task; planning
#: imports no measuring code).
TASK = "mlp-bn-noisy"
#: The tasks this experiment declares for itself, in words (the run records them for its pages:
#: dlbench.runner.driver.commands.run.planned_words).
TASKS: dict[str, str] = {TASK: "MLP with BatchNorm, noisy 4-class task"}
#: The step batch: Keras fit's default (PyTorch's DataLoader is given it; its own is 1).
BATCH_SIZE = 32

#: Systems that cannot be trained with their own defaults, and why (recorded as unsupported
#: cells, shown on the pages, never dropped). TensorFlow's own API (tf.Module, tf.Variable,
#: tf.GradientTape) declares none: tf.nn.batch_normalization takes its epsilon from the caller
#: too, and tf.keras is Keras 3, which the Keras systems measure.
NO_DEFAULTS: dict[str, str] = {
    "tensorflow": ("TensorFlow's own API has no training defaults: a tf.Variable takes its "
                   "initial value from its caller; the initialisers, optimisers and BatchNorm "
                   "it documents are Keras'"),
}
