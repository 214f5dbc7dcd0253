"""Count the values whose label names a batch they were not measured at, per committed
release (issue 53): the result rows and chart labels of the experiment pages (the summary's
variant), the citation of each result, and the home page's answer rows.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/batch_labels.py [--release R ...]

The batch a value was measured at is read here from the cell's recorded parameters and the
protocol's own words, not from dlbench.core.declarations.measured_batch, so the count also runs
against code from before that module (an older checkout installed with `pip install -e`): latency
and the first call are one sample per call, inference and precision throughput run at
`throughput_batch` (512 when not recorded), everything else at the cell's batch.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
ONE_SAMPLE = ("inference_latency", "latency_p50", "latency_p90", "latency_p99",
              "artifact_latency", "first_call_time")
BATCH = re.compile(r"\bbatch(?:es)? (\d+)\b")


def true_batch(experiment: str, metric: str, batch_size: int, config_json: str) -> int:
    """The batch a value was measured at, from its cell's recorded parameters."""
    params = json.loads(config_json or "{}").get("params") or {}
    if metric in ONE_SAMPLE:
        return 1
    if metric == "inference_throughput" and (experiment in ("inference", "precision")
                                             or "throughput_batch" in params):
        return int(params.get("throughput_batch", 512))
    return int(batch_size)


def label_batches(label: str) -> set[int]:
    """The batches a label names."""
    return {int(b) for b in BATCH.findall(label)}


def release_counts(results: Path, name: str) -> dict[str, int]:
    """Mislabelled values of one release, by where the label is shown."""
    from dlbench.report.inputs.source import load_release
    from dlbench.report.inputs.labelled import labelled_results

    source = load_release(results, name)
    summary = labelled_results(source)
    cells = source.cells.drop_duplicates(["run_id", "cell_id"]).set_index(["run_id", "cell_id"])
    wrong = {"rows": 0, "labels": len(summary)}
    for row in summary.itertuples(index=False):
        cell = cells.loc[(row.run_id, row.cell_id)]
        truth = true_batch(str(row.experiment), str(row.metric), int(cell["batch_size"]),
                           str(cell["config_json"]))
        # a memory value of an inference cell spans both batches: its label names both
        named = label_batches(str(row.variant))
        if truth not in named or (len(named) > 1 and not str(row.metric).endswith("memory")):
            wrong["rows"] += 1
    wrong |= home_counts(source, cells)
    return wrong


def home_counts(source, cells: pd.DataFrame) -> dict[str, int]:
    """Home-page answer rows (from the release's stored verdicts) whose label names a batch
    their values were not measured at."""
    from dlbench.core.judging.verdict_engine import QUESTIONS
    from dlbench.report.pages import answer_tables as tables_module
    from dlbench.report.verdicts.stored import stored_verdicts

    frame = stored_verdicts(source)
    if frame is None:
        return {"home": 0, "home_rows": 0}
    try:  # the batch index exists since issue 53
        from dlbench.report.inputs.labelled import batch_index
        tables = tables_module.answer_tables(frame, {}, {}, batch_index(source.cells))
    except ImportError:
        tables = tables_module.answer_tables(frame, {}, {})
    compared = tables_module.compared_answers(frame)
    wrong = total = 0
    for table in tables:
        question = next(q for q in QUESTIONS if q.key == table["key"])
        if question.parity:  # the same model from the same start: not a compared answer
            continue
        answers = compared[compared["question"] == question.key].to_dict("records")
        for answer, row in zip(answers, table["rows"], strict=True):
            cell = cells.loc[(answer["run_id"], answer["cell_a"])]
            truth = true_batch(question.experiment, question.metric, int(cell["batch_size"]),
                               str(cell["config_json"]))
            total += 1
            wrong += truth not in label_batches(row["label"])
    return {"home": wrong, "home_rows": total}


def main() -> None:
    """Print one line per release: mislabelled result rows and home-page answer rows."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--release", nargs="*", default=None)
    args = parser.parse_args()
    results = ROOT / "results"
    releases = args.release or sorted(p.name for p in (results / "releases").iterdir()
                                      if p.is_dir())
    for name in releases:
        counts = release_counts(results, name)
        print(f"{name}: {counts['rows']} of {counts['labels']} result labels (tables, charts, "
              f"citations) and {counts['home']} of {counts['home_rows']} home-page answer rows "
              f"name a batch the value was not measured at")


if __name__ == "__main__":
    main()
