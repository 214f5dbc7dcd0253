"""The answer to "does reduced precision cost accuracy?", per system and workload.

Each process of a bf16 (or fp16) precision cell trained the workload in that precision and
then, from the same initial weights and in the same data order, in fp32, in the same process
(runner/worker/experiments/precision/protocol.py): its `test_accuracy` is the reduced
precision's and `accuracy_change_vs_fp32` the reduced minus the fp32 accuracy. The two
accuracies of a process share its seed, so they are paired by seed and judged by the rule
that judges accuracy between systems (dlbench.core.judging.defaults_accuracy: the mean paired
difference, its interval with the seeds' and the test set's error, against its THRESHOLD),
with the two precisions as its two contenders.

A workload whose fp32 training missed its target in any process decides nothing: a model
that did not learn the task cannot show what precision costs it. A reduced precision that
missed the target where fp32 reached it is judged like any other value (that is a loss).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.defaults_accuracy import DefaultsAccuracy, judge_defaults_accuracy


@dataclass(frozen=True)
class PrecisionAccuracy:
    """One system's answer, with the paired judgement it rests on (None when none ran)."""

    precision: str
    outcome: Outcome
    judged: DefaultsAccuracy | None
    reason: str = ""


def judge_precision_accuracy(processes: np.ndarray, accuracy: np.ndarray,
                             change_vs_fp32: np.ndarray, test_samples: int, target: float,
                             precision: str = "bf16",
                             chance: float = 0.0) -> PrecisionAccuracy:
    """The answer from one cell's processes: their indices (seeds), final accuracies in
    `precision` and changes against fp32 (reduced minus fp32), on a test set of
    `test_samples` samples, for a workload whose target accuracy is `target`."""
    accuracy = np.asarray(accuracy, float)
    fp32 = accuracy - np.asarray(change_vs_fp32, float)
    if (fp32 < target).any():
        return PrecisionAccuracy(precision, Outcome.MISSED_TARGET, None,
                                 f"fp32 reached {fp32.min():.3f} in a process, below the "
                                 f"target {target:g}")
    judged = judge_defaults_accuracy({"fp32": (processes, fp32), precision: (processes, accuracy)},
                                     test_samples, chance=chance)
    return PrecisionAccuracy(precision, _outcome(judged, precision), judged, judged.reason)


def _outcome(judged: DefaultsAccuracy, precision: str) -> Outcome:
    if judged.outcome is Outcome.WINNER:
        return (Outcome.GAINS if judged.leader == precision
                else Outcome.LOSES)
    if judged.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE:
        return Outcome.NO_MEANINGFUL_DIFFERENCE
    if judged.outcome is Outcome.UNDECIDED:
        return Outcome.UNDECIDED
    return Outcome.CANNOT_TELL
