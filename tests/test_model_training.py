"""training on the runner.models families: each model trains one epoch at its tiny size in
PyTorch and TensorFlow, from the shared weights, fed in each framework's layout."""

from __future__ import annotations

import math

import pytest

from runner.execute import execute_cell
from runner.experiments import PlanRequest, inference, training
from runner.frameworks import FRAMEWORKS
from runner.spec import CellSpec
from runner.workloads import flops_per_sample

MODEL_WORKLOADS = ["resnet-synthetic", "transformer-tokens", "lstm-tokens"]


def _plan(experiment, suite: str, device: str = "cpu") -> list[CellSpec]:
    return experiment.plan(PlanRequest(suite=suite, workloads=[], frameworks=list(FRAMEWORKS),
                                       device=device, repeats=None, threads=1, timeout_s=None,
                                       data_dir=""))


@pytest.mark.parametrize("experiment", [training.EXPERIMENT, inference.EXPERIMENT])
def test_standard_suite_runs_the_models_on_a_cpu_and_quick_does_not(experiment):
    standard = _plan(experiment, "standard")
    assert set(MODEL_WORKLOADS) <= {cell.workload for cell in standard}
    assert not set(MODEL_WORKLOADS) & {cell.workload for cell in _plan(experiment, "quick")}
    frameworks = {(c.framework, c.backend) for c in standard if c.workload == "lstm-tokens"}
    assert frameworks == {(f.framework, f.backend) for f in FRAMEWORKS}


def test_training_batch_is_the_device_profiles():
    batches = {(c.workload, c.device): c.batch_size
               for device in ("cpu", "cuda") for c in _plan(training.EXPERIMENT, "standard", device)}
    assert batches[("transformer-tokens", "cpu")] == 8
    assert batches[("transformer-tokens", "cuda")] == 32
    assert batches[("mlp-digits", "cuda")] == 32


@pytest.mark.slow
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
