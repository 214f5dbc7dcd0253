"""`dlbench import-run ARCHIVE`: bring a run made on another machine (the GPU run) into
results/runs, validated like any run, all or nothing.

The archive (dlbench/core/run_archive.py) is extracted into a temporary directory beside
results/runs and checked there: run.json and environment.json against their schemas, every
process record, the three Parquet tables against theirs, every kept code file against its
hash. Only then is the run moved into place, in one rename; a run ID that exists is refused.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import tempfile
from pathlib import Path

from dlbench.core import layout
from dlbench.core.atomic import save_error
from dlbench.core.errors import ResultsFileError, UsageError
from dlbench.core.run_archive import extract_run
from dlbench.core.tables import read_table

TABLES = ("cells", "observations", "processes")


def import_command(args: argparse.Namespace) -> int:
    """Validate the archive's run and move it into results/runs/<run_id>; print where."""
    archive = Path(args.archive)
    if not archive.is_file():
        raise UsageError(f"{archive}: no such archive file (expected a run's .tar.gz, as "
                         "scripts/gpu_run.py writes)")
    results_dir = Path(args.results_dir)
    if results_dir.exists() and not results_dir.is_dir():
        raise UsageError(f"--results-dir {results_dir} is a file, not a folder; pass the folder "
                         "that holds runs/ (default: results)")
    runs = layout.runs_dir(results_dir)
    try:
        runs.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".import-", dir=runs.parent))
    except OSError as error:
        raise save_error(runs, error).about("the imported run") from None
    try:
        run_root = extract_run(archive, staging)
        try:
            run_id = validate_run(run_root, str(archive))
        except ResultsFileError as error:  # name the file as it is in the archive
            raise ResultsFileError(str(error).replace(f"{staging}/", f"{archive}: ")) from None
        target = layout.run_dir(Path(args.results_dir), run_id)
        if target.exists():
            raise UsageError(f"{archive}: run {run_id} already exists in {runs} (a run is "
                             "imported once; remove it first to import it again)")
        run_root.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    print(f"imported run {run_id} into {target}")
    return 0


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
    """Every process record parses as one (runner.store.run_store reads them)."""
    from runner.store.run_store import RunStore

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
