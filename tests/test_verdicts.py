"""Home-page verdicts follow their statistics: change the data and the verdict changes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests.stats_fixtures import FakeCell, noisy, spec, training_cells, write_run

from dlbench.schema import CellStatus
from dlbench.stats import compare_samples
from dlbench.tables import read_table
from report.verdicts import QUESTIONS, Question, VerdictOutcome, answer, verdicts

TRAINING_SPEED = next(q for q in QUESTIONS if q.key == "training-speed")
ACCURACY = next(q for q in QUESTIONS if q.key == "accuracy")
PRECISION = next(q for q in QUESTIONS if q.key == "precision-speedup")


def tables(tmp_path, runs: dict[str, list[FakeCell]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Write runs with the runner's store and read their tables back, concatenated."""
    observations, cells = [], []
    for run_id, run_cells in runs.items():
        root = write_run(tmp_path, run_id, run_cells)
        observations.append(read_table(root / "observations.parquet", "observations"))
        cells.append(read_table(root / "cells.parquet", "cells"))
    return pd.concat(observations, ignore_index=True), pd.concat(cells, ignore_index=True)


def speed(tmp_path, times: dict[str, float], seed: int = 0, **kwargs):
    rng = np.random.default_rng(seed)
    return answer(TRAINING_SPEED, *tables(tmp_path, {"r1": training_cells(rng, times, **kwargs)}))


def test_clear_winner_is_named_with_its_ratio_and_interval(tmp_path):
    [verdict] = speed(tmp_path, {"pytorch": 1.0, "tensorflow": 1.3, "keras-tensorflow": 1.6})
    assert verdict.outcome is VerdictOutcome.WINNER
    assert (verdict.winner, verdict.runner_up) == ("pytorch", "tensorflow")
    assert verdict.advantage_ci_low <= verdict.advantage <= verdict.advantage_ci_high
    assert 1.2 < verdict.advantage_ci_low and verdict.advantage_ci_high < 1.4
    assert verdict.p_value < 0.05
    assert [s.contender for s in verdict.standings] == ["pytorch", "tensorflow",
                                                        "keras-tensorflow"]
    assert verdict.device == "cpu" and dict(verdict.group)["workload"] == "mlp-digits"
    assert f"pytorch is {verdict.advantage:.2f}× faster than tensorflow" in verdict.sentence
    assert verdict.evidence[0] == "training:mlp-digits:pytorch:fp32-default-b32:cpu"


def test_changing_the_data_flips_the_verdict(tmp_path):
    [verdict] = speed(tmp_path, {"pytorch": 1.0, "tensorflow": 0.7, "keras-tensorflow": 1.6})
    assert verdict.outcome is VerdictOutcome.WINNER
    assert (verdict.winner, verdict.runner_up) == ("tensorflow", "pytorch")


def test_equal_frameworks_get_no_winner(tmp_path):
    [verdict] = speed(tmp_path, {"pytorch": 1.0, "tensorflow": 1.0}, seed=4)
    assert verdict.outcome is VerdictOutcome.NO_SIGNIFICANT_DIFFERENCE
    assert verdict.winner is None
    assert verdict.advantage_ci_low < 1 < verdict.advantage_ci_high
    assert "no significant difference in steady_epoch_time" in verdict.sentence


def test_too_few_repeats_removes_the_winner_and_says_why(tmp_path):
    cells = [FakeCell(spec("pytorch", "pytorch"), {"steady_epoch_time": [1.0, 1.01, 0.99]}),
             FakeCell(spec("tensorflow", "tensorflow"), {"steady_epoch_time": [2.0, 2.1, 1.9]})]
    [verdict] = answer(TRAINING_SPEED, *tables(tmp_path, {"r1": cells}))
    assert verdict.outcome is VerdictOutcome.NO_SIGNIFICANT_DIFFERENCE
    assert "underpowered" in verdict.note


def test_higher_is_better_metric_picks_the_highest(tmp_path):
    rng = np.random.default_rng(1)
    cells = training_cells(rng, {"pytorch": 1.0, "tensorflow": 1.0},
                           accuracy={"pytorch": 0.93, "tensorflow": 0.97})
    [verdict] = answer(ACCURACY, *tables(tmp_path, {"r1": cells}))
    assert (verdict.winner, verdict.runner_up) == ("tensorflow", "pytorch")
    assert verdict.advantage > 1
    assert "× higher test_accuracy than pytorch" in verdict.sentence


def test_failed_cells_are_left_out_and_a_lone_contender_is_insufficient(tmp_path):
    rng = np.random.default_rng(2)
    cells = training_cells(rng, {"pytorch": 1.0})
    cells.append(FakeCell(spec("tensorflow", "tensorflow"), status=CellStatus.FAILED))
    [verdict] = answer(TRAINING_SPEED, *tables(tmp_path, {"r1": cells}))
    assert verdict.outcome is VerdictOutcome.INSUFFICIENT_DATA
    assert verdict.winner is None and math.isnan(verdict.advantage)
    assert "only pytorch measured" in verdict.sentence


def _precision_cells(rng, times: dict[str, float]) -> list[FakeCell]:
    return [FakeCell(spec("pytorch", "pytorch", experiment="precision", precision=p),
                     {"steady_epoch_time": noisy(rng, t)}) for p, t in times.items()]


def test_baseline_question_compares_the_best_with_fp32(tmp_path):
    rng = np.random.default_rng(3)
    observations, cells = tables(
        tmp_path, {"r1": _precision_cells(rng, {"fp32": 1.0, "bf16": 0.55, "fp16": 0.5})})
    [verdict] = answer(PRECISION, observations, cells)
    assert (verdict.winner, verdict.runner_up) == ("fp16", "fp32")
    assert 1.8 < verdict.advantage < 2.2
    assert dict(verdict.group)["system"] == "pytorch"


def test_baseline_that_wins_is_compared_with_the_runner_up(tmp_path):
    rng = np.random.default_rng(3)
    observations, cells = tables(tmp_path, {"r1": _precision_cells(rng, {"fp32": 1.0,
                                                                         "bf16": 1.5})})
    [verdict] = answer(PRECISION, observations, cells)
    assert (verdict.winner, verdict.runner_up) == ("fp32", "bf16")


def test_missing_baseline_is_insufficient(tmp_path):
    rng = np.random.default_rng(3)
    observations, cells = tables(tmp_path, {"r1": _precision_cells(rng, {"bf16": 1.0,
                                                                         "fp16": 1.5})})
    [verdict] = answer(PRECISION, observations, cells)
    assert verdict.outcome is VerdictOutcome.INSUFFICIENT_DATA
    assert "no fp32 cell" in verdict.sentence


def test_fastest_variant_represents_its_framework(tmp_path):
    rng = np.random.default_rng(5)
    question = Question("q", "Which is fastest?", "training", "steady_epoch_time",
                        group_by=("workload",))
    cells = [FakeCell(spec("pytorch", "pytorch", mode=m), {"steady_epoch_time": noisy(rng, t)})
             for m, t in (("eager", 1.2), ("compiled", 0.8))]
    cells.append(FakeCell(spec("tensorflow", "tensorflow"), {"steady_epoch_time":
                                                             noisy(rng, 1.0)}))
    [verdict] = answer(question, *tables(tmp_path, {"r1": cells}))
    assert verdict.winner == "pytorch"
    assert verdict.standings[0].cell_id.split(":")[3] == "fp32-compiled-b32"


def test_each_machine_and_workload_gets_its_own_verdict(tmp_path):
    rng = np.random.default_rng(6)
    runs = {"fast-tf": training_cells(rng, {"pytorch": 1.0, "tensorflow": 0.6}),
            "fast-pt": training_cells(rng, {"pytorch": 1.0, "tensorflow": 1.6})
            + training_cells(rng, {"pytorch": 1.0, "tensorflow": 1.6}, workload="cnn-digits")}
    found = verdicts(*tables(tmp_path, runs), questions=(TRAINING_SPEED,))
    winners = {(v.run_id, dict(v.group)["workload"]): v.winner for v in found}
    assert winners == {("fast-pt", "cnn-digits"): "pytorch", ("fast-pt", "mlp-digits"): "pytorch",
                       ("fast-tf", "mlp-digits"): "tensorflow"}


def test_questions_without_data_or_registered_metric_give_nothing(tmp_path):
    rng = np.random.default_rng(7)
    observations, cells = tables(tmp_path, {"r1": training_cells(rng, {"pytorch": 1.0,
                                                                       "tensorflow": 1.4})})
    found = verdicts(observations, cells)
    assert {v.question for v in found} == {"training-speed"}


def committed_source():
    """The newest committed release, or else the golden runs as a draft."""
    from report.source import load_draft, load_release, release_names, run_ids

    project = Path(__file__).resolve().parents[1]
    releases = release_names(project / "results")
    if releases:
        return load_release(project / "results", releases[-1])
    golden = project / "tests" / "data" / "golden"
    return load_draft(golden, run_ids(golden))


def _evidence_comparison(verdict, observations):
    rows = observations[observations["step"].isna() & (observations["metric"] == verdict.metric)
                        & (observations["run_id"] == verdict.run_id)]
    values = {s.contender: rows.loc[rows["cell_id"] == s.cell_id, "value"].to_numpy()
              for s in verdict.standings}
    best, other = values[verdict.standings[0].contender], values[verdict.runner_up]
    if verdict.direction.value == "lower":
        return compare_samples(other, best, verdict.direction)
    return compare_samples(best, other, verdict.direction)


def test_committed_verdicts_match_their_statistics():
    source = committed_source()
    found = verdicts(source.observations, source.cells)
    assert found, "the committed results give no verdict at all"
    for verdict in found:
        if verdict.outcome is VerdictOutcome.INSUFFICIENT_DATA:
            continue
        comparison = _evidence_comparison(verdict, source.observations)
        assert comparison.ratio == pytest.approx(verdict.advantage)
        assert comparison.significant is (verdict.outcome is VerdictOutcome.WINNER)
        if verdict.winner:
            assert verdict.winner == verdict.standings[0].contender
            assert comparison.p_value < 0.05
            assert not verdict.advantage_ci_low <= 1 <= verdict.advantage_ci_high


def _scaled(observations: pd.DataFrame, run_id: str, cell_id: str, factor: float):
    observations = observations.copy()
    mask = (observations["run_id"] == run_id) & (observations["cell_id"] == cell_id)
    observations.loc[mask, "value"] = observations.loc[mask, "value"] * factor
    return observations


def _same_group(found, verdict):
    key = (verdict.question, verdict.run_id, verdict.device, verdict.group)
    return [v for v in found if (v.question, v.run_id, v.device, v.group) == key]


def test_changing_committed_data_flips_or_removes_each_winner():
    source = committed_source()
    questions = {q.key: q for q in QUESTIONS}
    winners = [v for v in verdicts(source.observations, source.cells)
               if v.outcome is VerdictOutcome.WINNER]
    for verdict in winners:
        question = questions[verdict.question]
        mine = source.observations[(source.observations["run_id"] == verdict.run_id)
                                   & (source.observations["metric"] == verdict.metric)]
        best, runner_up = verdict.standings[0], next(
            s for s in verdict.standings if s.contender == verdict.runner_up)
        # Slow the winner to 4x the runner-up; a framework with several variants (e.g.
        # eager and compiled inference) is slowed variant by variant until none leads.
        advantage = runner_up.summary.median / best.summary.median
        worse = advantage * 4.0 if verdict.direction.value == "lower" else advantage / 4.0
        changed, flipped = mine, []
        for _ in range(len(verdict.standings) * 4):
            flipped = _same_group(answer(question, changed, source.cells), verdict)
            if flipped[0].winner != verdict.winner:
                break
            changed = _scaled(changed, verdict.run_id, flipped[0].standings[0].cell_id, worse)
        assert len(flipped) == 1 and flipped[0].winner != verdict.winner
        level = best.summary.median / runner_up.summary.median
        removed = _same_group(answer(question, _scaled(mine, verdict.run_id, runner_up.cell_id,
                                                       level), source.cells), verdict)
        assert len(removed) == 1 and removed[0].outcome is not VerdictOutcome.WINNER
    if not winners:  # repeats too few for significance: no data change can name a winner
        assert all(v.note.startswith("underpowered") for v in
                   verdicts(source.observations, source.cells)
                   if v.outcome is VerdictOutcome.NO_SIGNIFICANT_DIFFERENCE)


def test_compile_speedup_finds_each_frameworks_own_eager_baseline(tmp_path):
    rng = np.random.default_rng(9)
    question = next(q for q in QUESTIONS if q.key == "compile-speedup")
    modes = {("pytorch", "pytorch"): {"eager": 1.0, "compiled": 0.5},
             ("keras", "torch"): {"run_eagerly": 1.0, "jit_compile": 1.0}}
    cells = [FakeCell(spec(f, b, experiment="execution-mode", mode=m),
                      {"steady_step_time": noisy(rng, t)})
             for (f, b), times in modes.items() for m, t in times.items()]
    found = {dict(v.group)["system"]: v for v in answer(question, *tables(tmp_path, {"r": cells}))}
    assert (found["pytorch"].winner, found["pytorch"].runner_up) == ("compiled", "eager")
    assert found["keras-torch"].outcome is VerdictOutcome.NO_SIGNIFICANT_DIFFERENCE
    assert {found["keras-torch"].runner_up, found["keras-torch"].standings[0].contender} == {
        "run_eagerly", "jit_compile"}
