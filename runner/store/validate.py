"""Whether a run directory reads as a run's files: its run and environment files, every
process record, the three tables and every kept code file (`dlbench import-run` checks an
archive's run with it before moving it into results/runs)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from dlbench.core import layout
from dlbench.core.errors import ResultsFileError
from dlbench.core.tables import read_table
from dlbench.runner.store.run_store import RunStore

TABLES = ("cells", "observations", "processes")


def validate_run(run_root: Path, origin: str) -> str:
    """The run ID of the run directory `run_root` if every file of it reads as a run's file;
    else ResultsFileError naming the first that does not."""
    if not layout.is_run(run_root):
        raise ResultsFileError(f"{origin}: no {layout.RUN_INFO} in {run_root.name}/ (not a run)")
    if not (run_root / layout.ENVIRONMENT).is_file():
        raise ResultsFileError(f"{origin}: no {layout.ENVIRONMENT} in {run_root.name}/")
    info = layout.read_run_info(run_root)
    layout.read_environment(run_root)
    if info["run_id"] != run_root.name:
        raise ResultsFileError(f"{origin}: run.json names run {info['run_id']!r} but the "
                               f"archive holds {run_root.name!r}")
    _check_records(run_root, origin)
    for stem in TABLES:
        named = set(read_table(run_root / f"{stem}.parquet", stem).get("run_id", []))
        if named - {info["run_id"]}:
            raise ResultsFileError(f"{origin}: {stem}.parquet names run(s) "
                                   f"{', '.join(map(repr, sorted(map(str, named))))} but "
                                   f"run.json names {info['run_id']!r}")
    _check_code(run_root, origin)
    return info["run_id"]


def _check_records(run_root: Path, origin: str) -> None:
    """Every process record parses as one (dlbench.runner.store.run_store reads them)."""
    store = RunStore(run_root)
    if not list(store.processes_dir.glob("*.json")):
        raise ResultsFileError(f"{origin}: no process records in {run_root.name}/processes/")
    store.load_records()
    store.load_superseded()


def _check_code(run_root: Path, origin: str) -> None:
    """Each code object is named by its content's SHA-256, and each code view is one of them."""
    objects = run_root / "code-objects"
    digests = set()
    for blob in sorted(objects.iterdir()) if objects.is_dir() else []:
        digest = hashlib.sha256(blob.read_bytes()).hexdigest()
        if digest != blob.name:
            raise ResultsFileError(f"{origin}: code object {blob.name} does not match its "
                                   f"content's hash {digest}")
        digests.add(digest)
    views = run_root / layout.CODE
    for view in sorted(views.rglob("*")) if views.is_dir() else []:
        if view.is_file() and hashlib.sha256(view.read_bytes()).hexdigest() not in digests:
            raise ResultsFileError(f"{origin}: code file {view.relative_to(run_root)} matches "
                                   "no code object (edited after the run?)")
