"""Issue 32's table of a run or release: every real-size cell (ResNet-50, BERT-base) with its
per-sample latency at batch 1 and throughput at its serving batch (median, 95% interval,
processes), its fraction of the measured peak, and a runtime's parity error; a cell that did
not run with its status and reason. Computed from the tables, nothing measured.

    .venv/bin/python benchmarks/real_size_table.py --release 2027.03
    .venv/bin/python benchmarks/real_size_table.py --run 20261205T075341Z-cpu
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from dlbench.report.inputs.source import Source, load_draft, load_release
from dlbench.report.inputs.labelled import labelled_results
from dlbench.core.achieved import cell_fractions

ROOT = Path(__file__).resolve().parent.parent
REAL_SIZE = ("resnet50-synthetic", "bert-base-tokens")
#: The columns of the table: (header, metric) per experiment.
COLUMNS = {"inference": [("latency, batch 1 (ms)", "latency_p50"),
                         ("throughput at the serving batch (samples/s)", "inference_throughput")],
           "export": [("latency, batch 1 (ms)", "artifact_latency"),
                      ("throughput at the serving batch (samples/s)", "artifact_throughput"),
                      ("parity: largest difference", "artifact_max_abs_diff")]}


def value_text(rows: pd.DataFrame, metric: str) -> str:
    """'median (low-high; n)' of one metric of one cell, '-' when it was not measured."""
    found = rows[rows["metric"] == metric]
    if found.empty:
        return "-"
    row = found.iloc[0]
    return f"{row['median']:.4g} ({row['ci_low']:.4g}-{row['ci_high']:.4g}; {int(row['n'])})"


def table_lines(source: Source) -> list[str]:
    """Markdown tables, one per experiment, of the real-size cells of `source`."""
    summary = labelled_results(source)
    fractions = cell_fractions(source.observations, source.cells,
                               {run.run_id: run.environment for run in source.runs})
    cells = source.cells[source.cells["workload"].isin(REAL_SIZE)].drop_duplicates(
        ["run_id", "cell_id"])
    lines = []
    for experiment, columns in COLUMNS.items():
        mine = cells[cells["experiment"] == experiment].sort_values("cell_id")
        if mine.empty:
            continue
        lines += ["", f"### {experiment}", "",
                  "| cell | status | " + " | ".join(h for h, _ in columns)
                  + " | fraction of peak |", "|---" * (len(columns) + 3) + "|"]
        for _, cell in mine.iterrows():
            rows = summary[(summary["run_id"] == cell["run_id"])
                           & (summary["cell_id"] == cell["cell_id"])]
            fraction = fractions.get((str(cell["run_id"]), str(cell["cell_id"])))
            status = str(cell["status"]) + (f": {str(cell['reason'])[:80]}"
                                             if cell["status"] != "ok" else "")
            lines.append(f"| {cell['cell_id']} | {status} | "
                         + " | ".join(value_text(rows, m) for _, m in columns)
                         + f" | {'-' if fraction is None else f'{fraction:.0%}'} |")
    return lines


def main() -> None:
    """Print the table of one release or one run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--release")
    which.add_argument("--run")
    parser.add_argument("--results-dir", default=str(ROOT / "results"))
    args = parser.parse_args()
    results = Path(args.results_dir)
    source = (load_release(results, args.release) if args.release
              else load_draft(results, [args.run]))
    print("\n".join(table_lines(source)))


if __name__ == "__main__":
    main()
