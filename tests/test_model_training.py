"""training on the dlbench.runner.models families: each model trains one epoch at its tiny size in
PyTorch and TensorFlow, from the shared weights, fed in each framework's layout."""

from __future__ import annotations

import math

import pytest

from dlbench.runner.driver.launch.execute import execute_cells
from dlbench.runner.driver.plan.experiments import inference, training
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.frameworks import FRAMEWORKS
from dlbench.runner.driver.plan.sharing import may_share
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord
from dlbench.runner.workloads.catalog import WORKLOADS, flops_per_sample

MODEL_WORKLOADS = ["resnet-synthetic", "transformer-tokens", "lstm-tokens"]


def _plan(experiment, suite: str, device: str = "cpu", workloads: tuple[str, ...] = ()
          ) -> list[CellSpec]:
    return experiment.plan(RunRequest(suite=suite, workloads=list(workloads), device=device,
                                      threads=1))


def test_standard_suite_trains_every_model_and_infers_with_the_real_sizes_on_a_cpu():
    """Standard on 2 CPU cores (150 minutes): every model trained by every framework at the
    device's own size; inference on ResNet-50 and BERT-base beside the digits MLP."""
    standard = _plan(training.EXPERIMENT, "standard")
    assert set(MODEL_WORKLOADS) <= {cell.workload for cell in standard}
    frameworks = {(c.framework, c.backend) for c in standard if c.workload == "lstm-tokens"}
    assert frameworks == {(f.framework, f.backend) for f in FRAMEWORKS}
    assert not any(c.params.get("profile") for c in standard)  # the device's own size
    inferred = {cell.workload for cell in _plan(inference.EXPERIMENT, "standard")}
    assert inferred == {"mlp-digits", "resnet50-synthetic", "bert-base-tokens"}


def test_quick_suite_trains_every_model_it_is_asked_for_at_its_tiny_size():
    assert {c.workload for c in _plan(training.EXPERIMENT, "quick")} == {"mlp-digits"}
    quick = _plan(training.EXPERIMENT, "quick", workloads=MODEL_WORKLOADS)
    systems = {(f.framework, f.backend) for f in FRAMEWORKS}
    for workload in MODEL_WORKLOADS:
        cells = [c for c in quick if c.workload == workload]
        assert {(c.framework, c.backend) for c in cells} == systems
        assert {c.params["profile"] for c in cells} == {"tiny"}
        assert {c.batch_size for c in cells} == {4}  # the tiny profile's batch
    assert not set(MODEL_WORKLOADS) & {c.workload for c in _plan(inference.EXPERIMENT, "quick")}


def test_training_batch_is_the_device_profiles():
    batches = {(c.workload, c.device): c.batch_size
               for device in ("cpu", "cuda") for c in _plan(training.EXPERIMENT, "standard", device)}
    assert batches[("transformer-tokens", "cpu")] == 8
    assert batches[("transformer-tokens", "cuda")] == 32
    assert batches[("mlp-digits", "cuda")] == 32


@pytest.fixture(scope="module")
def tiny_epochs() -> dict[tuple[str, str], CellRecord]:
    """One tiny epoch of each model by (workload, framework): each framework's cells in one
    worker process, as the quick suite measures them (dlbench.runner.driver.plan.sharing), so each
    framework is imported once, not once per model."""
    records = {}
    for framework in ("pytorch", "tensorflow"):
        specs = [CellSpec(experiment="training", workload=workload, framework=framework,
                          backend="", device="cpu", batch_size=4, repeats=1, threads=1,
                          timeout_s=120, params={"epochs": 1, "profile": "tiny"})
                 for workload in MODEL_WORKLOADS]
        assert all(may_share(spec, "quick") for spec in specs)
        records |= {(spec.workload, framework): record
                    for spec, record in zip(specs, execute_cells(specs), strict=True)}
    return records


@pytest.mark.slow
@pytest.mark.parametrize("framework", ["pytorch", "tensorflow"])
@pytest.mark.parametrize("workload", MODEL_WORKLOADS)
def test_each_model_trains_one_tiny_epoch(workload, framework, tiny_epochs):
    outcome = tiny_epochs[(workload, framework)].outcome
    assert outcome.status.value == "ok", outcome.reason
    values = {o.metric: o.value for o in outcome.observations if o.step is None}
    loss = [o.value for o in outcome.observations if o.metric == "epoch_loss"]
    assert len(loss) == 1 and math.isfinite(loss[0])
    assert 0 <= values["test_accuracy"] <= 1
    assert outcome.details["flops_per_sample"] == flops_per_sample(workload, "cpu", "tiny")
    assert outcome.details["target_accuracy"] == WORKLOADS[workload].target_accuracy
    assert outcome.details["classes"] == 10  # what the site draws chance from
    assert "same canonical initial weights" in outcome.fairness.notes


def test_standard_cpu_training_uses_the_small_data_size_for_the_models_only():
    cells = _plan(training.EXPERIMENT, "standard")
    for cell in cells:
        expected = "small" if cell.workload in MODEL_WORKLOADS else cell.params.get("data_size")
        assert cell.params.get("data_size") == expected, cell.cell_id
    gpu = _plan(training.EXPERIMENT, "standard", device="cuda")
    assert not any(c.params.get("data_size") for c in gpu if c.workload in MODEL_WORKLOADS)


def test_an_unknown_model_data_size_is_refused_naming_the_valid_ones():
    from dlbench.runner.workloads.catalog import get_workload, load_workload_data

    with pytest.raises(ValueError, match="unknown data size 'huge'; valid: '', 'small', 'large'"):
        load_workload_data(get_workload("lstm-tokens"), size="huge")
