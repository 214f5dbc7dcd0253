"""`dlbench export-run RUN`: pack one run of this machine as the archive `import-run` takes, to
send it to the project (a reader's machine, placed beside the published ones).

The run is packed only if `import-run` would take it: every file a regular file inside the
run's folder (a link or anything else is refused by name), then the packed archive is
extracted and validated exactly as `import-run` does before it is named `<run_id>.tar.gz`."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from dlbench.core.storage import layout
from dlbench.core.storage.atomic import atomic_write_bytes, save_error, saving
from dlbench.core.text.errors import ResultsFileError, UsageError
from dlbench.core.storage.run_archive import ARCHIVE_SUFFIX, extract_run, pack_run
from dlbench.runner.driver.store.validate import validate_run

LATEST = "latest"


def export_command(args: argparse.Namespace) -> int:
    """Pack the run, check the archive as `import-run` would, and print where it is."""
    results_dir = Path(args.results_dir)
    run_root = _run_root(results_dir, args.run)
    refuse_foreign_files(run_root)
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a folder; pass the folder the archive "
                         "goes into")
    if out.resolve().is_relative_to(run_root.resolve()):
        raise UsageError(f"--out {out} is inside run {run_root.name}'s own folder; the archive "
                         "goes outside the run it packs (e.g. --out exports)")
    target = out / f"{run_root.name}{ARCHIVE_SUFFIX}"
    if target.exists():
        raise UsageError(f"{target} exists; an archive is written once (move it away, or "
                         "pass another --out)")
    with saving(f"the archive of run {run_root.name}"):
        _pack_checked(run_root, out, target)
    print(f"wrote {target}: run {run_root.name}, as `dlbench import-run {target.name}` "
          "takes it")
    return 0


def _pack_checked(run_root: Path, out: Path, target: Path) -> None:
    """Pack, check, then write the archive as `target` whole or not at all (atomically, in
    --out); a full or read-only disk, here or in the temporary folder, is a SaveError, and
    an interrupt leaves no temporary folder."""
    try:
        with tempfile.TemporaryDirectory(prefix=".export-") as scratch:
            packed = pack_run(run_root, Path(scratch))
            check_importable(packed, Path(scratch) / "check")
            atomic_write_bytes(target, packed.read_bytes())
    except OSError as error:
        raise save_error(Path(error.filename or tempfile.gettempdir()), error) from None


def _run_root(results_dir: Path, run: str) -> Path:
    """The folder of run `run` ('latest': the newest); UsageError listing the runs."""
    known = layout.all_run_ids(results_dir)
    chosen = layout.latest_run_id(results_dir) if run == LATEST and known else run
    if chosen not in known:
        raise UsageError(f"unknown run {run!r} in {results_dir}/runs; runs: "
                         f"{', '.join(known[-5:]) or 'none yet (run `dlbench run` first)'}")
    return layout.find_run(results_dir, chosen)


def refuse_foreign_files(run_root: Path) -> None:
    """UsageError naming the first thing in the run folder that is neither a folder nor a
    regular file (a link, a FIFO, a device): the runner writes none."""
    for path in sorted(run_root.rglob("*")):
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            raise UsageError(f"{path}: not a regular file (a link or a device); a run holds "
                             "only the files the runner wrote, so it is not packed")


def check_importable(archive: Path, scratch: Path) -> None:
    """Extract and validate `archive` as `import-run` does; UsageError saying why not."""
    scratch.mkdir()
    try:
        validate_run(extract_run(archive, scratch), str(archive))
    except ResultsFileError as error:
        raise UsageError(f"the run would not import: {error}") from None
