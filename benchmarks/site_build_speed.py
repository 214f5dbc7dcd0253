"""Site build speed: `dlbench build` of a release from scratch, the same build again with
nothing changed, and a synthetic release of at least 100,000 observation rows.

Goals (issue 13), judged on a quiet machine: a rebuild with no change in data or templates
takes at most 3 s; a build of the 100k-row release at most 30 s. Each build runs as the real
command (`python -m dlbench.cli build`) in a fresh process, so start-up is included.

Run: .venv/bin/python benchmarks/site_build_speed.py [--release 2026.12] [--rows 100000]
Prints the wall time of each build and what it wrote; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from dlbench.core.storage.layout import RELEASES, RUNS
from dlbench.core.storage.releases import freeze_release
from dlbench.core.storage.tables import read_json, read_table, write_table
from dlbench.core.storage.code_archive import ARCHIVE, POINTER, archive_bytes

ROOT = Path(__file__).resolve().parent.parent
SYNTHETIC_RUN = "20270101T000000Z-synthetic"


def _grown(frame: pd.DataFrame, groups: list[tuple[str, str]], scale: bool) -> pd.DataFrame:
    """`frame` with the rows of each (experiment, workload) of `groups` copied under a new
    workload name (`-copyK`); observation values scaled a little, so no copy draws the same
    chart as its original."""
    copies = [frame]
    for number, (experiment, workload) in enumerate(groups, start=1):
        rows = frame[(frame["experiment"] == experiment) & (frame["workload"] == workload)].copy()
        name = f"{workload}-copy{number}"
        rows["cell_id"] = rows["cell_id"].str.replace(f":{workload}:", f":{name}:")
        rows["workload"] = name
        if scale:
            rows["value"] = rows["value"] * (1 + 0.03 * number)
        copies.append(rows)
    return pd.concat(copies, ignore_index=True)


def synthetic_release(release_root: Path, rows: int, results_dir: Path) -> int:
    """Freeze under `results_dir` a release 'synthetic' of one run: the first run of the
    release at `release_root`, with its largest (experiment, workload) groups copied under new
    workload names until it has at least `rows` observation rows; returns its row count."""
    run_id = read_json(release_root / "release.json")["runs"][0]
    run_dir = results_dir / RUNS / SYNTHETIC_RUN
    shutil.copytree(release_root / RUNS / run_id, run_dir)
    if (run_dir / POINTER).exists():  # the release keeps its code archive once, by content
        (run_dir / ARCHIVE).write_bytes(archive_bytes(release_root / RUNS / run_id) or b"")
        (run_dir / POINTER).unlink()
    cells = read_table(run_dir / "cells.parquet", "cells")
    observations = read_table(run_dir / "observations.parquet", "observations")
    sizes = observations.groupby(["experiment", "workload"]).size().sort_values(ascending=False)
    chosen: list[tuple[str, str]] = []
    total = len(observations)
    for group, size in sizes.items():
        if total >= rows:
            break
        chosen.append((str(group[0]), str(group[1])))
        total += int(size)
    for kind, frame in (("cells", cells), ("observations", observations)):
        grown = _grown(frame, chosen, scale=kind == "observations").assign(run_id=SYNTHETIC_RUN)
        write_table(grown.drop(columns=["schema_version"]), run_dir / kind, kind)
    info = read_json(run_dir / "run.json") | {"run_id": SYNTHETIC_RUN}
    (run_dir / "run.json").write_text(json.dumps(info, indent=2))
    freeze_release(results_dir, "synthetic", [SYNTHETIC_RUN], "2027-01-01",
                   "synthetic release for build timing", "")
    return total


def timed_build(results_dir: Path, release: str, out: Path, cache: Path) -> tuple[float, str]:
    """Seconds `dlbench build` took, and the line it printed."""
    command = [sys.executable, "-m", "dlbench.cli", "build", "--release", release,
               "--results-dir", str(results_dir), "--out", str(out), "--cache-dir", str(cache),
               "--config", str(ROOT / "mkdocs.yml"), "--templates", str(ROOT / "templates")]
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2026.12", help="a committed release")
    parser.add_argument("--rows", type=int, default=100_000, help="synthetic release size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dlbench-build-speed-") as tmp:
        work = Path(tmp)
        results = ROOT / "results"
        cold, line = timed_build(results, args.release, work / "a", work / "cache-a")
        print(f"{args.release}: first build (empty cache)      {cold:6.1f} s   {line}")
        again, line = timed_build(results, args.release, work / "a", work / "cache-a")
        print(f"{args.release}: rebuild, nothing changed       {again:6.1f} s   {line}"
              "   (goal: <= 3 s)")
        synthetic = work / "results"
        rows = synthetic_release(results / RELEASES / args.release, args.rows, synthetic)
        big, line = timed_build(synthetic, "synthetic", work / "b", work / "cache-b")
        print(f"synthetic {rows:,} rows: first build (empty cache) {big:6.1f} s   {line}"
              "   (goal: <= 30 s)")


if __name__ == "__main__":
    main()
