"""What a home-page answer row shows beside its ratios: the best's own value (milliseconds,
samples/s) and, for a compile question, what compiling costs on the first call and after how
many requests it pays that back. Read by (run, cell, metric) at the centre the verdicts rank
and compare: the geometric mean of the processes
(dlbench.core.judging.summaries.geometric_centres)."""

from __future__ import annotations

import math
from collections.abc import Mapping

import pandas as pd

from dlbench.core.judging.summaries import geometric_centres, repeat_values
from dlbench.core.judging.verdict_engine import Question
from dlbench.report.inputs.labelled import format_number

#: (run_id, cell_id, metric) -> the geometric mean of the result's processes.
Medians = Mapping[tuple[str, str, str], float]
#: The contest of a compile question: a system's plain path against its production one.
COMPILE_CONTEST = "mode_class"


def centres_of(observations: pd.DataFrame) -> dict[tuple[str, str, str], float]:
    """Every result's geometric mean by (run, cell, metric), the value its row ranks by."""
    return geometric_centres(repeat_values(observations))


def best_value(answer: Mapping, question: Question, medians: Medians) -> str:
    """The row's best contender's own value ('21.6', its geometric mean), '' where none."""
    cell = str(answer.get("cell_a") or "")
    value = medians.get((str(answer["run_id"]), cell, question.metric_of(cell)))
    return "" if value is None or math.isnan(value) else format_number(value)


def is_compile_question(question: Question) -> bool:
    """Whether a question sets a framework's plain serving path against its compiled one."""
    return question.contest == COMPILE_CONTEST and question.experiment == "inference"


def compile_cost(answer: Mapping, pairs: pd.DataFrame, question: Question,
                 medians: Medians) -> dict[str, str]:
    """The first call of the plain and the production path (s), and after how many requests
    (or samples, for throughput) the production path's steady gain pays back its first
    call: 'never' where it is not faster."""
    run = str(answer["run_id"])
    cells = {str(p["contender_a"]): str(p["cell_a"]) for p in pairs.to_dict("records")}
    cells |= {str(p["contender_b"]): str(p["cell_b"]) for p in pairs.to_dict("records")}
    plain, production = cells.get("default"), cells.get("fastest")
    if not plain or not production:
        return {"first": "", "pays": ""}
    first = [medians.get((run, c, "first_call_time"), math.nan) for c in (plain, production)]
    steady = [medians.get((run, c, question.metric), math.nan) for c in (plain, production)]
    words = (f"{format_number(first[0])} plain, {format_number(first[1])} production"
             if not any(math.isnan(f) for f in first) else "")
    return {"first": words, "pays": _pays_back(first, steady, question.metric)}


def _pays_back(first: list[float], steady: list[float], metric: str) -> str:
    """Requests (latency) or samples (throughput) after which the production path's saving
    per request covers its extra first-call time."""
    if any(math.isnan(v) or v <= 0 for v in first + steady):
        return ""
    extra = first[1] - first[0]
    if metric == "inference_throughput":  # seconds per sample from samples/s
        saving, unit = 1 / steady[0] - 1 / steady[1], "samples"
    else:  # latency in ms
        saving, unit = (steady[0] - steady[1]) / 1000, "requests"
    if saving <= 0:
        return "never: not faster per request"
    if extra <= 0:
        return "at once: its first call costs no more"
    return f"about {math.ceil(extra / saving):,} {unit}"
