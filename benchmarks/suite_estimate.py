"""What a suite's whole run is expected to take, before anything is measured: the first look
as the runner prints it, each later look if every pair stayed undecided (the bound the runner
prints), and a projection where each later look tops up only a share of the cells
(dlbench.runner.driver.plan.projection, which `dlbench run --dry-run` prints too). Nothing here is
timed.

    python benchmarks/suite_estimate.py --suite standard --experiment training ...
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.runner.driver.plan.cells import PlanError, RunRequest, plan_cells
from dlbench.runner.driver.plan.estimate import recorded_process_seconds
from dlbench.runner.driver.plan.projection import project


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
        history = recorded_process_seconds(Path(args.results_dir)) if args.results_dir else {}
        projection = project(cells, args.suite, history, args.share or None)
    except (PlanError, ValueError) as error:
        parser.error(str(error))
    print("\n".join(projection.lines()))


if __name__ == "__main__":
    main()
