"""Fit the quick suite's estimate defaults (dlbench.core.declarations.systems, `System.seconds`)
from a committed release's process wall times: a release is measured alone on a quiet machine,
so its walls are the constant; this session's runs under load give only the shape.

For each system, the median wall of its digits-MLP processes in the default mode of
training, inference and parity (the quick suite's cells; standard trains 20 epochs where
quick trains 10, a difference of at most 1.5 s per process on these machines). A shared
worker pays the framework's import once: its import is fitted as the system's smallest
of those medians less the least work a process does (model build, data and one measured
window: MIN_WORK_S).

Run: .venv/bin/python benchmarks/fit_estimate.py [--release 2027.02]
Prints one line per system: training, inference, parity and import seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dlbench.core.declarations.modes import DEFAULT, mode_class  # noqa: E402
from dlbench.core.declarations.systems import SYSTEMS  # noqa: E402

EXPERIMENTS = ("training", "inference", "parity")
MIN_WORK_S = 1.0


def release_walls(release: str) -> pd.DataFrame:
    """Every ok process of the release's runs: cell_id and wall_time_s."""
    runs = sorted((ROOT / "results" / "releases" / release / "runs").glob("*/processes.parquet"))
    walls = pd.concat([pd.read_parquet(path) for path in runs])
    return walls[walls["status"] == "ok"]


def fitted(walls: pd.DataFrame) -> dict[str, dict[str, float]]:
    """system -> {experiment: median wall, "import": fitted import seconds}."""
    parts = walls["cell_id"].str.split(":", expand=True)
    walls = walls.assign(experiment=parts[0], workload=parts[1], system=parts[2],
                         mode=parts[3].str.split("-").str[1], aa=parts[3].str.endswith("-aa"))
    fits = {}
    for system in SYSTEMS:
        mine = walls[(walls["system"] == system.name) & (walls["workload"] == "mlp-digits")
                     & ~walls["aa"]]
        row = {}
        for experiment in EXPERIMENTS:
            cells = mine[mine["experiment"] == experiment]
            if experiment != "parity":
                cells = cells[[mode_class(experiment, system.framework.name, m) == DEFAULT
                               for m in cells["mode"]]]
            if len(cells):
                row[experiment] = round(statistics.median(cells["wall_time_s"]), 1)
        if row:
            row["import"] = round(max(0.0, min(row.values()) - MIN_WORK_S), 1)
        fits[system.name] = row
    return fits


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2027.02")
    release = parser.parse_args().release
    for name, row in fitted(release_walls(release)).items():
        print(name, " ".join(f"{key}={value}" for key, value in row.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
