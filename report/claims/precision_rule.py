"""The claim rule kind `precision_accuracy`: the precision experiment's answer to "does
reduced precision cost accuracy against fp32?" (dlbench/core/judging/precision_accuracy.py), per
machine, device, workload and system.

Each process of a reduced-precision cell trained the workload in that precision and in fp32
from the same weights in the same order, so the two accuracies pair by seed. A claim that
reduced precision may cost accuracy is supported where an answer loses accuracy (fp32 ahead
by more than the rule's threshold), contradicted where every answer decided and none lost,
and inconclusive otherwise (undecided, at the ceiling, fp32 missed its target). Where the
home page's verdicts table holds the same answer (stored with a release, or this build's),
its outcome is taken, so the two pages never disagree.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.storage.schema import system_label
from dlbench.report.claims.context import Context, per_device
from dlbench.report.claims.vocabulary import Finding, Rule
from dlbench.report.verdicts.precision_answers import (QUESTION, PrecisionAnswer,
                                                       precision_answers)

Key = tuple[str, str]
#: (run, device, workload, system) -> the answer's outcome, as a verdicts table holds it.
DecidedPrecision = Mapping[tuple[str, str, str, str], str]
#: What a device without reduced-precision accuracy cells says.
NOT_RUN = ("no workload was trained to its target in reduced precision beside fp32 on this "
           "device (the precision experiment's accuracy cells did not run here)")
#: Each answer's outcome as the claim reads it.
CLAIM = {Outcome.LOSES.value: Outcome.SUPPORTED,
         Outcome.NO_MEANINGFUL_DIFFERENCE.value: Outcome.CONTRADICTED,
         Outcome.GAINS.value: Outcome.CONTRADICTED}


def decided_precision(verdicts: pd.DataFrame | None) -> DecidedPrecision:
    """The precision-accuracy answers of a verdicts table (stored or this build's): each
    answer's outcome by run, device, workload and system."""
    if verdicts is None or verdicts.empty or "question" not in verdicts:
        return {}
    mine = verdicts[(verdicts["question"].astype(str) == QUESTION)
                    & (verdicts["row"].astype(str) == "answer")]
    found = {}
    for row in mine.to_dict("records"):
        group = json.loads(str(row.get("group_key") or "{}"))
        found[(str(row["run_id"]), str(row["device"]), str(group.get("workload", "")),
               str(group.get("system", "")))] = str(row["outcome"])
    return found


def _change(found: PrecisionAnswer) -> str:
    """'; bf16 minus fp32 -5.0 points (-5.6 to -4.4)': the paired change in points and, where
    the rule judged the pair, its interval (the rule states it as the leader's lead)."""
    judged, precision = found.answer.judged, found.answer.precision
    points = round(100 * (found.reduced_mean - found.fp32_mean), 1) + 0.0
    said = f"; {precision} minus fp32 {points:+.1f} points"
    if not judged or not judged.pairs:
        return said
    sign = -1 if judged.leader == "fp32" else 1
    low, high = sorted(100 * sign * v for v in (judged.pairs[0].low, judged.pairs[0].high))
    return f"{said} ({low:+.1f} to {high:+.1f})"


def _finding(found: PrecisionAnswer, decided: str | None) -> Finding:
    """One system's answer on one workload as the claim reads it."""
    answer = found.answer
    outcome = decided or answer.outcome.value
    verdict = CLAIM.get(outcome, Outcome.INCONCLUSIVE)
    told = (f"{found.workload}, {system_label(found.system)}: {found.seeds} seeds trained in "
            f"{answer.precision} and in fp32 from the same weights, paired by seed; mean test "
            f"accuracy fp32 {found.fp32_mean:.3f}, {answer.precision} "
            f"{found.reduced_mean:.3f}{_change(found)}; {outcome}"
            + (f" ({answer.reason})" if answer.reason and verdict is Outcome.INCONCLUSIVE
               else "") + (", as the home page decides it" if decided else ""))
    return Finding(verdict, told, (found.cell_id,))


def precision_accuracy(rule: Rule, context: Context,
                       family: object = None) -> dict[Key, Finding]:
    """Findings per (machine, device): each reduced-precision accuracy answer, the home
    page's outcome where the context's verdicts table held it; a device where no such cell
    ran says so. (`family` is unused: the answer has its own rule.)"""
    decided = context.precision
    return per_device(context, ((answer.run_id, answer.device, _finding(answer, decided.get(
        (answer.run_id, answer.device, answer.workload, answer.system))))
        for answer in precision_answers(context.observations, context.cells)),
        rule.combine, NOT_RUN)
