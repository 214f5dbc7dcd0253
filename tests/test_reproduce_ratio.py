"""`dlbench reproduce A B` and `--ratio`: a published ratio reproduced side by side here,
judged at the level of the ratio, with this machine's differences said first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dlbench.cli import main
from dlbench.core.storage.releases import freeze_release
from dlbench.runner.cell.outcome import CellOutcome, Observation
from dlbench.runner.driver.commands.reproduce import ReproduceError
from dlbench.runner.driver.commands.reproduce_ratio import (explain_ratio, interleaved,
                                                            machine_differences, reproduce_ratio)
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord
from dlbench.core.storage.schema import CellStatus
from tests.stats_fixtures import FakeCell, spec, write_run

RELEASE_ENV = {"cpu": {"model": "Intel(R) Xeon(R) Processor", "logical_cores": 2},
               "compute_peak": {"fp32_flops": 192e9}}
FASTER_HOST = {"cpu": {"model": "Intel(R) Xeon(R) Processor", "logical_cores": 2},
               "compute_peak": {"fp32_flops": 259e9}}
PYTORCH = [1.0, 1.03, 0.97, 1.01, 0.99, 1.02]
TENSORFLOW = [2.0, 2.05, 1.95, 2.02, 1.98, 2.01]


@pytest.fixture()
def release(tmp_path):
    cells = [FakeCell(spec("pytorch", "pytorch"), {"steady_epoch_time": PYTORCH}),
             FakeCell(spec("tensorflow", "tensorflow"), {"steady_epoch_time": TENSORFLOW})]
    write_run(tmp_path, "20261201T100000Z-cpu", cells, environment=RELEASE_ENV)
    freeze_release(tmp_path, "2027.01", ["20261201T100000Z-cpu"], "2026-12-02", "Test",
                   "cff-version: 1.2.0\n")
    ids = pd.read_csv(tmp_path / "releases" / "2027.01" / "result_ids.csv", dtype=str)
    epoch = ids[ids["metric"] == "steady_epoch_time"].set_index("cell_id")["result_id"]
    return tmp_path, epoch[spec("pytorch", "pytorch").cell_id], \
        epoch[spec("tensorflow", "tensorflow").cell_id]


def host(speed: float, tensorflow_share: float = 2.0, busy: bool = False, busy_first: int = 0):
    """A machine `speed` times slower than the release's, where TensorFlow takes
    `tensorflow_share` times PyTorch's time (busy throughout, or for its first `busy_first`
    processes); records which processes it measured."""
    asked: list[CellSpec] = []

    def measure(cell: CellSpec) -> CellRecord:
        asked.append(cell)
        noise = np.random.default_rng(cell.repeat_index + 7 * len(asked)).normal(0, 0.01)
        centre = speed * (tensorflow_share if cell.framework == "tensorflow" else 1.0)
        outcome = CellOutcome(CellStatus.OK, [Observation(
            "steady_epoch_time", float(centre * (1 + noise)), cell.repeat_index)])
        machine = ({"busy": ["CPU steal 7% (limit 2%)"]} if busy or len(asked) <= busy_first
                   else {})
        return CellRecord(cell, outcome, "2026-12-03T12:00:00", 1.0, "",
                          "runner/worker/experiments/training/pytorch.py", "0" * 64, machine=machine)
    return measure, asked


def test_a_slower_machine_with_the_same_ratio_reproduces_the_verdict(release):
    results, pytorch, tensorflow = release
    measure, asked = host(speed=0.74)  # every time shorter here, the ratio the same
    result = reproduce_ratio(pytorch, tensorflow, results, 3, measure=measure,
                             environment=FASTER_HOST)
    assert result.inside and abs(result.new.ratio - 0.5) < 0.02
    assert [s.repeat_index for s in asked] == [0, 0, 1, 1, 2, 2]  # interleaved rounds
    lines = explain_ratio(result)
    assert lines[0].startswith("this machine differs from release 2027.01's: measured fp32 "
                               "peak: 192 GFLOP/s in the release, 259 here")
    assert lines[-1].startswith("reproduced: the new ratio lies inside")


def test_a_changed_ratio_is_not_reproduced(release):
    results, pytorch, tensorflow = release
    measure, _ = host(speed=1.0, tensorflow_share=1.2)
    result = reproduce_ratio(pytorch, tensorflow, results, 3, measure=measure,
                             environment=RELEASE_ENV)
    assert not result.inside
    assert explain_ratio(result)[0] == ("this machine matches release 2027.01's CPU and "
                                        "measured peak")
    assert explain_ratio(result)[-1].startswith("not reproduced")


def test_a_reproduction_on_a_busy_machine_is_not_a_result(release):
    results, pytorch, tensorflow = release
    measure, _ = host(speed=1.0, busy=True)
    result = reproduce_ratio(pytorch, tensorflow, results, 3, measure=measure,
                             environment=RELEASE_ENV)
    assert not result.inside and len(result.busy) == 6
    assert "not a result: 6 of 6 processes ran on a busy machine" in explain_ratio(result)[-7]


def test_a_process_that_ran_on_a_busy_machine_is_measured_again_after_the_others(release):
    results, pytorch, tensorflow = release
    measure, asked = host(speed=1.0, busy_first=1)
    result = reproduce_ratio(pytorch, tensorflow, results, 3, measure=measure,
                             environment=RELEASE_ENV)
    assert result.busy == () and result.inside
    assert len(asked) == 7 and asked[-1] == asked[0]


def test_one_result_is_reproduced_as_its_ratio_to_pytorch_s_cell(release):
    results, _, tensorflow = release
    measure, asked = host(speed=1.3)
    result = reproduce_ratio(tensorflow, None, results, 3, measure=measure,
                             environment=RELEASE_ENV)
    assert result.b.cell_id == spec("pytorch", "pytorch").cell_id
    assert {s.framework for s in asked} == {"pytorch", "tensorflow"}
    assert result.inside and abs(result.new.ratio - 2.0) < 0.1


def test_two_results_that_are_not_one_comparison_are_refused(release, capsys):
    results, pytorch, _ = release
    with pytest.raises(ReproduceError, match="not one comparison"):
        reproduce_ratio(pytorch, pytorch, results, 3, measure=host(1.0)[0],
                        environment=RELEASE_ENV)
    assert main(["reproduce", pytorch, "--ratio", "--processes", "1",
                 "--results-dir", str(results)]) == 2
    assert "--processes must be at least 2" in capsys.readouterr().err


def test_machine_differences_name_the_cpu_and_a_gpu():
    here = {"cpu": {"model": "AMD EPYC 7B13", "logical_cores": 2},
            "gpus": [{"model": "NVIDIA H200"}]}
    notes = machine_differences(RELEASE_ENV, here)
    assert "CPU: Intel(R) Xeon(R) Processor in the release, AMD EPYC 7B13 here" in notes
    assert any(n.startswith("GPUs: none in the release") for n in notes)


def test_interleaving_spreads_each_round_over_both_cells():
    a, b = spec("pytorch", "pytorch"), spec("tensorflow", "tensorflow")
    order = interleaved([a, b], 3, seed=1)
    assert [s.repeat_index for s in order] == [0, 0, 1, 1, 2, 2]
    assert all({s.framework for s in order[i:i + 2]} == {"pytorch", "tensorflow"}
               for i in (0, 2, 4))


def _store_verdict(results, a_id: str, b_id: str, ratio: float, low: float, high: float):
    """The release's stored verdict row for A against B, as `publish` writes it: a look-1
    decision on three processes a side (2027.04-1430 against 2027.04-1412: 0.415x)."""
    row = {"row": "pair", "question": "training-speed", "run_id": "20261201T100000Z-cpu",
           "device": "cpu", "result_id_a": a_id, "result_id_b": b_id, "ratio": ratio,
           "ci_low": low, "ci_high": high, "confidence": 0.9706, "look": 1,
           "processes_a": 3, "processes_b": 3, "decision": "a better"}
    pd.DataFrame([row]).to_csv(results / "releases" / "2027.01" / "verdicts.csv", index=False)


def test_a_reproduction_is_judged_against_the_verdict_the_pages_show(release):
    """The cells' six processes give 0.5x; the pages showed a look-1 verdict of 0.415x
    [0.381-0.452]: a rerun at 0.5x reproduces the cells, not what was published."""
    results, pytorch, tensorflow = release
    _store_verdict(results, pytorch, tensorflow, 0.415, 0.381, 0.452)
    measure, _ = host(speed=1.0)
    result = reproduce_ratio(pytorch, tensorflow, results, 3, measure=measure,
                             environment=RELEASE_ENV)
    assert result.shown.stored and result.published_interval == (0.381, 0.452)
    assert not result.inside and result.disjoint
    lines = explain_ratio(result)
    assert "0.415x (97.1% CI 0.381-0.452x, a better at look 1 on 3 and 3 processes: the " \
           "verdict its pages show)" in lines[1]
    assert lines[-1] == ("not reproduced: the new ratio lies outside the published ratio's "
                         "interval; the two intervals are disjoint")


def test_the_stored_row_is_read_in_either_order(release):
    results, pytorch, tensorflow = release
    _store_verdict(results, tensorflow, pytorch, 2.0, 1.9, 2.1)
    measure, _ = host(speed=1.0)
    result = reproduce_ratio(pytorch, tensorflow, results, 3, measure=measure,
                             environment=RELEASE_ENV)
    assert result.published_interval == pytest.approx((1 / 2.1, 1 / 1.9))
    assert result.shown.processes == (3, 3) and result.inside
