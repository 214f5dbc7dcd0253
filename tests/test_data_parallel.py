"""The data-parallel experiment: its batch plan and grid, and real DDP / MirroredStrategy
cells in worker processes reaching the 1-worker accuracy."""

from __future__ import annotations

import numpy as np
import pytest

from dlbench.core.declarations.metrics import get_metric
from dlbench.core.storage.schema import CellStatus
from dlbench.runner.driver.launch.execute import execute_cell
from dlbench.runner.driver.plan.experiments import get_experiment
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.plan.experiments.data_parallel import (STRATEGIES, global_batch,
                                                                  worker_counts)
from dlbench.runner.worker.experiments.data_parallel.protocol import (ACCURACY_TOLERANCE,
                                                                      TrainingRun, epoch_plan,
                                                                      run_observations, shard)
from dlbench.runner.cell.spec import CellSpec


def test_epoch_plan_keeps_whole_global_batches_in_the_shared_order():
    plan = epoch_plan(n=100, global_batch=32, epochs=2, seed=0)
    assert plan.batches.shape == (2, 3, 32) and plan.samples_per_epoch == 96
    for epoch in plan.batches:
        assert len(set(epoch.ravel())) == 96  # no sample twice within an epoch
    assert not np.array_equal(plan.batches[0], plan.batches[1])  # a new order each epoch


def test_shards_are_equal_and_cover_the_global_batch_in_order():
    batch = np.arange(32)
    shards = [shard(batch, rank, 4) for rank in range(4)]
    assert [len(s) for s in shards] == [8] * 4
    assert np.array_equal(np.concatenate(shards), batch)


def test_global_batch_divides_by_every_worker_count():
    assert global_batch(32, [1, 2, 4]) == 32
    assert global_batch(32, [1, 2, 3]) == 36


def test_quick_plans_two_workers_per_strategy_and_every_framework():
    request = RunRequest(suite="quick", device="cpu", threads=2)
    cells = get_experiment("data-parallel").plan(request)
    assert {c.framework_id.name for c in cells} == set(STRATEGIES)
    assert {c.workers for c in cells} == {2}
    assert len({c.cell_id for c in cells}) == len(cells)
    for metric in get_experiment("data-parallel").metrics:
        get_metric(metric)


def test_standard_scales_from_one_worker_by_doubling_up_to_the_cores():
    import os

    counts = worker_counts("standard", "cpu")
    cores = len(os.sched_getaffinity(0))
    assert counts[0] == 1 and counts == sorted(set(counts))
    assert all(n & (n - 1) == 0 for n in counts[:-1])  # 1, 2, 4, ... then the last
    assert counts[-1] == min(8, max(2, cores))


def test_efficiency_and_accuracy_delta_pair_a_run_with_its_baseline():
    baseline = TrainingRun(1, (2.0, 1.0, 1.0), 1000, 0.90, 0.3)
    run = TrainingRun(2, (2.0, 0.8, 0.8), 1000, 0.91, 0.3, setup_s=0.5, launch_s=3.0)
    values = {o.metric: o.value for o in run_observations(run, 0, baseline)}
    assert values["scaling_efficiency"] == pytest.approx(1000 / 0.8 / (2 * 1000))
    assert values["accuracy_delta"] == pytest.approx(0.01)
    assert values["dp_setup_time"] == 0.5 and values["dp_launch_time"] == 3.0
    assert values["time_to_accuracy"] == pytest.approx(0.5 + 2.0 + 0.8 + 0.8)  # set-up, epochs


def test_the_machine_suite_compares_two_workers_of_one_thread_with_one_of_two():
    """Each framework's own data-parallel path on the digits MLP, at 1 worker (every thread)
    and 2; what it cannot run is planned with its reason, never run into a crash."""
    from dlbench.runner.cell.spec import NOT_MEASURED, UNSUPPORTED

    cells = get_experiment("data-parallel").plan(RunRequest(suite="machine", device="cpu",
                                                            threads=2))
    measured = {(c.framework_id.name, c.mode, c.workers) for c in cells if c.runs}
    assert {("pytorch", "ddp", 1), ("pytorch", "ddp", 2), ("tensorflow", "mirrored", 1),
            ("tensorflow", "mirrored", 2), ("keras-jax", "keras-data-parallel", 1),
            ("keras-jax", "keras-data-parallel", 2)} <= measured
    assert {c.workload for c in cells} == {"mlp-digits"}
    assert all(c.params["epochs"] == 8 and c.threads == 2 for c in cells)
    refused = {c.framework_id.name: c.params.get(UNSUPPORTED) or c.params.get(NOT_MEASURED)
               for c in cells if not c.runs}
    assert set(refused) == {"keras-torch", "keras-tensorflow"}
    assert "no torch implementation" in refused["keras-torch"]
    assert "MirroredStrategy" in refused["keras-tensorflow"]
    assert "multi-worker-mirrored" not in {c.mode for c in cells}
    assert len({c.batch_size for c in cells}) == 1  # one global batch for 1 and 2 workers


def dp_cell(framework: str, backend: str, mode: str, workers: int = 2) -> CellSpec:
    return CellSpec(experiment="data-parallel", workload="mlp-digits", framework=framework,
                    backend=backend, device="cpu", mode=mode, workers=workers,
                    batch_size=32, repeats=2, repeat_index=1, threads=2, timeout_s=240,
                    params={"epochs": 2})


def values(record, metric: str) -> list[float]:
    return [o.value for o in record.outcome.observations if o.metric == metric]


@pytest.mark.slow
@pytest.mark.parametrize("framework,backend,mode", [("pytorch", "", "ddp"),
                                                    ("tensorflow", "", "mirrored"),
                                                    ("keras", "jax", "keras-data-parallel")])
def test_two_workers_reach_the_one_worker_accuracy(framework, backend, mode):
    record = execute_cell(dp_cell(framework, backend, mode))
    outcome = record.outcome
    assert outcome.status is CellStatus.OK, (outcome.reason, record.stderr_tail)
    accuracy = values(record, "test_accuracy")[0]
    assert accuracy > 0.8  # it learned
    assert abs(accuracy - outcome.details["baseline_accuracy"]) <= ACCURACY_TOLERANCE
    assert {o.repeat for o in outcome.observations} == {1}  # one training per process
    assert values(record, "accuracy_delta")[0] <= ACCURACY_TOLERANCE
    assert values(record, "scaling_efficiency")[0] > 0
    assert outcome.details["per_replica_batch"] == 16
    assert "2 " in outcome.fairness.notes and "overhead" in outcome.fairness.notes
    assert "2 worker(s) of 1 thread(s) against 1 worker of 2" in outcome.fairness.notes
    [elapsed] = values(record, "time_to_accuracy")
    assert elapsed >= values(record, "first_epoch_time")[0] + values(record, "dp_setup_time")[0]


def test_a_crash_setting_up_the_strategy_is_a_failure_not_unsupported() -> None:
    from dlbench.runner.worker.experiments.data_parallel import protocol
    from dlbench.core.storage.schema import CellStatus

    class Spec:
        workers = 1

    class Cell:
        spec = Spec()

    def crash(workers: int) -> None:
        try:
            None.list_devices()  # the keras-torch data-parallel crash of release 2027.01
        except AttributeError as error:
            raise protocol.StrategyUnsupported(str(error)) from error

    def refuse(workers: int) -> None:
        raise protocol.StrategyUnsupported("no") from ValueError("not on this backend")

    crashed = protocol.measure_data_parallel(Cell(), crash, None)
    refused = protocol.measure_data_parallel(Cell(), refuse, None)
    assert crashed.status is CellStatus.FAILED and "AttributeError" in crashed.reason
    assert refused.status is CellStatus.UNSUPPORTED


def test_a_strategy_a_framework_does_not_implement_is_unsupported_at_planning() -> None:
    """Keras' distribution API has no torch implementation: the declaration says so, the
    plan carries the reason, and the cell is recorded as unsupported without a worker."""
    from dlbench.core.declarations.systems import by_name
    from dlbench.runner.cell.spec import UNSUPPORTED

    request = RunRequest(suite="quick", device="cpu", threads=2)
    cells = get_experiment("data-parallel").plan(request)
    refused = [c for c in cells if c.params.get(UNSUPPORTED)]
    assert [c.framework_id.name for c in refused] == ["keras-torch"]
    assert not refused[0].runs and all(c.runs for c in cells if c not in refused)
    declared = by_name("keras-torch").unsupported[("data-parallel", "keras-data-parallel")]
    record = execute_cell(refused[0])
    assert record.outcome.status is CellStatus.UNSUPPORTED
    assert record.outcome.reason == declared and "torch" in declared
    assert record.stderr_tail == ""  # answered from the plan: no worker process started
