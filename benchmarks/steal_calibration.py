"""Steal calibration: how much slower a timed process runs per bin of CPU steal, from a
release's own tables, and the limit on timed-window steal that data suggests
(dlbench.runner.driver.machine.load.MAX_TIMED_STEAL_SHARE: above it a process is measured again and, if it
stays busy, left out). Computation on committed data, not a measurement.

Releases before the timed window was recorded have steal over the whole process only; the
table says which it read.

Run: .venv/bin/python benchmarks/steal_calibration.py [--release 2027.02]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.core.steal import by_bin, explained_share, slowdowns, steal_column, suggested_limit
from dlbench.report.inputs.source import load_release, source_processes

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2027.02")
    args = parser.parse_args()
    source = load_release(ROOT / "results", args.release)
    processes = source_processes(source)
    if processes is None or not len(processes):
        raise SystemExit(f"release {args.release} has no processes table: nothing to calibrate")
    found = slowdowns(source.observations, processes)
    print(f"release {args.release}: {len(found)} timed process values, steal read from "
          f"{steal_column(processes)}")
    print(by_bin(found).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    slope, r2 = explained_share(found)
    print(f"a line through slowdown on steal: {slope:.3f}x per 1% of steal, R^2 {r2:.2f}")
    limit = suggested_limit(found)
    print("suggested limit: " + ("none (no bin is slower than 1.025x)" if limit is None
                                 else f"{limit:.1%} of steal"))


if __name__ == "__main__":
    main()
