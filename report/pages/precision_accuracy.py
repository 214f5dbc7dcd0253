"""The answer to "does reduced precision cost accuracy?" as the home page and the precision
experiment's page show it (templates/_precision_accuracy.md.j2): per machine and workload,
each system's mean fp32 and reduced-precision accuracy over the same seeds, the paired change
with its interval, and the decision of dlbench.core.judging.precision_accuracy's rule."""

from __future__ import annotations

from collections.abc import Mapping

from dlbench.core.judging.outcomes import PRECISION_ANSWER
from dlbench.core.storage.schema import system_label
from dlbench.report.inputs.labelled import machine_label
from dlbench.report.inputs.source import Source
from dlbench.report.pages.defaults_accuracy import points
from dlbench.report.render.labels import workload_label
from dlbench.report.verdicts.precision_answers import PrecisionAnswer, precision_answers


def change_interval(found: PrecisionAnswer) -> tuple[float, float, float] | None:
    """The reduced precision's paired change against fp32 (reduced minus fp32) and its
    interval, from the rule's pair (whose difference is its leader's minus the other's)."""
    judged = found.answer.judged
    if judged is None or not judged.pairs:
        return None
    pair = judged.pairs[0]
    if judged.leader == found.answer.precision:
        return pair.difference, pair.low, pair.high
    return -pair.difference, -pair.high, -pair.low


def _row(found: PrecisionAnswer) -> dict:
    change = change_interval(found)
    return {"system": system_label(found.system), "precision": found.answer.precision,
            "seeds": found.seeds, "fp32": f"{found.fp32_mean:.3f}",
            "reduced": f"{found.reduced_mean:.3f}",
            "change": points(change[0]) if change else "—",
            "interval": f"{points(change[1])} to {points(change[2])}" if change else "—",
            "decision": found.answer.outcome.value, "reason": found.answer.reason}


def sentence(answers: list[PrecisionAnswer]) -> str:
    """One machine and workload's answers in one sentence: the systems of each outcome."""
    said = []
    for outcome in PRECISION_ANSWER:
        systems = [system_label(a.system) for a in answers if a.answer.outcome is outcome]
        if systems:
            precisions = sorted({a.answer.precision for a in answers
                                 if a.answer.outcome is outcome})
            said.append(f"{'/'.join(precisions)} {outcome.value} in {', '.join(systems)}")
    return "; ".join(said)


def precision_block(answers: list[PrecisionAnswer], environment: Mapping) -> dict:
    """What the template needs of one run, device and workload's answers."""
    first = answers[0]
    judged = next((a.answer.judged for a in answers if a.answer.judged), None)
    return {"machine": machine_label(dict(environment), first.device),
            "workload": workload_label(first.workload, first.device), "rows": [_row(a) for a in answers],
            "sentence": sentence(answers),
            "threshold": points(judged.threshold, signed=False) if judged else "",
            "test_samples": judged.test_samples if judged else 0}


def precision_blocks(source: Source) -> list[dict]:
    """Every precision accuracy answer of the source, one block per run, device and
    workload, ready for the template."""
    environments = {run.run_id: run.environment for run in source.runs}
    groups: dict[tuple[str, str, str], list[PrecisionAnswer]] = {}
    for found in precision_answers(source.observations, source.cells):
        groups.setdefault((found.run_id, found.device, found.workload), []).append(found)
    return [precision_block(answers, environments.get(run_id) or {})
            for (run_id, _, _), answers in groups.items()]
