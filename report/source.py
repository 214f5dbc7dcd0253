"""What a site version is built from: the runs of one release (or a draft of runs)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.releases import (
    RELEASES, RUNS, assign_result_ids, read_result_ids, release_names, run_ids, verify_manifest,
)
from dlbench.tables import ResultsFileError, read_json, read_table

class SourceError(ValueError):
    """A release or run that cannot be found or read."""


@dataclass(frozen=True)
class RunData:
    """One run of a release: its directory, run record and environment."""

    run_id: str
    root: Path
    info: dict
    environment: dict

    def code_text(self, code_path: str) -> str | None:
        """The code snapshot a cell of this run ran, or None when it was not kept."""
        path = self.root / "code" / code_path
        return path.read_text() if code_path and path.is_file() else None


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

    def run(self, run_id: str) -> RunData:
        """The run called `run_id`."""
        return next(run for run in self.runs if run.run_id == run_id)


def load_run(root: Path) -> RunData:
    """Read one run directory written by the runner."""
    if not (root / "run.json").is_file():
        raise SourceError(f"{root}: not a run directory (no run.json)")
    environment_path = root / "environment.json"
    environment = read_json(environment_path) if environment_path.is_file() else {}
    return RunData(root.name, root, read_json(root / "run.json"), environment)


def run_tables(runs: list[RunData]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cells and observations tables of `runs`, concatenated in run order."""
    cells, observations = [], []
    for run in runs:
        try:
            cells.append(read_table(run.root / "cells.parquet", "cells"))
            observations.append(read_table(run.root / "observations.parquet", "observations"))
        except ResultsFileError as error:
            raise SourceError(str(error)) from None
    return pd.concat(cells, ignore_index=True), pd.concat(observations, ignore_index=True)


def load_release(results_dir: Path, name: str) -> Source:
    """A frozen release, after checking its manifest of checksums."""
    root = results_dir / RELEASES / name
    if not (root / "release.json").is_file():
        known = ", ".join(release_names(results_dir)) or "none yet"
        raise SourceError(f"unknown release {name!r}; releases: {known}")
    try:
        verify_manifest(root)
    except ResultsFileError as error:
        raise SourceError(str(error)) from None
    meta = read_json(root / "release.json")
    runs = [load_run(root / RUNS / run_id) for run_id in meta["runs"]]
    cells, observations = run_tables(runs)
    ids = read_result_ids(root)
    return Source(name, meta["title"], meta["date"], False, tuple(runs), cells, observations, ids,
                  root)


def load_draft(results_dir: Path, ids: list[str]) -> Source:
    """An unreleased preview of some runs, with provisional result IDs."""
    known = run_ids(results_dir)
    unknown = [i for i in ids if i not in known]
    if unknown:
        raise SourceError(
            f"unknown run {unknown[0]!r}; runs: {', '.join(known) or 'none yet'}"
        )
    runs = [load_run(results_dir / RUNS / run_id) for run_id in ids]
    cells, observations = run_tables(runs)
    result_ids = assign_result_ids("draft", observations, [r.run_id for r in runs])
    date = str(runs[-1].info.get("started_at", ""))[:10]
    return Source("draft", "Draft (unreleased)", date, True, tuple(runs), cells, observations,
                  result_ids)
