"""Training to a target: each process records whether it reached the workload's target, a
cell that missed says so on its page, and no accuracy verdict is judged on it."""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.harness_fixtures import numpy_cell
from tests.judging_fixtures import CPU_ENV, noisy, tables

from dlbench.report.pages.experiment import _rows, table_columns
from dlbench.core.judging.targets import MISSED_NOTE, missed_target, reached_target_only
from dlbench.core.judging.sequential import three_looks
from dlbench.core.judging.verdict_engine import QUESTIONS, undecided_cells
from dlbench.core.judging.outcomes import Outcome
from dlbench.report.verdicts.answers import answer
from dlbench.runner.worker.epochs import EpochClock
from dlbench.runner.worker.harness.training import target_observations
from dlbench.runner.cell.spec import CellSpec

SPEC = CellSpec(experiment="training", workload="mlp-digits", framework="pytorch", backend="",
                device="cpu", batch_size=32, repeats=3, params={"epochs": 3})
ACCURACY = next(q for q in QUESTIONS if q.key == "accuracy")


def _clock(accuracies: list[float]) -> EpochClock:
    clock = EpochClock(iter(accuracies).__next__)
    for epoch in range(len(accuracies)):
        clock.begin(epoch)
        clock.end(epoch, 0.5)
    clock.times = [1.0, 2.0, 4.0][:len(accuracies)]
    return clock


def _values(accuracies: list[float], target: float = 0.9) -> dict[str, float]:
    observed = target_observations(numpy_cell(SPEC), _clock(accuracies), target)
    return {o.metric: o.value for o in observed}


def test_a_process_that_ends_at_its_target_reached_it_and_says_when_it_first_did():
    assert _values([0.5, 0.92, 0.95]) == {"reached_target": 1.0, "time_to_target": 3.0}


def test_a_process_that_fell_below_its_target_did_not_reach_it_but_keeps_its_time():
    assert _values([0.5, 0.92, 0.85]) == {"reached_target": 0.0, "time_to_target": 3.0}


def test_a_process_that_never_reached_its_target_records_no_time_to_target():
    assert _values([0.1, 0.2, 0.3]) == {"reached_target": 0.0}


def _cells(tensorflow_reached: list[int]) -> list[dict]:
    return [{"system": "pytorch", "values": {"test_accuracy": noisy(0.95, 1, n=5),
                                             "reached_target": [1] * 5,
                                             "steady_epoch_time": noisy(1.0, 2, n=5)}},
            {"system": "tensorflow", "values": {"test_accuracy": noisy(0.90, 3, n=5),
                                                "reached_target": tensorflow_reached,
                                                "steady_epoch_time": noisy(1.2, 4, n=5)}}]


def test_a_cell_with_one_process_below_target_missed_it():
    observations, cells = tables(_cells([1, 1, 0, 1, 1]))
    tensorflow = cells.loc[cells["framework"] == "tensorflow", "cell_id"].item()
    assert missed_target(observations) == {("r1", tensorflow)}
    assert missed_target(tables(_cells([1] * 5))[0]) == set()


def test_only_the_accuracy_rows_of_a_missed_cell_are_left_out():
    observations, cells = tables(_cells([0] * 5))
    kept = reached_target_only(observations, observations)
    tensorflow = kept[kept["framework"] == "tensorflow"]
    assert "test_accuracy" not in set(tensorflow["metric"])
    assert {"steady_epoch_time", "reached_target"} <= set(tensorflow["metric"])
    assert len(kept[kept["framework"] == "pytorch"]) == 15


@pytest.mark.parametrize("reached, contenders", [([1] * 5, 2), ([0] * 5, 1)])
def test_the_accuracy_verdict_is_judged_only_on_cells_that_reached_their_target(reached,
                                                                               contenders):
    [verdict] = answer(ACCURACY, *tables(_cells(reached)), environments={"r1": CPU_ENV})
    assert len(verdict.standings) == contenders
    if contenders == 1:
        assert verdict.outcome is Outcome.INSUFFICIENT_DATA


def _topped_up(tensorflow_reached: list[int]) -> set[str]:
    """The cells the next look gives processes when accuracy is a close call and epoch time
    is not (2x apart)."""
    cells = [{"system": system, "values": {
        "test_accuracy": noisy(0.95, seed, n=3, spread=0.03), "reached_target": reached,
        "steady_epoch_time": noisy(time, seed + 1, n=3)}}
        for system, seed, time, reached in [("pytorch", 1, 1.0, [1] * 3),
                                            ("tensorflow", 3, 2.0, tensorflow_reached)]]
    observations, cell_table = tables(cells)
    # accuracy judged as a verdict: from the same start it is a parity answer, which buys
    # no processes at all
    questions = tuple(replace(q, parity=False) for q in QUESTIONS)
    return undecided_cells(observations, cell_table, None, three_looks(3, 6, 12), questions,
                           {"r1": CPU_ENV})


def test_a_look_tops_up_no_accuracy_pair_that_a_missed_target_keeps_off_the_page():
    assert len(_topped_up([1, 1, 1])) == 2
    assert _topped_up([1, 0, 1]) == set()


def _summary_rows(missed: set) -> list[dict]:
    import pandas as pd

    frame = pd.DataFrame([{"result_id": f"x-{i}", "run_id": "r1", "cell_id": cell,
                           "machine": "cpu", "workload": "w", "system": cell, "variant": "v",
                           "median": 0.9, "ci_low": 0.8, "ci_high": 0.95, "low": 0.8,
                           "high": 0.95, "n": 3, "cv": 0.01, "detectable_ratio": 1.2,
                           "metric": "test_accuracy"}
                          for i, cell in enumerate(["a", "b"])])
    return _rows(frame, missed)


def test_the_page_says_did_not_reach_its_target_beside_a_cell_that_missed():
    rows = _summary_rows({("r1", "b")})
    assert [row["note"] for row in rows] == ["", MISSED_NOTE]
    assert "note" in [key for _, key, _ in table_columns(rows, "fraction")[0]]


def test_the_note_column_is_left_out_when_every_cell_reached_its_target():
    rows = _summary_rows(set())
    columns, common = table_columns(rows, "fraction")
    assert "note" not in [key for _, key, _ in columns] and "note" not in common


def test_the_unrecorded_classes_are_the_ones_the_datasets_draw():
    from dlbench.core.judging.targets import UNRECORDED_CLASSES
    from dlbench.runner.workloads.datasets import load_dataset, synthetic_images
    from dlbench.runner.workloads.catalog import WORKLOADS

    drawn = {"digits": load_dataset("digits").classes,
             "synthetic-images": synthetic_images(16, 4).classes,
             "mnist": 10, "cifar10": 10}  # the label sets of the two local formats
    assert set(UNRECORDED_CLASSES) == set(WORKLOADS)
    for name, workload in WORKLOADS.items():
        classes = ({p.definition.classes for p in workload.profiles}
                   if workload.dataset == "synthetic-tokens" else {drawn[workload.dataset]})
        assert classes == {UNRECORDED_CLASSES[name]}, name


def test_a_recorded_target_wins_and_an_unrecorded_one_is_not_drawn():
    from dlbench.core.judging.targets import recorded_target

    note = "SGD lr=0.1; target: final test accuracy >= 0.9; one training per worker process"
    assert recorded_target("lstm-tokens", [], []) == {"classes": 10}
    assert recorded_target("lstm-tokens", [], [note]) == {"classes": 10, "target_accuracy": 0.9}
    assert recorded_target("lstm-tokens", [{"classes": 4, "target_accuracy": 0.8}], [note]) == {
        "classes": 4, "target_accuracy": 0.8}
    assert recorded_target("no-such-workload", [], []) == {}


def _accuracy_charts(release: str):
    import json
    from pathlib import Path

    from dlbench.report.pages.experiment import accuracy_marks, metric_sections
    from dlbench.report.inputs.source import load_release
    from dlbench.report.inputs.labelled import labelled_results

    source = load_release(Path(__file__).parents[1] / "results", release)
    training = source.cells[source.cells["experiment"] == "training"]
    marks = accuracy_marks(source.cells)
    summary = labelled_results(source)
    [section] = [s for s in metric_sections(summary[summary["experiment"] == "training"],
                                            "training", marks)
                 if s["anchor"] == "metric-test_accuracy"]
    drawn = {chart.chart_id.split("-test-accuracy-")[1]: json.dumps(chart.spec)
             for chart in section["charts"]}
    return set(training["workload"]), marks, drawn


def test_every_training_workload_s_accuracy_chart_draws_chance_and_its_recorded_target():
    """2027.02's cells state their target in their fairness notes; chance is 1/10."""
    from dlbench.runner.workloads.catalog import WORKLOADS

    workloads, marks, drawn = _accuracy_charts("2027.02")
    assert len(drawn) >= len(workloads) == 4
    for workload in workloads:
        lines = dict(zip(marks[workload]["label"], marks[workload]["value"], strict=True))
        assert lines == {"chance": 0.1, "target": WORKLOADS[workload].target_accuracy}
        spec = next(s for key, s in drawn.items() if key.startswith(workload))
        assert '"chance"' in spec and '"target"' in spec, workload


def test_a_release_that_trained_to_no_target_draws_chance_only():
    workloads, marks, drawn = _accuracy_charts("2026.12")
    for workload in workloads:
        assert list(marks[workload]["label"]) == ["chance"], workload
        spec = next(s for key, s in drawn.items() if key.startswith(workload))
        assert '"chance"' in spec and '"target"' not in spec, workload
