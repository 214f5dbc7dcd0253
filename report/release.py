"""Freezing runs into a release: a directory whose data never changes once written."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from dlbench.tables import atomic_write_bytes, atomic_write_json, read_json
from report.source import (
    RELEASES, RUNS, SourceError, load_run, release_names, run_ids, run_tables,
)

MANIFEST = "MANIFEST.json"
RELEASE_NAME = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,39}$")
RESULT_ID_COLUMNS = ["result_id", "run_id", "cell_id", "metric"]


class ReleaseError(ValueError):
    """A release that may not be written, or whose files do not match its manifest."""


def scalar_results(observations: pd.DataFrame) -> pd.DataFrame:
    """Distinct (run, cell, metric) of per-repeat values, i.e. rows without a step."""
    scalar = observations[observations["step"].isna()]
    return scalar[["run_id", "cell_id", "metric"]].drop_duplicates()


def assign_result_ids(
    release: str, observations: pd.DataFrame, run_order: list[str]
) -> pd.DataFrame:
    """Number every result `<release>-NNNN`, run by run, so adding a run renumbers nothing."""
    keys = scalar_results(observations)
    rows = []
    for run_id in run_order:
        mine = keys[keys["run_id"] == run_id].sort_values(["cell_id", "metric"])
        for cell_id, metric in zip(mine["cell_id"], mine["metric"], strict=True):
            rows.append((f"{release}-{len(rows) + 1:04d}", run_id, str(cell_id), str(metric)))
    return pd.DataFrame(rows, columns=RESULT_ID_COLUMNS)


def checksums(root: Path) -> dict[str, str]:
    """SHA-256 of every file under `root` except the manifest, by relative path."""
    sums = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if relative != MANIFEST:
            sums[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums


def verify_manifest(root: Path) -> None:
    """Fail unless the release's files are exactly those its manifest lists."""
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise SourceError(f"{root}: release has no {MANIFEST}")
    expected = read_json(manifest_path)["files"]
    actual = checksums(root)
    changed = sorted(set(expected) ^ set(actual) | {
        p for p in set(expected) & set(actual) if expected[p] != actual[p]
    })
    if changed:
        raise SourceError(
            f"{root}: release files differ from {MANIFEST} ({', '.join(changed[:3])}); "
            "a published release never changes"
        )


def freeze_release(
    results_dir: Path, name: str, ids: list[str], date: str, title: str, cff: str
) -> Path:
    """Copy runs into results/releases/<name>/ with result IDs and a manifest, atomically."""
    if not RELEASE_NAME.match(name):
        raise ReleaseError(
            f"invalid release name {name!r}; use letters, digits, '.', '_' or '-', e.g. 2026.12"
        )
    target = results_dir / RELEASES / name
    if target.exists():
        raise ReleaseError(
            f"release {name!r} already exists in {target.parent}; a release's data never "
            f"changes: choose a new name (existing: {', '.join(release_names(results_dir))})"
        )
    known = run_ids(results_dir)
    missing = [i for i in ids if i not in known]
    if not ids:
        raise ReleaseError("a release needs at least one run: pass --run RUN_ID")
    if missing:
        raise ReleaseError(f"unknown run {missing[0]!r}; runs: {', '.join(known) or 'none yet'}")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=target.parent))
    try:
        _fill(staging, results_dir, name, ids, date, title, cff)
        os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _fill(
    staging: Path, results_dir: Path, name: str, ids: list[str], date: str, title: str, cff: str
) -> None:
    for run_id in ids:
        shutil.copytree(results_dir / RUNS / run_id, staging / RUNS / run_id)
    runs = [load_run(staging / RUNS / run_id) for run_id in ids]
    _, observations = run_tables(runs)
    result_ids = assign_result_ids(name, observations, ids)
    atomic_write_bytes(staging / "result_ids.csv", result_ids.to_csv(index=False).encode())
    atomic_write_json(staging / "release.json",
                      {"name": name, "title": title, "date": date, "runs": ids})
    atomic_write_bytes(staging / "CITATION.cff", cff.encode())
    manifest = {"release": name, "files": checksums(staging)}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
