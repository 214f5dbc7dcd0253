"""Home-page verdicts: for each question (dlbench/core/judging/verdict_questions.yaml) and device,
who is best, as frozen records; the templates write the words.

The families, the looks and the rule are dlbench's (verdict_engine, decisions, sequential);
this module adds what a page needs around them: what the device cannot show
(dlbench/core/judging/conditions.py), the regime, and the outcome of each answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from dlbench.core.judging.decisions import CEILINGS, processes_needed
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.regime import Regime
from dlbench.core.declarations.metrics import METRICS, Direction
from dlbench.core.judging.same_start import parity_words, same_start_parity
from dlbench.core.storage.schema import system_label
from dlbench.core.judging.sequential import Design, design_from_policy
from dlbench.core.judging.verdict_engine import (
    QUESTIONS,
    Control,
    Pairing,
    Question,
    Standing,
    cell_samples,
    judge_controls,
    judge_group,
    metric_direction,
    noise_floors,
    question_groups,
    repeat_rows,
    threshold_for,
    unmeasurable,
)
from dlbench.core.machine.achieved import cell_fractions
from dlbench.core.judging.conditions import regime_of_cells


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
    outcome: Outcome
    winner: str | None
    leaders: tuple[str, ...]  # the best and every contender it does not beat meaningfully
    standings: tuple[Standing, ...]  # best first
    pairings: tuple[Pairing, ...]  # the best against every other contender
    regime: Regime
    peak_fraction: float  # achieved fraction of the measured peak (nan if not recorded)
    reason: str = ""  # why there is no winner, when it is known
    threshold: float = 0.05  # the family's practical threshold (>= the A/A noise floor)
    derived_from: str = ""  # the question whose test this verdict repeats
    needed: int | None = None  # processes per cell that would decide it, when inconclusive

    @property
    def evidence(self) -> tuple[str, ...]:
        """The cell IDs this verdict rests on."""
        return tuple(standing.cell_id for standing in self.standings)

    @property
    def tested(self) -> bool:
        """Whether this verdict is a test of its own (not a derived metric's repeat)."""
        return (bool(self.pairings) and not self.derived_from
                and self.outcome is not Outcome.PARITY)


@dataclass(frozen=True)
class Verdicts:
    """Every verdict of a page, and the A/A controls judged beside them."""

    answers: list[Verdict]
    controls: list[Control]


def lead_outcome(best: str, pairings: tuple[Pairing, ...]) -> tuple[Outcome, str]:
    """Winner when the best beats every other; inconclusive when a pair cannot decide
    (undecided at this many processes, or untestable); else no meaningful difference."""
    decisions = [p.judgement.decision for p in pairings]
    if all(d is Outcome.A_BETTER for d in decisions):
        return Outcome.WINNER, ""
    unsure = [p for p in pairings
              if p.judgement.decision in (Outcome.INCONCLUSIVE, Outcome.UNDECIDED)]
    if unsure:
        pair = unsure[0]
        return Outcome.INCONCLUSIVE, (f"{system_label(best)} against "
                                             f"{system_label(pair.other)}: "
                                             f"{pair.judgement.reason}")
    tied = [p for p in pairings if p.judgement.decision is not Outcome.A_BETTER]
    return Outcome.NO_MEANINGFUL_DIFFERENCE, (f"{system_label(best)} against "
                                                     f"{system_label(tied[0].other)}: "
                                                     f"{tied[0].judgement.reason}")


def _needed(pairings: tuple[Pairing, ...]) -> int | None:
    """Processes per cell that would decide every undecided pair, at the observed spread."""
    counts = [processes_needed(p.judgement.test, p.judgement.threshold, p.judgement.alpha)
              for p in pairings if p.judgement.decision is Outcome.UNDECIDED]
    if not counts:
        return None
    return None if None in counts else max(c for c in counts if c is not None)


@dataclass(frozen=True)
class Context:
    """What every group of a page is judged with."""

    environments: Mapping[str, Mapping]
    designs: Mapping[str, Design]
    fractions: Mapping
    floors: Mapping[tuple[str, str, str], float]


def _decide(question: Question, key: tuple, rows: pd.DataFrame, context: Context) -> Verdict:
    metric = METRICS.get(question.metric)
    direction = metric_direction(question.metric)
    run_id, device, *values = (str(v) for v in key)
    base = dict(question=question.key, title=question.title, metric=question.metric,
                unit=metric.unit if metric else "", direction=direction, run_id=run_id,
                device=device, group=tuple(zip(question.group_by, values, strict=True)),
                derived_from=question.derived_from)
    rows, reason = unmeasurable(question, rows, device, context.environments.get(run_id) or {})
    threshold = threshold_for(context.floors, run_id, question.experiment, question.metric)
    design = context.designs.get(run_id) or design_from_policy(None)
    ranked, pairings = judge_group(rows, question.contest, question.metric, design, threshold)
    regime, fraction = regime_of_cells(context.fractions, [(run_id, s.cell_id) for s in ranked])
    needed = None
    if reason and len(ranked) < 2:
        outcome = Outcome.NOT_MEASURABLE
    elif len(ranked) < 2:
        outcome = Outcome.INSUFFICIENT_DATA
        reason = "only " + ", ".join(s.contender for s in ranked) + " measured"
    elif question.parity:
        samples = cell_samples(rows)
        outcome, reason = Outcome.PARITY, parity_words(same_start_parity(
            {s.cell_id: (samples[s.cell_id].processes, samples[s.cell_id].values)
             for s in ranked}, CEILINGS.get(question.metric)))
    else:
        outcome, why = lead_outcome(ranked[0].contender, pairings)
        reason = "; ".join(r for r in (why, reason) if r)
        needed = _needed(pairings) if outcome is Outcome.INCONCLUSIVE else None
    beaten = {p.other for p in pairings if p.judgement.decision is Outcome.A_BETTER}
    leaders = tuple(s.contender for s in ranked if s.contender not in beaten)
    return Verdict(**base, outcome=outcome, leaders=leaders,
                   winner=ranked[0].contender if outcome is Outcome.WINNER else None,
                   standings=tuple(ranked), pairings=pairings, regime=regime,
                   peak_fraction=fraction, reason=reason, threshold=threshold, needed=needed)


def _context(observations: pd.DataFrame, cells: pd.DataFrame, rows: pd.DataFrame,
             environments: Mapping[str, Mapping], designs: Mapping[str, Design],
             questions: tuple[Question, ...]) -> tuple[Context, list[Control]]:
    controls = [c for run_id, design in (designs.items() or [("", design_from_policy(None))])
                for c in judge_controls(rows[rows["run_id"].astype(str) == run_id]
                                        if run_id else rows, cells, design, questions)]
    context = Context(environments, designs, cell_fractions(observations, cells, environments),
                      noise_floors(controls, rows))
    return context, controls


def judge_page(observations: pd.DataFrame, cells: pd.DataFrame,
               questions: tuple[Question, ...] = QUESTIONS,
               environments: Mapping[str, Mapping] | None = None,
               processes: pd.DataFrame | None = None,
               designs: Mapping[str, Design] | None = None) -> Verdicts:
    """Every question's verdicts, in question order, and the page's A/A controls. Each run is
    judged at the looks of its own design (`designs`, by run ID; one look otherwise)."""
    environments = environments or {}
    rows = repeat_rows(observations, cells, processes)
    if designs is None:
        designs = {str(r): design_from_policy(None) for r in set(rows["run_id"].astype(str))}
    context, controls = _context(observations, cells, rows, environments, designs, questions)
    answers = [_decide(question, key, group, context) for question in questions
               for key, group in question_groups(rows, question)]
    return Verdicts(answers, controls)


def verdicts(observations: pd.DataFrame, cells: pd.DataFrame,
             questions: tuple[Question, ...] = QUESTIONS,
             environments: Mapping[str, Mapping] | None = None,
             processes: pd.DataFrame | None = None,
             designs: Mapping[str, Design] | None = None) -> list[Verdict]:
    """Every question's verdicts, in question order."""
    return judge_page(observations, cells, questions, environments, processes, designs).answers


def answer(question: Question, observations: pd.DataFrame, cells: pd.DataFrame,
           environments: Mapping[str, Mapping] | None = None) -> list[Verdict]:
    """The verdicts of one question: one per run, device and group that has data."""
    return verdicts(observations, cells, (question,), environments)

