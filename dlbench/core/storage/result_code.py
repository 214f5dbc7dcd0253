"""The code a result or a run ran, read back from its run's code record (`dlbench code`).

A target is a result ID (`RELEASE-NNNN`: the project files its cell's processes imported, at
the versions they recorded; a run that recorded no imports names its experiment module), a
run (its ID, or `latest`; a released one is read from its release), or one run of a release
(`RELEASE@RUN_ID`): every file its code record holds. The files come from the run's archive, or its
older code/ and code-objects/ form, checked against their hashes
(dlbench/core/storage/code_archive.py), and a release's files against its manifest first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.core.storage.code_archive import read_code_record
from dlbench.core.text.errors import LayoutError
from dlbench.core.storage.layout import (
    LATEST, find_run, is_release, read_release_info, release_dir, release_run_dir,
    resolve_run_id,
)
from dlbench.core.storage.releases import RESULT_ID, find_result, verify_manifest
from dlbench.core.storage.tables import read_table
from dlbench.core.text.visible import shown_name

TARGETS = "a result ID (e.g. 2027.03-0001), a run ID or latest, or RELEASE@RUN_ID"


@dataclass(frozen=True)
class CodeFile:
    """One version of one project file a target ran; `data` None when the run recorded its
    hash but kept no copy (the file had changed before the process's record was saved)."""

    path: str
    sha256: str
    data: bytes | None


@dataclass(frozen=True)
class TargetCode:
    """What a target names, in words, and the code files it ran, by path."""

    words: str
    files: tuple[CodeFile, ...]


def target_code(results_dir: Path, target: str) -> TargetCode:
    """The code files of `target` (see the module); LayoutError in one line if it names
    nothing, saying what is accepted."""
    release, _, run_id = target.partition("@")
    if run_id:
        root = release_dir(results_dir, release)
        if not is_release(root):
            raise LayoutError(f"no release {shown_name(release)} (of {shown_name(target)}); "
                              f"name {TARGETS}")
        runs = read_release_info(root)["runs"]
        if run_id not in runs:
            raise LayoutError(f"release {shown_name(release)} holds no run "
                              f"{shown_name(run_id)}; its runs: {', '.join(runs)}")
        verify_manifest(root)
        return _run_code(release_run_dir(root, run_id), f"run {run_id} of release {release}")
    if RESULT_ID.match(target):
        return _result_code(results_dir, target)
    if is_release(release_dir(results_dir, target)):
        runs = read_release_info(release_dir(results_dir, target))["runs"]
        raise LayoutError(f"{shown_name(target)} is a release; name one of its runs "
                          f"({', '.join(f'{target}@{r}' for r in runs)}) or a result ID")
    try:
        resolved = resolve_run_id(results_dir, target)
    except LayoutError as error:
        raise LayoutError(f"{error}; name {TARGETS}") from None
    return _run_code(find_run(results_dir, resolved), f"run {resolved}" + (
        " (latest)" if target == LATEST else ""))


def _run_code(run_root: Path, words: str) -> TargetCode:
    """Every version of every file in a run's code record."""
    record = read_code_record(run_root)
    return TargetCode(words, tuple(CodeFile(path, digest, record.objects.get(digest))
                                   for path, versions in sorted(record.files.items())
                                   for digest in versions))


def _result_code(results_dir: Path, result_id: str) -> TargetCode:
    """The files the processes of a result's cell imported, at their recorded versions."""
    row = find_result(results_dir, result_id)
    root = release_dir(results_dir, RESULT_ID.match(result_id)["release"])
    verify_manifest(root)
    run_root = release_run_dir(root, row["run_id"])
    record = read_code_record(run_root)
    recorded = _imported(run_root, row["cell_id"])
    files = tuple(CodeFile(path, digest, record.data(path, digest))
                  for path, versions in sorted(recorded.items()) for digest in versions)
    return TargetCode(f"result {result_id} (run {row['run_id']}, cell {row['cell_id']}, "
                      f"metric {row['metric']})", files)


def _imported(run_root: Path, cell_id: str) -> dict[str, list[str]]:
    """{path: hashes in process order} the cell's processes recorded, or its experiment
    module (the cells table's code_path) where they recorded none."""
    files: dict[str, list[str]] = {}
    table = run_root / "processes.parquet"
    processes = read_table(table, "processes") if table.is_file() else pd.DataFrame()
    if "code_files_json" in processes:
        mine = processes[processes["cell_id"] == cell_id].sort_values("order_index")
        for text in mine["code_files_json"].dropna():
            for path, digest in json.loads(text).items():
                if digest not in files.setdefault(path, []):
                    files[path].append(digest)
    if not files:
        cells = read_table(run_root / "cells.parquet", "cells")
        for cell in cells[cells["cell_id"] == cell_id].itertuples():
            if isinstance(cell.code_path, str) and cell.code_path:
                files[cell.code_path] = [str(cell.code_sha256)]
    return files


def chosen_file(code: TargetCode, path: str, sha256: str = "") -> CodeFile:
    """The one version of `path` the target ran (or its version `sha256`); LayoutError
    naming the paths, or the versions, when that is not one kept file."""
    versions = [f for f in code.files if f.path == path]
    if not versions:
        known = ", ".join(sorted({f.path for f in code.files})[:5]) or "none"
        raise LayoutError(f"{code.words} ran no file {shown_name(path)}; its files: {known}"
                          " ... (`dlbench code TARGET` lists them all)")
    hashes = ", ".join(f.sha256[:12] for f in versions)
    if sha256:
        versions = [f for f in versions if f.sha256.startswith(sha256.lower())]
        if len(versions) != 1:
            which = "several versions" if versions else "no version"
            raise LayoutError(f"{code.words} ran {which} {shown_name(sha256)} of {path}; its "
                              f"versions: {hashes}")
    elif len(versions) > 1:
        raise LayoutError(f"{code.words} ran {path} in versions {hashes}; choose one with "
                          "--sha256 HASH")
    if versions[0].data is None:
        raise LayoutError(f"{code.words} ran {path} at {versions[0].sha256[:12]}, but its run "
                          "kept no copy of that version (the file changed before it was "
                          "saved)")
    return versions[0]
