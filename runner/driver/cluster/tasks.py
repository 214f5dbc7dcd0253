"""What runs on a node: an environment capture and one measured process, each refused when
the node's code differs from the driver's."""

from __future__ import annotations

import ray

from dlbench.runner.driver.cluster.node_identity import mismatch, node_identity
from dlbench.runner.driver.machine.environment import capture_environment
from dlbench.runner import PROJECT_ROOT
from dlbench.runner.driver.launch.execute import execute_cell
from dlbench.runner.cell.spec import CellSpec


@ray.remote
def capture_on_node(driver: dict[str, str], kind: str) -> dict:
    """{"environment": this node's capture} or {"refused": why}."""
    refused = mismatch(node_identity(), driver, kind)
    if refused:
        return {"refused": refused}
    return {"environment": capture_environment(PROJECT_ROOT) | {"machine_kind": kind}}


@ray.remote
def measure_on_node(spec_json: str, driver: dict[str, str], kind: str) -> dict:
    """{"record": the process's record as a dict} or {"refused": why}; the process runs in
    a fresh worker process exactly as a local run's does (dlbench.runner.driver.launch.execute)."""
    identity = node_identity()
    refused = mismatch(identity, driver, kind)
    if refused:
        return {"refused": refused}
    record = execute_cell(CellSpec.from_json(spec_json))
    return {"record": record.to_dict(), "host": identity["host"]}
