"""One-off: repack the code record of the releases frozen before code.tar (issue 51).

Why: releases 2026.12 to 2027.03 kept each run's code record as `code/<path>` views and
`code-objects/<sha256>`: 237 .py files, 23.8k lines of copies of the project under results/,
which searches and tools read as three more runners. Issue 51 asks for no .py copies under
results/ while release checksums still cover the code record.

What it changes, per release still in the older form: each run's `code/` and `code-objects/`
become its `code.tar` (dlbench/core/code_archive.py `convert_legacy`, the conversion the
release freeze uses), and MANIFEST.json lists code.tar in "files" and keeps the published
checksums of the removed files under "repacked" (date, note, files: path -> sha256), so
anyone holding the old MANIFEST can check that the archive holds exactly the published code
(`verify_manifest` does: dlbench/core/code_archive.py `check_repacked`).

What it keeps: every other file byte for byte (result_ids.csv, verdicts.csv, the tables,
release.json, run.json, environment.json, process records, errata.yml), checked by their
hashes before and after. Before converting, each run's record is checked against the
checksums the release's MANIFEST.json published for it; a mismatch is refused in one line
and nothing is written. The work happens in a copy beside the release, swapped in only
once checked. A second run finds nothing to repack and says so.

    PYTHONPATH=$PWD python scripts/repack_release_code.py [RESULTS_DIR]   (default: results)
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shutil
import sys
from pathlib import Path

from dlbench.core.atomic import atomic_write_json, copy_tree, staged_dir
from dlbench.core.code_archive import (ARCHIVE, LEGACY_OBJECTS, LEGACY_VIEWS, check_repacked,
                                       convert_legacy, pack, read_code_record)
from dlbench.core.errors import ResultsFileError
from dlbench.core.releases import MANIFEST, REPACKED, checksums, verify_manifest
from dlbench.core.tables import read_json

NOTE = ("The code record (code/ and code-objects/) was repacked into code.tar with every "
        "file's hash unchanged; these are the published checksums of the removed files.")
LEGACY = (LEGACY_VIEWS, LEGACY_OBJECTS)


def is_code_entry(relative: str) -> bool:
    """Whether a release path is a file of a run's older code record."""
    parts = relative.split("/")
    return len(parts) > 3 and parts[0] == "runs" and parts[2] in LEGACY


def other_files(root: Path) -> dict[str, str]:
    """SHA-256 of every file of the release but its manifest and its runs' code records."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != ARCHIVE
            and p.relative_to(root).as_posix() != MANIFEST
            and not is_code_entry(p.relative_to(root).as_posix())}


def repack(root: Path, today: str) -> bool:
    """Repack the release at `root` in place; False when it holds no older code record."""
    verify_manifest(root)
    runs = sorted(r for r in (root / "runs").iterdir()
                  if any((r / name).exists() for name in LEGACY))
    if not runs:
        return False
    manifest = read_json(root / MANIFEST)
    published = {p: d for p, d in manifest["files"].items() if is_code_entry(p)}
    for run in runs:  # before converting: the record is exactly the published code
        prefix = f"runs/{run.name}/"
        check_repacked(read_code_record(run), {p.removeprefix(prefix): d for p, d in
                                               published.items() if p.startswith(prefix)},
                       f"{root.name}: {run.name}")
    kept = other_files(root)
    with staged_dir(root.parent, f".repack-{root.name}-") as staging:
        copy = staging / root.name
        copy_tree(root, copy)
        for run in runs:
            record = read_code_record(copy / "runs" / run.name)
            convert_legacy(copy / "runs" / run.name, f"{root.name}: {run.name}")
            if pack(read_code_record(copy / "runs" / run.name)) != pack(record):
                raise ResultsFileError(f"{root.name}: {run.name}: code.tar reads back other "
                                       "than the record; nothing was replaced")
        manifest["files"] = checksums(copy)
        manifest[REPACKED] = {"date": today, "note": NOTE, "files": published}
        atomic_write_json(copy / MANIFEST, manifest)
        verify_manifest(copy)
        if other_files(copy) != kept or list(copy.rglob("*.py")):
            raise ResultsFileError(f"{root}: the repacked copy changed a file other than the "
                                   "code record (or kept a .py); nothing was replaced")
        old = staging / "old"
        os.rename(root, old)
        os.rename(copy, root)
        shutil.rmtree(old)
    return True


def main(argv: list[str]) -> int:
    """Repack every release under RESULTS_DIR/releases; 2 and one line on a refusal."""
    results = Path(argv[0] if argv else "results")
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    try:
        for root in sorted(p for p in (results / "releases").iterdir() if p.is_dir()):
            before = other_files(root)
            if repack(root, today):
                same = other_files(root) == before
                print(f"{root.name}: repacked into code.tar; {len(before)} other files "
                      f"{'byte-identical' if same else 'CHANGED'}; verify_manifest passes")
            else:
                print(f"{root.name}: already in code.tar; nothing changed")
    except ResultsFileError as error:
        print(f"repack_release_code: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
