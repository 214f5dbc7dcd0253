"""The home page: each question's verdicts (report/verdicts.py) per machine, with evidence."""

from __future__ import annotations

import re

import pandas as pd

from dlbench.metrics import get_metric
from dlbench.questions import QUESTIONS as EXPERIMENT_QUESTIONS
from report.experiment_page import experiment_title, result_anchor
from report.source import Source
from report.summary import format_number, machine_label
from report.verdicts import QUESTIONS, Verdict, VerdictOutcome, verdicts


WHERE_PREFIX = re.compile(r"^On \S+ \(run [^;()]+;[^()]*\)(: |, )")


def load_questions() -> dict[str, dict]:
    """The question each experiment answers (dlbench/questions.py), in suite order."""
    return {name: {"question": question} for name, question in EXPERIMENT_QUESTIONS.items()}


def _evidence(verdict: Verdict, experiment: str, ids: dict[tuple, str]) -> str:
    unit = "" if verdict.unit == "fraction" else f" {verdict.unit}"
    parts = []
    for standing in verdict.standings:
        s = standing.summary
        text = (f"{standing.contender}: {format_number(s.median)}{unit} (95% CI "
                f"{format_number(s.ci_low)}–{format_number(s.ci_high)}, n={s.n})")
        result_id = ids.get((verdict.run_id, standing.cell_id, verdict.metric))
        if result_id:
            text += f" [{result_id}](experiments/{experiment}.md#{result_anchor(result_id)})"
        parts.append(text)
    return "<br>".join(parts)


def _answer(verdict: Verdict) -> str:
    """The verdict's sentence, without the place it holds (the machine and group columns say
    it), with its outcome in bold."""
    sentence = WHERE_PREFIX.sub("", verdict.sentence, count=1)
    lead = {VerdictOutcome.WINNER: verdict.winner or "",
            VerdictOutcome.NO_SIGNIFICANT_DIFFERENCE: "no significant difference"}.get(
                verdict.outcome, "")
    if lead and sentence.startswith(lead):
        return f"**{lead}**{sentence[len(lead):]}"
    return f"**{verdict.outcome.value}**: {sentence}"


def _row(verdict: Verdict, source: Source, experiment: str, ids: dict[tuple, str]) -> dict:
    return {
        "machine": machine_label(source.run(verdict.run_id).environment, verdict.device),
        "group": ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in verdict.group),
        "answer": _answer(verdict),
        "evidence": _evidence(verdict, experiment, ids),
    }


def question_blocks(source: Source, summary: pd.DataFrame) -> list[dict]:
    """One block per question that has data in the release, one row per verdict."""
    ids = {(r, c, m): i for r, c, m, i in zip(summary["run_id"], summary["cell_id"],
                                             summary["metric"], summary["result_id"],
                                             strict=True)}
    found = verdicts(source.observations, source.cells)
    blocks = []
    for question in QUESTIONS:
        mine = [v for v in found if v.question == question.key]
        if not mine:
            continue
        metric = get_metric(question.metric)
        blocks.append({
            "title": question.title, "metric_label": metric.label,
            "experiment": experiment_title(question.experiment),
            "page": f"experiments/{question.experiment}.md",
            "rows": [_row(v, source, question.experiment, ids) for v in mine],
        })
    return blocks


def experiment_links(summary: pd.DataFrame, questions: dict[str, dict]) -> list[dict]:
    """Every experiment of the release with its question and page."""
    return [{"title": experiment_title(e), "page": f"experiments/{e}.md",
             "question": (questions.get(e) or {}).get("question", "")}
            for e in sorted(set(summary["experiment"]))]
