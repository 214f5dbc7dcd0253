"""Shared worker processes (dlbench.runner.driver.plan.sharing): the quick suite measures the cells of one
framework in one process, and nothing one cell leaves behind changes the next one's numbers."""

from __future__ import annotations

from dlbench.core.storage.schema import CellStatus
from dlbench.runner.driver.launch.execute import execute_cell, execute_cells
from dlbench.runner.driver.plan.cells import plan_cells
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.plan.schedule import process_order
from dlbench.core.declarations.modes import FASTEST, mode_class
from dlbench.runner.driver.plan.sharing import may_share, worker_batches
from dlbench.runner.cell.spec import CellSpec


def cell(experiment: str = "training", framework: str = "pytorch", backend: str = "",
         **overrides) -> CellSpec:
    values = dict(experiment=experiment, workload="mlp-digits", framework=framework,
                  backend=backend, device="cpu", batch_size=32, repeats=1, threads=1,
                  params={"epochs": 2} if experiment == "training" else {})
    return CellSpec(**(values | overrides))


def planned(suite: str) -> list[CellSpec]:
    request = RunRequest(suite, [], [], [], "cpu", None, None, None, "")
    return process_order(plan_cells(request, "cpu"), seed=1)


def test_quick_shares_worker_k_of_a_framework_among_its_cells_process_k():
    order = planned("quick")
    batches = worker_batches(order, "quick")
    assert sorted((s.cell_id, s.repeat_index) for batch in batches for s in batch) == sorted(
        (s.cell_id, s.repeat_index) for s in order)  # every process measured, once
    for batch in batches:
        assert len({(s.framework_id.name, s.repeat_index, bool(s.control)) for s in batch}) == 1
        assert len({s.cell_id for s in batch}) == len(batch)  # a cell's processes: apart
    systems = {s.framework_id.name for s in order}
    assert len(batches) == 3 * len(systems) + 3  # 3 workers each, and 3 for the A/A twins
    controls = [batch for batch in batches if batch[0].control]
    assert controls and all(s.control for batch in controls for s in batch)


def test_quick_never_shares_compiles_data_parallel_or_cells_that_do_not_run():
    request = RunRequest("quick", ["execution-mode", "data-parallel"], [], [], "cpu", None,
                         None, None, "")
    order = process_order(plan_cells(request, "cpu"), seed=1)
    apart = [s for s in order if s.experiment == "data-parallel" or not s.runs
             or mode_class(s.experiment, s.framework, s.mode) == FASTEST]
    assert {s.experiment for s in apart} == {"execution-mode", "data-parallel"}
    batches = worker_batches(order, "quick")
    assert all([s] in batches for s in apart) and not any(may_share(s, "quick") for s in apart)


def test_standard_never_shares_a_process():
    order = planned("standard")
    assert worker_batches(order, "standard") == [[spec] for spec in order]
    three = [cell(batch_size=32, repeats=3), cell(batch_size=64, repeats=3)]
    repeated = process_order(three, seed=1)
    assert worker_batches(repeated, "standard") == [[spec] for spec in repeated]
    by_index = worker_batches(repeated, "quick")
    assert [[s.repeat_index for s in batch] for batch in by_index] == [[0, 0], [1, 1], [2, 2]]


def test_cells_in_one_process_give_the_numbers_they_give_alone():
    # A bf16 precision cell first: Keras's global mixed-precision policy must not reach the
    # fp32 training cell after it, whose accuracy is then what it is in a process of its own.
    keras_jax = {"framework": "keras", "backend": "jax"}
    precision = cell("precision", precision="bf16", mode="mixed", params={"epochs": 1},
                     **keras_jax)
    training = cell(**keras_jax)
    first, second = execute_cells([precision, training])
    alone = execute_cell(training)
    assert first.outcome.status is second.outcome.status is CellStatus.OK
    shared = [r.outcome.shared_process for r in (first, second)]
    assert shared[0].pid == shared[1].pid
    assert [s.position for s in shared] == [0, 1] and shared[1].cells == 2
    assert [r.started_at for r in (first, second)] == [s.started_at for s in shared]
    assert alone.outcome.shared_process is None

    def accuracies(record):
        return [o.value for o in record.outcome.observations if o.metric == "test_accuracy"]

    assert accuracies(second) == accuracies(alone) != []


def test_a_failing_cell_does_not_take_the_rest_of_its_process_with_it(tmp_path):
    (tmp_path / "mnist.npz").write_bytes(b"not an npz")
    broken = cell(workload="mlp-mnist", data_dir=str(tmp_path))
    failed, fine = execute_cells([broken, cell()])
    assert failed.outcome.status is CellStatus.FAILED
    assert failed.outcome.reason.startswith("DatasetError:")
    assert fine.outcome.status is CellStatus.OK


def test_a_process_that_runs_out_of_time_fails_the_cells_it_did_not_reach():
    first, second = execute_cells([cell(timeout_s=0.5), cell(timeout_s=0.5)])
    assert first.outcome.status is second.outcome.status is CellStatus.FAILED
    assert second.outcome.reason == "timed out after 1 s"
