"""`dlbench import-run ARCHIVE`: bring a run made on another machine (the GPU run) into
results/runs, validated like any run, all or nothing.

The archive (dlbench/core/storage/run_archive.py) is extracted into a temporary directory beside
results/runs and checked there: run.json and environment.json against their schemas, every
process record, the three Parquet tables against theirs, every kept code file against its
hash. A run measured by older code (the tagged measurement code of 2027.04 keeps `code/` and
`code-objects/`) has its code record turned into the one archive there, checked against its
hashes first (dlbench/core/storage/code_archive.py). Only then is the run moved into place, in one
rename; a run ID that exists is refused.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.core.storage import layout
from dlbench.core.storage.atomic import save_error, saving, staged_dir
from dlbench.core.storage.code_archive import convert_legacy
from dlbench.core.text.errors import ResultsFileError, UsageError
from dlbench.core.storage.run_archive import extract_run
from dlbench.runner.driver.store.validate import validate_run


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
    except OSError as error:
        raise save_error(runs, error).about("the imported run") from None
    with saving("the imported run"), staged_dir(runs.parent, ".import-") as staging:
        run_root = extract_run(archive, staging)
        try:
            convert_legacy(run_root, str(archive))
            run_id = validate_run(run_root, str(archive))
        except ResultsFileError as error:  # name the file as it is in the archive
            raise ResultsFileError(str(error).replace(f"{staging}/", f"{archive}: ")) from None
        target = layout.run_dir(Path(args.results_dir), run_id)
        if target.exists():
            raise UsageError(f"{archive}: run {run_id} already exists in {runs} (a run is "
                             "imported once; remove it first to import it again)")
        if run_id in layout.released_runs(results_dir):
            raise UsageError(f"{archive}: run {run_id} is already released "
                             f"({layout.released_runs(results_dir)[run_id]}); a run is "
                             "imported once")
        run_root.rename(target)
    print(f"imported run {run_id} into {target}")
    return 0
