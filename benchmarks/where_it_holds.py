"""Where each answer holds across the runs of a draft, as the home page reads it: how many
answers hold on every run, only where decided, with no difference everywhere, nowhere decided,
or with a margin or winner that depends on the run, and each answer of the last two with every
run's cell. Two runs of one machine kind show whether a kind agrees with itself (a winner that
"depends" there is noise, not the machine); runs of two kinds list the answers whose winner
depends on the CPU, for the release notes. With --release, a published release's machines are read
first, at its published verdicts: an answer of that release whose winner is not the winner on
the other machines held only on its own machine, an erratum. Computation on committed data,
not a measurement.

Run: .venv/bin/python benchmarks/where_it_holds.py --run RUN_A --run RUN_B [--release R]
     [--results-dir DIR]
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import pandas as pd

from dlbench.report.inputs.labelled import labelled_results
from dlbench.report.inputs.source import Source, load_draft, load_release
from dlbench.report.pages.home import machine_hardware, source_judgement
from dlbench.report.pages.machine_columns import (depends_on_machine, machine_names,
                                                  machine_tables)
from dlbench.report.render.user_text import plain_text
from dlbench.report.verdicts.stored import stored_verdicts
from dlbench.report.verdicts.verdict_table import judged_table

ROOT = Path(__file__).resolve().parent.parent


def judged(source: Source) -> pd.DataFrame:
    """The verdicts table a build of `source` judges today."""
    return judged_table(source_judgement(source), labelled_results(source),
                        source.observations, source.cells)


def holds_tables(results: Path, runs: list[str], release: str = "") -> list[dict]:
    """The home page's per-machine tables of a draft of `runs`; with `release`, that release's
    machines first, at its published verdicts (judged apart: a release's run and a later
    suite's may measure one cell in different configurations, which a draft refuses)."""
    sources = ([(load_release(results, release), True)] if release else []) + [
        (load_draft(results, runs), False)]
    frames, words = [], {}
    for source, published in sources:
        stored = stored_verdicts(source) if published else None
        frame = judged(source) if stored is None else stored
        frames.append(frame)
        words |= machine_hardware(frame, source)
    if len(words) < 2:
        raise SystemExit("where_it_holds: the verdicts come from one machine; give two or "
                         "more runs (--run A --run B), or a release (--release R)")
    kinds = {machine: plain_text(hardware) for machine, hardware in words.items()}
    return machine_tables(pd.concat(frames, ignore_index=True), machine_names(words), kinds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, dest="runs")
    parser.add_argument("--release", default="",
                        help="a published release whose machines are read first, as published")
    parser.add_argument("--results-dir", type=Path, default=ROOT / "results")
    options = parser.parse_args()
    tables = holds_tables(options.results_dir, options.runs, options.release)
    report(tables, len(options.runs) + bool(options.release))


def report(tables: list[dict], run_count: int) -> None:
    """Print the count of answers by where they hold, then each answer whose winner or
    margin depends on the machine, with every machine's cell."""
    outcomes = Counter(row["outcome"] for table in tables for row in table["rows"])
    print(f"{sum(outcomes.values())} answers across {run_count} sources:")
    for outcome, count in outcomes.most_common():
        print(f"  {count:3d}  {outcome}")
    columns = tables[0]["columns"] if tables else []
    cells = {(t["title"], r["label"]): r["cells"] for t in tables for r in t["rows"]}
    for answer in depends_on_machine(tables):
        print(f"\n{answer['title']}: {answer['label']}\n  {answer['holds']}")
        for column, cell in zip(columns, cells[(answer["title"], answer["label"])],
                                strict=True):
            print(f"    {column}: {cell}")


if __name__ == "__main__":
    main()
