"""Hand the processes of a cluster run to Ray and write what comes back.

At most one process per alive node of a kind is in flight (each task also holds its node's
`dlbench_slot`), taken in the run's order. A finished process is written by the run's
store exactly as a local one. A process whose Ray worker or node died is kept in
superseded/ with the reason and measured again on a node of the same kind, at most
MAX_NODE_RETRIES times; Ctrl-C cancels the tasks in flight and keeps what finished. A
process the filesystem refuses to save is held in memory: nothing new starts, the processes
in flight are collected, then it is saved once more, or its SaveError ends the run.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, replace

import ray
from ray.exceptions import RayError, RayTaskError

from dlbench.core.text.errors import SaveError, UsageError
from dlbench.runner.driver.cluster.nodes import alive_slots, placement
from dlbench.runner.driver.cluster.tasks import measure_on_node
from dlbench.runner.driver.launch.execute import STOP_POLL_S, code_of
from dlbench.runner.cell.outcome import failed, utc_timestamp
from dlbench.runner.driver.store.persist import persist
from dlbench.runner.driver.commands.run import console, labelled, not_started_record
from dlbench.runner.driver.plan.schedule import process_label
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.launch.stop import raise_if_stop_requested
from dlbench.runner.driver.store.run_store import CellRecord, RunStore

#: How many times a process whose worker or node died is measured again.
MAX_NODE_RETRIES = 2


@dataclass(frozen=True)
class Job:
    """One process to measure on a node of `kind`, written to `store`."""

    store: RunStore
    kind: str
    spec: CellSpec
    attempt: int = 0  # the busy re-run it belongs to, as in a local run
    node_failures: int = 0  # how many times a worker or node died measuring it


@dataclass(frozen=True)
class Running:
    job: Job
    started_at: str


def run_jobs(jobs: list[Job], driver: dict[str, str]) -> None:
    """Measure every job on the cluster; each is persisted the moment it comes back."""
    waiting: deque[Job] = deque(jobs)
    running: dict[ray.ObjectRef, Running] = {}
    held: list[tuple[RunStore, CellRecord]] = []  # measured, refused by the filesystem once
    try:
        while waiting or running or held:
            raise_if_stop_requested()
            if held and not running:
                _save_held(held)
                continue
            if not held:
                _submit(waiting, running, driver)
            if not running:
                continue
            ready, _ = ray.wait(list(running), num_returns=1, timeout=STOP_POLL_S)
            for ref in ready:
                _collect(ref, running.pop(ref), waiting, held)
    except BaseException:  # Ctrl-C or a refused node: stop what is in flight
        for ref in running:
            ray.cancel(ref, force=True)
        raise


def _submit(waiting: deque[Job], running: dict, driver: dict[str, str]) -> None:
    """Start the next waiting jobs of each kind that has a free node. When no node of a kind
    is left, its tasks in flight are cancelled (and so queued again), and its waiting jobs
    are recorded failed."""
    kinds = {job.kind for job in waiting} | {r.job.kind for r in running.values()}
    alive = {kind: alive_slots(kind) for kind in kinds}
    in_flight = {kind: sum(r.job.kind == kind for r in running.values()) for kind in alive}
    for ref, started in running.items():
        if alive[started.job.kind] == 0:  # lost with its node, or waiting for a node forever
            ray.cancel(ref, force=True)
    for job in list(waiting):
        if alive[job.kind] == 0 and in_flight[job.kind] == 0:
            waiting.remove(job)
            _give_up(job, f"no alive node of machine kind {job.kind} is left in the cluster")
        elif in_flight[job.kind] < alive[job.kind]:
            waiting.remove(job)
            if _start(job, running, driver):
                in_flight[job.kind] += 1


def _start(job: Job, running: dict, driver: dict[str, str]) -> bool:
    """Submit one job; False when it needs no node (an earlier process of its cell was
    skipped or refused, so this one is recorded alike without starting)."""
    store, spec = job.store, job.spec
    not_started = not_started_record(store, spec, store.next_order_index(), job.attempt)
    if not_started is not None:
        persist(store, not_started)
        return False
    ref = measure_on_node.options(**placement(job.kind, spec.device, spec.workers)).remote(
        spec.to_json(), driver, job.kind)
    running[ref] = Running(job, utc_timestamp())
    return True


def _collect(ref: ray.ObjectRef, done: Running, waiting: deque[Job],
             held: list[tuple[RunStore, CellRecord]]) -> None:
    """Write a finished process (held in `held` when the filesystem refuses it); a dead
    worker or node sends it back to the queue."""
    job = done.job
    try:
        result = ray.get(ref)
    except RayTaskError:
        raise  # a fault in dlbench's own code on the node: show it, do not retry it
    except RayError as error:
        _node_died(job, done.started_at, error, waiting)
        return
    if "refused" in result:
        raise UsageError(result["refused"])
    record = labelled(CellRecord.from_dict(result["record"]), job.store.next_order_index(),
                      job.attempt)
    try:
        persist(job.store, record)
    except SaveError as error:
        held.append((job.store, record))
        console.print(f"{job.kind}: {process_label(job.spec)} not saved ({error.reason}); "
                      "held in memory to save once more after the processes in flight")
        return
    console.print(f"{job.kind}: {process_label(job.spec)} {record.outcome.status.value}")


def _save_held(held: list[tuple[RunStore, CellRecord]]) -> None:
    """Save each held process once more, at the next place in its run's order (the others
    took theirs meanwhile); a SaveError goes up."""
    while held:
        store, record = held[0]
        persist(store, replace(record, order_index=store.next_order_index()))
        held.pop(0)


def _failed_record(job: Job, reason: str, started_at: str) -> CellRecord:
    relative, _, digest = code_of(job.spec)
    outcome = replace(failed(reason), code_files={relative: digest})
    return CellRecord(job.spec, outcome, started_at, 0.0, "", relative, digest,
                      ended_at=utc_timestamp(), order_index=job.store.next_order_index(),
                      attempt=job.attempt)


def _node_died(job: Job, started_at: str, error: RayError, waiting: deque[Job]) -> None:
    """Keep the lost process in superseded/ and queue it again, or record it failed once
    its retries are spent."""
    reason = f"the Ray worker or node measuring it died ({type(error).__name__})"
    if job.node_failures >= MAX_NODE_RETRIES:
        _give_up(job, f"{reason}, {MAX_NODE_RETRIES + 1} times", started_at)
        return
    lost = _failed_record(job, reason, started_at)
    job.store.save_record(lost)
    job.store.supersede(lost, f"{reason}; measured again on a node of kind {job.kind}")
    console.print(f"{job.kind}: {process_label(job.spec)} lost ({reason}); measuring it again")
    waiting.appendleft(replace(job, node_failures=job.node_failures + 1))


def _give_up(job: Job, reason: str, started_at: str | None = None) -> None:
    persist(job.store, _failed_record(job, reason, started_at or utc_timestamp()))
    console.print(f"{job.kind}: {process_label(job.spec)} failed: {reason}")
