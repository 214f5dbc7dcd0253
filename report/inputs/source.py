"""What a site version is built from: the runs of one release (or a draft of runs)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import pandas as pd

from dlbench.core.text.errors import LayoutError, ReleaseError, ResultsFileError
from dlbench.core.storage.layout import (
    RunData, all_run_ids, find_run, is_release, load_run, read_release_info, release_dir,
    release_names, release_runs, run_ids, run_tables,
)
from dlbench.core.storage.releases import (
    assign_result_ids, read_result_ids, refuse_unlike_cells, verify_manifest,
)
from dlbench.core.judging.summaries import per_process
from dlbench.core.text.typed_text import is_iso_date
from dlbench.core.text.visible import shown_name
from dlbench.report.render.user_text import inert_frame, inert_record

__all__ = ["RunData", "Source", "SourceError", "load_draft", "load_release", "release_names",
           "run_ids"]


class SourceError(ValueError):
    """A release or run that cannot be found or read."""


@dataclass(frozen=True)
class Source:
    """Everything a site version shows: release identity, runs and their tables."""

    name: str
    title: str
    date: str
    draft: bool
    runs: tuple[RunData, ...]
    cells: pd.DataFrame
    observations: pd.DataFrame
    result_ids: pd.DataFrame  # result_id, run_id, cell_id, metric
    root: Path | None = None  # a frozen release's directory; None for a draft
    notes: str = ""  # Markdown: what changed since the previous release

    def run(self, run_id: str) -> RunData:
        """The run called `run_id`."""
        return next(run for run in self.runs if run.run_id == run_id)


def load_release(results_dir: Path, name: str) -> Source:
    """A frozen release, after checking its manifest of checksums."""
    root = release_dir(results_dir, name)
    try:
        if is_release(root):
            verify_manifest(root)  # first: a changed file is named as such, not as unreadable
        runs = release_runs(results_dir, name)
        meta = read_release_info(root)
        cells, observations = run_tables(runs)
    except (LayoutError, ResultsFileError) as error:
        raise SourceError(str(error)) from None
    return Source(name, meta["title"], meta["date"], False, inert_runs(runs), inert_frame(cells),
                  inert_frame(observations), read_result_ids(root), root, meta.get("notes", ""))


def load_draft(results_dir: Path, ids: list[str]) -> Source:
    """An unreleased preview of some runs, with provisional result IDs."""
    known = all_run_ids(results_dir)
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise SourceError(
            f"unknown run {unknown[0]!r}; runs: {', '.join(known) or 'none yet'}"
        )
    try:
        runs = [load_run(find_run(results_dir, run_id)) for run_id in ids]
        cells, observations = run_tables(runs)
        refuse_unlike_cells(cells)  # a draft previews a release: the same rule
    except (LayoutError, ReleaseError, ResultsFileError) as error:
        raise SourceError(str(error)) from None
    result_ids = assign_result_ids("draft", observations, [r.run_id for r in runs])
    date = str(runs[-1].info.get("started_at", ""))[:10]
    if not is_iso_date(date):  # the caption shows it: a date, or no draft
        raise SourceError(f"run {runs[-1].run_id}: started_at "
                          f"{shown_name(str(runs[-1].info.get('started_at')), 40)} is not an "
                          "ISO time (YYYY-MM-DDTHH:MM:SS)")
    return Source("draft", "Draft (unreleased)", date, True, inert_runs(runs), inert_frame(cells),
                  inert_frame(observations), result_ids)


def inert_runs(runs: list[RunData]) -> tuple[RunData, ...]:
    """The runs with every string of their run.json and environment.json made inert: a run
    may come from anyone (`dlbench import-run`), and what it recorded reaches every page."""
    return tuple(replace(run, info=inert_record(run.info), environment=inert_record(
        run.environment)) for run in runs)


def source_processes(source: Source) -> pd.DataFrame | None:
    """The processes tables of a source's runs (None when no run has one: older runs)."""
    from dlbench.core.storage.tables import read_table

    frames = [read_table(run.root / "processes.parquet", "processes") for run in source.runs
              if (run.root / "processes.parquet").is_file()]
    return inert_frame(pd.concat(frames, ignore_index=True)) if frames else None


def source_designs(source: Source) -> dict:
    """Each run's verdict design (dlbench/core/judging/sequential.py), by run ID; a run that
    recorded no policy had one look at the most processes any of its cells has."""
    from dlbench.core.judging.sequential import design_from_policy, single_look

    designs = {}
    for run in source.runs:
        policy = run.info.get("processes_policy")
        if policy:
            designs[run.run_id] = design_from_policy(policy)
            continue
        scalar = per_process(source.observations)
        rows = scalar[scalar["run_id"] == run.run_id]
        most = rows.groupby(["cell_id", "metric"])["repeat"].nunique().max() if len(rows) else 1
        designs[run.run_id] = single_look(int(most) if most == most else 1)
    return designs


def newest_release(source: Source, results_dir: Path | None) -> Source | None:
    """The newest release beside a draft's runs, the one its machine is placed beside; None
    for a release, or where there is none to read."""
    if not source.draft or results_dir is None:
        return None
    names = release_names(results_dir)
    if not names:
        return None
    try:
        return load_release(results_dir, names[-1])
    except SourceError:
        return None
