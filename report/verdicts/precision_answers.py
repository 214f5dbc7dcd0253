"""The precision experiment's accuracy answers of a release: for each run, device, workload
and system, whether its reduced precision (bf16, or fp16) cost accuracy against fp32, by
dlbench.core.judging.precision_accuracy's rule over the cell's processes, each of which trained the
workload in both precisions from the same weights in the same order (paired by seed), and
those answers as rows of the verdicts table (verdicts.csv), as the defaults-accuracy answers
are stored."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlbench.core.machine.achieved import details_of
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.declarations.modes import group_words
from dlbench.core.judging.precision_accuracy import PrecisionAccuracy, judge_precision_accuracy
from dlbench.core.storage.schema import CellStatus
from dlbench.core.declarations.systems import system_of
from dlbench.core.judging.verdict_engine import repeat_rows
from dlbench.report.verdicts.defaults_answers import pair_row

EXPERIMENT = "precision"
#: A process's reduced-precision accuracy and its change against fp32 (reduced minus fp32).
ACCURACY, CHANGE = "test_accuracy", "accuracy_change_vs_fp32"
#: The anchor of the answers' section on the home page and the precision page.
ANCHOR = "precision-accuracy"


@dataclass(frozen=True)
class PrecisionAnswer:
    """One system's answer on one run, device and workload, with the means it rests on."""

    run_id: str
    device: str
    workload: str
    system: str
    cell_id: str
    answer: PrecisionAccuracy
    seeds: int
    fp32_mean: float
    reduced_mean: float


def _answer(cell: dict, rows: pd.DataFrame) -> PrecisionAnswer | None:
    """The answer of one cell from its processes' rows (None: no process kept both values,
    as in a real-size cell, whose fp32 baseline is not trained, or the cell did not record
    the size of its test set)."""
    values = rows.pivot_table(index="repeat", columns="metric", values="value")
    if not {ACCURACY, CHANGE} <= set(values.columns):
        return None
    values = values.dropna(subset=[ACCURACY, CHANGE])
    if values.empty:
        return None
    details = details_of(cell.get("details_json"))
    if not details.get("test_samples"):  # measured before cells recorded their test set
        return None
    accuracy, change = values[ACCURACY].to_numpy(float), values[CHANGE].to_numpy(float)
    classes = int(details.get("classes") or 0)
    answer = judge_precision_accuracy(
        values.index.to_numpy(int), accuracy, change,
        test_samples=int(details["test_samples"]),
        target=float(details.get("target_accuracy") or 0.0), precision=str(cell["precision"]),
        chance=1 / classes if classes else 0.0)
    return PrecisionAnswer(str(cell["run_id"]), str(cell["device"]), str(cell["workload"]),
                           system_of(cell), str(cell["cell_id"]), answer, len(values),
                           float(np.mean(accuracy - change)), float(np.mean(accuracy)))


def precision_answers(observations: pd.DataFrame,
                      cells: pd.DataFrame) -> list[PrecisionAnswer]:
    """Every reduced-precision cell that trained to an accuracy beside its fp32 baseline, with
    its answer (A/A controls and busy-flagged processes are kept out as everywhere: a
    process's accuracy does not depend on the machine's load, but its cell is one)."""
    if "experiment" not in cells:
        return []
    mine = cells[(cells["experiment"] == EXPERIMENT) & (cells["precision"] != "fp32")
                 & (cells["status"] == CellStatus.OK.value)]
    if mine.empty:
        return []
    rows = repeat_rows(observations[observations["experiment"] == EXPERIMENT], mine)
    rows = rows[rows["metric"].isin([ACCURACY, CHANGE]) & ~rows["control"]]
    found = []
    for cell in mine.sort_values(["run_id", "device", "workload", "cell_id"]).to_dict("records"):
        chosen = rows[(rows["run_id"] == cell["run_id"]) & (rows["cell_id"] == cell["cell_id"])]
        answer = _answer(cell, chosen) if not chosen.empty else None
        if answer is not None:
            found.append(answer)
    return found


#: The answers are stored under this question in a verdicts table, with this title.
QUESTION = ANCHOR
TITLE = "Does reduced precision cost accuracy against fp32?"
#: The metric the answers compare (each precision's final test accuracy, paired by seed).
METRIC = ACCURACY


def precision_rows(answers: list[PrecisionAnswer]) -> list[dict]:
    """Each answer as verdicts-table rows under QUESTION, grouped by workload and system: its
    answer row (the outcome in its rule's words, the leading precision as side A and the
    winner if any) and, where the rule judged the pair, the pair row (the leader's mean
    paired difference in accuracy against the other precision, its interval and the
    decision). Both precisions were trained in the one cell's processes: that cell is
    both sides."""
    rows = []
    for found in answers:
        answer, judged = found.answer, found.answer.judged
        leader = judged.leader if judged and judged.leader else answer.precision
        other = "fp32" if leader == answer.precision else answer.precision
        group = (("workload", found.workload), ("system", found.system))
        common = {"question": QUESTION, "title": TITLE, "run_id": found.run_id,
                  "device": found.device, "group": group_words(group),
                  "group_key": json.dumps(dict(group)), "metric": METRIC,
                  "aa_control": False, "derived_from": "", "cell_a": found.cell_id,
                  "contender_a": leader,
                  "threshold": judged.threshold if judged else None,
                  "confidence": judged.confidence if judged else None,
                  "family_size": len(judged.pairs) if judged else 0}
        rows.append(common | {"row": "answer", "outcome": answer.outcome.value,
                              "processes_a": found.seeds,
                              "winner": leader if judged and judged.outcome is
                              Outcome.WINNER else ""})
        rows += [pair_row(common, found.cell_id, other, pair)
                 for pair in (judged.pairs if judged else ())]
    return rows
