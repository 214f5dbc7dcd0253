"""The defaults-accuracy answers of a release: for each run, device and task, the answer of
dlbench.core.judging.defaults_accuracy over the systems that ran, the settings that differ by
default between them (as each cell read them back from its framework's objects), every
system that could not be run with its defaults, with why, and the answer as rows of the
verdicts table (verdicts.csv), the way the home page's other answers are stored."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dlbench.core.machine.achieved import details_of
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.defaults_accuracy import (AccuracyPair, DefaultsAccuracy,
                                                    judge_defaults_accuracy)
from dlbench.core.declarations.modes import group_words
from dlbench.core.storage.schema import CellStatus
from dlbench.core.declarations.systems import SYSTEMS, system_of
from dlbench.core.judging.verdict_engine import repeat_rows

#: The experiment these answers judge (dlbench.core.declarations.experiments declares it).
EXPERIMENT = "defaults-accuracy"
METRIC = "test_accuracy"
#: The question the answer is stored under in a verdicts table, and its title.
QUESTION = EXPERIMENT
TITLE = "Does the framework you use change accuracy?"
#: Each pair's outcome in a verdicts table's decision words (the leader is side A).
DECISIONS = {Outcome.LEADER_BETTER: Outcome.A_BETTER,
             Outcome.NO_MEANINGFUL_DIFFERENCE: Outcome.NO_MEANINGFUL_DIFFERENCE,
             Outcome.UNDECIDED: Outcome.UNDECIDED}


@dataclass(frozen=True)
class NotRun:
    """A system whose cell did not finish: its status and why."""

    system: str
    status: str
    reason: str


@dataclass(frozen=True)
class DefaultsAnswer:
    """One group's answer, its differing settings and the systems that did not run."""

    run_id: str
    device: str
    workload: str
    task: str  # the task in words, as the cells recorded it
    answer: DefaultsAccuracy
    #: (setting, ((system, value), ...)) for each setting whose values differ
    differing: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    not_run: tuple[NotRun, ...]
    cells: tuple[tuple[str, str], ...] = ()  # (system, cell ID) of every system that ran


def differing_settings(defaults: dict[str, dict[str, str]]
                       ) -> tuple[tuple[str, tuple[tuple[str, str], ...]], ...]:
    """From {system: {setting: value}}: each setting whose value is not the same in every
    system, with every system's value ("" where a system recorded none)."""
    settings = dict.fromkeys(s for values in defaults.values() for s in values)
    return tuple((setting, tuple((system, defaults[system].get(setting, ""))
                                 for system in defaults))
                 for setting in settings
                 if len({values.get(setting, "") for values in defaults.values()}) > 1)


def _declared_order(item: tuple[str, object]) -> tuple[int, str]:
    """Systems in their declaration order (an undeclared one last, by name)."""
    names = [system.name for system in SYSTEMS]
    return (names.index(item[0]) if item[0] in names else len(names), item[0])


def _group_answer(key: tuple, cells: pd.DataFrame, rows: pd.DataFrame) -> DefaultsAnswer:
    run_id, device, workload = (str(v) for v in key)
    ok = cells[cells["status"] == CellStatus.OK.value]
    details = {system_of(c): details_of(c.get("details_json")) for c in ok.to_dict("records")}
    samples = {system: (group["repeat"].to_numpy(int), group["value"].to_numpy(float))
               for system, group in rows.groupby("system", sort=True)}
    sizes = {int(d["test_samples"]) for d in details.values() if d.get("test_samples")}
    # one test set for every system; were they ever to differ, the smallest (the widest
    # binomial error) keeps the interval conservative
    classes = {int(d["classes"]) for d in details.values() if d.get("classes")}
    answer = judge_defaults_accuracy(samples, min(sizes) if sizes else 1,
                                     chance=1 / min(classes) if classes else 0.0)
    not_run = tuple(NotRun(system_of(c), str(c["status"]), str(c.get("reason") or ""))
                    for c in cells[cells["status"] != CellStatus.OK.value].to_dict("records"))
    task = next((str(d["task"]) for d in details.values() if d.get("task")), workload)
    return DefaultsAnswer(run_id, device, workload, task, answer, differing_settings(
        {system: dict(d.get("defaults") or {})
         for system, d in sorted(details.items(), key=_declared_order)}),
        not_run, tuple((system_of(c), str(c["cell_id"])) for c in ok.to_dict("records")))


def defaults_answers(observations: pd.DataFrame, cells: pd.DataFrame) -> list[DefaultsAnswer]:
    """Every run, device and task of the experiment with its answer, one process per seed.
    A process flagged busy (other work on the machine) is kept: it changes a time, never an
    accuracy."""
    mine = cells[cells["experiment"] == EXPERIMENT] if "experiment" in cells else cells.iloc[:0]
    if mine.empty:
        return []
    rows = repeat_rows(observations[observations["experiment"] == EXPERIMENT], mine)
    rows = rows[(rows["metric"] == METRIC) & ~rows["control"]]
    keys = ["run_id", "device", "workload"]
    answers = []
    for key, group_cells in mine.groupby(keys, sort=True):
        chosen = np.ones(len(rows), bool)
        for column, value in zip(keys, key, strict=True):
            chosen &= (rows[column].astype(str) == str(value)).to_numpy()
        answers.append(_group_answer(key, group_cells, rows[chosen]))
    return answers


def defaults_rows(answers: list[DefaultsAnswer]) -> list[dict]:
    """Each answer as verdicts-table rows: its answer row (the outcome, the leader as side A
    and the winner if any) and a pair row per other system (the leader's paired difference
    in accuracy, its interval and the decision), under QUESTION."""
    rows = []
    for found in answers:
        answer, cells = found.answer, dict(found.cells)
        common = {"question": QUESTION, "title": TITLE, "run_id": found.run_id,
                  "device": found.device, "group": group_words((("workload", found.workload),)),
                  "group_key": json.dumps({"workload": found.workload}), "metric": METRIC,
                  "aa_control": False, "derived_from": "", "threshold": answer.threshold,
                  "confidence": answer.confidence, "family_size": len(answer.pairs),
                  "cell_a": cells.get(answer.leader, ""), "contender_a": answer.leader}
        seeds = {s.system: s.seeds for s in answer.systems}
        rows.append(common | {"row": "answer", "outcome": answer.outcome.value,
                              "processes_a": seeds.get(answer.leader),
                              "winner": answer.leader if answer.outcome is
                              Outcome.WINNER else ""})
        rows += [pair_row(common, cells.get(pair.other, ""), pair.other, pair)
                 for pair in answer.pairs]
    return rows


def pair_row(common: dict, cell_b: str, contender_b: str, pair: AccuracyPair) -> dict:
    """One paired accuracy comparison as a verdicts-table pair row (the defaults- and the
    precision-accuracy answers store theirs alike): `common` with side B, both sides'
    seeds, the leader's mean paired difference, its interval and the decision."""
    return common | {"row": "pair", "cell_b": cell_b, "contender_b": contender_b,
                     "processes_a": pair.seeds, "processes_b": pair.seeds,
                     "difference": pair.difference, "difference_low": pair.low,
                     "difference_high": pair.high, "decision": DECISIONS[pair.outcome].value}
