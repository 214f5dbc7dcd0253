"""Home-page verdicts: for each question (report/questions.yaml) and device, who is best.

Pure functions: a release's tables in, frozen records out; the templates write the words.
Every pair is judged by dlbench.judging (Holm over the page, a 5% practical threshold).

- Only per-repeat values (rows without a step) of cells with status ok are used.
- One verdict per question, run (machine), device and group (workload, batch size, ...).
- Like with like: frameworks are compared within a mode class (dlbench.modes), default mode
  with default mode and fastest with fastest, each comparison labelled with its class; a
  mode of neither class is not compared across frameworks.
- A contender with several cells in a group is represented by its best cell.
- The best contender is compared with every other one; it wins only when it beats each.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from dlbench.judging import Decision, Family, Judgement, Regime, judge_together
from dlbench.metrics import METRICS, Direction
from dlbench.modes import OTHER, mode_class
from dlbench.schema import system_name
from dlbench.stats import Summary, summarize
from report.conditions import (
    Need,
    cell_fractions,
    half_precision_reason,
    regime_of_cells,
    two_devices_reason,
    working_memory_reason,
)
from report.targets import reached_target_only

QUESTIONS_FILE = Path(__file__).with_name("questions.yaml")


@dataclass(frozen=True)
class Question:
    """One home-page question: which contender is best for a metric of an experiment."""

    key: str
    title: str
    experiment: str
    metric: str
    contest: str = "system"  # the column whose values compete: system, precision, mode
    group_by: tuple[str, ...] = ("workload", "batch_size", "mode_class")
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()  # column -> allowed values
    needs: tuple[Need, ...] = ()
    stand_in: str = ""  # rows of this metric show the question was asked, not decidable


def load_questions(path: Path = QUESTIONS_FILE) -> tuple[Question, ...]:
    """The home page's questions, in page order."""
    questions = []
    for raw in yaml.safe_load(path.read_text())["questions"]:
        raw = dict(raw)
        raw["where"] = tuple((str(k), tuple(str(v) for v in vs))
                             for k, vs in sorted((raw.get("where") or {}).items()))
        raw["group_by"] = tuple(raw.get("group_by") or Question.group_by)
        raw["needs"] = tuple(Need(n) for n in raw.get("needs") or ())
        questions.append(Question(**raw))
    return tuple(questions)


QUESTIONS: tuple[Question, ...] = load_questions()


class VerdictOutcome(enum.Enum):
    """What a verdict can say."""

    WINNER = "winner"
    NO_MEANINGFUL_DIFFERENCE = "no meaningful difference"
    INCONCLUSIVE = "inconclusive"
    NOT_MEASURABLE = "not measurable here"
    INSUFFICIENT_DATA = "insufficient data"


@dataclass(frozen=True)
class Standing:
    """One contender's best cell in a group and the summary of its repeats."""

    contender: str
    cell_id: str
    summary: Summary


@dataclass(frozen=True)
class Pairing:
    """The best contender judged against one other."""

    other: str
    judgement: Judgement

    @property
    def advantage(self) -> float:
        """How many times better the best is than the other (>= 1 when it leads)."""
        ratio = self.judgement.ratio
        if self.judgement.comparison.direction is Direction.LOWER:
            return 1 / ratio if ratio else float("nan")
        return ratio


@dataclass(frozen=True)
class Verdict:
    """The answer to one question for one machine, device and group, with its uncertainty."""

    question: str
    title: str
    metric: str
    unit: str
    direction: Direction
    run_id: str
    device: str
    group: tuple[tuple[str, str], ...]
    outcome: VerdictOutcome
    winner: str | None
    leaders: tuple[str, ...]  # the best and every contender it does not beat meaningfully
    standings: tuple[Standing, ...]  # best first
    pairings: tuple[Pairing, ...]  # the best against every other contender
    regime: Regime
    peak_fraction: float  # achieved fraction of the measured peak (nan if not recorded)
    reason: str = ""  # why there is no winner, when it is known

    @property
    def evidence(self) -> tuple[str, ...]:
        """The cell IDs this verdict rests on."""
        return tuple(standing.cell_id for standing in self.standings)


def with_system(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the `system` column (the framework, or keras-<backend> for Keras) and the
    `mode_class` column (default, fastest or other: dlbench.modes)."""
    systems = [system_name(f, b)
               for f, b in zip(frame["framework"], frame["backend"], strict=True)]
    classes = [mode_class(str(e), str(f), str(m)) for e, f, m in
               zip(frame["experiment"], frame["framework"], frame["mode"], strict=True)]
    return frame.assign(system=pd.Series(systems, index=frame.index, dtype="object"),
                        mode_class=pd.Series(classes, index=frame.index, dtype="object"))


def like_with_like(rows: pd.DataFrame, group_by: tuple[str, ...]) -> pd.DataFrame:
    """Rows that may be compared across frameworks: when comparisons are grouped by mode
    class, a mode that is neither a default nor a fastest one is left out."""
    return rows[rows["mode_class"] != OTHER] if "mode_class" in group_by else rows


def repeat_rows(observations: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Per-repeat values of cells that finished ok, with a `system` column."""
    ok = cells.loc[cells["status"] == "ok", ["run_id", "cell_id"]]
    rows = observations[observations["step"].isna() & observations["value"].notna()]
    rows = rows.merge(ok, on=["run_id", "cell_id"], how="inner")
    return with_system(rows)


def standings(rows: pd.DataFrame, contest: str, direction: Direction) -> list[Standing]:
    """Each contender's best cell in `rows`, best contender first."""
    sign = -1.0 if direction is Direction.HIGHER else 1.0
    best: dict[str, Standing] = {}
    for (contender, cell_id), cell_rows in rows.groupby([contest, "cell_id"], sort=True):
        standing = Standing(str(contender), str(cell_id), summarize(cell_rows["value"]))
        current = best.get(standing.contender)
        if current is None or sign * standing.summary.median < sign * current.summary.median:
            best[standing.contender] = standing
    return sorted(best.values(), key=lambda s: (sign * s.summary.median, s.contender))


def cell_values(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The repeat values of each cell in `rows`."""
    return {str(cell): group["value"].to_numpy() for cell, group in rows.groupby("cell_id")}


def judge_lead(family: Family, key: tuple, ranked: list[Standing], values: dict[str, np.ndarray],
               direction: Direction) -> tuple[Pairing, ...]:
    """The best standing judged against every other one (one shared family of pairs)."""
    best = ranked[0]
    return tuple(Pairing(other.contender, family.judge(
        (*key, best.cell_id, other.cell_id), values[best.cell_id], values[other.cell_id],
        direction)) for other in ranked[1:])


def lead_outcome(best: str, pairings: tuple[Pairing, ...]) -> tuple[VerdictOutcome, str]:
    """Winner when the best beats every other; inconclusive when a pair cannot decide
    (undecided at this many processes, or identical repeats); else no meaningful difference."""
    decisions = [p.judgement.decision for p in pairings]
    if all(d is Decision.A_BETTER for d in decisions):
        return VerdictOutcome.WINNER, ""
    unsure = [p for p in pairings
              if p.judgement.decision in (Decision.INCONCLUSIVE, Decision.UNDECIDED)]
    if unsure:
        pair = unsure[0]
        return VerdictOutcome.INCONCLUSIVE, f"{best} against {pair.other}: {pair.judgement.reason}"
    tied = [p for p in pairings if p.judgement.decision is not Decision.A_BETTER]
    return VerdictOutcome.NO_MEANINGFUL_DIFFERENCE, tied[0].judgement.reason


def _select(rows: pd.DataFrame, question: Question) -> pd.DataFrame:
    metrics = {question.metric, question.stand_in} - {""}
    rows = rows[(rows["experiment"] == question.experiment) & rows["metric"].isin(metrics)]
    for column, allowed in question.where:
        rows = rows[rows[column].astype(str).isin(allowed)]
    return like_with_like(rows, question.group_by)


def unmeasurable(question: Question, rows: pd.DataFrame, device: str,
                 environment: Mapping) -> tuple[pd.DataFrame, str]:
    """The rows the device can decide, and the reason for the rest (empty when none)."""
    reasons = []
    for need in question.needs:
        whole = (two_devices_reason(device, environment) if need is Need.TWO_DEVICES else
                 working_memory_reason(set(rows["metric"])) if need is Need.WORKING_MEMORY
                 else None)
        if whole:
            rows, reasons = rows.iloc[:0], [*reasons, whole]
        if need is Need.HALF_PRECISION_UNITS:
            for precision in sorted(set(rows["precision"].astype(str))):
                reason = half_precision_reason(precision, device, environment)
                if reason:
                    rows = rows[rows["precision"].astype(str) != precision]
                    reasons.append(reason)
    return rows[rows["metric"] == question.metric], "; ".join(r for r in reasons if r)


def _decide(family: Family, question: Question, key: tuple, rows: pd.DataFrame,
            environment: Mapping, fractions: Mapping) -> Verdict:
    metric = METRICS.get(question.metric)
    direction = metric.direction if metric else Direction.LOWER
    run_id, device, *values = (str(v) for v in key)
    base = dict(question=question.key, title=question.title, metric=question.metric,
                unit=metric.unit if metric else "", direction=direction, run_id=run_id,
                device=device, group=tuple(zip(question.group_by, values, strict=True)))
    rows, reason = unmeasurable(question, rows, device, environment)
    ranked = standings(rows, question.contest, direction) if len(rows) else []
    regime, fraction = regime_of_cells(fractions, [(run_id, s.cell_id) for s in ranked])
    if reason and len(ranked) < 2:
        outcome, pairings = VerdictOutcome.NOT_MEASURABLE, ()
    elif len(ranked) < 2:
        outcome, pairings = VerdictOutcome.INSUFFICIENT_DATA, ()
        reason = "only " + ", ".join(s.contender for s in ranked) + " measured"
    else:
        pairings = judge_lead(family, (question.key, run_id, question.metric), ranked,
                              cell_values(rows), direction)
        outcome, why = lead_outcome(ranked[0].contender, pairings)
        reason = "; ".join(r for r in (why, reason) if r)
    beaten = {p.other for p in pairings if p.judgement.decision is Decision.A_BETTER}
    leaders = tuple(s.contender for s in ranked if s.contender not in beaten)
    return Verdict(**base, outcome=outcome, leaders=leaders,
                   winner=ranked[0].contender if outcome is VerdictOutcome.WINNER else None,
                   standings=tuple(ranked), pairings=pairings, regime=regime,
                   peak_fraction=fraction, reason=reason)


Prepared = tuple[pd.DataFrame, Mapping]  # repeat_rows and cell_fractions of a release


def prepare(observations: pd.DataFrame, cells: pd.DataFrame,
            environments: Mapping[str, Mapping]) -> Prepared:
    """What every question reads from a release's tables, computed once for all of them."""
    return repeat_rows(observations, cells), cell_fractions(observations, cells, environments)


def answer(question: Question, observations: pd.DataFrame, cells: pd.DataFrame,
           environments: Mapping[str, Mapping] | None = None,
           family: Family | None = None, prepared: Prepared | None = None) -> list[Verdict]:
    """The verdicts of one question: one per run, device and group that has data."""
    environments = environments or {}
    every_row, fractions = prepared or prepare(observations, cells, environments)
    rows = reached_target_only(_select(every_row, question), every_row)
    keys = ["run_id", "device", *question.group_by]

    def evaluate(judging: Family) -> list[Verdict]:
        return [_decide(judging, question, key, group, environments.get(str(key[0])) or {},
                        fractions)
                for key, group in rows.groupby(keys, sort=True, dropna=False)]

    return evaluate(family) if family is not None else judge_together(evaluate)


def verdicts(observations: pd.DataFrame, cells: pd.DataFrame,
             questions: tuple[Question, ...] = QUESTIONS,
             environments: Mapping[str, Mapping] | None = None) -> list[Verdict]:
    """Every question's verdicts, in question order, judged as one family (the page)."""
    prepared = prepare(observations, cells, environments or {})
    return judge_together(lambda family: [
        v for question in questions
        for v in answer(question, observations, cells, environments, family, prepared)])
