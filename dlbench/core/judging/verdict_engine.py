"""Question groups and their families: which pairs each home-page question judges, and how,
at the looks of the run's design (dlbench/core/judging/sequential.py) with the rule of
dlbench/core/judging/decisions.py.

Pure pandas and numpy, shared by the runner (which tops up the cells of undecided pairs after
the first look) and the report (which writes the verdicts).

- Only per-process values (rows without a step) of cells with status ok are used; a process
  that stayed flagged busy after its re-runs is kept in the tables and left out here.
- One family per question group: a question (one metric), run, device and group (workload,
  batch size, mode class, ...). Each contender is represented by its best cell; the best is
  compared with every other contender, and Holm runs within the family. A contender's best
  cell, and the leader, are chosen by the geometric mean: the estimator the ratio tests.
- Metrics paired by seed (accuracy: process k of every system starts from seed k) are
  tested paired by process index; timing is tested unpaired.
- Like with like: frameworks meet within a mode class (dlbench.core.declarations.modes).
- A/A controls (one configuration measured as two cells) are never contenders: each is
  judged as a family of its own. The noise floor of an experiment's metric, below which no
  difference is called meaningful, is a quantile of many A/A estimates: the twins' ratios and
  a split-half pseudo A/A of every cell with enough processes (dlbench/core/judging/noise_floor.py).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from dlbench.core.judging.clusters import split_of
from dlbench.core.judging.conditions import (MODEL_MEMORY, Need, half_precision_reason,
                                             overhead_memory_reason, two_devices_reason,
                                             working_memory_reason)
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.decisions import (CEILINGS, PAIRED_BY_SEED, PRACTICAL_THRESHOLD,
                                            PairDecision, PairTest, decide_family, pair_test)
from dlbench.core.declarations.metrics import METRICS, Direction
from dlbench.core.declarations.modes import DEFAULT, FASTEST, by_class, mode_class
from dlbench.core.judging.noise_floor import noise_floors, threshold_for
from dlbench.core.judging.seeds import cells_with_own_seeds
from dlbench.core.judging.sequential import Design
from dlbench.core.judging.stats import Summary, geometric_mean, summarize
from dlbench.core.judging.summaries import repeat_values
from dlbench.core.declarations.systems import systems_of
from dlbench.core.judging.targets import reached_target_only

QUESTIONS_FILE = Path(__file__).with_name("verdict_questions.yaml")

#: The variant suffix of an A/A control's twin cell (runner/driver/plan/controls.py plans it).
CONTROL_SUFFIX = "aa"
#: Modes that are one configuration under two names, measured as two cells in releases
#: before 2027.02: Keras on JAX jit-compiles by default. (experiment, system) -> modes.
NATURAL_CONTROLS: dict[tuple[str, str], tuple[str, str]] = {
    ("training", "keras-jax"): ("default", "jit_compile"),
    ("execution-mode", "keras-jax"): ("default", "jit_compile"),
}


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
    needs: tuple[str, ...] = ()  # dlbench/core/judging/conditions.py Need values
    stand_in: str = ""  # rows of this metric show the question was asked, not decidable
    derived_from: str = ""  # a question whose test this one's metric repeats (not counted)
    #: the systems start from the same weights and data: a parity answer, never a verdict
    #: (dlbench.core.judging.same_start), and no look buys processes for it
    parity: bool = False
    # other experiments whose cells compete too, each read at its own metric (experiment ->
    # metric: a framework's inference throughput beside its exported model's, same unit)
    joins: tuple[tuple[str, str], ...] = ()

    def metric_of(self, cell_id: str) -> str:
        """The metric this question reads of a cell (a joined experiment's own metric)."""
        return dict(self.joins).get(str(cell_id).split(":", 1)[0], self.metric)


def load_questions(path: Path = QUESTIONS_FILE) -> tuple[Question, ...]:
    """The home page's questions, in page order."""
    questions = []
    for raw in yaml.safe_load(path.read_text())["questions"]:
        raw = dict(raw)
        raw["where"] = tuple((str(k), tuple(str(v) for v in vs))
                             for k, vs in sorted((raw.get("where") or {}).items()))
        raw["group_by"] = tuple(raw.get("group_by") or Question.group_by)
        raw["needs"] = tuple(raw.get("needs") or ())
        raw["joins"] = tuple((str(k), str(v)) for k, v in (raw.get("joins") or {}).items())
        questions.append(Question(**raw))
    return tuple(questions)


QUESTIONS: tuple[Question, ...] = load_questions()


@dataclass(frozen=True)
class Standing:
    """One contender's best cell in a group and the summary of its processes."""

    contender: str
    cell_id: str
    summary: Summary
    geometric_mean: float = math.nan  # what leaders are ranked by: the ratio's estimator


@dataclass(frozen=True)
class Pairing:
    """The best contender's cell judged against another contender's."""

    other: str
    other_cell: str
    judgement: PairDecision

    @property
    def advantage(self) -> float:
        """How many times better the best is than the other (>= 1 when it leads)."""
        ratio = self.judgement.ratio
        if self.judgement.test.note and math.isnan(ratio):
            return math.nan
        return 1 / ratio if _lower(self.judgement) else ratio

    def advantage_interval(self) -> tuple[float, float]:
        """The adjusted interval of the advantage."""
        low, high = self.judgement.ci_low, self.judgement.ci_high
        return (1 / high, 1 / low) if _lower(self.judgement) else (low, high)


def _lower(judgement: PairDecision) -> bool:
    return judgement.direction is Direction.LOWER


def with_system(frame: pd.DataFrame) -> pd.DataFrame:
    """Add the `system` column (the framework, or keras-<backend> for Keras) and the
    `mode_class` column (default, fastest or other: dlbench.core.declarations.modes)."""
    systems = systems_of(frame)
    classes = [mode_class(str(e), str(f), str(m)) for e, f, m in
               zip(frame["experiment"], frame["framework"], frame["mode"], strict=True)]
    formats = (frame["export_format"].fillna("").astype(str) if "export_format" in frame
               else pd.Series("", index=frame.index))
    paths = [f or c for f, c in zip(formats, classes, strict=True)]
    return frame.assign(system=pd.Series(systems, index=frame.index, dtype="object"),
                        mode_class=pd.Series(classes, index=frame.index, dtype="object"),
                        path=pd.Series(paths, index=frame.index, dtype="object"))


def like_with_like(rows: pd.DataFrame, group_by: tuple[str, ...]) -> pd.DataFrame:
    """Rows that may be compared across frameworks: when comparisons are grouped by mode
    class, each class's cells (dlbench.core.declarations.modes.by_class: a mode of class other in
    none)."""
    return by_class(rows) if "mode_class" in group_by else rows


def busy_processes(processes: pd.DataFrame | None) -> set[tuple[str, str, int]]:
    """(run, cell, process) of every process that stayed flagged busy."""
    if processes is None or not len(processes) or "busy" not in processes:
        return set()
    flagged = processes[processes["busy"].fillna("").astype(str) != ""]
    return {(str(r), str(c), int(p)) for r, c, p in
            zip(flagged["run_id"], flagged["cell_id"], flagged["repeat"], strict=True)}


def repeat_rows(observations: pd.DataFrame, cells: pd.DataFrame,
                processes: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-process values of cells that finished ok, with `system`, `control` and `own_seed`
    (each process ran a seed of its own: dlbench.core.judging.seeds) columns, without the processes
    that stayed flagged busy."""
    ok = cells.loc[cells["status"] == "ok", ["run_id", "cell_id"]]
    rows = repeat_values(observations)
    rows = rows.merge(ok, on=["run_id", "cell_id"], how="inner")
    busy = busy_processes(processes)
    if busy:
        keys = zip(rows["run_id"].astype(str), rows["cell_id"].astype(str),
                   rows["repeat"].astype(int), strict=True)
        rows = rows[[key not in busy for key in keys]]
    controls = set(control_twins(cells))
    rows = with_system(rows)
    return rows.assign(control=rows["cell_id"].astype(str).isin(controls),
                       own_seed=rows["cell_id"].astype(str).isin(cells_with_own_seeds(cells)))


def control_twins(cells: pd.DataFrame) -> dict[str, str]:
    """Each A/A control cell's ID -> the cell it repeats (from the cell's configuration)."""
    twins: dict[str, str] = {}
    if "config_json" not in cells:
        return twins
    for cell_id, config in zip(cells["cell_id"], cells["config_json"], strict=True):
        if is_control(config):
            twins[str(cell_id)] = twin_of(str(cell_id))
    return twins


def is_control(config_json: object) -> bool:
    """Whether a cell's configuration (its cells-table config_json) marks it as an A/A
    control's twin (runner/driver/plan/controls.py plans it)."""
    return isinstance(config_json, str) and bool(config_json) \
        and bool(json.loads(config_json).get("control"))


def twin_of(control_cell_id: str) -> str:
    """The cell an A/A control repeats: its ID without the control suffix in the variant."""
    parts = control_cell_id.split(":")
    parts[3] = parts[3].removesuffix(f"-{CONTROL_SUFFIX}")
    return ":".join(parts)


def select(rows: pd.DataFrame, question: Question, metrics: set[str] | None = None) -> pd.DataFrame:
    """The contenders' rows a question reads (no A/A control cells)."""
    metrics = metrics or {question.metric}
    chosen = rows[(rows["experiment"] == question.experiment) & rows["metric"].isin(metrics)
                  & ~rows["control"]]
    for experiment, metric in question.joins:  # a framework's plain and production paths
        joined = rows[(rows["experiment"] == experiment) & (rows["metric"] == metric)
                      & ~rows["control"] & rows["mode_class"].isin([DEFAULT, FASTEST])]
        chosen = pd.concat([chosen, joined.assign(metric=question.metric)])
    rows = chosen
    for column, allowed in question.where:
        rows = rows[rows[column].astype(str).isin(allowed)]
    return like_with_like(rows, question.group_by)


def groups(rows: pd.DataFrame, question: Question) -> Iterator[tuple[tuple, pd.DataFrame]]:
    """(run, device, *group values) and the rows of every group of a question."""
    keys = ["run_id", "device", *question.group_by]
    yield from rows.groupby(keys, sort=True, dropna=False)


def question_groups(rows: pd.DataFrame,
                    question: Question) -> Iterator[tuple[tuple, pd.DataFrame]]:
    """Every group a question judges, as `groups` gives them: its contenders' rows with the
    metrics it reads, less the accuracy rows of cells that missed their target (a model at
    chance decides nothing). The pages' answers and the runner's looks both judge these, so
    a look tops up only pairs a page could decide."""
    chosen = select(rows, question, read_metrics(question))
    yield from groups(reached_target_only(chosen, rows), question)


def standings(rows: pd.DataFrame, contest: str, direction: Direction) -> list[Standing]:
    """Each contender's best cell in `rows` by geometric mean, best contender first."""
    sign = -1.0 if direction is Direction.HIGHER else 1.0
    best: dict[str, Standing] = {}
    for (contender, cell_id), cell_rows in rows.groupby([contest, "cell_id"], sort=True):
        values = cell_rows["value"].to_numpy(float)
        standing = Standing(str(contender), str(cell_id), summarize(values),
                            geometric_mean(values))
        current = best.get(standing.contender)
        if current is None or sign * standing.geometric_mean < sign * current.geometric_mean:
            best[standing.contender] = standing
    return sorted(best.values(), key=lambda s: (sign * s.geometric_mean, s.contender))


def cell_values(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The process values of each cell in `rows`."""
    return {str(cell): group["value"].to_numpy() for cell, group in rows.groupby("cell_id")}


@dataclass(frozen=True)
class Sample:
    """One side of a pair: its processes' indices and values, and whether each process ran a
    seed of its own (dlbench.core.judging.seeds)."""

    processes: np.ndarray
    values: np.ndarray
    own_seeds: bool = False


def cell_samples(rows: pd.DataFrame) -> dict[str, Sample]:
    """Each cell's Sample in `rows`."""
    return {str(cell): Sample(_process_indices(group), group["value"].to_numpy(float),
                              "own_seed" in group and bool(group["own_seed"].all()))
            for cell, group in rows.groupby("cell_id")}


def _process_indices(rows: pd.DataFrame) -> np.ndarray:
    """Each row's process index (its position, where a table has no `repeat` column)."""
    if "repeat" in rows and rows["repeat"].notna().all():
        return rows["repeat"].to_numpy(dtype=int)
    return np.arange(len(rows))


def decide_sequential(pairs: list[tuple[Sample, Sample]], direction: Direction,
                      threshold: float, design: Design, paired: bool = False,
                      ceiling: float | None = None) -> list[PairDecision]:
    """Decide a family's pairs, each on every process its two cells hold, at the level of the
    look those processes reach (Holm within the pairs of each look). A pair decided at an
    earlier look whose cells got more processes later (a leader's cell is topped up for
    another pair) is judged again on all of them: the verdict is the one its every process
    gives, never one that its own cells' later processes overturn. With `paired`, each pair
    is tested on the processes both sides have (matched by index); a pair whose every value
    is at the metric's `ceiling` is not tested (decisions.AT_CEILING). A pair with a side
    whose processes split into two clusters (dlbench.core.judging.clusters) is undecided unless its
    decision holds for each cluster alone."""
    reached = [look_reached(a, b, design) for a, b in pairs]
    decided: list[PairDecision | None] = [None] * len(pairs)
    for look in sorted(set(reached)):
        members = [i for i, at in enumerate(reached) if at == look]
        tests = [_test(pairs[i][0], pairs[i][1], paired, ceiling) for i in members]
        for index, decision in zip(members, decide_family(tests, direction, threshold,
                                                          design.alphas[look], look + 1),
                                   strict=True):
            decided[index] = decision if paired else unless_split(decision, *pairs[index])
    return [d for d in decided if d is not None]


def look_reached(a: Sample, b: Sample, design: Design) -> int:
    """The index of the look a pair's processes reach: the first whose cumulative count holds
    every process either side ran (the last look for any beyond it)."""
    held = int(max(a.processes.max(initial=-1), b.processes.max(initial=-1))) + 1
    return next((look for look, limit in enumerate(design.looks) if held <= limit),
                len(design.looks) - 1)


def unless_split(decision: PairDecision, a: Sample, b: Sample) -> PairDecision:
    """The decision, or undecided where a side's processes split into two clusters and the
    decision does not hold for each cluster alone (dlbench.core.judging.clusters)."""
    if decision.decision is Outcome.INCONCLUSIVE:
        return decision
    for side, sample, sign in (("the first side", a, 1), ("the second side", b, -1)):
        split = split_of(sample.values)
        if split and not all(_holds_moved(decision, shift ** sign) for shift in split.shifts):
            return replace(decision, decision=Outcome.UNDECIDED, reason=split.words(side))
    return decision


def _holds_moved(decision: PairDecision, factor: float) -> bool:
    """Whether a decided pair's interval, moved by `factor`, still decides the same way."""
    band = 1 + decision.threshold
    low, high = decision.ci_low * factor, decision.ci_high * factor
    if decision.decision is Outcome.NO_MEANINGFUL_DIFFERENCE:
        return 1 / band <= low and high <= band
    if decision.named:
        return high < 1 / band if decision.ratio < 1 else low > band
    return False


def _test(a: Sample, b: Sample, paired: bool, ceiling: float | None = None) -> PairTest:
    """The pair's test on every process: paired by process index (seed) when asked and both
    sides have two or more processes in common, with identical values exact where both
    sides' processes each ran a seed of their own."""
    if paired:
        common = np.intersect1d(a.processes, b.processes)
        if common.size >= 2:
            return pair_test(_by_process(a, common), _by_process(b, common), paired=True,
                             own_seeds=a.own_seeds and b.own_seeds, ceiling=ceiling)
    return pair_test(a.values, b.values, ceiling=ceiling)


def _by_process(sample: Sample, processes: np.ndarray) -> np.ndarray:
    """The sample's values of `processes`, in that order (the first row of a repeated one)."""
    first = {int(p): float(v) for p, v in zip(sample.processes[::-1], sample.values[::-1],
                                              strict=True)}
    return np.array([first[int(p)] for p in processes])


def metric_direction(metric: str) -> Direction:
    """The better direction of a metric (lower when the registry does not know it)."""
    known = METRICS.get(metric)
    return known.direction if known else Direction.LOWER


def judge_group(rows: pd.DataFrame, contest: str, metric: str, design: Design,
                threshold: float) -> tuple[list[Standing], tuple[Pairing, ...]]:
    """A group's standings and the best judged against every other contender."""
    direction = metric_direction(metric)
    ranked = standings(rows, contest, direction) if len(rows) else []
    if len(ranked) < 2:
        return ranked, ()
    samples = cell_samples(rows)
    best = samples[ranked[0].cell_id]
    decisions = decide_sequential([(best, samples[s.cell_id]) for s in ranked[1:]],
                                  direction, threshold, design, metric in PAIRED_BY_SEED,
                                  CEILINGS.get(metric))
    return ranked, tuple(Pairing(s.contender, s.cell_id, d)
                         for s, d in zip(ranked[1:], decisions, strict=True))


@dataclass(frozen=True)
class Control:
    """An A/A control pair judged: one configuration measured as two cells."""

    run_id: str
    experiment: str
    metric: str
    cell_a: str
    cell_b: str
    natural: bool  # two mode names of one configuration, not a planned twin
    judgement: PairDecision

    @property
    def noise(self) -> float:
        """How far apart the two cells came out: 0.12 means 1.12x."""
        ratio = self.judgement.ratio
        return math.nan if math.isnan(ratio) else max(ratio, 1 / ratio) - 1

    @property
    def named_winner(self) -> bool:
        """True when the rule named one side of the A/A pair better: a false winner."""
        return self.judgement.decision in (Outcome.A_BETTER, Outcome.B_BETTER,
                                           Outcome.DIFFERENT)


def control_pairs(rows: pd.DataFrame, cells: pd.DataFrame) -> list[tuple[str, str, bool]]:
    """(cell A, cell B, natural) of every A/A pair whose two cells both have rows."""
    present = set(rows["cell_id"].astype(str))
    pairs = [(twin, control, False) for control, twin in control_twins(cells).items()
             if twin in present and control in present]
    ok = cells[cells["status"] == "ok"]
    for (experiment, system), (mode_a, mode_b) in NATURAL_CONTROLS.items():
        mine = with_system(ok[ok["experiment"] == experiment])
        mine = mine[mine["system"] == system]
        for cell_id in mine.loc[mine["mode"] == mode_a, "cell_id"].astype(str):
            twin = cell_id.replace(f"-{mode_a}-", f"-{mode_b}-")
            if twin in present and cell_id in present:
                pairs.append((cell_id, twin, True))
    return pairs


def judge_controls(rows: pd.DataFrame, cells: pd.DataFrame, design: Design,
                   questions: tuple[Question, ...] = QUESTIONS) -> list[Control]:
    """Every A/A pair judged, for each metric a question of its experiment reads, at the
    base practical threshold (a control judged at its own noise would be circular)."""
    metrics = {(q.experiment, q.metric) for q in questions}
    found = []
    for cell_a, cell_b, natural in control_pairs(rows, cells):
        pair_rows = rows[rows["cell_id"].astype(str).isin({cell_a, cell_b})]
        for (run_id, experiment, metric), metric_rows in pair_rows.groupby(
                ["run_id", "experiment", "metric"], sort=True):
            if (experiment, metric) not in metrics:
                continue
            samples = cell_samples(metric_rows)
            if cell_a not in samples or cell_b not in samples:
                continue
            decision = decide_sequential([(samples[cell_a], samples[cell_b])],
                                         metric_direction(str(metric)), PRACTICAL_THRESHOLD,
                                         design, str(metric) in PAIRED_BY_SEED,
                                         CEILINGS.get(str(metric)))[0]
            found.append(Control(str(run_id), str(experiment), str(metric), cell_a, cell_b,
                                 natural, decision))
    return found


def read_metrics(question: Question) -> set[str]:
    """The metrics a question's groups are selected with: its own, its stand-in, and the
    model's memory where the question needs it to dominate the runtime's."""
    extra = {MODEL_MEMORY} if Need.MODEL_MEMORY_DOMINATES.value in question.needs else set()
    return {question.metric, question.stand_in, *extra} - {""}


def unmeasurable(question: Question, rows: pd.DataFrame, device: str,
                 environment: Mapping) -> tuple[pd.DataFrame, str]:
    """The rows the device can decide, and the reason for the rest (empty when none)."""
    reasons = []
    for need in (Need(n) for n in question.needs):
        whole = (two_devices_reason(device, environment) if need is Need.TWO_DEVICES else
                 working_memory_reason(set(rows["metric"])) if need is Need.WORKING_MEMORY
                 else None)
        if need is Need.MODEL_MEMORY_DOMINATES and not rows.empty:
            whole = overhead_memory_reason(rows)
        if whole:
            rows, reasons = rows.iloc[:0], [*reasons, whole]
        if need is Need.HALF_PRECISION_UNITS:
            for precision in sorted(set(rows["precision"].astype(str))):
                reason = half_precision_reason(precision, device, environment)
                if reason:
                    rows = rows[rows["precision"].astype(str) != precision]
                    reasons.append(reason)
    return rows[rows["metric"] == question.metric], "; ".join(r for r in reasons if r)


def undecided_cells(observations: pd.DataFrame, cells: pd.DataFrame,
                    processes: pd.DataFrame | None, design: Design,
                    questions: tuple[Question, ...] = QUESTIONS,
                    environments: Mapping[str, Mapping] | None = None) -> set[str]:
    """The cells of every pair (question pairs and A/A controls) still undecided: the ones
    the next look gives more processes. A pair the device cannot decide (`unmeasurable`,
    with each run's environment record) is no pair: no look buys processes for it."""
    rows = repeat_rows(observations, cells, processes)
    controls = judge_controls(rows, cells, design, questions)
    floors = noise_floors(controls, rows)
    open_cells = {cell for c in controls if c.judgement.decision is Outcome.UNDECIDED
                  for cell in (c.cell_a, c.cell_b)}
    for question in (q for q in questions if not q.parity):
        for key, group in question_groups(rows, question):
            group, _ = unmeasurable(question, group, str(key[1]),
                                    (environments or {}).get(str(key[0])) or {})
            if group.empty:
                continue
            threshold = threshold_for(floors, str(key[0]), question.experiment,
                                      question.metric)
            ranked, pairings = judge_group(group, question.contest, question.metric, design,
                                           threshold)
            for pairing in pairings:
                if pairing.judgement.decision is Outcome.UNDECIDED:
                    open_cells |= {ranked[0].cell_id, pairing.other_cell}
    return open_cells
