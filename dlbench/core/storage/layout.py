"""The results layout: where runs and releases live, and the one reader of their files.

    results/runs/<run_id>/
        run.json           the run's record (RUN_SCHEMA)
        environment.json   machine and software (ENVIRONMENT_SCHEMA)
        processes/<cell>__p<k>.json   one record per finished worker process
                                      (runner/driver/store/run_store.py)
        superseded/        records of processes measured again, with why
        cells.*, observations.*, processes.*   the tables (Parquet and CSV)
        code.tar           the code record: each project file a process imported, by path
                           and hash, each distinct file once (dlbench/core/storage/code_archive.py;
                           runs before it kept code-objects/<sha256> and code/<path>)
    results/releases/<release>/   see dlbench/core/storage/releases.py

A run is stored once: freezing a release moves its runs out of results/runs into the
release, and every reader finds a run by its ID in either place (`all_run_ids`, `find_run`),
so `latest`, `dlbench results show`, compare and the site read a released run from its
release; `run_ids` and `run_dir` name only results/runs, where the runner writes.
(Release 2026.12's run kept one record per cell, cells/<cell>.json, and no processes
table; like every run, it is read through its tables.)

Every command (compare, reproduce, results show, the site, publish) reads runs and releases
through this module, so names sort one way everywhere and `latest` means the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.core.storage.atomic import atomic_write_json
from dlbench.core.storage.code_archive import read_code_record
from dlbench.core.text.errors import LayoutError, ResultsFileError
from dlbench.core.storage.tables import read_json, read_table

RUNS = "runs"
RELEASES = "releases"
RUN_INFO = "run.json"
ENVIRONMENT = "environment.json"
RELEASE_INFO = "release.json"
LATEST = "latest"

#: A JSON file's schema: field -> (accepted JSON types, required).
Schema = dict[str, tuple[tuple[type, ...], bool]]

#: run.json's schema. Other fields are kept as they are.
RUN_SCHEMA: Schema = {
    "run_id": ((str,), True),
    "started_at": ((str,), False),
    "device": ((str,), False),
    "status": ((str,), False),
    "suite": ((str,), False),
    "request": ((dict,), False),
    "planned_cells": ((list,), False),
    "finished_at": ((str,), False),
    "wall_time_s": ((int, float), False),
    "reproduces": ((str,), False),
    "executor": ((str,), False),  # local, or ray: measured on a Ray cluster's nodes
    "address": ((str,), False),  # the Ray cluster's address (executor ray)
    "machine_kind": ((str,), False),  # the kind of node that measured it (executor ray)
    "estimate": ((dict,), False),  # the projected minutes (dlbench.runner.driver.plan.projection)
    "estimate_error": ((int, float), False),  # measured over projected wall time, less 1
}

#: environment.json, likewise; every field optional (older runs recorded fewer).
ENVIRONMENT_SCHEMA: Schema = {
    "cpu": ((dict,), False),
    "gpus": ((list,), False),
    "memory_gib": ((int, float), False),
    "os": ((str,), False),
    "platform": ((str,), False),
    "python": ((str,), False),
    "packages": ((dict,), False),
    "frameworks": ((dict,), False),
    "git": ((dict,), False),
    "environment_variables": ((dict,), False),
    "hostname_sha256": ((str,), False),
    "machine_kind": ((str,), False),  # a cluster run's machine kind, as its node declares
}

RELEASE_SCHEMA: Schema = {
    "name": ((str,), True),
    "title": ((str,), True),
    "date": ((str,), True),
    "runs": ((list,), True),
    "notes": ((str,), False),  # Markdown: what changed since the previous release
}


def validate(value: dict, schema: Schema, origin: str) -> dict:
    """`value` if it fits `schema`, else ResultsFileError naming the first wrong field."""
    for name, (types, required) in schema.items():
        if name not in value:
            if required:
                raise ResultsFileError(f"{origin}: missing field {name!r}")
            continue
        field = value[name]
        if isinstance(field, bool) or not isinstance(field, types):
            if field is None and not required:
                continue
            accepted = " or ".join(t.__name__ for t in types)
            raise ResultsFileError(f"{origin}: field {name!r} is {type(field).__name__}, "
                                   f"expected {accepted}")
    return value


def runs_dir(results_dir: Path) -> Path:
    """results/runs: where the runner writes runs."""
    return results_dir / RUNS


def run_dir(results_dir: Path, run_id: str) -> Path:
    """Where the runner writes run `run_id` (read one through `find_run`)."""
    return results_dir / RUNS / run_id


def releases_dir(results_dir: Path) -> Path:
    """results/releases: the frozen releases."""
    return results_dir / RELEASES


def release_dir(results_dir: Path, name: str) -> Path:
    """The directory of one release."""
    return results_dir / RELEASES / name


def release_run_dir(release_root: Path, run_id: str) -> Path:
    """A run as copied into a release."""
    return release_root / RUNS / run_id


def is_run(root: Path) -> bool:
    """True if `root` holds a run (its run.json)."""
    return (root / RUN_INFO).is_file()


def is_release(root: Path) -> bool:
    """True if `root` holds a release (its release.json)."""
    return (root / RELEASE_INFO).is_file()


def run_ids(results_dir: Path) -> list[str]:
    """IDs of the runs under results/runs (not yet released), oldest first (run IDs sort by
    time); a folder starting with '.' is one being moved away, never a run."""
    root = runs_dir(results_dir)
    return sorted(p.name for p in root.iterdir() if is_run(p) and not p.name.startswith(".")) \
        if root.is_dir() else []


def released_runs(results_dir: Path) -> dict[str, Path]:
    """{run ID: its folder} of every run a release holds; a run in two releases is read from
    the older one (a release's runs never change, so both hold the same run)."""
    found: dict[str, Path] = {}
    for name in release_names(results_dir):
        root = release_dir(results_dir, name)
        for run_id in read_release_info(root)["runs"]:
            found.setdefault(run_id, release_run_dir(root, run_id))
    return found


def all_run_ids(results_dir: Path) -> list[str]:
    """IDs of every run, under results/runs or in a release, oldest first."""
    return sorted(set(run_ids(results_dir)) | set(released_runs(results_dir)))


def latest_run_id(results_dir: Path) -> str | None:
    """What `latest` names: the newest run under results/runs (the one just measured), else
    the newest released run; None when there is no run at all."""
    known = run_ids(results_dir) or all_run_ids(results_dir)
    return known[-1] if known else None


def find_run(results_dir: Path, run_id: str) -> Path:
    """The folder of run `run_id`: under results/runs, else in the release that holds it
    (where `run_dir` would be, when it is neither: the caller's reader names it missing)."""
    working = run_dir(results_dir, run_id)
    if is_run(working):
        return working
    return released_runs(results_dir).get(run_id, working)


def release_names(results_dir: Path) -> list[str]:
    """Names of the frozen releases, oldest first (by date, then name): the one order."""
    root = releases_dir(results_dir)
    if not root.is_dir():
        return []
    dated = [(str(read_release_info(p).get("date")), p.name) for p in root.iterdir()
             if is_release(p) and not p.name.startswith(".")]  # not a staged one
    return [name for _, name in sorted(dated)]


def known_names(results_dir: Path) -> str:
    """What a user may name, for an error message."""
    runs = ", ".join(all_run_ids(results_dir)) or "none"
    releases = ", ".join(release_names(results_dir)) or "none"
    return f"runs: {runs}; releases: {releases}"


def resolve_run_id(results_dir: Path, name: str) -> str:
    """A run ID as given, or the newest run for `latest`; LayoutError if there is none."""
    known = all_run_ids(results_dir)
    if name == LATEST and known:
        return latest_run_id(results_dir) or known[-1]
    if name in known:
        return name
    folder = runs_dir(results_dir) / name
    if name not in ("", ".", "..") and "/" not in name and folder.is_dir():
        raise LayoutError(f"{folder / RUN_INFO}: file not found (run "
                          f"{name!r} has no run.json: not a run dlbench finished writing)")
    if not known:
        raise LayoutError(f"no run {name!r}: {runs_dir(results_dir)} holds no runs yet "
                          "(`dlbench run` makes one)")
    raise LayoutError(f"no run {name!r} under {runs_dir(results_dir)}; runs: "
                      f"{', '.join(known)}, or {LATEST}")


def _read_checked(path: Path, schema: Schema) -> dict:
    """The JSON object in `path`, checked against `schema`."""
    return validate(read_json(path), schema, str(path))


def _write_checked(path: Path, value: dict, schema: Schema) -> None:
    """Write `value` to `path` atomically, after checking it against `schema`."""
    atomic_write_json(path, validate(value, schema, str(path)))


def read_run_info(run_root: Path) -> dict:
    """A run's run.json, checked against RUN_SCHEMA."""
    return _read_checked(run_root / RUN_INFO, RUN_SCHEMA)


def read_environment(run_root: Path) -> dict:
    """A run's environment.json checked against ENVIRONMENT_SCHEMA; {} when none was kept."""
    path = run_root / ENVIRONMENT
    return _read_checked(path, ENVIRONMENT_SCHEMA) if path.is_file() else {}


def read_release_info(release_root: Path) -> dict:
    """A release's release.json, checked against RELEASE_SCHEMA."""
    return _read_checked(release_root / RELEASE_INFO, RELEASE_SCHEMA)


def write_run_info(run_root: Path, info: dict) -> None:
    """Write run.json atomically, after checking it against RUN_SCHEMA."""
    _write_checked(run_root / RUN_INFO, info, RUN_SCHEMA)


def write_environment(run_root: Path, environment: dict) -> None:
    """Write environment.json atomically, after checking it against ENVIRONMENT_SCHEMA."""
    _write_checked(run_root / ENVIRONMENT, environment, ENVIRONMENT_SCHEMA)


def write_release_info(release_root: Path, info: dict) -> None:
    """Write release.json atomically, after checking it against RELEASE_SCHEMA."""
    _write_checked(release_root / RELEASE_INFO, info, RELEASE_SCHEMA)


@dataclass(frozen=True)
class RunData:
    """One run: its directory, run record and environment."""

    run_id: str
    root: Path
    info: dict
    environment: dict

    def code_text(self, code_path: str) -> str | None:
        """The code a cell of this run ran (the first version its run kept of `code_path`),
        or None when it was not kept."""
        data = read_code_record(self.root).data(code_path) if code_path else None
        return data.decode() if data is not None else None

    def tables(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """This run's cells and observations tables (older observations get their config_id)."""
        cells = read_table(self.root / "cells.parquet", "cells")
        observations = read_table(self.root / "observations.parquet", "observations")
        return cells, with_config_ids(observations, cells)


def with_config_ids(observations: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """Observations whose missing config_id (tables older than schema 2) is their cell's."""
    missing = observations["config_id"].isna()
    if not missing.any():
        return observations
    ids = cells.drop_duplicates(["run_id", "cell_id"]).set_index(["run_id", "cell_id"])
    keys = pd.MultiIndex.from_frame(observations.loc[missing, ["run_id", "cell_id"]])
    observations = observations.copy()
    observations.loc[missing, "config_id"] = ids["config_id"].reindex(keys).to_numpy()
    return observations


def load_run(root: Path) -> RunData:
    """Read one run directory (in results/runs or in a release)."""
    if not is_run(root):
        raise LayoutError(f"{root}: not a run directory (no {RUN_INFO})")
    return RunData(root.name, root, read_run_info(root), read_environment(root))


def run_tables(runs: list[RunData]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The cells and observations tables of `runs`, concatenated in run order."""
    tables = [run.tables() for run in runs]
    return (pd.concat([t[0] for t in tables], ignore_index=True),
            pd.concat([t[1] for t in tables], ignore_index=True))


def release_runs(results_dir: Path, name: str) -> list[RunData]:
    """The runs of a release, in release order; LayoutError naming the releases if unknown."""
    root = release_dir(results_dir, name)
    if not is_release(root):
        known = ", ".join(release_names(results_dir)) or "none yet"
        raise LayoutError(f"unknown release {name!r}; releases: {known}")
    return [load_run(release_run_dir(root, run_id)) for run_id in read_release_info(root)["runs"]]
