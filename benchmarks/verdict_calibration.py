"""Verdict calibration: the rule's false-winner rate and power by simulation at a release's
own spreads, and how the release's answers come out under it.

For each tested verdict of the release (a question group whose systems have a spread between
processes), the simulation draws every system's processes on the log scale with that
system's observed spread and applies the same rule as the site (dlbench/core/calibration.py):
first with every system equal (false winners; goal at most 5% per verdict), then with the
first system 1.1, 1.25, 1.5 and 2 times better than every other (power), look by look. It
does so under the release's own design and under each suite's two-look design, so the gain of
the second look is visible at the same spreads.

Run: .venv/bin/python benchmarks/verdict_calibration.py [--release 2027.01] [--replications 4000]
Prints the tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

from dlbench.core.calibration import POWER_RATIOS, false_winner_rate
from dlbench.core.sequential import SUITE_DESIGNS, Design
from report.pages.home import source_judgement
from report.inputs.source import load_release, source_designs
from report.verdicts.data import calibrate, log_spreads, simulated

ROOT = Path(__file__).resolve().parent.parent


def answers_line(found: list) -> str:
    """How the release's answers came out: winners among the timing (non-accuracy) ones."""
    timing = [v for v in found if v.pairings and v.question != "accuracy"]
    outcomes = collections.Counter(v.outcome.value for v in timing)
    return (f"{len(timing)} timing and memory answers: {outcomes['winner']} name a winner, "
            f"{outcomes['no meaningful difference']} no meaningful difference, "
            f"{outcomes['inconclusive']} inconclusive")


def print_table(title: str, rows: list[dict]) -> None:
    """One calibration table, as the methodology page prints it."""
    print(f"\n{title}")
    ratios = " ".join(f"{'power ' + str(r) + 'x':>12}" for r in POWER_RATIOS)
    print(f"{'look':>4} {'processes':>10} {'verdicts':>8} {'false winners':>14} {ratios}")
    for row in rows:
        powers = " ".join(f"{p:>12}" for p in row["power"])
        print(f"{row['look']:>4} {row['processes']:>10} {row['verdicts']:>8} "
              f"{row['false_winners']:>14} {powers}")


def worst_verdicts(found: list, designs: dict[str, Design], replications: int) -> None:
    """The tested verdicts with the highest simulated false-winner rate."""
    rates = sorted(((false_winner_rate(log_spreads(v), designs[v.run_id], v.threshold,
                                       replications), v) for v in found if simulated(v)),
                   key=lambda pair: -pair[0])
    print("\nhighest false-winner rates per verdict (goal <= 5%):")
    for rate, verdict in rates[:5]:
        group = dict(verdict.group)
        print(f"  {rate:6.2%}  {verdict.question} {group.get('workload', '')} "
              f"{group.get('mode_class', group.get('system', ''))}: "
              f"{len(verdict.standings)} systems, spreads "
              f"{', '.join(f'{s:.3f}' for s in log_spreads(verdict))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2027.01")
    parser.add_argument("--replications", type=int, default=4000)
    args = parser.parse_args()
    source = load_release(ROOT / "results", args.release)
    judged = source_judgement(source)
    designs = source_designs(source)
    print(f"release {args.release}: {answers_line(judged.answers)}; "
          f"{sum(c.named_winner for c in judged.controls)} of {len(judged.controls)} A/A "
          "controls named a winner")
    print_table(f"its own design ({', '.join(str(d.looks) for d in designs.values())})",
                calibrate(judged.answers, designs, args.replications).rows)
    worst_verdicts(judged.answers, designs, args.replications)
    for suite in ("standard", "full"):
        design = SUITE_DESIGNS[suite]
        as_suite = {run_id: design for run_id in designs}
        rows = calibrate(judged.answers, as_suite, args.replications).rows
        print_table(f"the {suite} suite's design {design.looks} at the same spreads", rows)


if __name__ == "__main__":
    main()
