"""Every cell that trains in the standard suite on a CPU has a target and the budget to reach
it, and the ResNet-20 trains at the learning rate of its batch (issue 22: release 2027.02's
misses). Precision is the full suite's on a CPU since 2026-12-05, so only training trains
there."""

from __future__ import annotations

import pytest

from dlbench.runner.driver.plan.experiments import precision, training
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.worker.harness.data import cell_data, cell_workload
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import get_workload


def _plan(experiment, device: str = "cpu") -> list[CellSpec]:
    return experiment.plan(RunRequest(suite="standard", device=device, threads=2))


def test_every_standard_cpu_cell_that_trains_has_a_target_above_chance():
    assert _plan(precision.EXPERIMENT) == []
    cells = _plan(training.EXPERIMENT)
    assert cells
    for cell in cells:
        target = get_workload(cell.workload).target_accuracy
        assert 0.1 < target <= 1.0, cell.cell_id  # 10 classes: chance is 0.1
        assert int(cell.params["epochs"]) >= 1, cell.cell_id


def test_standard_cpu_resnet_trains_at_the_learning_rate_of_its_batch_in_every_mode():
    cells = [c for c in _plan(training.EXPERIMENT) if c.workload == "resnet-synthetic"]
    assert {c.mode for c in cells} > {"default"}  # the fastest modes too
    assert {c.params.get("learning_rate") for c in cells} == {0.025}
    assert cell_data(cells[0]).workload.learning_rate == 0.025  # what the trainers read
    others = [c for c in _plan(training.EXPERIMENT) if c.workload != "resnet-synthetic"]
    assert not any("learning_rate" in c.params for c in others)


def test_without_a_learning_rate_parameter_a_cell_trains_at_its_workloads_own():
    gpu = [c for c in _plan(training.EXPERIMENT, "cuda") if c.workload == "resnet-synthetic"]
    assert gpu and not any("learning_rate" in c.params for c in gpu)
    assert cell_workload(gpu[0]) == get_workload("resnet-synthetic")


@pytest.mark.parametrize("value", [0, -0.1, "0.1", True, None])
def test_a_learning_rate_that_is_not_a_positive_number_is_refused(value):
    spec = CellSpec(experiment="training", workload="mlp-digits", framework="pytorch",
                    backend="pytorch", device="cpu", repeats=1,
                    params={"epochs": 1, "learning_rate": value})
    with pytest.raises(ValueError, match=r"learning_rate .* expected a positive number"):
        cell_workload(spec)
