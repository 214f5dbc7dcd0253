"""The ResNet, Transformer and LSTM in every experiment's grid that can run them (training,
inference, precision, execution-mode, export): full and standard on a GPU measure them; quick and standard on 2 CPU cores stay as they were
(sized for their 8 and 90 minutes), and the GPU plan's cells are cells of those grids."""

from __future__ import annotations

import pytest

from dlbench.runner.driver.plan.device import load_plan
from dlbench.runner.driver.plan.experiments import MODEL_WORKLOADS, get_experiment
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.cell.frameworks import FRAMEWORKS
from dlbench.runner.workloads.catalog import device_profile, get_workload
from tests.test_gpu_plan import PLAN_FILE

EXPERIMENTS = ("precision", "execution-mode", "export")
#: Every experiment the full suite runs the three models in.
ALL_MODEL_EXPERIMENTS = ("training", "inference", *EXPERIMENTS)

#: What quick and standard on a CPU measure, whatever the models add elsewhere.
CPU_TRIMMED = {
    ("quick", "precision"): {"mlp-digits"},
    ("quick", "execution-mode"): {"mlp-digits"},
    ("quick", "export"): {"mlp-digits"},
    ("standard", "precision"): set(),  # left to full: the MLP's bf16 answered nothing
    ("standard", "execution-mode"): set(),  # left to full: per-call overhead on 2 cores
    ("standard", "export"): {"resnet50-synthetic"},  # only the real-size runtimes
}


def planned(experiment: str, suite: str, device: str, workloads: tuple[str, ...] = ()) -> list:
    request = RunRequest(suite=suite, workloads=list(workloads), device=device, threads=2)
    return get_experiment(experiment).plan(request)


@pytest.mark.parametrize("experiment", ALL_MODEL_EXPERIMENTS)
@pytest.mark.parametrize("suite, device", [("full", "cpu"), ("full", "cuda"),
                                           ("standard", "cuda")])
def test_full_and_gpu_standard_measure_the_three_models(experiment, suite, device):
    cells = planned(experiment, suite, device)
    for name in MODEL_WORKLOADS:
        frameworks = {c.framework_id.name for c in cells if c.workload == name}
        assert frameworks == {f.name for f in FRAMEWORKS}, (name, frameworks)
    assert "mlp-digits" in {c.workload for c in cells}  # the overhead-bound reference stays


@pytest.mark.parametrize("experiment", EXPERIMENTS)
@pytest.mark.parametrize("suite, device", [("quick", "cpu"), ("quick", "cuda"),
                                           ("standard", "cpu")])
def test_quick_and_cpu_standard_keep_their_workloads(experiment, suite, device):
    expected = CPU_TRIMMED[(suite, experiment)]
    assert {c.workload for c in planned(experiment, suite, device)} == expected


@pytest.mark.parametrize("experiment", ("precision", "execution-mode"))
def test_gpu_cells_train_at_the_gpu_profiles_batch(experiment):
    """ResNet-50 at 128, BERT-base at 32, the LSTM at 128: not the CPU profile's batches."""
    for cell in planned(experiment, "standard", "cuda", MODEL_WORKLOADS):
        gpu = device_profile(get_workload(cell.workload), "cuda")
        assert (cell.device, cell.batch_size) == ("cuda", gpu.batch_size), cell.cell_id


def test_export_measures_the_models_at_their_cpu_size_on_the_cpu():
    for cell in planned("export", "standard", "cuda", MODEL_WORKLOADS):
        cpu = device_profile(get_workload(cell.workload), "cpu")
        assert (cell.device, cell.batch_size) == ("cpu", cpu.batch_size), cell.cell_id


def test_the_gpu_plans_cells_are_cells_of_the_full_gpu_grid():
    """A plan step names workloads from a quick grid; each of its cells must be one the full
    suite on a GPU measures (same batch size, device), so the GPU run and a full run agree."""
    full = {c.cell_id for e in EXPERIMENTS for c in planned(e, "full", "cuda")}
    for step in load_plan(PLAN_FILE).steps:
        selection = step.selection()
        for experiment in set(selection["experiments"]) & set(EXPERIMENTS):
            cells = planned(experiment, "quick", "cuda", tuple(selection["workloads"]))
            assert cells and {c.cell_id for c in cells} <= full, experiment
