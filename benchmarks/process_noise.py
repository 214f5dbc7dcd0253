"""Process noise: one cell measured as N independent worker processes through the runner's
real worker path (dlbench.runner.driver.launch.execute.execute_cell), and how far apart they come out.

Prints, per suspect: the spread between processes (sd of log values), the slowest over the
best, and the share of processes more than 1.25x slower than the cell's best (release
2027.02: 25-36% across cells). Each suspect changes one thing about how the worker starts:

  baseline       as the runner starts it
  no-affinity    the process may use every core (DLBENCH_CPU_AFFINITY = all)
  omp-bind       OpenMP threads bound to cores (OMP_PROC_BIND=close, OMP_PLACES=cores)
  omp-passive    OpenMP threads sleep when idle (OMP_WAIT_POLICY=PASSIVE, KMP_BLOCKTIME=0)
  omp-active     OpenMP threads spin when idle (OMP_WAIT_POLICY=ACTIVE)
  onednn-avx2    oneDNN held to AVX2 kernels (ONEDNN_MAX_CPU_ISA=AVX2)
  onednn-off     TensorFlow without oneDNN (TF_ENABLE_ONEDNN_OPTS=0)
  arena-1        one glibc malloc arena (MALLOC_ARENA_MAX=1)
  jemalloc       jemalloc via LD_PRELOAD (Debian package libjemalloc2)
  tcmalloc       tcmalloc via LD_PRELOAD (Debian package libtcmalloc-minimal4)
  thp-off        no transparent huge pages (prctl PR_SET_THP_DISABLE)
  thp-malloc     glibc malloc asks for huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1)
  small-env      the worker's environment reduced to what it needs
  aslr-off       no address-space randomisation (setarch -R)

Timing taken on a shared machine is no result: run it alone. A suspect whose library is not
installed is reported as skipped, with the package to install.

Run: .venv/bin/python benchmarks/process_noise.py --cell mlp-latency --suspect baseline
         [--processes 20] [--framework pytorch]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from dlbench.core.judging.clusters import SPLIT_FACTOR, slow_share
from dlbench.core.declarations.modes import DEFAULT, mode_class
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.plan.cells import plan_cells
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.launch.execute import Launch, execute_cell

#: The cells the issue names: one overhead-bound, one compute-bound.
CELLS: dict[str, tuple[str, str, str]] = {
    # name: (experiment, workload, metric); the framework's plain (default-class) mode, fp32
    "mlp-latency": ("inference", "mlp-digits", "latency_p50"),
    "resnet-epoch": ("training", "resnet-synthetic", "steady_epoch_time"),
}
LIBRARIES = {"jemalloc": ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "libjemalloc2"),
             "tcmalloc": ("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4",
                          "libtcmalloc-minimal4")}
KEPT_VARIABLES = ("PATH", "HOME", "LANG", "PYTHONPATH", "VIRTUAL_ENV", "TMPDIR")


def _setting(**values: str) -> Callable[[dict[str, str]], dict[str, str]]:
    return lambda env: env | values


def _all_cores(env: dict[str, str]) -> dict[str, str]:
    return env | {"DLBENCH_CPU_AFFINITY": ",".join(map(str, sorted(os.sched_getaffinity(0))))}


def _small(env: dict[str, str]) -> dict[str, str]:
    from dlbench.runner.cell.environment import PINNED_VARIABLES

    return {k: v for k, v in env.items() if k in PINNED_VARIABLES or k in KEPT_VARIABLES}


def launches() -> dict[str, Launch]:
    """Every suspect's way of starting the worker."""
    return {
        "baseline": Launch(),
        "no-affinity": Launch(environment=_all_cores),
        "omp-bind": Launch(environment=_setting(OMP_PROC_BIND="close", OMP_PLACES="cores")),
        "omp-passive": Launch(environment=_setting(OMP_WAIT_POLICY="PASSIVE", KMP_BLOCKTIME="0")),
        "omp-active": Launch(environment=_setting(OMP_WAIT_POLICY="ACTIVE")),
        "onednn-avx2": Launch(environment=_setting(ONEDNN_MAX_CPU_ISA="AVX2",
                                                   DNNL_MAX_CPU_ISA="AVX2")),
        "onednn-off": Launch(environment=_setting(TF_ENABLE_ONEDNN_OPTS="0")),
        "arena-1": Launch(environment=_setting(MALLOC_ARENA_MAX="1")),
        **{name: Launch(environment=_setting(LD_PRELOAD=path))
           for name, (path, _) in LIBRARIES.items()},
        "thp-off": Launch(thp_disabled=True),
        "thp-malloc": Launch(environment=_setting(GLIBC_TUNABLES="glibc.malloc.hugetlb=1")),
        "small-env": Launch(environment=_small),
        "aslr-off": Launch(prefix=("setarch", platform.machine(), "-R")),
    }


def missing(suspect: str) -> str:
    """Why a suspect cannot run here ("" when it can)."""
    if suspect in LIBRARIES and not Path(LIBRARIES[suspect][0]).is_file():
        return f"{LIBRARIES[suspect][0]} is not installed (apt-get install {LIBRARIES[suspect][1]})"
    return ""


def the_cell(name: str, framework: str, processes: int) -> CellSpec:
    """The standard suite's CPU cell `name` of `framework`, planned as the runner plans it."""
    experiment, workload, _ = CELLS[name]
    request = RunRequest("standard", [experiment], [workload], [framework], "cpu", processes,
                         None, None, "")
    cells = [c for c in plan_cells(request, "cpu")
             if mode_class(experiment, c.framework, c.mode) == DEFAULT
             and c.precision == "fp32" and not c.cell_id.split(":")[3].endswith("-aa")]
    if not cells:
        raise SystemExit(f"no {name} cell of {framework} in the standard suite's plan")
    return cells[0]


def measure_once(cell: CellSpec, metric: str, launch: Launch, index: int) -> tuple[float, float]:
    """The metric's value in one fresh worker process, and the timed window's CPU steal."""
    record = execute_cell(replace(cell, repeat_index=index), launch)
    found = [o.value for o in record.outcome.observations if o.metric == metric and o.step is None]
    if not found:
        raise SystemExit(f"process {index}: {record.outcome.status.value}: "
                         f"{record.outcome.reason or record.stderr_tail[-300:]}")
    return found[0], float(record.machine.get("timed_steal_share", math.nan))


def measure(cell: CellSpec, metric: str, suspects: list[str], processes: int,
            rows: list[str]) -> dict[str, np.ndarray]:
    """Each suspect's metric in `processes` fresh worker processes, the suspects interleaved
    round by round so that a change of the machine's state over the run falls on all alike."""
    values: dict[str, list[float]] = {s: [] for s in suspects}
    for index in range(processes):
        for suspect in suspects:
            value, steal = measure_once(cell, metric, launches()[suspect], index)
            values[suspect].append(value)
            rows.append(f"{suspect},{index},{value:.6g},{steal:.4f}")
    return {s: np.asarray(v, float) for s, v in values.items()}


def spread_line(suspect: str, values: np.ndarray, lower_is_better: bool) -> str:
    """The suspect's spread between processes and share of slow ones."""
    logs = np.log(values) if lower_is_better else -np.log(values)
    best = logs.min()
    slow = slow_share(values, lower_is_better)
    return (f"{suspect:12} n={len(values):3}  sd(log) {np.std(logs, ddof=1):.3f}  "
            f"slowest/best {math.exp(logs.max() - best):.2f}x  "
            f"share > {SPLIT_FACTOR}x best: {slow:.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cell", choices=sorted(CELLS), default="mlp-latency")
    parser.add_argument("--suspect", choices=sorted(launches()), nargs="+",
                        default=["baseline"])
    parser.add_argument("--processes", type=int, default=20)
    parser.add_argument("--framework", default="pytorch")
    parser.add_argument("--rows", type=Path, help="also write every process's value and "
                        "timed-window steal to this CSV file")
    args = parser.parse_args()
    if args.processes < 2:
        parser.error(f"--processes must be at least 2 (a spread needs two), got {args.processes}")
    cell = the_cell(args.cell, args.framework, args.processes)
    metric = CELLS[args.cell][2]
    print(f"{cell.cell_id}, {metric}, {args.processes} processes per suspect, interleaved")
    runnable = []
    for suspect in args.suspect:
        why = missing(suspect)
        if why:
            print(f"{suspect:12} skipped: {why}")
        else:
            runnable.append(suspect)
    rows = ["suspect,process,value,timed_steal_share"]
    try:
        values = measure(cell, metric, runnable, args.processes, rows)
    finally:
        if args.rows:
            args.rows.write_text("\n".join(rows) + "\n")
    for suspect in runnable:
        print(spread_line(suspect, values[suspect],
                          lower_is_better=metric != "inference_throughput"))


if __name__ == "__main__":
    main()
