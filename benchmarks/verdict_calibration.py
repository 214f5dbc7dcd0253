"""Verdict calibration: the rule's false-winner rate and power by simulation at a release's
own spreads, and how the release's answers come out under it.

For each tested verdict of the release (a question group whose systems have a spread between
processes), the simulation draws every system's processes on the log scale with that
system's observed spread and applies the same rule as the site
(dlbench/core/judging/calibration.py): first with every system equal (false winners; goal at most 5%
per verdict), then with the first system 1.1, 1.25, 1.5 and 2 times better than every other (power),
look by look. It does so under the release's own design and under each suite's three-look design, so
the gain of the third look is visible at the same spreads. Last, each testable timing answer is
simulated at its own observed ratios and spreads (a plug-in estimate, optimistic for the
answers that named a winner) under each suite's design: the expected number decided.

`--spread-scale 0.5` also simulates the worst verdicts and the plug-in with every spread
halved: the design after a fix of the per-process slow state, before a release measures it.

Run: .venv/bin/python benchmarks/verdict_calibration.py [--release 2027.02] [--replications 4000]
Prints the tables; asserts nothing.
"""

from __future__ import annotations

import argparse
import collections
from pathlib import Path

import numpy as np

from dlbench.core.judging.calibration import POWER_RATIOS, false_winner_rate, simulate
from dlbench.core.judging.sequential import SUITE_DESIGNS, Design
from dlbench.report.pages.home import source_judgement
from dlbench.report.inputs.source import load_release, source_designs
from dlbench.report.verdicts.verdict_table import calibrate, log_spreads, simulated

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


def worst_verdicts(found: list, designs: dict[str, Design], replications: int,
                   scale: float = 1.0) -> None:
    """The tested verdicts with the highest simulated false-winner rate."""
    rates = sorted(((false_winner_rate(log_spreads(v) * scale, designs[v.run_id], v.threshold,
                                       replications), v) for v in found if simulated(v)),
                   key=lambda pair: -pair[0])
    print(f"\nhighest false-winner rates per verdict under {next(iter(designs.values())).looks}"
          f" (goal <= 5%; spreads x{scale:g}):")
    for rate, verdict in rates[:5]:
        group = dict(verdict.group)
        print(f"  {rate:6.2%}  {verdict.question} {group.get('workload', '')} "
              f"{group.get('mode_class', group.get('system', ''))}: "
              f"{len(verdict.standings)} systems, spreads "
              f"{', '.join(f'{s:.3f}' for s in log_spreads(verdict) * scale)}")


TIMING_EXCLUDED = {"accuracy", "peak-memory", "precision-memory"}


def expected_decided(found: list, design: Design, replications: int, scale: float) -> float:
    """Sum over the testable timing answers of the chance the design names the observed
    leader, simulated at each answer's observed log ratios and spreads."""
    total = 0.0
    for verdict in found:
        if (verdict.question in TIMING_EXCLUDED or verdict.derived_from
                or not simulated(verdict)):
            continue
        means = np.log([s.geometric_mean for s in verdict.standings])
        shifts = (means - means[0]) * (-1 if verdict.direction.value == "higher" else 1)
        total += simulate(log_spreads(verdict) * scale, shifts, design, verdict.threshold,
                          replications).true_winner_rate
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2027.02")
    parser.add_argument("--replications", type=int, default=4000)
    parser.add_argument("--spread-scale", type=float, default=1.0,
                        help="multiply every observed spread (a what-if; 1 = as measured)")
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
    testable = sum(1 for v in judged.answers if v.question not in TIMING_EXCLUDED
                   and not v.derived_from and simulated(v))
    print(f"\nplug-in, {testable} simulable timing answers at their observed ratios:")
    for name, design in [("its own", next(iter(designs.values()))),
                         *((s, SUITE_DESIGNS[s]) for s in ("standard", "full"))]:
        for scale in sorted({1.0, args.spread_scale}, reverse=True):
            expected = expected_decided(judged.answers, design, args.replications // 4, scale)
            print(f"  {name} design {design.looks}, spreads x{scale:g}: {expected:.1f} "
                  "expected to name a winner")
    for suite in ("standard", "full"):
        as_suite = {run_id: SUITE_DESIGNS[suite] for run_id in designs}
        for scale in sorted({1.0, args.spread_scale}, reverse=True):
            worst_verdicts(judged.answers, as_suite, args.replications, scale)


if __name__ == "__main__":
    main()
