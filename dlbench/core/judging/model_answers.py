"""The answers for a user's own model (`dlbench run --model`): which backend and mode run it
fastest, judged by the one verdict engine (dlbench/core/judging/verdict_engine.py: its families,
Holm, looks and A/A noise floor) with questions of their own, and its parity result.

Shared by the runner (which prints the answers and tops up undecided pairs) and the report
(the model's page); pure pandas.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from dlbench.core.judging.sequential import Design
from dlbench.core.judging.summaries import per_process
from dlbench.core.declarations.systems import label
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.verdict_engine import (Pairing, Question, Standing, groups,
                                                 judge_controls, judge_group, noise_floors,
                                                 repeat_rows, select, threshold_for)

INFERENCE, TRAINING, PARITY = "model-inference", "model-training", "model-parity"
_BY_PATH = ("workload", "batch_size")
_BY_MODE = ("workload", "batch_size", "mode")

#: The questions of a user's model: the fastest path overall (each backend and mode is a
#: contender), then the fastest backend within each mode.
MODEL_QUESTIONS: tuple[Question, ...] = (
    Question("model-latency", "Fastest for one request (batch 1, median latency)", INFERENCE,
             "latency_p50", contest="cell_id", group_by=_BY_PATH),
    Question("model-throughput", "Fastest in bulk (throughput at the model's batch)",
             INFERENCE, "inference_throughput", contest="cell_id", group_by=_BY_PATH),
    Question("model-training", "Fastest training step", TRAINING, "steady_step_time",
             contest="cell_id", group_by=_BY_PATH),
    Question("model-latency-mode", "Fastest backend for one request, mode by mode", INFERENCE,
             "latency_p50", group_by=_BY_MODE),
    Question("model-throughput-mode", "Fastest backend in bulk, mode by mode", INFERENCE,
             "inference_throughput", group_by=_BY_MODE),
    Question("model-training-mode", "Fastest backend per training step, mode by mode",
             TRAINING, "steady_step_time", group_by=_BY_MODE),
)

#: How an answer names a mode of a user's model.
MODE_WORDS = {"predict": "predict", "jit_compile": "jit_compile=True",
              "default": "compiled as given", "eager": "eager", "compiled": "torch.compile",
              "onnxruntime": "ONNX Runtime", "openvino": "OpenVINO"}


@dataclass(frozen=True)
class Answer:
    """One question's group, judged: the standings (best first) and the best against each."""

    question: Question
    group: dict
    standings: tuple[Standing, ...]
    pairings: tuple[Pairing, ...]
    names: dict[str, str]  # contender -> its words

    def sentence(self) -> str:
        """The answer as the site words it."""
        return answer_sentence(self)


#: Systems only a user's model runs on, in words (the built-ins' are declared with them).
SYSTEM_WORDS = {"keras-openvino": "Keras on OpenVINO"}


def system_words(system: str) -> str:
    """'Keras on JAX'."""
    return SYSTEM_WORDS.get(system) or label(system)


def path_words(system: str, mode: str) -> str:
    """'Keras on JAX, jit_compile=True'."""
    return f"{system_words(system)}, {MODE_WORDS.get(mode, mode)}"


def model_answers(observations: pd.DataFrame, cells: pd.DataFrame,
                  processes: pd.DataFrame | None, design: Design) -> list[Answer]:
    """Every question's groups with two or more contenders, judged."""
    rows = repeat_rows(observations, cells, processes)
    if rows.empty:
        return []
    floors = noise_floors(judge_controls(rows, cells, design, MODEL_QUESTIONS), rows)
    answers = []
    for question in MODEL_QUESTIONS:
        picked = select(rows, question)
        for key, group in groups(picked, question):
            threshold = threshold_for(floors, str(key[0]), question.experiment,
                                      question.metric)
            ranked, pairings = judge_group(group, question.contest, question.metric, design,
                                           threshold)
            if len(ranked) < 2:
                continue
            names = _names(group, question.contest)
            answers.append(Answer(question, dict(zip(question.group_by, key[2:], strict=True)),
                                  tuple(ranked), pairings, names))
    return answers


def _names(rows: pd.DataFrame, contest: str) -> dict[str, str]:
    first = rows.drop_duplicates(contest)
    if contest == "system":
        return {str(s): system_words(str(s)) for s in first["system"]}
    return {str(c): path_words(str(s), str(m)) for c, s, m in
            zip(first[contest], first["system"], first["mode"], strict=True)}


def answer_sentence(answer: Answer) -> str:
    """'On this machine your model runs fastest on X: 1.80x faster than Y, interval
    1.50-2.10x; 6 processes each', or what keeps it from being decided."""
    best = answer.standings[0]
    name = answer.names.get(best.contender, best.contender)
    mode = f" ({MODE_WORDS.get(str(answer.group['mode']), answer.group['mode'])})" \
        if "mode" in answer.group else ""
    parts = [_pair_words(p, answer.names.get(p.other, p.other)) for p in answer.pairings]
    lead = f"On this machine your model runs fastest{mode} on {name}"
    if not all(p.judgement.decision is Outcome.A_BETTER for p in answer.pairings):
        lead = f"On this machine your model measured fastest{mode} on {name}, not decided " \
               "against every other"
    return f"{lead}: {'; '.join(parts)}; {_processes(best.summary.n)}."


#: How a pair's decision reads after its ratio.
_VERDICT_WORDS = {Outcome.NO_MEANINGFUL_DIFFERENCE: "no meaningful difference from",
                  Outcome.UNDECIDED: "undecided against",
                  Outcome.INCONCLUSIVE: "inconclusive against"}


def _pair_words(pairing: Pairing, other: str) -> str:
    judgement = pairing.judgement
    advantage = pairing.advantage
    if math.isnan(advantage):
        return f"{judgement.decision.value} against {other} ({judgement.reason or 'no ratio'})"
    low, high = pairing.advantage_interval()
    interval = f", interval {low:.2f}-{high:.2f}x" \
        if math.isfinite(low) and math.isfinite(high) else ""
    if judgement.decision is Outcome.A_BETTER:
        return f"{advantage:.2f}x faster than {other}{interval}"
    words = _VERDICT_WORDS.get(judgement.decision, "against")
    return f"{words} {other} ({advantage:.2f}x{interval})"


def _processes(n: int) -> str:
    if n < 2:
        return "1 process each (a preview: no interval to decide with)"
    return f"{n} processes each"


def no_answer_reason(cells: pd.DataFrame, processes: pd.DataFrame | None) -> str:
    """Why a model run has no answer, in words."""
    timed = cells[cells["experiment"].isin([INFERENCE, TRAINING]) & (cells["status"] == "ok")]
    if timed.empty:
        return "No answer: no timed cell finished (the parity result and the failures say why)."
    if processes is not None and len(processes) and "busy" in processes:
        mine = processes[processes["cell_id"].isin(set(timed["cell_id"]))]
        if len(mine) and (mine["busy"].fillna("").astype(str) != "").all():
            return ("No answer: every timed process was measured on a busy machine and stayed "
                    "flagged busy, so the verdict rule leaves it out; measure again on a quiet "
                    "machine.")
    return "No answer: no question had two measured systems or modes to compare."


def parity_table(cells: pd.DataFrame, observations: pd.DataFrame) -> pd.DataFrame:
    """One row per parity cell: system, mode, status, max differences, tolerance, passed,
    and the reason of a cell that did not finish."""
    mine = cells[cells["experiment"] == PARITY]
    rows, scalar = [], per_process(observations)
    for _, cell in mine.iterrows():
        values = scalar[scalar["cell_id"] == cell["cell_id"]]
        metric = dict(zip(values["metric"], values["value"], strict=True))
        system = f"keras-{cell['backend']}" if cell["framework"] == "keras" \
            else str(cell["framework"])
        rows.append({"system": system, "mode": cell["mode"], "status": cell["status"],
                     "max_abs": metric.get("parity_forward_max_abs"),
                     "max_rel": metric.get("parity_forward_max_rel"),
                     "tolerance": metric.get("parity_tolerance"),
                     "passed": bool(metric.get("parity_pass", 0.0)),
                     "reason": cell.get("reason", "") or ""})
    return pd.DataFrame(rows, columns=["system", "mode", "status", "max_abs", "max_rel",
                                       "tolerance", "passed", "reason"])
