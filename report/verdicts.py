"""Home-page verdicts: for each question and device, which contender is best, and how sure.

Pure functions: a release's observations and cells tables in, frozen records out. The site
renders them. A difference that is not significant (see dlbench.stats: Mann-Whitney p < 0.05
and a ratio interval that excludes 1) is "no significant difference", never a winner.

Rules, stated once:
- Only per-repeat values (rows without a step) of cells with status ok are used.
- One verdict per question, run (machine), device and group (workload, batch size, ...).
- A contender with several cells in a group (for example a framework's eager and compiled
  inference variants) is represented by its best cell: "the fastest variant of each".
- The best contender is compared with the runner-up, or, for questions with a baseline
  (precision, compile), with the baseline.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import pandas as pd

from dlbench.metrics import METRICS, Direction
from dlbench.schema import system_name
from dlbench.stats import Summary, compare_samples, summarize


@dataclass(frozen=True)
class Question:
    """One home-page question: which contender is best for a metric of an experiment."""

    key: str
    title: str
    experiment: str
    metric: str
    contest: str = "system"  # the column whose values compete: system, precision, mode
    group_by: tuple[str, ...] = ("workload", "batch_size")
    where: tuple[tuple[str, tuple[str, ...]], ...] = ()  # column -> allowed values
    #: compare the best with the baseline rather than the runner-up; several names when the
    #: baseline is spelt differently per framework (eager, run_eagerly)
    baseline: tuple[str, ...] = ()


QUESTIONS: tuple[Question, ...] = (
    Question("training-speed", "Which framework trains fastest?", "training",
             "steady_epoch_time", where=(("precision", ("fp32",)),)),
    Question("training-throughput", "Which framework processes the most training samples "
             "per second?", "training", "train_throughput", where=(("precision", ("fp32",)),)),
    Question("accuracy", "Which framework reaches the highest test accuracy?", "training",
             "test_accuracy", where=(("precision", ("fp32",)),)),
    Question("peak-memory", "Which framework needs the least memory to train?", "training",
             "peak_memory", where=(("precision", ("fp32",)),)),
    Question("inference-latency", "Which framework answers one request fastest?",
             "inference", "latency_p50", where=(("precision", ("fp32",)),)),
    Question("inference-throughput", "Which framework serves the most samples per second?",
             "inference", "inference_throughput", where=(("precision", ("fp32",)),)),
    Question("precision-speedup", "Does reduced precision train faster than fp32?",
             "precision", "steady_epoch_time", contest="precision",
             group_by=("workload", "batch_size", "system"), baseline=("fp32",)),
    Question("precision-memory", "Does reduced precision need less memory than fp32?",
             "precision", "peak_memory", contest="precision",
             group_by=("workload", "batch_size", "system"), baseline=("fp32",)),
    Question("compile-speedup", "Does graph or compiled mode make training steps faster than "
             "eager?", "execution-mode", "steady_step_time", contest="mode",
             group_by=("workload", "batch_size", "system"), baseline=("eager", "run_eagerly")),
    Question("scaling-efficiency", "Which framework's data parallelism scales best?",
             "data-parallel", "scaling_efficiency",
             group_by=("workload", "batch_size", "workers")),
    Question("export-latency", "Which framework's exported model answers fastest in its own "
             "runtime?", "export", "artifact_latency"),
)


class VerdictOutcome(enum.Enum):
    """What a verdict can say."""

    WINNER = "winner"
    NO_SIGNIFICANT_DIFFERENCE = "no significant difference"
    INSUFFICIENT_DATA = "insufficient data"


@dataclass(frozen=True)
class Standing:
    """One contender's best cell in a group and the summary of its repeats."""

    contender: str
    cell_id: str
    summary: Summary


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
    runner_up: str | None
    advantage: float  # >= 1 when significant: how many times better the winner is
    advantage_ci_low: float
    advantage_ci_high: float
    p_value: float
    standings: tuple[Standing, ...]  # best first
    sentence: str
    note: str = ""

    @property
    def evidence(self) -> tuple[str, ...]:
        """The cell IDs this verdict rests on."""
        return tuple(standing.cell_id for standing in self.standings)


def with_system(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the `system` column: the framework, or keras-<backend> for Keras."""
    systems = [system_name(f, b)
               for f, b in zip(frame["framework"], frame["backend"], strict=True)]
    return frame.assign(system=pd.Series(systems, index=frame.index, dtype="object"))


def repeat_rows(observations: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Per-repeat values of cells that finished ok, with a `system` column."""
    ok = cells.loc[cells["status"] == "ok", ["run_id", "cell_id"]]
    rows = observations[observations["step"].isna() & observations["value"].notna()]
    rows = rows.merge(ok, on=["run_id", "cell_id"], how="inner")
    return with_system(rows)


def _select(rows: pd.DataFrame, question: Question) -> pd.DataFrame:
    rows = rows[(rows["experiment"] == question.experiment) & (rows["metric"] == question.metric)]
    for column, allowed in question.where:
        rows = rows[rows[column].astype(str).isin(allowed)]
    return rows


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


def _claim(best: str, other: str, ratio: float, metric: str, unit: str,
           direction: Direction) -> str:
    """E.g. 'pytorch is 1.26× faster than tensorflow' or '... has 1.30× lower peak_memory'."""
    if unit in ("s", "ms", "us") or unit.endswith("/s"):
        return f"{best} is {ratio:.2f}× faster than {other}"
    word = "lower" if direction is Direction.LOWER else "higher"
    return f"{best} has {ratio:.2f}× {word} {metric} than {other}"


def _where(run_id: str, device: str, group: tuple[tuple[str, str], ...]) -> str:
    details = ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in group)
    return f"On {device} (run {run_id}; {details})"


def _opponent(ranked: list[Standing], baseline: tuple[str, ...]) -> Standing | None:
    """The runner-up; for a question with a baseline, the baseline unless it is the best."""
    if len(ranked) < 2:
        return None
    if not baseline or ranked[0].contender in baseline:
        return ranked[1]
    return next((s for s in ranked if s.contender in baseline), None)


def _decide(question: Question, key: tuple, group_rows: pd.DataFrame) -> Verdict:
    metric = METRICS[question.metric]
    run_id, device, *values = (str(v) for v in key)
    group = tuple(zip(question.group_by, values, strict=True))
    ranked = standings(group_rows, question.contest, metric.direction)
    where = _where(run_id, device, group)
    base = dict(question=question.key, title=question.title, metric=metric.name,
                unit=metric.unit, direction=metric.direction, run_id=run_id, device=device,
                group=group, standings=tuple(ranked))
    best, other = ranked[0], _opponent(ranked, question.baseline)
    if other is None:
        names = ", ".join(s.contender for s in ranked)
        has_baseline = any(s.contender in question.baseline for s in ranked)
        missing = (f" (no {' or '.join(question.baseline)} cell)"
                   if question.baseline and not has_baseline else "")
        return Verdict(**base, outcome=VerdictOutcome.INSUFFICIENT_DATA, winner=None,
                       runner_up=None, advantage=math.nan, advantage_ci_low=math.nan,
                       advantage_ci_high=math.nan, p_value=math.nan,
                       sentence=f"{where}, only {names} measured{missing}: nothing to compare.")
    return _verdict_between(base, where, best, other, group_rows, question)


def _verdict_between(base: dict, where: str, best: Standing, other: Standing,
                     group_rows: pd.DataFrame, question: Question) -> Verdict:
    metric = METRICS[question.metric]
    values = {cell: rows["value"].to_numpy() for cell, rows in group_rows.groupby("cell_id")}
    a, b = values[best.cell_id], values[other.cell_id]
    if metric.direction is Direction.LOWER:
        comparison = compare_samples(b, a, metric.direction)
    else:
        comparison = compare_samples(a, b, metric.direction)
    numbers = (f"95% CI {comparison.ratio_ci_low:.2f}–{comparison.ratio_ci_high:.2f}×, "
               f"p={comparison.p_value:.2g}; medians {best.summary.median:.4g} vs "
               f"{other.summary.median:.4g} {metric.unit}")
    if comparison.significant:
        outcome, winner = VerdictOutcome.WINNER, best.contender
        claim = _claim(best.contender, other.contender, comparison.ratio, metric.name,
                       metric.unit, metric.direction)
        sentence = f"{where}: {claim} ({numbers})."
    else:
        outcome, winner = VerdictOutcome.NO_SIGNIFICANT_DIFFERENCE, None
        sentence = (f"{where}: no significant difference in {metric.name} between "
                    f"{best.contender} and {other.contender} (ratio {comparison.ratio:.2f}×, "
                    f"{numbers}).")
    return Verdict(**base, outcome=outcome, winner=winner, runner_up=other.contender,
                   advantage=comparison.ratio, advantage_ci_low=comparison.ratio_ci_low,
                   advantage_ci_high=comparison.ratio_ci_high, p_value=comparison.p_value,
                   sentence=sentence, note=comparison.note)


def answer(question: Question, observations: pd.DataFrame, cells: pd.DataFrame) -> list[Verdict]:
    """The verdicts of one question: one per run, device and group that has data."""
    rows = _select(repeat_rows(observations, cells), question)
    keys = ["run_id", "device", *question.group_by]
    return [_decide(question, key, group_rows)
            for key, group_rows in rows.groupby(keys, sort=True, dropna=False)]


def verdicts(observations: pd.DataFrame, cells: pd.DataFrame,
             questions: tuple[Question, ...] = QUESTIONS) -> list[Verdict]:
    """Every question's verdicts, in question order; questions without data give none."""
    return [v for question in questions if question.metric in METRICS
            for v in answer(question, observations, cells)]
