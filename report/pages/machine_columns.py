"""The home page's answers when a release holds several machines: one table per question with
a column per machine and the line saying where each answer holds
(dlbench/core/judging/where_it_holds.py is the rule; this module reads it from a verdicts table and
words it)."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping

import pandas as pd

from dlbench.core.declarations.metrics import Direction
from dlbench.core.judging.verdict_engine import QUESTIONS, metric_direction
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.where_it_holds import (Lead, MachineAnswer,
                                                 WhereItHolds, lead_range, where_it_holds)
from dlbench.core.text.words import plural
from dlbench.report.inputs.labelled import Machine, format_number, told_apart
from dlbench.report.pages.answer_tables import UNDECIDED, TIED, advantage, group_label
from dlbench.report.render.labels import contender_label
from dlbench.report.render.user_text import plain_text

def _float(value: object) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan
    return number


def lead_of(pair: Mapping, direction: Direction) -> Lead:
    """How many times better the pair's first side (the best) is, with its interval."""
    return Lead(*advantage(pair, direction))


def machine_answers(frame: pd.DataFrame, names: Mapping[Machine, str],
                    kinds: Mapping[Machine, str] | None = None
                    ) -> dict[tuple[str, str], list[MachineAnswer]]:
    """(question, group key) -> each machine's answer, machines in `names`' order, each
    naming its kind (`kinds`; each machine its own kind where not given)."""
    answers = frame[frame["row"] == "answer"].to_dict("records")
    pairs = frame[frame["row"] == "pair"].to_dict("records")
    order = {machine: index for index, machine in enumerate(names)}
    found: dict[tuple[str, str], list[tuple[int, MachineAnswer]]] = {}
    for answer in answers:
        machine = (str(answer["run_id"]), str(answer["device"]))
        if machine not in names:
            continue
        key = (str(answer["question"]), str(answer.get("group_key") or answer["group"]))
        direction = metric_direction(str(answer["metric"]))
        leads = {str(p["contender_b"]): lead_of(p, direction) for p in pairs
                 if (p["question"], p["run_id"], p["device"], p["group"])
                 == (answer["question"], answer["run_id"], answer["device"], answer["group"])}
        threshold = _float(answer.get("threshold"))
        found.setdefault(key, []).append((order[machine], MachineAnswer(
            names[machine], Outcome(str(answer["outcome"])),
            str(answer.get("contender_a") or ""),
            str(answer.get("winner") or ""), leads,
            threshold if not math.isnan(threshold) else 0.05,
            (kinds or names).get(machine, names[machine]))))
    return {key: [a for _, a in sorted(listed, key=lambda item: item[0])]
            for key, listed in found.items()}


def _times(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{format_number(value)}x"


#: The outcome of a parity answer (systems started from the same weights and data): a
#: parity result on each machine, never a verdict to read across machines.
PARITY = Outcome.PARITY


def _machine_cell(answer: MachineAnswer | None, contest: str = "system") -> str:
    """One machine's answer in a cell: the decided winner in bold with its lead over the
    closest other, ≈ for no meaningful difference, ? after an undecided best, – unmeasured."""
    if answer is None or not answer.answered:
        return "–"
    if answer.outcome is PARITY:
        return "same model"
    closest = min(answer.leads.values(), key=lambda lead: lead.value, default=None)
    lead = f" {_times(closest.value)}" if closest else ""
    if answer.outcome is Outcome.WINNER:
        return f"**{contender_label(contest, answer.winner)}**{lead}"
    if answer.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE:
        return f"{TIED} {contender_label(contest, answer.best)}{lead}"
    return f"{contender_label(contest, answer.best)} {UNDECIDED}{lead}"


def _names(answers: tuple[MachineAnswer, ...]) -> str:
    return ", ".join(a.machine for a in answers)


def _kinds(count: int) -> str:
    return "both machine kinds" if count == 2 else f"all {count} machine kinds"


def _tied_or_undecided(outcome: Outcome) -> str:
    """An answer that named no winner, in the where-it-holds line's words."""
    return outcome.value if outcome is Outcome.NO_MEANINGFUL_DIFFERENCE else "not decided"


def holds_words(reading: WhereItHolds, contest: str = "system") -> str:
    """The 'where it holds' line of one answer, counting machine kinds (two runs of one
    kind are its replicates) and saying whether each kind's runs agree, its contenders in
    words (a system, a runtime, a path, a mode)."""
    answered, count = reading.answered, len(reading.answered)
    winner = contender_label(contest, reading.winner)
    span = lead_range(reading)
    leads = "" if span is None else (f" (leads {_times(span[0])})" if span[0] == span[1]
                                     else f" (leads {_times(span[0])}–{_times(span[1])})")
    margin = _margin_words(reading, contest)
    if reading.holds is Outcome.ONE_MACHINE:
        words = "measured on one machine kind only: too few kinds to say where it holds"
    elif reading.holds is Outcome.EVERYWHERE:
        words = f"{winner} on {_kinds(count)}{leads}"
    elif reading.holds is Outcome.MARGIN_DEPENDS:
        words = (f"{winner} on {_kinds(count)}, by a margin that depends on the kind"
                 f"{margin}")
    elif reading.holds is Outcome.WINNER_DEPENDS:
        words = "the winner depends on the machine kind: " + "; ".join(
            f"{contender_label(contest, a.winner)} on {a.machine}" if a.outcome is Outcome.WINNER
            else f"{a.outcome.value if a.outcome is not Outcome.INCONCLUSIVE else 'not decided'}"
                 f" on {a.machine}"
            for a in answered)
    elif reading.holds is Outcome.WHERE_DECIDED:
        decided = tuple(a for a in answered if a.outcome is Outcome.WINNER)
        rest = "; ".join(f"{_tied_or_undecided(a.outcome)} on {a.machine}"
                         for a in answered if a.outcome is not Outcome.WINNER)
        words = (f"{winner} on {len(decided)} of {count} machine kinds ({_names(decided)})"
                 f"{leads}{', by a margin that depends on the kind' + margin if margin else ''}"
                 f"; {rest}")
    elif reading.holds is Outcome.NO_DIFFERENCE_EVERYWHERE:
        words = f"no meaningful difference on {_kinds(count)}"
    else:
        words = f"decided on none of the {plural(count, 'machine kind')}"
    missing = reading.not_answered
    return (words + (f"; not measurable on {_names(missing)}" if missing else "")
            + _replication_words(reading))


def _margin_words(reading: WhereItHolds, contest: str) -> str:
    """' (against X: 1.26x on kind A; 2.41x on kind B)' where a lead differs between kinds."""
    against = reading.margin_against
    if not against:
        return ""
    each = "; ".join(f"{_times(a.leads[against].value)} on {a.machine}"
                     for a in reading.answered
                     if a.outcome is Outcome.WINNER and against in a.leads)
    return f" (against {contender_label(contest, against)}: {each})"


def _replication_words(reading: WhereItHolds) -> str:
    """'; its 2 runs agree on Intel Xeon...' for each kind measured more than once."""
    said = []
    for kind, agree in reading.replicated:
        runs = sum(r.kind_name == kind and r.answered for r in reading.runs)
        said.append(f"its {runs} runs {'agree' if agree else 'disagree'} on {kind}")
    return "".join(f"; {line}" for line in said)


def machine_tables(frame: pd.DataFrame, names: Mapping[Machine, str],
                   kinds: Mapping[Machine, str] | None = None) -> list[dict]:
    """One table per question with answers: a row per group, a column per machine, and where
    each answer holds across machine kinds (`kinds`: each machine's kind in words)."""
    by_group = machine_answers(frame, names, kinds)
    columns = list(dict.fromkeys(names.values()))
    tables = []
    for question in QUESTIONS:
        mine = {group: answers for (key, group), answers in by_group.items()
                if key == question.key}
        rows = []
        for group, answers in sorted(mine.items(), key=lambda item: _label(item[0], question.contest)):
            if not any(a.answered and a.leads for a in answers):
                continue  # one contender on every machine: nothing was compared
            cells = {a.machine: _machine_cell(a, question.contest) for a in answers}
            parity = all(a.outcome is PARITY for a in answers if a.answered)
            reading = where_it_holds(answers)
            rows.append({"label": _label(group, question.contest),
                         "cells": [cells.get(c, "–") for c in columns],
                         "holds": "a parity result on each machine (the systems started from "
                                  "the same weights and data), not a verdict" if parity
                         else holds_words(reading, question.contest),
                         "outcome": "parity" if parity else reading.holds.value,
                         "margin_against": "" if parity else reading.margin_against})
        if rows:
            tables.append({"key": question.key, "title": question.title, "columns": columns,
                           "rows": rows})
    return tables


def _label(group_key: str, contest: str) -> str:
    try:
        json.loads(group_key)
    except ValueError:
        return group_key
    return group_label(group_key, "cpu", contest)


def depends_on_machine(tables: list[dict]) -> list[dict]:
    """The answers whose winner or margin depends on the machine kind (a margin compared
    wherever two kinds decided the winner), for the release notes."""
    return [{"title": t["title"], "label": r["label"], "holds": r["holds"]} for t in tables
            for r in t["rows"] if r["outcome"] == Outcome.WINNER_DEPENDS.value
            or r.get("margin_against")]


def machine_names(machines: Mapping[Machine, str]) -> dict[Machine, str]:
    """Each machine's words (`machines`: (run, device) -> its hardware in words) as inert
    text (a run's record comes from another machine), made unique within the release: a
    kind measured twice is told apart by its run (told_apart)."""
    return told_apart({machine: plain_text(hardware) for machine, hardware in machines.items()})
