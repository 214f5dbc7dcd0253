"""What a suite's whole run is expected to take, before anything is measured: the first look
as the runner prints it, each later look if every pair stayed undecided (the bound the runner
prints), and a projection where each later look tops up only a share of the cells.

The runner prints the first two figures when a run starts; this prints them without starting
one, plus the projection. The default shares come from release 2027.02, the last standard run
measured alone: its second look topped up 50 of its 77 cells with more than one process (97
planned, 20 of them parity; `results/releases/2027.02/runs/*/run.json`, `looks`); that release
had no third look, so the third look's share is assumed to be the second's squared (a pair
still undecided at 6 processes is as likely to stay undecided again). Nothing here is timed.

    python benchmarks/suite_estimate.py --suite standard --experiment training ...
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from dlbench.runner.plan.cells import PlanError, RunRequest, plan_cells
from dlbench.runner.plan.estimate import estimate, recorded_process_seconds
from dlbench.runner.plan.repeats import SINGLE_PROCESS_EXPERIMENTS, run_design
from dlbench.runner.plan.schedule import process_order
from dlbench.runner.plan.sharing import worker_batches

#: Release 2027.02's second look: 50 of its 77 multi-process cells topped up.
SECOND_LOOK_SHARE = 50 / 77


def look_minutes(suite: str, cells: list, first: int, last: int, history: dict) -> float:
    """Minutes of processes `first`..`last - 1` of every multi-process cell."""
    added = [replace(cell, repeat_index=index, repeats=last) for cell in cells
             if cell.experiment not in SINGLE_PROCESS_EXPERIMENTS
             for index in range(first, last)]
    return estimate(worker_batches(added, suite), history).seconds / 60 if added else 0.0


def main() -> None:
    """Print the first look, the later looks' bound and the projection, in minutes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="standard")
    parser.add_argument("--experiment", action="append", default=[])
    parser.add_argument("--workload", action="append", default=[],
                        help="only this workload (repeatable), as `dlbench run --workload`")
    parser.add_argument("--results-dir", default="", help="earlier runs' times (default none)")
    parser.add_argument("--share", type=float, action="append", default=[],
                        help="share of cells topped up at each later look (repeatable)")
    args = parser.parse_args()
    request = RunRequest(suite=args.suite, experiments=args.experiment, workloads=args.workload,
                         frameworks=[], device="cpu", repeats=None, threads=2,
                         timeout_s=None, data_dir="")
    try:
        cells = plan_cells(request, "cpu")
    except PlanError as error:
        parser.error(str(error))
    history = recorded_process_seconds(Path(args.results_dir)) if args.results_dir else {}
    first = estimate(worker_batches(process_order(cells, 0), args.suite), history)
    design = run_design(args.suite)
    shares = args.share or [SECOND_LOOK_SHARE ** (k + 1) for k in range(len(design.looks) - 1)]
    if len(shares) != len(design.looks) - 1:
        parser.error(f"--share: give one for each of the {len(design.looks) - 1} later looks")
    print(f"{len(cells)} cells; first look: {first.processes} processes, "
          f"{first.seconds / 60:.0f} min")
    total, bound = first.seconds / 60, first.seconds / 60
    for look, (before, after) in enumerate(zip(design.looks, design.looks[1:]), start=2):
        minutes = look_minutes(args.suite, cells, before, after, history)
        share = shares[look - 2]
        total, bound = total + share * minutes, bound + minutes
        print(f"look {look} ({before} -> {after} processes): at most {minutes:.0f} min; "
              f"{share:.2f} of the cells: {share * minutes:.0f} min")
    print(f"whole run: projected {total:.0f} min; at most {bound:.0f} min")


if __name__ == "__main__":
    main()
