"""A release's headline table per question, from the verdicts it stored (verdicts.csv): for
each answer its best contender, its outcome, and the ratio of the best to every other with the
interval the verdict rests on (a time's ratio below 1: the best is faster). Derived answers
(training throughput repeats the epoch time's test) are left out, as the headline counts them.

    .venv/bin/python benchmarks/headline_table.py --release 2027.03 [--question inference-latency]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from dlbench.report.verdicts.stored import read_verdicts

ROOT = Path(__file__).resolve().parent.parent


def table_lines(verdicts: pd.DataFrame, questions: list[str]) -> list[str]:
    """Markdown rows: question, group, outcome, best, and each other contender's ratio."""
    answers = verdicts[(verdicts["row"] == "answer") & (verdicts["derived_from"].fillna("") == "")]
    pairs = verdicts[verdicts["row"] == "pair"]
    lines = ["| question | group | outcome | best | ratio to each other (interval; processes) |",
             "|---|---|---|---|---|"]
    for _, answer in answers.iterrows():
        if questions and answer["question"] not in questions:
            continue
        mine = pairs[(pairs["question"] == answer["question"])
                     & (pairs["group"] == answer["group"])
                     & (pairs["run_id"] == answer["run_id"])]
        others = "; ".join(
            f"{p['contender_b']} {float(p['ratio']):.3g}x ({float(p['ci_low']):.3g}-"
            f"{float(p['ci_high']):.3g}; {int(float(p['processes_a']))}/"
            f"{int(float(p['processes_b']))})"
            for _, p in mine.iterrows() if str(p["ratio"]) not in ("", "nan"))
        lines.append(f"| {answer['question']} | {answer['group']} | {answer['outcome']} | "
                     f"{answer['contender_a']} | {others or '-'} |")
    return lines


def main() -> None:
    """Print the table of one committed release."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", default="2027.02")
    parser.add_argument("--question", action="append", default=[],
                        help="only this question key (repeatable), e.g. inference-latency")
    parser.add_argument("--results-dir", default=str(ROOT / "results"))
    args = parser.parse_args()
    path = Path(args.results_dir) / "releases" / args.release / "verdicts.csv"
    if not path.is_file():
        parser.error(f"{path} not found: a release published with its verdicts is needed")
    print("\n".join(table_lines(read_verdicts(path.read_bytes()), args.question)))


if __name__ == "__main__":
    main()
