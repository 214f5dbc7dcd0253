"""training on the runner.models families: each model trains one epoch at its tiny size in
PyTorch and TensorFlow, from the shared weights, fed in each framework's layout."""

from __future__ import annotations

import math

import pytest

from runner.execute import execute_cell
from runner.spec import CellSpec
from runner.workloads import flops_per_sample

pytestmark = pytest.mark.slow

MODEL_WORKLOADS = ["resnet-synthetic", "transformer-tokens", "lstm-tokens"]


@pytest.mark.parametrize("framework", ["pytorch", "tensorflow"])
@pytest.mark.parametrize("workload", MODEL_WORKLOADS)
def test_each_model_trains_one_tiny_epoch(workload, framework):
    spec = CellSpec(experiment="training", workload=workload, framework=framework, backend="",
                    device="cpu", batch_size=4, repeats=1, threads=1, timeout_s=120,
                    params={"epochs": 1, "profile": "tiny"})
    outcome = execute_cell(spec).outcome
    assert outcome.status.value == "ok", outcome.reason
    values = {o.metric: o.value for o in outcome.observations if o.step is None}
    loss = [o.value for o in outcome.observations if o.metric == "epoch_loss"]
    assert len(loss) == 1 and math.isfinite(loss[0])
    assert 0 <= values["test_accuracy"] <= 1
    assert outcome.details["flops_per_sample"] == flops_per_sample(workload, "cpu", "tiny")
    assert "same canonical initial weights" in outcome.fairness.notes
