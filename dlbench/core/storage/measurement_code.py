"""Whether runs were measured by the same code: what lets one release hold runs of several
machines. Each finished process records every project file it imported with its SHA-256
(runner/worker/harness/code_record.py; records before 2027.03 name the experiment module only); a
run's code record is the union over its processes. Two
runs were measured by the same code when every file both imported has one hash in both.
A run without process records (releases before 2027.01 kept none) proves nothing and is
compared with none."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from dlbench.core.text.errors import ReleaseError

#: Where a run keeps one record per finished worker process (dlbench/core/storage/layout.py).
PROCESS_RECORDS = "processes"
#: How many differing files a refusal names before it says how many more.
NAMED_FILES = 3


def run_code_record(run_root: Path) -> dict[str, frozenset[str]]:
    """{project path: every hash the run's processes recorded for it}; empty without
    process records."""
    hashes: dict[str, set[str]] = {}
    folder = run_root / PROCESS_RECORDS
    if not folder.is_dir():
        return {}
    for path in sorted(folder.glob("*.json")):
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue  # a record the run store cannot read is refused by its own check
        for relative, digest in _imported(record).items():
            hashes.setdefault(str(relative), set()).add(str(digest))
    return {relative: frozenset(found) for relative, found in sorted(hashes.items())}


def runs_code_record(run_roots: list[Path]) -> dict[str, frozenset[str]]:
    """The code record of several runs together: every hash any of them recorded per file."""
    merged: dict[str, frozenset[str]] = {}
    for root in run_roots:
        for relative, hashes in run_code_record(root).items():
            merged[relative] = merged.get(relative, frozenset()) | hashes
    return merged


def _imported(record: dict) -> dict[str, str]:
    """The files one process record names: every imported file, or (records before
    2027.03) the experiment module it ran."""
    files = dict((record.get("outcome") or {}).get("code_files") or {})
    if not files and record.get("code_path") and record.get("code_sha256"):
        files[str(record["code_path"])] = str(record["code_sha256"])
    return files


def differing_files(first: Mapping[str, frozenset[str]],
                    second: Mapping[str, frozenset[str]]) -> list[str]:
    """The files both records hold whose hashes are not one and the same in both."""
    return sorted(path for path in set(first) & set(second)
                  if len(first[path] | second[path]) > 1)


def refuse_mixed_code(runs: Mapping[str, Path]) -> None:
    """ReleaseError naming the files that differ when two of `runs` (run ID -> folder) were
    measured by different code, or one run by several versions of a file."""
    records = {run_id: run_code_record(root) for run_id, root in runs.items()}
    recorded = [(run_id, record) for run_id, record in records.items() if record]
    for index, (run_id, record) in enumerate(recorded):
        for other_id, other in [(run_id, record), *recorded[index + 1:]]:
            files = differing_files(record, other)
            if files:
                raise ReleaseError(_refusal(run_id, other_id, files))


def _refusal(run_id: str, other_id: str, files: list[str]) -> str:
    named = ", ".join(files[:NAMED_FILES]) + (
        f" and {len(files) - NAMED_FILES} more" if len(files) > NAMED_FILES else "")
    runs = f"run {run_id}" if run_id == other_id else f"runs {run_id} and {other_id}"
    return (f"{runs} were measured by different code ({named}); a release holds runs of one "
            "measurement code: measure every machine with the release's tagged commit")
