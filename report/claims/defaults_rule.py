"""The claim rule kind `defaults_accuracy`: the defaults-accuracy experiment's answer to "does
the framework you use change accuracy?" (dlbench/core/judging/defaults_accuracy.py), per machine,
device and task.

Each system trained with its own framework's defaults, seed by seed, on one test set: the
claim that the frameworks reach about the same accuracy is supported when no system differs
meaningfully from the leader (every pair within the threshold), contradicted when one does
(the leader ahead by more than the threshold), and inconclusive otherwise (a pair undecided,
every value at the ceiling, too few seeds). Where the home page's verdicts table holds the
same answer (stored with a release, or this build's), its decisions are taken, so the two
pages never disagree. The accuracy of systems started from the same weights and data is a
parity result (the frameworks compute the same model), never this claim's evidence.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

import pandas as pd

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.storage.schema import system_label
from dlbench.report.claims.context import Context, per_device
from dlbench.report.claims.vocabulary import Finding, Rule
from dlbench.report.verdicts.defaults_answers import (DECISIONS, QUESTION, DefaultsAnswer,
                                                      defaults_answers)

Key = tuple[str, str]
#: (run, device, workload) -> (the answer's outcome, ((other system, decision), ...)), as a
#: verdicts table holds them.
DecidedAnswers = Mapping[tuple[str, str, str], tuple[str, tuple[tuple[str, str], ...]]]
#: What a device without the experiment's cells says.
NOT_RUN = ("nothing was trained with each framework's own defaults on this device (that "
           "experiment did not run here), and accuracy from the same weights and data is a "
           "parity result, not this claim")


def _points(value: float, signed: bool = True) -> str:
    """An accuracy difference in points: 0.0123 -> '+1.2'."""
    return f"{100 * value:{'+' if signed else ''}.1f}"


def _workload(row: Mapping) -> str:
    try:
        return str(json.loads(str(row.get("group_key") or "{}")).get("workload", ""))
    except ValueError:
        return ""


def decided_answers(verdicts: pd.DataFrame | None) -> DecidedAnswers:
    """The defaults-accuracy answers of a verdicts table (stored or this build's): each
    answer's outcome and each pair's decision, by run, device and workload."""
    if verdicts is None or verdicts.empty or "question" not in verdicts:
        return {}
    mine = verdicts[verdicts["question"].astype(str) == QUESTION].to_dict("records")
    keys = {id(r): (str(r["run_id"]), str(r["device"]), _workload(r)) for r in mine}
    return {keys[id(answer)]: (str(answer["outcome"]), tuple(
        (str(p["contender_b"]), str(p["decision"])) for p in mine
        if p["row"] == "pair" and keys[id(p)] == keys[id(answer)]))
        for answer in mine if answer["row"] == "answer"}


def claim_outcome(outcome: str, decisions: Iterable[str]) -> Outcome:
    """The claim from an answer's outcome and its pairs' decisions (the leader is side A):
    contradicted when the leader is ahead of any system, supported when every pair is within
    the threshold, else inconclusive."""
    decisions = set(decisions)
    if Outcome.A_BETTER.value in decisions:
        return Outcome.CONTRADICTED
    if (outcome == Outcome.NO_MEANINGFUL_DIFFERENCE.value
            and decisions == {Outcome.NO_MEANINGFUL_DIFFERENCE.value}):
        return Outcome.SUPPORTED
    return Outcome.INCONCLUSIVE


#: The claim's outcome in words after the numbers.
#: (Never 'system <word>': the page reads that as a system's key: report/render/labels.py.)
WORDS = {Outcome.SUPPORTED: "none of the systems differs meaningfully from the leader",
         Outcome.CONTRADICTED: "one of the systems differs meaningfully from the leader",
         Outcome.INCONCLUSIVE: "undecided"}


def _finding(found: DefaultsAnswer, decided: tuple | None) -> Finding:
    """One task's answer as the claim reads it, what was compared in words."""
    answer = found.answer
    outcome, decisions = decided or (answer.outcome.value, tuple(
        (p.other, DECISIONS[p.outcome].value) for p in answer.pairs))
    verdict = claim_outcome(outcome, (d for _, d in decisions))
    seeds = sorted({s.seeds for s in answer.systems}) or [0]
    compared = (f"{found.task}: trained with each framework's own defaults, "
                f"{seeds[0]}{f' to {seeds[-1]}' if len(seeds) > 1 else ''} seeds each, "
                f"paired by seed, one test set of {answer.test_samples} samples")
    means = "mean test accuracy " + ", ".join(f"{system_label(s.system)} {s.mean:.3f}"
                                              for s in answer.systems)
    pairs = [f"{system_label(answer.leader)} minus {system_label(p.other)} "
             f"{_points(p.difference)} points ({_points(p.low)} to {_points(p.high)})"
             for p in answer.pairs]
    why = _why(found, outcome) if verdict is Outcome.INCONCLUSIVE else ""
    told = (f"{WORDS[verdict]}{f' ({why})' if why else ''}, threshold "
            f"±{_points(answer.threshold, signed=False)} points"
            + (", as the home page decides it" if decided else ""))
    return Finding(verdict, "; ".join([compared, means, *pairs, told]),
                   tuple(cell for _, cell in found.cells))


def _why(found: DefaultsAnswer, outcome: str) -> str:
    """Why an answer decides nothing, in words."""
    if outcome == Outcome.UNDECIDED.value and not found.answer.reason:
        return "an interval reaches across the threshold: more seeds or a larger test set " \
               "could tell"
    if outcome == found.answer.outcome.value and found.answer.reason:
        return found.answer.reason
    return outcome


def defaults_accuracy(rule: Rule, context: Context, family: object = None) -> dict[Key, Finding]:
    """Findings per (machine, device): each task's answer, the home page's decisions where
    the context's verdicts table held them; a device where the experiment did not run says
    so. (`family` is unused: the answer has its own rule.)"""
    decided = context.defaults
    return per_device(context, ((answer.run_id, answer.device, _finding(answer, decided.get(
        (answer.run_id, answer.device, answer.workload))))
        for answer in defaults_answers(context.observations, context.cells)),
        rule.combine, NOT_RUN)
