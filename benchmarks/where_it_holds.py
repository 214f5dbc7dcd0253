"""Where each answer holds across the runs of a draft, as the home page reads it: how many
answers hold on every run, only where decided, with no difference everywhere, nowhere decided,
or with a margin or winner that depends on the run, and each answer of the last two with every
run's cell. Two runs of one machine kind show whether a kind agrees with itself (a winner that
"depends" there is noise, not the machine); runs of two kinds list the answers whose winner
depends on the CPU, for the release notes. With --release, a published release's runs are read
beside them (judged by today's rule): an answer of that release whose winner is not the winner
on the other machines held only on its own machine, an erratum. Computation on committed data,
not a measurement.

Run: .venv/bin/python benchmarks/where_it_holds.py --run RUN_A --run RUN_B [--release R]
     [--results-dir DIR]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from collections import Counter
from pathlib import Path

from dlbench.core.layout import read_release_info, release_dir, run_dir
from dlbench.report.inputs.labelled import labelled_results
from dlbench.report.inputs.source import load_draft
from dlbench.report.pages.home import machines, source_judgement
from dlbench.report.pages.machine_columns import depends_on_machine, machine_tables
from dlbench.report.verdicts.defaults_answers import defaults_answers
from dlbench.report.verdicts.verdict_table import judged_table

ROOT = Path(__file__).resolve().parent.parent


def holds_tables(results: Path, runs: list[str]) -> list[dict]:
    """The home page's per-machine tables of a draft of `runs`."""
    source = load_draft(results, runs)
    frame = judged_table(source_judgement(source), labelled_results(source),
                         defaults_answers(source.observations, source.cells))
    names = machines(frame, source)
    if not names:
        raise SystemExit("where_it_holds: the runs' verdicts come from one machine; "
                         "give two or more runs (--run A --run B)")
    return machine_tables(frame, names)


def with_release_runs(results: Path, runs: list[str], release: str, scratch: Path
                      ) -> tuple[Path, list[str]]:
    """A results folder in `scratch` holding copies of `runs` and of the release's own runs,
    and the run IDs to read, the release's first: a draft reads runs from one folder."""
    published = release_dir(results, release)
    release_runs = [str(r) for r in read_release_info(published).get("runs", [])]
    for run_id in runs:
        shutil.copytree(run_dir(results, run_id), run_dir(scratch, run_id))
    for run_id in release_runs:
        shutil.copytree(published / "runs" / run_id, run_dir(scratch, run_id))
    return scratch, release_runs + runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="append", required=True, dest="runs")
    parser.add_argument("--release", help="a published release whose runs are read first")
    parser.add_argument("--results-dir", type=Path, default=ROOT / "results")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="where-it-holds-") as scratch:
        results, runs = options.results_dir, options.runs
        if options.release:
            results, runs = with_release_runs(results, runs, options.release, Path(scratch))
        tables = holds_tables(results, runs)
        report(tables, len(runs))


def report(tables: list[dict], run_count: int) -> None:
    """Print the count of answers by where they hold, then each answer whose winner or
    margin depends on the machine, with every machine's cell."""
    outcomes = Counter(row["outcome"] for table in tables for row in table["rows"])
    print(f"{sum(outcomes.values())} answers across {run_count} runs:")
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
