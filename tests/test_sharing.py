"""Shared worker processes (runner.plan.sharing): the quick suite measures the cells of one
framework in one process, and nothing one cell leaves behind changes the next one's numbers."""

from __future__ import annotations

from dlbench.core.schema import CellStatus
from runner.process.execute import execute_cell, execute_cells
from runner.plan.cells import RunRequest, plan_cells
from runner.plan.schedule import process_order
from runner.plan.sharing import worker_batches
from runner.cell.spec import CellSpec


def cell(experiment: str = "training", framework: str = "pytorch", backend: str = "",
         **overrides) -> CellSpec:
    values = dict(experiment=experiment, workload="mlp-digits", framework=framework,
                  backend=backend, device="cpu", batch_size=32, repeats=1, threads=1,
                  params={"epochs": 2} if experiment == "training" else {})
    return CellSpec(**(values | overrides))


def planned(suite: str) -> list[CellSpec]:
    request = RunRequest(suite, [], [], [], "cpu", None, None, None, "")
    return process_order(plan_cells(request, "cpu"), seed=1)


def test_quick_shares_one_process_per_framework_except_compiles_and_data_parallel():
    order = planned("quick")
    batches = worker_batches(order, "quick")
    assert sorted(spec.cell_id for batch in batches for spec in batch) == sorted(
        spec.cell_id for spec in order)  # every process measured, once
    shared = [batch for batch in batches if len(batch) > 1]
    assert {batch[0].framework_id.name for batch in shared} == {
        spec.framework_id.name for spec in order}
    for batch in shared:
        assert len({spec.framework_id.name for spec in batch}) == 1
        assert len({spec.experiment for spec in batch}) > 1
    alone = [batch[0] for batch in batches if len(batch) == 1]
    assert {spec.experiment for spec in alone} == {"execution-mode", "data-parallel"}
    assert all(spec.mode != "default" for spec in alone)


def test_standard_never_shares_a_process_nor_does_a_cell_with_several():
    order = planned("standard")
    assert worker_batches(order, "standard") == [[spec] for spec in order]
    three = [cell(batch_size=32, repeats=3), cell(batch_size=64, repeats=3)]
    repeated = process_order(three, seed=1)
    assert worker_batches(repeated, "quick") == [[spec] for spec in repeated]


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
