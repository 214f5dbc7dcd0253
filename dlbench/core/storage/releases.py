"""The release layout: frozen, checksummed copies of runs under results/releases/<RELEASE>/.

    results/releases/<RELEASE>/
        release.json       name, title, date, runs (in release order), notes (Markdown)
        result_ids.csv     result_id, run_id, cell_id, metric: the permanent IDs
        cells.parquet, observations.parquet   the tables of all its runs together
        CITATION.cff       how to cite this release (CFF 1.2.0)
        runs/<run_id>/     each run moved in whole (results/runs keeps no copy of it):
                           run.json, environment.json, process records, Parquet tables, and
                           its code record, code.tar (a run in the older code/ and
                           code-objects/ form is converted in the release's copy, checked
                           against its hashes: dlbench/core/storage/code_archive.py), stored
                           once by content: runs/<run_id>/code.tar.sha256 names it in
        code-archives/<sha256>.tar   each distinct code archive of its runs, once
        MANIFEST.json      SHA-256 of every other file, except errata.yml; in a release
                           frozen with code/ and code-objects/ and repacked since, also
                           "repacked": the published checksums of those files (date, note,
                           files), which each run's code.tar must hold exactly
        errata.yml         optional, append-only: what is known to be wrong, and its correction

A table is stored once, as Parquet: its CSV (a download) is built from it byte for byte
(dlbench/core/storage/tables.py `csv_of`), and MANIFEST.json keeps each CSV's checksum under
"derived", so the built file is checked against the published one (`release_file`).
Releases frozen with the CSVs beside their Parquet had them removed so (2026-12-07), each
checked first to be exactly what its Parquet builds; 2027.04's three runs, frozen with a
code.tar each (one archive, byte for byte), then kept it once: each code.tar.sha256 holds the
checksum its code.tar was published with.

Freezing and numbering releases lives here; reading them, and every path, in
dlbench/core/storage/layout.py. A release merges runs only if each cell ID it holds was measured
with one configuration (dlbench/core/declarations/identity.py), and only runs measured by the same
code (dlbench/core/storage/measurement_code.py). A release's data never changes once written.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from dlbench.core.storage.atomic import (atomic_write_bytes, atomic_write_json, copy_tree, saving,
                                         staged_dir)
from dlbench.core.storage.code_archive import (ARCHIVE, check_repacked, convert_legacy, own_archive,
                                               store_by_content, unpack)
from dlbench.core.text.errors import LayoutError, ReleaseError, ResultsFileError, SaveError
from dlbench.core.declarations.identity import config_differences, differences_text
from dlbench.core.storage.measurement_code import refuse_mixed_code
from dlbench.core.storage.layout import (
    all_run_ids, find_run, load_run, release_dir, release_names, release_run_dir, run_dir,
    run_tables, write_release_info,
)
from dlbench.core.judging.summaries import per_process
from dlbench.core.storage.tables import csv_of, read_json, write_table

MANIFEST = "MANIFEST.json"
ERRATA = "errata.yml"  # grows after publication, so the manifest leaves it out
RESULT_IDS = "result_ids.csv"
VERDICTS = "verdicts.csv"  # the verdicts as published, stored when the release is published
REPACKED = "repacked"  # the published checksums of a repacked code record (MANIFEST.json)
DERIVED = "derived"  # the checksums of the CSVs a release builds from their Parquet twins
RELEASE_NAME = re.compile(r"^[0-9A-Za-z][0-9A-Za-z._-]{0,39}$")
RESULT_ID_COLUMNS = ["result_id", "run_id", "cell_id", "metric"]
RESULT_ID = re.compile(r"^(?P<release>.+)-(?P<number>\d{4,})$")


def scalar_results(observations: pd.DataFrame) -> pd.DataFrame:
    """Distinct (run, cell, metric) of per-repeat values, i.e. rows without a step."""
    return per_process(observations)[["run_id", "cell_id", "metric"]].drop_duplicates()


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


def read_result_ids(root: Path) -> pd.DataFrame:
    """The permanent result IDs of the release at `root`."""
    return pd.read_csv(root / RESULT_IDS, dtype=str, keep_default_na=False)


def find_result(results_dir: Path, result_id: str) -> pd.Series:
    """The result_ids.csv row (result_id, run_id, cell_id, metric) of `result_id`;
    LayoutError naming the releases, or the IDs its release has, when it names none."""
    match = RESULT_ID.match(result_id)
    releases = release_names(results_dir)
    if not match or match["release"] not in releases:
        raise LayoutError(
            f"unknown result ID {result_id!r}; result IDs look like RELEASE-0001, releases: "
            f"{', '.join(releases) or 'none yet'}")
    path = release_dir(results_dir, match["release"]) / RESULT_IDS
    try:
        ids = read_result_ids(path.parent)
    except (OSError, pd.errors.ParserError) as error:
        raise LayoutError(f"{path}: cannot read result IDs ({error})") from None
    found = ids[ids["result_id"] == result_id]
    if found.empty:
        span = f"{ids['result_id'].iloc[0]} to {ids['result_id'].iloc[-1]}" if len(ids) else "none"
        raise LayoutError(f"unknown result ID {result_id!r}; release {match['release']!r} "
                          f"has {span}")
    return found.iloc[0]


def checksums(root: Path) -> dict[str, str]:
    """SHA-256 of every file under `root` except the manifest and the errata, by relative path."""
    sums = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        relative = path.relative_to(root).as_posix()
        if relative not in (MANIFEST, ERRATA):
            sums[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return sums


def verify_manifest(root: Path) -> None:
    """Raise ResultsFileError unless the release's files are exactly those its manifest lists."""
    manifest_path = root / MANIFEST
    if not manifest_path.is_file():
        raise ResultsFileError(f"{root}: release has no {MANIFEST}")
    manifest = read_json(manifest_path)
    expected = manifest["files"]
    actual = checksums(root)
    changed = sorted(set(expected) ^ set(actual) | {
        p for p in set(expected) & set(actual) if expected[p] != actual[p]
    })
    if changed:
        raise ResultsFileError(
            f"{root}: release files differ from {MANIFEST} ({', '.join(changed[:3])}); "
            "a published release never changes"
        )
    if REPACKED in manifest:
        _verify_repacked(root, manifest[REPACKED], expected)
    for relative in sorted(manifest.get(DERIVED, {})):
        if twin(relative) not in expected or relative in actual:
            raise ResultsFileError(
                f"{root}: {MANIFEST} lists {relative} as built from {twin(relative)}, which the "
                "release does not hold, or holds the CSV itself; a published release never "
                "changes")


def twin(relative: str) -> str:
    """The Parquet table a derived CSV is built from."""
    return relative.removesuffix(".csv") + ".parquet"


def drop_derived_csvs(root: Path) -> dict[str, str]:
    """Remove each CSV under `root` that its Parquet twin builds byte for byte; return their
    checksums by relative path (a CSV that differs is kept: it is its own data)."""
    derived = {}
    for csv in sorted(root.rglob("*.csv")):
        parquet = csv.with_suffix(".parquet")
        if parquet.is_file() and csv_of(parquet) == csv.read_bytes():
            derived[csv.relative_to(root).as_posix()] = hashlib.sha256(
                csv.read_bytes()).hexdigest()
            csv.unlink()
    return derived


def release_file(root: Path, relative: str) -> bytes:
    """The bytes of a release's file: stored, or a CSV built from its Parquet twin and checked
    against the checksum it was published with (ResultsFileError if it differs)."""
    published = read_json(root / MANIFEST).get(DERIVED, {}).get(relative)
    if published is None:
        return (root / relative).read_bytes()
    data = csv_of(root / twin(relative))
    if hashlib.sha256(data).hexdigest() != published:
        raise ResultsFileError(f"{root}: {relative} built from {twin(relative)} differs from "
                               "the published file (a different pandas writes numbers "
                               "otherwise?)")
    return data


def _verify_repacked(root: Path, repacked: object, files: dict[str, str]) -> None:
    """ResultsFileError unless each run's code.tar holds exactly the code files whose
    published checksums the manifest keeps under "repacked" (runs/<run>/code/<path>, ...)."""
    entries = repacked.get("files") if isinstance(repacked, dict) else None
    if not isinstance(entries, dict) or not all(isinstance(v, str) for v in entries.values()):
        raise ResultsFileError(f"{root}: {MANIFEST}'s {REPACKED!r} is not {{date, note, "
                               "files: {path: sha256}}")
    by_run: dict[str, dict[str, str]] = {}
    for entry, digest in entries.items():
        parts = entry.split("/", 2)
        if len(parts) < 3 or parts[0] != "runs" or entry in files:
            raise ResultsFileError(f"{root}: {MANIFEST} lists {entry!r} as repacked; a "
                                   "repacked entry is a removed runs/<run>/... code file")
        by_run.setdefault(parts[1], {})[parts[2]] = digest
    for run, published in sorted(by_run.items()):
        if f"runs/{run}/{ARCHIVE}" not in files:
            raise ResultsFileError(f"{root}: run {run} has repacked code files and no {ARCHIVE}")
        origin = f"{root}: runs/{run}/{ARCHIVE}"
        check_repacked(unpack((root / "runs" / run / ARCHIVE).read_bytes(), origin),
                       published, origin)


def add_release_file(root: Path, relative: str, data: bytes) -> Path:
    """Store a file a release lacks (its verdicts, once) and list it in the manifest, so the
    tamper check covers it; ReleaseError if the release fails its check or has the file."""
    verify_manifest(root)
    target = root / relative
    if target.exists() or relative in (MANIFEST, ERRATA):
        raise ReleaseError(f"{target} exists; a release's files are written once")
    atomic_write_bytes(target, data)
    manifest = read_json(root / MANIFEST)
    manifest["files"] = dict(sorted((manifest["files"] | {
        relative: hashlib.sha256(data).hexdigest()}).items()))
    atomic_write_json(root / MANIFEST, manifest)
    return target


def refuse_links(run_root: Path) -> None:
    """ReleaseError for a link or anything but a file or folder in a run's folder: a release
    holds the run's own files, never what a link leads to."""
    for folder, names, files in os.walk(run_root):
        for entry in sorted([*names, *files]):
            path = Path(folder) / entry
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise ReleaseError(f"{path} is a link (to {os.readlink(path)!r}); a release "
                                   "copies a run's own files only: put the file itself there "
                                   "or remove the link")
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise ReleaseError(f"{path} is not a regular file; a release copies a run's "
                                   "own files only: remove it")


def _check_new(results_dir: Path, name: str, ids: list[str]) -> Path:
    if not RELEASE_NAME.match(name):
        raise ReleaseError(
            f"invalid release name {name!r}; use letters, digits, '.', '_' or '-', e.g. 2026.12"
        )
    target = release_dir(results_dir, name)
    if target.exists():
        raise ReleaseError(
            f"release {name!r} already exists in {target.parent}; a release's data never "
            f"changes: choose a new name (existing: {', '.join(release_names(results_dir))}), "
            f"or, if publishing it was interrupted after it was frozen, deploy it with "
            f"`dlbench deploy {name}`"
        )
    known = all_run_ids(results_dir)
    if not ids:
        raise ReleaseError("a release needs at least one run: pass --run RUN_ID")
    if missing := [i for i in ids if i not in known]:
        raise ReleaseError(f"unknown run {missing[0]!r}; runs: {', '.join(known) or 'none yet'}")
    return target


def refuse_unlike_cells(cells: pd.DataFrame) -> None:
    """ReleaseError if two runs hold one cell ID measured with different configurations."""
    for cell_id, group in cells.groupby("cell_id", sort=True):
        first = group.iloc[0]
        for _, other in group.iloc[1:].iterrows():
            if other["config_id"] != first["config_id"]:
                differences = config_differences(first["config_json"], other["config_json"])
                raise ReleaseError(
                    f"runs {first['run_id']} and {other['run_id']} measured {cell_id} with "
                    f"different configurations ({differences_text(differences)}); a release "
                    "merges only runs of the same configuration: publish them apart")


def freeze_release(
    results_dir: Path, name: str, ids: list[str], date: str, title: str, cff: str,
    labels: dict[str, bool] | None = None, notes: str = "", site_url: str = "",
    finish: Callable[[Path], object] | None = None,
) -> Path:
    """Copy runs into results/releases/<name>/ with result IDs and a manifest, atomically;
    `labels` (e.g. local, preview), `notes` (Markdown: what changed since the previous
    release) and `site_url` (the address it is published and cited at) are recorded in
    release.json; `finish` adds files to the complete staged release (its verdicts) before
    the one rename that makes it a release."""
    target = _check_new(results_dir, name, ids)
    with saving(f"release {name}", f"nothing of it is left in {target.parent}"):
        with staged_dir(target.parent, f".{name}.") as staging:
            try:
                _fill_release(staging, results_dir, name, ids, date, title, cff, labels,
                              notes, site_url)
                if finish is not None:
                    finish(staging)
                os.rename(staging, target)
            except SaveError as error:  # name the file by its place in the release
                place = Path(str(error.path))
                raise (error.at(target / place.relative_to(staging))
                       if place.is_relative_to(staging) else error) from None
    for run_id in ids:
        remove_working_copy(results_dir, run_id)
    return target


def remove_working_copy(results_dir: Path, run_id: str) -> None:
    """Remove results/runs/<run_id> once a release holds the run: a run is stored once. It is
    renamed away first, so a removal cut short never leaves a half run under its ID."""
    working = run_dir(results_dir, run_id)
    if not working.is_dir():
        return
    leaving = working.with_name(f".{run_id}.released")
    working.rename(leaving)
    shutil.rmtree(leaving)


def _fill_release(staging: Path, results_dir: Path, name: str, ids: list[str], date: str,
                  title: str, cff: str, labels: dict[str, bool] | None, notes: str,
                  site_url: str = "") -> None:
    """Write every file of release `name` into the folder `staging`."""
    for run_id in ids:
        refuse_links(find_run(results_dir, run_id))
    for run_id in ids:
        source, copy = find_run(results_dir, run_id), release_run_dir(staging, run_id)
        copy_tree(source, copy)
        own_archive(copy, source)  # a released run's archive, from its release's store
        convert_legacy(copy, str(source))
    cells, observations = run_tables([load_run(release_run_dir(staging, i)) for i in ids])
    refuse_unlike_cells(cells)
    refuse_mixed_code({run_id: release_run_dir(staging, run_id) for run_id in ids})
    for run_id in ids:
        if (release_run_dir(staging, run_id) / ARCHIVE).exists():
            store_by_content(staging, release_run_dir(staging, run_id))
    tables = {"cells": cells, "observations": observations}
    for kind, frame in tables.items():
        write_table(frame, staging / kind, kind, csv=False)  # all its runs' tables together
    result_ids = assign_result_ids(name, tables["observations"], ids)
    atomic_write_bytes(staging / RESULT_IDS, result_ids.to_csv(index=False).encode())
    write_release_info(staging, {"name": name, "title": title, "date": date, "runs": ids,
                                 **{k: True for k, v in (labels or {}).items() if v},
                                 **({"notes": notes} if notes else {}),
                                 **({"site_url": site_url} if site_url else {})})
    atomic_write_bytes(staging / "CITATION.cff", cff.encode())
    derived = drop_derived_csvs(staging)
    derived |= {f"{kind}.csv": hashlib.sha256(csv_of(staging / f"{kind}.parquet")).hexdigest()
                for kind in tables}
    manifest = {"release": name, "files": checksums(staging), DERIVED: dict(sorted(
        derived.items()))}
    atomic_write_json(staging / MANIFEST, manifest)
