"""`dlbench run --executor ray`: one run per machine kind, each measured on that kind's
nodes and written on the driver by the same store as a local run.

Each run's environment.json is captured on a node of its kind; its run.json records the
executor, the cluster's address and the machine kind, so `--resume RUN_ID` goes back to
the same cluster and kind. A node whose commit or code hash differs from the driver's is
refused before it measures anything.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import ray

from dlbench.core.storage import layout
from dlbench.core.storage.atomic import make_dir
from dlbench.core.text.errors import SaveError, UsageError
from dlbench.runner.driver.cluster.dispatch import Job, run_jobs
from dlbench.runner.driver.cluster.node_identity import node_identity
from dlbench.runner.driver.cluster.nodes import chosen_kinds, connect, placement
from dlbench.runner.driver.cluster.tasks import capture_on_node
from dlbench.runner.driver.plan.cells import PlanError, plan_cells
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.store.persist import kept_for_resume
from dlbench.runner.driver.commands.run import (busy_flagged, busy_retries_of, existing_run,
                                                mark_complete, mark_interrupted, new_run_id,
                                                print_summary, request_of, start_info)
from dlbench.runner.driver.commands.run_arguments import RunArguments
from dlbench.runner.driver.plan.schedule import process_order
from dlbench.runner.driver.store.run_store import RunStore

KIND_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")


def measure_on_cluster(arguments: RunArguments) -> int:
    """Measure the request on every chosen machine kind of the Ray cluster."""
    earlier = (existing_run(arguments.results_dir, arguments.resume) if arguments.resume
               else None)
    info = earlier.load_run_info() if earlier else {}
    for kind in arguments.machine_kinds:
        if not KIND_NAME.fullmatch(kind):
            raise UsageError(f"--machine-kind {kind!r}: letters, digits, '_', '.' and '-' only")
    connect(arguments.address or info.get("address"))
    try:
        kinds = ([info["machine_kind"]] if earlier
                 else chosen_kinds(list(arguments.machine_kinds)))
        request = RunRequest(**info["request"]) if earlier else request_of(arguments)
        return _measure_kinds(arguments, request, kinds, earlier)
    finally:
        ray.shutdown()


def _measure_kinds(arguments: RunArguments, request: RunRequest, kinds: list[str],
                   earlier: RunStore | None) -> int:
    driver = node_identity()
    environments = {kind: capture_kind_environment(kind, request.device, driver)
                    for kind in kinds}
    address = ray.get_runtime_context().gcs_address
    stores, jobs = {}, []
    for kind, environment in environments.items():
        device = (earlier.load_run_info()["device"] if earlier
                  else _device(request.device, environment))
        try:
            cells = plan_cells(request, device)
        except (PlanError, ValueError) as error:
            raise UsageError(str(error)) from None
        store = earlier or RunStore(layout.run_dir(arguments.results_dir,
                                                   f"{new_run_id(device)}-{kind}"))
        if earlier is None:
            make_dir(store.root)
        info = start_info(store, request, device, cells, arguments.seed, True)
        store.save_run_info(info | {"executor": "ray", "address": address,
                                    "machine_kind": kind})
        if not (store.root / "environment.json").exists():
            store.save_environment(environment)
        done = store.finished_processes()
        jobs += [Job(store, kind, spec) for spec in process_order(cells, info["order_seed"])
                 if (spec.cell_id, spec.repeat_index) not in done]
        stores[kind] = (store, {cell.cell_id for cell in cells})
    return _run(stores, jobs, driver, busy_retries_of(arguments))


def _run(stores: dict, jobs: list[Job], driver: dict, busy_retries: int) -> int:
    started = time.perf_counter()
    try:
        run_jobs(jobs, driver)
        for attempt in range(1, busy_retries + 1):
            again = []
            for kind, (store, cell_ids) in stores.items():
                for record in busy_flagged(store, cell_ids, attempt):
                    store.supersede(record, "machine busy: " + "; ".join(record.busy_reasons))
                    again.append(Job(store, kind, record.spec, attempt))
            run_jobs(again, driver)
    except KeyboardInterrupt:
        for store, _ in stores.values():
            mark_interrupted(store)
        raise
    except SaveError as error:
        runs = [store for store, _ in stores.values()]
        refused = next((store for store in runs
                        if Path(str(error.path)).is_relative_to(store.root)), runs[0])
        raise kept_for_resume(refused, error) from None
    for store, _ in stores.values():
        mark_complete(store, started)
        print_summary(store, store.load_records())
    return 0


def capture_kind_environment(kind: str, device: str, driver: dict[str, str]) -> dict:
    """The environment of a node of `kind`, captured there; a node whose code differs from
    the driver's is refused."""
    options = placement(kind, "cuda" if device == "cuda" else "cpu")
    result = ray.get(capture_on_node.options(**options).remote(driver, kind))
    if "refused" in result:
        raise UsageError(result["refused"])
    return result["environment"]


def _device(requested: str, environment: dict) -> str:
    """'auto' becomes cuda where the node of that kind has an NVIDIA GPU, else cpu."""
    if requested != "auto":
        return requested
    return "cuda" if environment.get("gpus") else "cpu"
