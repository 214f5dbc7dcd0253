"""Training cells that missed their target accuracy: each process records whether its final
test accuracy reached the workload's target (the reached_target metric); a cell with any
process that missed says so on its page and decides no accuracy question."""

from __future__ import annotations

import pandas as pd

from runner.workloads import WORKLOADS

TARGET_METRIC = "reached_target"
#: Metrics that say how well or how fast a model learned: judged only on cells that reached
#: their target (a model at chance decides nothing).
ACCURACY_METRICS = frozenset({"test_accuracy", "time_to_target"})
MISSED_NOTE = "did not reach its target"
#: The labels of each dataset an image or digit workload trains on (runner/datasets.py draws or
#: loads ten for each; tests/test_targets.py holds this table to it). Token workloads draw as
#: many as their model definition's classes.
DATASET_CLASSES = {"digits": 10, "synthetic-images": 10, "mnist": 10, "cifar10": 10}


def declared_target(workload: str) -> dict[str, float]:
    """The classes (1/classes is chance) and target accuracy that runner/workloads.py declares
    for `workload`, for cells that did not record them (every release so far); empty for a
    workload it does not declare."""
    declared = WORKLOADS.get(workload)
    if declared is None:
        return {}
    classes = DATASET_CLASSES.get(declared.dataset)
    drawn = {p.definition.classes for p in declared.profiles}
    if declared.dataset == "synthetic-tokens" and len(drawn) == 1:
        classes = drawn.pop()
    facts = {"target_accuracy": declared.target_accuracy}
    return facts | ({"classes": classes} if classes else {})


def missed_target(observations: pd.DataFrame) -> set[tuple[str, str]]:
    """(run_id, cell_id) of every cell with a process whose reached_target is 0."""
    rows = observations[(observations["metric"] == TARGET_METRIC) & (observations["value"] < 1)]
    return set(zip(rows["run_id"].astype(str), rows["cell_id"].astype(str), strict=True))


def reached_target_only(rows: pd.DataFrame, observations: pd.DataFrame) -> pd.DataFrame:
    """`rows` without the accuracy rows (ACCURACY_METRICS) of cells that missed their target
    in `observations`."""
    missed = missed_target(observations)
    if not missed or rows.empty:
        return rows
    keys = zip(rows["run_id"].astype(str), rows["cell_id"].astype(str), strict=True)
    in_missed = pd.Series([key in missed for key in keys], index=rows.index, dtype=bool)
    return rows[~(in_missed & rows["metric"].isin(ACCURACY_METRICS))]
