"""Re-judge a committed release's own tables with the verdict engine of this checkout and count
what it decides: its testable timing answers, its accuracy answers, and A/A controls that
name a winner. Computation on committed data, not a measurement: any machine gives the same.

Testable: a question group with two or more systems and at least one pair with a spread to
test. Timing: a question whose metric is a time or a rate (not accuracy, not memory), not
derived from another question's test (training throughput repeats the epoch time's).
Decided: a winner, or no meaningful difference.

It also prints what issue 38 asks of a release beside the decided share: each judged
experiment and metric's noise floor (A/A twins and split-half estimates, as the engine reads
them) against the 10% goal, and every training cell where a process missed its workload's
target (accuracy is judged only where every system reached it).

`--overturned` lists the release's stored (published) pair decisions that this checkout's
engine, judging every process the release holds, decides otherwise (issue 60: a pair decided
at an early look on three processes a side, overturned by its own cells' later processes).

`--leave-out-steal 0.01` also leaves out every process whose recorded steal is above the
limit, as if it had stayed busy after its re-runs (a what-if: the runner would have measured
it again first).

Run: .venv/bin/python benchmarks/rejudge_release.py [--release 2027.02 | --run RUN_ID]
     [--leave-out-steal L] [--overturned]
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import pandas as pd

from dlbench.core.judging.clusters import SPLIT_FACTOR, slow_share
from dlbench.core.declarations.metrics import METRICS, Direction, is_timing_unit
from dlbench.core.judging.noise_floor import noise_floors
from dlbench.core.judging.verdict_engine import QUESTIONS, judge_controls, repeat_rows
from dlbench.report.inputs.source import (load_draft, load_release, source_designs,
                                          source_processes)
from dlbench.report.verdicts.answers import judge_page
from dlbench.report.verdicts.stored import overturned_pairs, stored_verdicts
from dlbench.report.verdicts.verdict_table import verdicts_frame

sys.path.insert(0, str(Path(__file__).resolve().parent))

from steal_calibration import steal_column  # noqa: E402  (a sibling script)

ROOT = Path(__file__).resolve().parent.parent
ACCURACY_QUESTIONS = {"accuracy"}
MEMORY_QUESTIONS = {"peak-memory", "precision-memory"}
DECIDED = {"winner", "no meaningful difference"}
#: Issue 38's goal for every A/A noise floor.
FLOOR_GOAL = 0.10


def floor_lines(source, processes: pd.DataFrame | None) -> list[str]:
    """One line per run, experiment and judged metric: its noise floor, flagged above the goal."""
    rows = repeat_rows(source.observations, source.cells, processes)
    controls = [c for run_id, design in source_designs(source).items()
                for c in judge_controls(rows[rows["run_id"].astype(str) == run_id],
                                        source.cells, design)]
    judged = {(q.experiment, q.metric) for q in QUESTIONS}
    floors = {k: v for k, v in noise_floors(controls, rows).items() if k[1:] in judged}
    above = [k for k, v in floors.items() if v > FLOOR_GOAL]
    return [f"noise floors: {len(above)} of {len(floors)} above {FLOOR_GOAL:.0%}"] + [
        f"  {experiment} {metric}: {floor:.1%}{'  ABOVE' if key in above else ''}"
        for key, floor in sorted(floors.items()) for _, experiment, metric in [key]]


def slow_lines(source, processes: pd.DataFrame | None) -> list[str]:
    """Per run: the share of timing values (one per process, busy ones left out) more than
    SPLIT_FACTOR slower than their cell's best, over every timing metric a question reads."""
    rows = repeat_rows(source.observations, source.cells, processes)
    read = {q.metric for q in QUESTIONS if q.metric in METRICS
            and is_timing_unit(METRICS[q.metric].unit)}
    rows = rows[rows["metric"].isin(read)]
    lines = []
    for run_id, mine in rows.groupby("run_id"):
        slow = total = 0
        for (_, metric), cell in mine.groupby(["cell_id", "metric"]):
            lower = METRICS[str(metric)].direction is not Direction.HIGHER
            slow += round(slow_share(cell["value"], lower) * len(cell))
            total += len(cell)
        lines.append(f"processes more than {SPLIT_FACTOR}x slower than their cell's best, "
                     f"{run_id}: {slow} of {total} timing values ({slow / max(total, 1):.1%})")
    return lines


def target_lines(observations: pd.DataFrame) -> list[str]:
    """Training cells where a process missed its workload's target, with those processes."""
    reached = observations[observations["metric"] == "reached_target"]
    missed = reached[reached["value"] < 1]
    lines = [f"training targets: {missed['cell_id'].nunique()} of "
             f"{reached['cell_id'].nunique()} cells with a process that missed"]
    for cell_id, rows in missed.groupby("cell_id"):
        lines.append(f"  {cell_id}: processes {sorted(rows['repeat'].astype(int).tolist())}")
    return lines


def testable(verdict) -> bool:
    """Whether a verdict had a pair with a spread to test."""
    return bool(verdict.pairings) and any(p.judgement.test.testable for p in verdict.pairings)


def counted(answers: list, kind: str) -> list:
    """The answers of a kind: testable timing ones, or every accuracy one of two or more
    systems."""
    if kind == "accuracy":  # every group of two or more systems, testable or not
        return [v for v in answers if v.pairings and v.question in ACCURACY_QUESTIONS]
    mine = [v for v in answers if testable(v) and not v.derived_from]
    return [v for v in mine if v.question not in ACCURACY_QUESTIONS | MEMORY_QUESTIONS]


def overturned_lines(source, judged) -> list[str]:
    """The release's published pair decisions that every process it holds decides otherwise."""
    stored = stored_verdicts(source)
    if stored is None:
        return [f"{source.name}: no stored verdicts to compare"]
    today = verdicts_frame(judged.answers, judged.controls, {})
    found = overturned_pairs(stored, today)
    decided = stored[(stored["row"] == "pair") & stored["decision"].isin(
        ["a better", "b better", "different", "no meaningful difference"])]
    lines = [f"{source.name}: {len(found)} of {len(decided)} published decided pairs are "
             "decided otherwise on every process the release holds"]
    for pair in found:
        question, run_id, _, group, cell_a, cell_b = pair["key"]
        lines.append(f"  {run_id} {question} {group}: {cell_a} vs {cell_b}: published "
                     f"{pair['stored']} {pair['stored_ratio']:.3f} (look {pair['look']}, "
                     f"processes {pair['processes']}) -> {pair['today']} "
                     f"{pair['today_ratio']:.3f} (processes {pair['processes_today']})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2027.02")
    parser.add_argument("--run", action="append", default=[], metavar="RUN_ID",
                        help="judge these runs as a draft instead of a release (repeatable)")
    parser.add_argument("--results-dir", default=str(ROOT / "results"),
                        help="where the release lives (default: the checkout's results/)")
    parser.add_argument("--verbose", action="store_true", help="one line per answer")
    parser.add_argument("--leave-out-steal", type=float, default=None,
                        help="leave out processes whose steal share is above this")
    parser.add_argument("--overturned", action="store_true",
                        help="list the published pair decisions judged otherwise today")
    args = parser.parse_args()
    source = (load_draft(Path(args.results_dir), args.run) if args.run
              else load_release(Path(args.results_dir), args.release))
    processes = source_processes(source)
    if args.leave_out_steal is not None and processes is not None:
        steal = processes[steal_column(processes)]
        above = steal.notna() & (steal > args.leave_out_steal) & (processes["busy"] == "")
        processes = processes.assign(busy=processes["busy"].where(~above, "steal"))
        print(f"left out: {int(above.sum())} processes above {args.leave_out_steal:.1%} steal")
    judged = judge_page(source.observations, source.cells,
                        environments={run.run_id: run.environment for run in source.runs},
                        processes=processes, designs=source_designs(source))
    if args.overturned:
        print("\n".join(overturned_lines(source, judged)))
        return
    for kind in ("timing", "accuracy"):
        answers = counted(judged.answers, kind)
        outcomes = collections.Counter(v.outcome.value for v in answers)
        decided = sum(outcomes[o] for o in DECIDED)
        print(f"{kind}: {decided} of {len(answers)} testable answers decided "
              f"({outcomes['winner']} winners, {outcomes['no meaningful difference']} no "
              f"meaningful difference, {outcomes['inconclusive']} inconclusive)")
        if args.verbose:
            for v in answers:
                print(f"  {v.outcome.value:24} {v.question:22} {dict(v.group)} "
                      f"threshold {v.threshold:.0%} leaders {', '.join(v.leaders)}")
    named = sum(c.named_winner for c in judged.controls)
    print(f"A/A controls: {named} of {len(judged.controls)} name a winner")
    print("\n".join(floor_lines(source, processes) + slow_lines(source, processes)
                    + target_lines(source.observations)))


if __name__ == "__main__":
    main()
