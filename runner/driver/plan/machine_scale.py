"""Earlier runs' process times, scaled to the machine a run is planned on.

Absolute times belong to one machine kind (dlbench.core.machine.machines): release 2027.04's AMD
EPYC run took 104 minutes against 68 projected, because its projection read the Intel Xeon runs'
times as they were. Here each cell's time comes from runs of this machine's kind where one
measured it; a cell measured only on other kinds takes their time times this kind's factor:
the summed times of the cells measured on both, this kind's over the others'. The factor
is the machine probe: the same cells measured on the same kind. On 2027.04's runs (its three
processes tables) the AMD EPYC's digits MLP cells took 1.31-1.35 times the Intel Xeon's, and
its whole first look 1.30 times; its matrix-multiply probe said 2.0 (fp32 FLOP/s), which
describes arithmetic, not the imports and per-call overhead most of a process is.

A kind none of whose cells were measured takes the other kinds' times unscaled, and says so
with the cheapest way to measure some (the machine suite's parity cells: one process each,
about half a minute on 2 cores).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from dlbench.core.storage import layout
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.machine.machines import machine_kind

#: What a kind with no measured cell of the suite runs to get a factor.
PROBE_COMMAND = "dlbench run --suite machine --experiment parity"


@dataclass(frozen=True)
class MachineHistory:
    """Per cell, the expected seconds of one process on `kind`, and how they were scaled."""

    kind: str
    times: dict[str, float]
    factor: float  # this kind's times over the other kinds', on the cells both measured
    shared: int  # the cells both measured (0: no factor, other kinds' times unscaled)
    own: int  # the cells this kind measured itself

    def sentence(self) -> str:
        """How the earlier times were brought to this machine, in words."""
        if self.shared:
            return (f"machine {self.kind}: {self.own} cells from runs of this kind; the others "
                    f"from other kinds' runs x {self.factor:.2f} (this kind's time over theirs "
                    f"on {self.shared} cells measured on both)")
        if self.own:
            return f"machine {self.kind}: {self.own} cells from runs of this kind"
        return (f"machine {self.kind}: no run of this kind measured a cell of it; other kinds' "
                f"times unscaled (`{PROBE_COMMAND}` measures a few, about a minute, and "
                f"scales the rest)")


@dataclass(frozen=True)
class Source:
    """One run's median process time per cell, with its machine kind and where it is kept
    (a release's name, or "runs" for this results folder's own runs)."""

    group: str
    kind: str
    times: dict[str, float]


def run_sources(results_dir: Path) -> Iterator[tuple[str, Path, Path]]:
    """(group, processes table, run folder) of every run with process times: the committed
    releases' runs oldest release first, then this folder's own runs (newer sources last)."""
    for name in layout.release_names(results_dir):
        release = layout.release_dir(results_dir, name)
        for path in sorted((release / "runs").glob("*/processes.parquet")):
            yield name, path, path.parent
    for run_id in layout.run_ids(results_dir):
        folder = layout.run_dir(results_dir, run_id)
        yield "runs", folder / "processes.parquet", folder


def run_kind(run_root: Path) -> str:
    """The machine kind key of a run ("" when it kept no readable environment record)."""
    try:
        environment = layout.read_environment(run_root)
    except (ResultsFileError, OSError, ValueError):
        return ""
    return machine_kind(environment).key if environment.get("cpu") else ""


def kind_features(results_dir: Path, kind: str) -> dict[str, bool]:
    """The kernel-deciding ISA features (dlbench.core.machine.cpu_flags.isa_features' keys) the
    newest run of machine kind `kind` recorded; {} where no run of the kind kept one."""
    from dlbench.core.machine.cpu_flags import ISA_FLAGS

    features: dict[str, bool] = {}
    for _, _, root in run_sources(results_dir):
        if run_kind(root) == kind:
            cpu = layout.read_environment(root)["cpu"]
            features = {key: bool(cpu.get(key)) for key in (*ISA_FLAGS, "amx")}
    return features


def newest(sources: list[Source]) -> dict[str, float]:
    """Each cell's time from the newest of `sources` that measured it."""
    times: dict[str, float] = {}
    for source in sources:
        times |= source.times
    return times


def scaled_times(sources: list[Source], kind: str) -> MachineHistory:
    """Each cell's seconds on `kind`: its own where a run of the kind measured it, else the
    other kinds' times the factor. The factor pairs like with like: the cells both measured
    in the newest group (release or own runs) holding this kind and another, else in all."""
    own, others = ([s for s in sources if (s.kind == kind) is mine] for mine in (True, False))
    mine, theirs = newest(own), newest(others)
    groups = [s.group for s in own if any(o.group == s.group for o in others)]
    if groups:
        pair = [newest([s for s in sides if s.group == groups[-1]]) for sides in (own, others)]
    else:
        pair = [mine, theirs]
    shared = sorted(pair[0].keys() & pair[1].keys())
    total = sum(pair[1][cell] for cell in shared)
    factor = sum(pair[0][cell] for cell in shared) / total if total > 0 else 1.0
    times = {cell: seconds * factor for cell, seconds in theirs.items()} | mine
    return MachineHistory(kind, times, factor, len(shared) if total > 0 else 0, len(mine))


def kind_here() -> str:
    """This machine's kind key, from its CPU record without the frameworks' kernel probes
    (which import every framework)."""
    import os
    import platform

    from dlbench.core.machine.cpu_flags import isa_features
    from dlbench.runner.driver.machine.kernels import cpu_info, vendor_name

    info = cpu_info()
    cpu = {"vendor": vendor_name(info.get("vendor_id_raw", "")),
           "model": info.get("brand_raw", platform.processor()),
           "arch": info.get("arch", platform.machine()),
           "usable_cores": len(os.sched_getaffinity(0)),
           **isa_features(set(info.get("flags", [])))}
    return machine_kind({"cpu": cpu}).key
