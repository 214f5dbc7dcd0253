"""The answer to "does the framework you use change accuracy?" as the home page and the
defaults-accuracy experiment's page show it (templates/_defaults_accuracy.md.j2): per
machine and task, each system's mean accuracy, the leader's paired difference from each other
system with its interval, the decision, the settings that differ by default, and every system
that could not be run with its defaults, with why."""

from __future__ import annotations

import math

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.defaults_accuracy import AccuracyPair, equals_of_leader
from dlbench.core.storage.schema import system_label
from dlbench.report.inputs.source import Source
from dlbench.report.inputs.labelled import machine_label, machine_labels
from dlbench.report.render.labels import reason_label, status_label
from dlbench.report.verdicts.defaults_answers import DefaultsAnswer, defaults_answers


def points(value: float, signed: bool = True) -> str:
    """An accuracy difference in points: 0.0123 -> '+1.2 points'."""
    if math.isnan(value):
        return "n/a"
    return f"{100 * value:{'+' if signed else ''}.1f}"


def _pair_row(pair: AccuracyPair) -> dict:
    return {"difference": points(pair.difference),
            "interval": f"{points(pair.low)} to {points(pair.high)}",
            "seeds": pair.seeds, "decision": pair.outcome.value,
            "test_error": points(pair.test_error, signed=False),
            "seed_error": points(pair.seed_error, signed=False)}


def sentence(found: DefaultsAnswer) -> str:
    """The answer in one sentence."""
    answer, threshold = found.answer, points(found.answer.threshold, signed=False)
    leader = system_label(answer.leader) if answer.leader else ""
    if answer.outcome is Outcome.WINNER:
        return (f"**{leader}** is more accurate with its defaults than every other system, by "
                f"more than {threshold} points at every interval's lower end.")
    if answer.outcome is Outcome.NO_MEANINGFUL_DIFFERENCE:
        equals = [system_label(s) for s in equals_of_leader(answer)]
        below = [system_label(p.other) for p in answer.pairs if p.other not in
                 equals_of_leader(answer)]
        if not below:
            return f"**No meaningful difference**: every interval lies within ±{threshold} points."
        return (f"**No meaningful difference among {', '.join(equals)}**: their intervals lie "
                f"within ±{threshold} points; {', '.join(below)} less accurate by more than "
                f"that.")
    pair = next((p for p in answer.pairs if p.outcome is Outcome.UNDECIDED), None)
    if answer.outcome is Outcome.UNDECIDED and pair is None:
        return f"**Undecided**: {answer.reason}."
    if answer.outcome is Outcome.UNDECIDED:
        return (f"**Undecided**: {leader} against {system_label(pair.other)}, "
                f"{points(pair.low)} to {points(pair.high)} points, reaches across the "
                f"±{threshold}-point threshold: more seeds or a larger test set could tell.")
    if answer.outcome is Outcome.AT_CEILING:
        return "**The task cannot tell them apart**: every process of every system scored 1.0."
    if answer.outcome is Outcome.AT_CHANCE:
        return f"**No system learned the task**: {answer.reason}."
    return f"**Insufficient data**: {answer.reason}."


def _system_rows(found: DefaultsAnswer) -> list[dict]:
    pairs = {p.other: p for p in found.answer.pairs}
    rows = []
    for standing in found.answer.systems:
        pair = pairs.get(standing.system)
        rows.append({"system": system_label(standing.system),
                     "accuracy": f"{standing.mean:.3f}", "seeds": standing.seeds,
                     "leader": standing.system == found.answer.leader,
                     "pair": _pair_row(pair) if pair else None, "not_run": ""})
    rows += [{"system": system_label(n.system), "accuracy": "—", "seeds": 0, "leader": False,
              "pair": None, "not_run": f"{status_label(n.status, n.reason)}: "
                                       f"{reason_label(n.status, n.reason)}"}
             for n in found.not_run]
    return rows


def defaults_block(found: DefaultsAnswer, machine: str) -> dict:
    """What the template needs of one answer, measured on `machine` (its run's machine
    label: dlbench.report.inputs.labelled.machine_labels)."""
    systems = [system_label(s) for s, _ in found.differing[0][1]] if found.differing else []
    return {
        "machine": machine,
        "task": found.task, "outcome": found.answer.outcome.value,
        "sentence": sentence(found), "rows": _system_rows(found),
        "leader": system_label(found.answer.leader) if found.answer.leader else "",
        "confidence": (f"{found.answer.confidence:.2%}" if not math.isnan(
            found.answer.confidence) else ""),
        "test_samples": found.answer.test_samples,
        "threshold": points(found.answer.threshold, signed=False),
        "differing_systems": systems,
        "differing": [{"setting": setting, "values": [v for _, v in values]}
                      for setting, values in found.differing],
    }


def defaults_blocks(source: Source) -> list[dict]:
    """Every defaults-accuracy answer of the source, ready for the template."""
    labels = machine_labels(source)
    return [defaults_block(found, labels.get((found.run_id, found.device))
                           or machine_label({}, found.device))
            for found in defaults_answers(source.observations, source.cells)]
