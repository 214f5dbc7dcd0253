"""How long a planned run will take, said before it starts.

Each process is estimated from the wall times earlier runs in the same results directory
recorded for the same cell (their median; a cell none of its runs measured takes the newest
committed release that did, measured alone on a quiet machine), and otherwise from a per-experiment,
per-framework default: the quick suite's processes measured on 2 cores (see README; an
experiment a system has no figure for: its declaration's estimate_s), less
the framework's import for cells that share a worker process after its first.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from dlbench.core.declarations import experiments as declared_experiments
from dlbench.core.declarations.modes import FASTEST, mode_class
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.declarations.systems import SYSTEMS
from dlbench.core.storage.tables import read_table
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.plan.machine_scale import (MachineHistory, Source, kind_here, newest,
                                                      run_kind, run_sources, scaled_times)
from dlbench.runner.driver.plan.real_size_estimate import real_size_process_s
from dlbench.runner.workloads.real_size import is_real_size

#: Each system declares its defaults (dlbench.core.declarations.systems, `System.seconds`):
#: - per experiment, the seconds one worker process took on 2 cores. Training, inference and
#:   parity (the quick suite's experiments) are fitted from release 2027.02, measured alone:
#:   the median wall of the digits MLP's default-mode processes
#:   (benchmarks/fit_estimate.py). The others are the old quick suite's processes
#:   (2026-12-03 at 03:30 UTC, run alone, under 4.9% mean CPU steal from the host), less
#:   the 4-5 s Keras on torch and JAX no longer spend importing TensorFlow. Framework import
#:   and first use dominate.
#: - the seconds a cold compile adds to a process in a fastest mode (one ResNet-20 training
#:   process of each, 2026-12-03 at 05:53: torch.compile 63 s against 7 s eager, XLA 19-24 s
#:   against 15-31 s, Keras jit_compile on torch 172 s against 15 s; the quick suite's
#:   compiled execution-mode cell of PyTorch took 46 s).
#: - the seconds a worker process spends starting Python and importing its framework and
#:   the harness, which the cells after the first of a shared process (dlbench.runner.driver.plan.sharing) do
#:   not pay: fitted from the same release as the smallest of the three medians less 1 s,
#:   the least work a process does (benchmarks/fit_estimate.py).
DEFAULT_PROCESS_S: dict[str, dict[str, float]] = {
    experiment: {s.name: s.seconds.per_experiment[experiment] for s in SYSTEMS
                 if experiment in s.seconds.per_experiment}
    for experiment in dict.fromkeys(e for s in SYSTEMS for e in s.seconds.per_experiment)}
FASTEST_EXTRA_S: dict[str, float] = {s.name: s.seconds.compile_extra for s in SYSTEMS}
IMPORT_S: dict[str, float] = {s.name: s.seconds.import_s for s in SYSTEMS}


@dataclass(frozen=True)
class Estimate:
    """The expected seconds of a run's remaining processes, and how many came from history."""

    seconds: float
    processes: int
    from_history: int
    workers: int  # worker processes that measure them (fewer when cells share one)

    def sentence(self) -> str:
        minutes = self.seconds / 60
        source = (f"{self.from_history} from earlier runs of the same cells here or in a "
                  f"committed release, the rest from per-framework defaults" if self.from_history
                  else "from per-framework defaults measured on 2 cores")
        shared = (f" in {self.workers} worker processes (cells of one framework share one)"
                  if self.workers < self.processes else "")
        return (f"expected duration: about {minutes:.0f} min for {self.processes} "
                f"processes{shared} ({source})")


def recorded_process_seconds(results_dir: Path) -> dict[str, float]:
    """The median wall time of every cell's finished processes in earlier runs here, else in
    the newest release (under results_dir/releases) that measured the cell."""
    return newest(recorded_sources(results_dir))


def recorded_sources(results_dir: Path) -> list[Source]:
    """Every earlier run's median process time per cell, with its machine kind (a run that
    kept no environment record: ""), oldest first."""
    return [Source(group, run_kind(root), walls) for group, path, root in run_sources(results_dir)
            if (walls := _median_walls([path]))]


def machine_history(results_dir: Path, kind: str | None = None) -> MachineHistory:
    """The earlier process times here brought to machine kind `kind` (this machine's when
    None): dlbench.runner.driver.plan.machine_scale."""
    return scaled_times(recorded_sources(results_dir), kind_here() if kind is None else kind)


def _median_walls(paths: list[Path]) -> dict[str, float]:
    """The median wall time of each cell's processes in the processes tables at `paths`."""
    times: dict[str, list[float]] = defaultdict(list)
    for path in paths:
        try:
            table = read_table(path, "processes") if path.is_file() else None
        except ResultsFileError:
            continue  # a damaged earlier run does not stop a new one
        if table is None:
            continue
        for cell_id, wall in zip(table["cell_id"], table["wall_time_s"], strict=True):
            if wall and wall > 0:
                times[str(cell_id)].append(float(wall))
    return {cell_id: statistics.median(values) for cell_id, values in times.items()}


def default_process_s(spec: CellSpec) -> float:
    """A process's expected seconds without history (none for a cell that does not run)."""
    if not spec.runs:
        return 0.0
    name = spec.framework_id.name
    if is_real_size(spec.workload) and spec.device == "cpu":  # arithmetic, not first use
        return real_size_process_s(spec, IMPORT_S.get(name, 0.0))
    experiment = declared_experiments.by_name(spec.experiment).estimated_as or spec.experiment
    seconds = DEFAULT_PROCESS_S.get(experiment, {}).get(name)
    if seconds is None:  # a system without a figure for it: the experiment's own estimate
        seconds = declared_experiments.by_name(experiment).estimate_s
    if mode_class(spec.experiment, spec.framework, spec.mode) == FASTEST:
        seconds += FASTEST_EXTRA_S.get(name, 0.0)
    return seconds


def estimate(batches: list[list[CellSpec]], history: dict[str, float]) -> Estimate:
    """The expected duration of `batches`: the cells each worker process measures (one,
    or several sharing it: dlbench.runner.driver.plan.sharing). A recorded wall time is taken as it is; a
    default is a process of its own, so in a shared process every cell after the first
    leaves out its framework's import."""
    known = [history[p.cell_id] for batch in batches for p in batch
             if p.cell_id in history and p.runs]  # a cell recorded as not measured costs 0
    rest = [_default_in_batch(p, position) for batch in batches
            for position, p in enumerate(batch) if p.cell_id not in history or not p.runs]
    return Estimate(sum(known) + sum(rest), sum(map(len, batches)), len(known),
                    len(batches))


def _default_in_batch(spec: CellSpec, position: int) -> float:
    seconds = default_process_s(spec)
    if position == 0:
        return seconds
    return max(1.0, seconds - IMPORT_S.get(spec.framework_id.name, 0.0))
