"""Training cells that missed their target accuracy: each process records whether its final
test accuracy reached the workload's target (the reached_target metric); a cell with any
process that missed says so on its page and decides no accuracy question."""

from __future__ import annotations

import re

import pandas as pd

TARGET_METRIC = "reached_target"
#: Metrics that say how well or how fast a model learned: judged only on cells that reached
#: their target (a model at chance decides nothing).
ACCURACY_METRICS = frozenset({"test_accuracy", "time_to_target"})
MISSED_NOTE = "did not reach its target"
#: The classes of each workload's labels (chance is 1/classes), for cells measured before
#: cells recorded them (every release up to 2027.02): ten for every workload so far
#: (tests/test_targets.py holds this table to what runner/workloads/datasets.py draws).
UNRECORDED_CLASSES = dict.fromkeys(
    ("mlp-digits", "cnn-digits", "cnn-synthetic", "mlp-mnist", "cnn-cifar10",
     "resnet-synthetic", "resnet-cifar10", "transformer-tokens", "lstm-tokens",
     "resnet50-synthetic", "bert-base-tokens"), 10)  # the last two: recorded from the start
#: How a training cell's fairness manifest has stated its target since release 2027.02.
#: ">=" as the runner writes it, or as the site reads a run ("›=": its one sanitiser turns
#: markup characters into look-alikes, report/render/user_text.py).
TARGET_NOTE = re.compile(r"target: final test accuracy (?:>=|›=) ([0-9.]+)")


def recorded_target(workload: str, records: list[dict], notes: list[str]) -> dict[str, float]:
    """The classes and target accuracy a workload's cells recorded (their params or details,
    else the target their fairness notes state); classes from UNRECORDED_CLASSES for cells
    that did not record them. A target nobody recorded is not drawn: an older release
    trained to none."""
    facts: dict = ({"classes": UNRECORDED_CLASSES[workload]}
                   if workload in UNRECORDED_CLASSES else {})
    for note in notes:
        stated = TARGET_NOTE.search(note)
        if stated:
            facts["target_accuracy"] = float(stated.group(1).rstrip("."))
    for record in records:
        facts |= {key: record[key] for key in ("classes", "target_accuracy") if key in record}
    return facts


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
