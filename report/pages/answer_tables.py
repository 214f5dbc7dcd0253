"""The home page's answers at a glance: one compact table per question, rendered from a
verdicts table (stored with the release, or judged at this build): rows are workloads in
words with size and batch, columns are the contenders, a cell is how many times worse than
the row's best it is, with its adjusted interval; the decided best in bold, undecided cells
marked. The words are in templates/index.md.j2."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import pandas as pd

from dlbench.core.declarations.metrics import METRICS, Direction, is_timing_unit, reader_label
from dlbench.core.declarations.modes import CLASS_WORDS
from dlbench.core.storage.schema import system_label
from dlbench.core.judging.verdict_engine import QUESTIONS, Question, metric_direction
from dlbench.core.text.words import plural
from dlbench.report.inputs.labelled import BatchIndex, format_number, value_batch
from dlbench.report.pages.answer_values import (Medians, best_value, compile_cost,
                                                is_compile_question)
from dlbench.report.render.labels import contender_label, workload_label
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.verdicts.verdict_table import OWN_RULES
from dlbench.report.verdicts.stored import answer_key

#: The mark of a cell whose pair the processes could not decide.
UNDECIDED = "?"
#: The mark of a cell within the practical threshold of the best.
TIED = "≈"
#: A parity answer's outcome (the same model from the same start): its cells carry no mark.
PARITY = Outcome.PARITY.value
#: Precisions in the order a reader compares them.
PRECISION_ORDER = ("fp32", "bf16", "fp16")


def advantage(row: Mapping, direction: Direction) -> tuple[float, float, float]:
    """How many times better the row's best is than the other, and its interval."""
    ratio, low, high = (float(row[k]) if row[k] not in ("", None) else math.nan
                        for k in ("ratio", "ci_low", "ci_high"))
    if direction is Direction.LOWER:
        return (1 / ratio if ratio else math.nan, 1 / high if high else math.nan,
                1 / low if low else math.nan)
    return ratio, low, high


def _times(value: float) -> str:
    return "n/a" if math.isnan(value) else format_number(value)


def _cell(pair: Mapping, direction: Direction) -> str:
    """'2.16 <small>1.57–2.97</small>': ≈ before it when within the threshold, ? after the
    value when undecided."""
    value, low, high = advantage(pair, direction)
    interval = "" if math.isnan(low) else f" <small>{_times(low)}–{_times(high)}</small>"
    decision = str(pair["decision"])
    if decision == "no meaningful difference":
        return f"{TIED} {_times(value)}{interval}"
    if decision in ("undecided", "inconclusive"):
        return f"{_times(value)} {UNDECIDED}{interval}"
    return f"{_times(value)}{interval}"


def group_label(group_key: str, device: str, contest: str, batch: str = "") -> str:
    """A row's group in words: 'ResNet-20, 32 px, batch 32, plain mode'; `batch` (the batch
    its values were measured at, in words) in place of the group's where given: a release
    before 2027.03 filed throughput under its cell's batch, not the serving batch."""
    group = json.loads(group_key) if group_key else {}
    parts = []
    if "workload" in group:
        parts.append(workload_label(str(group["workload"]), device))
    if batch:
        parts.append(batch)
    elif "batch_size" in group:
        parts.append(f"batch {group['batch_size']}")
    if "workers" in group:
        parts.append(plural(int(group["workers"]), "worker"))
    if "mode_class" in group:
        parts.append(f"{CLASS_WORDS.get(str(group['mode_class']), group['mode_class'])} mode")
    if "system" in group and contest != "system":
        parts.append(system_label(str(group["system"])))
    return ", ".join(parts)


#: A framework's own paths first, plain then production, where they compete.
PATH_ORDER = ("default", "fastest")


def _columns(contenders: set[str], contest: str) -> list[str]:
    if contest == "precision":
        return sorted(contenders, key=lambda c: (PRECISION_ORDER.index(c)
                                                 if c in PRECISION_ORDER else 9, c))
    return sorted(contenders, key=lambda c: (PATH_ORDER.index(c) if c in PATH_ORDER else 9,
                                             contender_label(contest, c).lower()))


def _outcome_words(outcome: str, winner: str, contest: str = "system") -> str:
    return f"{contender_label(contest, winner)} leads" if winner else outcome


#: "What it would take" is said only within this many times the processes measured.
WITHIN_REACH = 10


def what_it_would_take(needed: object, measured: int) -> str:
    """The processes per cell that would decide an undecided answer, when within reach of
    what was measured; else that this noise cannot decide it."""
    try:
        count = int(float(needed))
    except (TypeError, ValueError):
        count = 0
    if count <= 0 or measured <= 0 or count > WITHIN_REACH * measured:
        return "not decidable at this noise"
    return f"about {plural(count, 'process')} per cell would decide it"


def _row(answer: Mapping, pairs: pd.DataFrame, columns: list[str], question: Question,
         machines: Mapping[tuple[str, str], str], apart: Mapping, batches: BatchIndex,
         medians: Medians) -> dict:
    contest, direction = question.contest, metric_direction(question.metric)
    best = str(answer["contender_a"])
    run, won = str(answer["run_id"]), answer["outcome"] == Outcome.WINNER.value
    cells = {best: with_value(f"**{_times(1.0)}**" if won else _times(1.0),
                              own_value(run, str(answer.get("cell_a") or ""), question, medians),
                              won)}
    parity = answer["outcome"] == PARITY
    for pair in pairs.to_dict("records"):
        cells[str(pair["contender_b"])] = with_value(
            _times(advantage(pair, direction)[0]) if parity else _cell(pair, direction),
            own_value(run, str(pair.get("cell_b") or ""), question, medians))
    batch = value_batch(batches, str(answer["run_id"]), str(answer.get("cell_a") or ""),
                        str(answer["metric"]))
    label = group_label(str(answer.get("group_key") or ""), str(answer["device"]), contest,
                        batch) or str(answer["group"])
    machine = machines.get((str(answer["run_id"]), str(answer["device"])))
    changed = apart.get(answer_key(answer))
    measured = max([int(v) for c in ("processes_a", "processes_b")
                    for v in pd.to_numeric(pairs[c], errors="coerce").dropna()] or [0])
    return {"label": label + (f" ({machine})" if machine else ""), "group": label,
            "machine": machine or "",
            "take": what_it_would_take(answer.get("processes_needed"), measured)
            if answer["outcome"] == Outcome.INCONCLUSIVE.value else "",
            "cells": [cells.get(c, "–") for c in columns], "outcome": str(answer["outcome"]),
            "winner": str(answer["winner"] or ""),
            "lead": min((advantage(pair, direction) for pair in pairs.to_dict("records")),
                        key=lambda lead: lead[0], default=None) if won else None,
            "winner_words": contender_label(contest, str(answer["winner"] or ""))
            if str(answer["winner"] or "") else "",
            "best": best_value(answer, question, medians),
            "cost": compile_cost(answer, pairs, question, medians)
            if is_compile_question(question) else None,
            "changed": None if changed is None else {
                "stored": _outcome_words(*changed["stored"], contest),
                "today": _outcome_words(*changed["today"], contest)}}


def own_value(run: str, cell: str, question: Question, medians: Medians) -> str:
    """A contender's own median with its unit ('55.7 ms'); '' where the summary lacks it."""
    value = medians.get((run, cell, question.metric_of(cell)))
    if value is None or math.isnan(value):
        return ""
    unit = _unit(question.metric)
    return f"{format_number(value)} {unit}".strip()


def with_value(ratio: str, value: str, bold: bool = False) -> str:
    """A table cell: the contender's own value (bold for a decided best) above its ratio to
    the row's best; the ratio alone where the value is unknown."""
    if not value:
        return ratio
    return f"{'**' + value + '**' if bold else value}<br>{ratio}"


def _unit(metric: str) -> str:
    """A metric's unit as a reader reads it beside a value ('ms'); '' for a fraction."""
    known = METRICS.get(metric)
    return known.unit if known and known.unit != "fraction" else ""


def _best_header(metric: str) -> str:
    """The header of the best's own value: 'Best (ms)'."""
    known = METRICS.get(metric)
    return f"Best ({known.unit})" if known and known.unit != "fraction" else "Best"


def _legend(metric: str) -> str:
    """What a cell's number means for the question's metric."""
    known = METRICS.get(metric)
    if metric_direction(metric) is Direction.LOWER:
        what = ("time" if known and is_timing_unit(known.unit)
                else reader_label(metric).split(" (")[0])
        return f"{what} relative to the row's best (1.5 = 1.5 times the best's)"
    return (f"the row's best {reader_label(metric).split(' (')[0]} divided by this one "
            "(1.5 = the best has 1.5 times as much)")


def _sentence(rows: list[dict], derived: bool, contest: str = "system") -> str:
    """One sentence saying how the question's rows came out."""
    leads: dict[str, int] = {}
    for row in rows:
        if row["winner"]:
            leads[row["winner"]] = leads.get(row["winner"], 0) + 1
    tied = sum(r["outcome"] == Outcome.NO_MEANINGFUL_DIFFERENCE.value for r in rows)
    same = sum(r["outcome"] == PARITY for r in rows)
    rest = len(rows) - sum(leads.values()) - tied - same
    parts = [f"{contender_label(contest, w)} wins {n} of {len(rows)} "
             f"{'row' if len(rows) == 1 else 'rows'}"
             for w, n in sorted(leads.items(), key=lambda item: -item[1])]
    parts.append(f"{tied} {'shows' if tied == 1 else 'show'} no meaningful difference"
                 if tied else "")
    parts.append(f"{same} {'compares' if same == 1 else 'compare'} the same model from the "
                 "same start (a parity result: the largest per-seed difference is in its "
                 "evidence, no winner is named)" if same else "")
    takes = sorted({r["take"] for r in rows if r["take"]})
    parts.append(f"{rest} {'is' if rest == 1 else 'are'} not decided"
                 + (f" ({'; '.join(takes)})" if takes else "") if rest else "")
    words = "; ".join(p for p in parts if p) or "nothing is decided"
    head = "" if leads else "No row names a winner: "
    tail = (" It repeats the training-time test (throughput is derived from epoch time), "
            "so it is not counted as an answer of its own." if derived else "")
    return f"{head}{words}.{tail}"


#: The columns that tie a verdicts table's pair rows to their answer row.
ANSWER_KEY = ("question", "run_id", "device", "group")


def _key(row: Mapping) -> tuple[str, ...]:
    return tuple(str(row[c]) for c in ANSWER_KEY)


def compared_answers(frame: pd.DataFrame) -> pd.DataFrame:
    """The answer rows of the question tables that test pairs (more than one contender
    measured); a parity answer (the same model from the same start) tests nothing and the
    accuracy answers of their own rules (OWN_RULES) have sections of their own (a stored
    question no longer asked still counts)."""
    with_pairs = {_key(r) for r in frame[frame["row"] == "pair"].to_dict("records")}
    answers = frame[(frame["row"] == "answer")
                    & ~frame["question"].astype(str).isin(OWN_RULES)
                    & (frame["outcome"].astype(str) != PARITY)]
    judged = [i for i, r in enumerate(answers.to_dict("records")) if _key(r) in with_pairs]
    return answers.iloc[judged]  # by position: an empty list must not select columns


def answer_tables(frame: pd.DataFrame, machines: Mapping[tuple[str, str], str],
                  apart: Mapping[tuple, dict] | None = None,
                  batches: BatchIndex | None = None, medians: Medians | None = None,
                  judged_today: frozenset[str] = frozenset()) -> list[dict]:
    """One table per question with compared answers, in question order; `batches` (the
    release's cells) labels each row with the batch its values were measured at, `medians`
    (the summary's) gives the best's own value, and a question in `judged_today` says it was
    judged at this build, not published with the release."""
    answers = frame[frame["row"] == "answer"]
    pairs = frame[frame["row"] == "pair"]
    tables = []
    for question in QUESTIONS:
        mine = answers[answers["question"] == question.key]
        mine_pairs = pairs[pairs["question"] == question.key]
        by_answer = {key: group for key, group in mine_pairs.groupby(
            [mine_pairs[c].astype(str) for c in ANSWER_KEY])}
        compared = [a for a in mine.to_dict("records") if _key(a) in by_answer]
        if not compared:
            continue
        contenders = set(mine_pairs["contender_a"].astype(str)) | set(
            mine_pairs["contender_b"].astype(str))
        columns = _columns(contenders, question.contest)
        rows = [_row(a, by_answer[_key(a)], columns, question, machines, apart or {},
                     batches or {}, medians or {}) for a in compared]
        tables.append({"key": question.key, "title": question.title,
                       "experiment": question.experiment,
                       "columns": [contender_label(question.contest, c) for c in columns],
                       "rows": rows, "legend": _legend(question.metric),
                       "unit": _unit(question.metric),
                       "best_header": _best_header(question.metric)
                       if any(r["best"] for r in rows) else "",
                       "compile": is_compile_question(question),
                       "judged_today": question.key in judged_today,
                       "sentence": _sentence(rows, bool(question.derived_from),
                                             question.contest),
                       "unmeasured": len(mine) - len(compared)})
    return tables


def answer_counts(frame: pd.DataFrame) -> dict:
    """Answers that test something of their own (a derived metric's repeat not counted)."""
    compared = compared_answers(frame)
    compared = compared[compared["derived_from"].fillna("").astype(str) == ""]
    winners = compared["outcome"] == Outcome.WINNER.value
    return {"tested": len(compared), "winners": int(winners.sum())}


def answer_outcomes(frame: pd.DataFrame) -> dict[str, int]:
    """How the answers that test something of their own came out: the page's one count of
    tested answers and its split into winners, no difference and inconclusive."""
    compared = compared_answers(frame)
    compared = compared[compared["derived_from"].fillna("").astype(str) == ""]
    outcome = compared["outcome"].astype(str)
    return {"total": len(compared), "winner": int((outcome == Outcome.WINNER.value).sum()),
            "tied": int((outcome == Outcome.NO_MEANINGFUL_DIFFERENCE.value).sum()),
            "inconclusive": int((outcome == Outcome.INCONCLUSIVE.value).sum())}
