"""`dlbench reproduce RESULT_ID`: rerun one published cell here and check it against its interval.

A result ID `<RELEASE>-NNNN` names one (run, cell, metric) of a release (its result_ids.csv,
written when the release was frozen). The cell is rerun with its recorded configuration
(the cells table's config_json) through the runner's single-cell function, stored as a new
run under results/runs/, and judged against the published processes by the one verdict rule
(dlbench.core.judging.decisions): it is reproduced when its new median lies inside the published 95%
interval and the rule names no meaningful difference. When not, the report says what
differs: the framework code, the environment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from dlbench.core.judging.compare import diff_environments
from dlbench.core.declarations.metrics import get_metric
from dlbench.core.storage.schema import CellStatus
from dlbench.core.judging.decisions import PairDecision, judge_pair
from dlbench.core.judging.stats import Summary, summarize
from dlbench.core.judging.summaries import per_process
from dlbench.core.text.errors import LayoutError, ResultsFileError
from dlbench.core.declarations.identity import config_differences, config_id, differences_text
from dlbench.core.storage.layout import load_run, release_dir, release_run_dir, run_dir
from dlbench.core.storage.releases import RESULT_ID, find_result
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord, RunStore


class ReproduceError(ValueError):
    """A result ID that does not name a published result, or data that cannot be read."""


@dataclass(frozen=True)
class PublishedResult:
    """A published result: where it lives, the cell's recorded spec, its repeats."""

    result_id: str
    release: str
    run_id: str
    cell_id: str
    metric: str
    spec: CellSpec
    values: tuple[float, ...]
    code_sha256: str
    environment: dict
    config_json: str  # exactly as published; the rerun uses it unchanged

    @property
    def config_id(self) -> str:
        """The published cell's configuration ID."""
        return config_id(self.config_json)


@dataclass(frozen=True)
class Reproduction:
    """The rerun of a published result and what it says."""

    published: PublishedResult
    published_summary: Summary
    status: CellStatus
    reason: str
    new_run_id: str
    new_summary: Summary | None
    comparison: PairDecision | None  # new against published, by the one verdict rule
    inside: bool
    code_changed: bool
    environment: pd.DataFrame  # key, a (published), b (here)
    config_changes: str = ""  # the parameters the rerun measured differently; "" when none


def _lookup(result_id: str, results_dir: Path) -> pd.Series:
    try:
        return find_result(results_dir, result_id)
    except LayoutError as error:
        raise ReproduceError(str(error)) from None


def load_published(result_id: str, results_dir: Path) -> PublishedResult:
    """The published cell behind a result ID, with its recorded configuration and repeats."""
    row = _lookup(result_id, results_dir)
    release = RESULT_ID.match(result_id)["release"]
    try:
        run = load_run(release_run_dir(release_dir(results_dir, release), row["run_id"]))
        cells, observations = run.tables()
    except (LayoutError, ResultsFileError) as error:
        raise ReproduceError(str(error)) from None
    cell = cells[cells["cell_id"] == row["cell_id"]].iloc[0]
    scalar = per_process(observations)
    mine = scalar[(scalar["cell_id"] == row["cell_id"]) & (scalar["metric"] == row["metric"])]
    return PublishedResult(result_id, release, row["run_id"], row["cell_id"], row["metric"],
                           CellSpec.from_json(cell["config_json"]),
                           tuple(float(v) for v in mine["value"]), str(cell["code_sha256"]),
                           run.environment, str(cell["config_json"]))


def store_records(results_dir: Path, published: PublishedResult, records: list[CellRecord],
                  environment: dict, reproduces: str) -> str:
    """Keep a reproduction's records as a run of its own under results/runs/; its ID."""
    from dlbench.runner.driver.launch.execute import code_of

    stamp = datetime.now(timezone.utc)
    run_id, number = f"{stamp:%Y%m%dT%H%M%SZ}-reproduce", 1
    while run_dir(results_dir, run_id).exists():
        number += 1
        run_id = f"{stamp:%Y%m%dT%H%M%SZ}-reproduce{number}"
    store = RunStore(run_dir(results_dir, run_id))
    store.root.mkdir(parents=True)
    store.save_run_info({"run_id": run_id, "started_at": stamp.isoformat(timespec="seconds"),
                         "device": published.spec.device, "status": "complete",
                         "reproduces": reproduces,
                         "planned_cells": list(dict.fromkeys(r.spec.cell_id for r in records))})
    store.save_environment(environment)
    for record in records:
        relative, text, _ = code_of(record.spec)
        store.save_code(relative, text)
        store.save_record(record)
    store.rebuild_tables()
    return run_id


def judge(published: PublishedResult, record: CellRecord, run_id: str,
          environment: dict) -> Reproduction:
    """Compare a rerun's record with the published result."""
    published_summary = summarize(published.values)
    values = np.array([o.value for o in record.outcome.observations
                       if o.metric == published.metric and o.step is None], dtype=float)
    new_summary = comparison = None
    inside = False
    changes = differences_text(config_differences(published.config_json, record.spec.to_json()))
    if record.outcome.status is CellStatus.OK and values.size:
        new_summary = summarize(values)
        comparison = judge_pair(values, np.asarray(published.values, float),
                                get_metric(published.metric).direction)
        inside = not changes and not comparison.named and (
            published_summary.ci_low <= new_summary.median <= published_summary.ci_high)
    reason = record.outcome.reason or ("" if values.size else
                                       f"the rerun produced no {published.metric} values")
    return Reproduction(
        published=published, published_summary=published_summary,
        status=record.outcome.status, reason=reason, new_run_id=run_id,
        new_summary=new_summary, comparison=comparison, inside=inside,
        code_changed=record.code_sha256 != published.code_sha256,
        environment=diff_environments([published.environment], [environment]),
        config_changes=changes,
    )


def reproduce(result_id: str, results_dir: Path = Path("results"),
              measure: Callable[[CellSpec], CellRecord] | None = None,
              environment: dict | None = None) -> Reproduction:
    """Rerun the cell behind `result_id` on this machine, store it, and judge it.

    `measure` (default: the runner's execute_cell) and `environment` (default: captured
    now) can be given, so the judging can be tested without training a model.
    """
    from dlbench.runner.driver.machine.environment import capture_environment
    from dlbench.runner.driver.launch.execute import PROJECT_ROOT, execute_cell

    published = load_published(result_id, results_dir)
    if published.spec.device == "cuda":
        from dlbench.runner.driver.plan.cells import resolve_device

        if resolve_device("auto") != "cuda":
            raise ReproduceError(f"{result_id} was measured on cuda; this machine has no "
                                 "NVIDIA GPU, so it cannot be reproduced here")
    environment = capture_environment(PROJECT_ROOT) if environment is None else environment
    record = (measure or execute_cell)(published.spec)
    run_id = store_records(results_dir, published, [record], environment, result_id)
    return judge(published, record, run_id, environment)


def _interval(summary: Summary, unit: str) -> str:
    return (f"median {summary.median:.4g} {unit}, 95% CI [{summary.ci_low:.4g}, "
            f"{summary.ci_high:.4g}], n={summary.n}")


def explain(result: Reproduction) -> list[str]:
    """The report as lines: what was rerun, where it landed, and what might explain a miss."""
    published, unit = result.published, get_metric(result.published.metric).unit
    lines = [f"{published.result_id}: {published.cell_id}, {published.metric} "
             f"(release {published.release}, run {published.run_id})",
             f"configuration {published.config_id}: rerun exactly as published "
             f"({_configuration_text(published.config_json)})",
             f"published: {_interval(result.published_summary, unit)}"]
    if result.config_changes:
        lines.append(f"not comparable: the rerun measured another configuration "
                     f"({result.config_changes}); no verdict")
        return lines
    if result.new_summary is None:
        lines.append(f"rerun {result.new_run_id}: {result.status.value}: {result.reason}")
        return lines + _reasons(result)
    lines.append(f"now (run {result.new_run_id}): {_interval(result.new_summary, unit)}")
    comparison = result.comparison
    verdict = ("a meaningful difference" if comparison.named else comparison.reason
               or comparison.decision.value)
    change = (f"now/published {comparison.ratio:.3g}× ({comparison.confidence:.0%} CI "
              f"{comparison.ci_low:.3g}–{comparison.ci_high:.3g}×: {verdict})")
    if result.inside:
        lines.append(f"reproduced: the new median lies inside the published interval; {change}")
        return lines
    where = ("outside" if not (result.published_summary.ci_low <= result.new_summary.median
                              <= result.published_summary.ci_high) else "inside")
    lines.append(f"not reproduced: the new median lies {where} the published interval; {change}")
    return lines + _reasons(result)


def _configuration_text(config_json: str) -> str:
    flat = config_differences("{}", config_json)
    return ", ".join(f"{key}={value}" for key, _, value in flat)


def _reasons(result: Reproduction) -> list[str]:
    reasons = []
    if result.code_changed:
        reasons.append("the framework code differs from the code the published cell ran")
    then, now = result.published_summary, result.new_summary
    if then.n < 4:
        reasons.append(f"the published interval rests on only {then.n} repeats")
    if now is not None and now.cv > 2 * then.cv:
        reasons.append(f"this machine is noisier now (CV {now.cv:.1%} against {then.cv:.1%})")
    reasons += [f"environment: {row.key}: {row.a} → {row.b}"
                for row in result.environment.itertuples()]
    return ["possible reasons:"] + [f"  - {r}" for r in reasons] if reasons else [
        "no recorded difference explains it (same code and environment)"]
