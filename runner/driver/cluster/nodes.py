"""The Ray cluster as the driver sees it: connecting, the machine kinds its nodes declare,
and how many nodes of a kind are alive.

A node declares itself with two custom resources that `ray start --resources` sets: one
unit of `dlbench_slot` (every measurement takes it, so a node measures one thing at a time)
and one unit of `dlbench_kind_<KIND>` (which machine kind it is).
"""

from __future__ import annotations

import socket

import ray

from dlbench.core.text.errors import UsageError
from dlbench.runner.driver.launch.stop import stop_on_signals

#: One unit per node: a measurement holds it, so no two measurements share a machine.
SLOT_RESOURCE = "dlbench_slot"
#: A node of machine kind KIND has one unit of KIND_PREFIX + KIND.
KIND_PREFIX = "dlbench_kind_"
START_HINT = ("start each node with ray start --resources "
              "'{\"dlbench_slot\": 1, \"dlbench_kind_KIND\": 1}'")


#: Seconds a given cluster address has to accept a connection before the run is refused.
CONNECT_TIMEOUT_S = 10.0


def connect(address: str | None) -> None:
    """Join the Ray cluster at `address` (default: RAY_ADDRESS or the one running here); an
    address that does not answer within CONNECT_TIMEOUT_S is a UsageError."""
    if address:
        check_answers(address)
    try:
        ray.init(address=address or "auto", log_to_driver=False, logging_level="ERROR",
                 configure_logging=False)
    except (ConnectionError, RuntimeError, ValueError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error)
        raise UsageError(f"no Ray cluster at {address or 'auto'} ({first_line}); "
                         f"{START_HINT}") from None
    stop_on_signals()  # ray.init installs its own SIGTERM handler; a stop must stay a stop


def check_answers(address: str) -> None:
    """UsageError unless HOST:PORT (ray:// addresses too) accepts a TCP connection within
    CONNECT_TIMEOUT_S: ray.init would otherwise wait minutes on an address that is not up."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--address {address!r} is not HOST:PORT (the Ray head's GCS "
                         "address, e.g. 10.0.0.5:6379)")
    try:
        socket.create_connection((host.strip("[]"), int(port)), CONNECT_TIMEOUT_S).close()
    except OSError as error:
        reason = "timed out" if isinstance(error, TimeoutError) else error.strerror or error
        raise UsageError(f"no Ray cluster answers at {address} within {CONNECT_TIMEOUT_S:.0f} "
                         f"s ({reason}); {START_HINT}") from None


def kind_resource(kind: str) -> str:
    """The custom resource that marks a node of machine kind `kind`."""
    return KIND_PREFIX + kind


def placement(kind: str, device: str = "cpu", gpus: int = 1) -> dict:
    """Ray task options that place one measurement alone on a node of `kind`."""
    options: dict = {"num_cpus": 0, "max_retries": 0,
                     "resources": {SLOT_RESOURCE: 1, kind_resource(kind): 1}}
    if device == "cuda":
        options["num_gpus"] = max(1, gpus)  # Ray hides every GPU from a task asking for none
    return options


def alive_slots(kind: str) -> int:
    """How many alive nodes of machine kind `kind` can measure."""
    return sum(1 for node in ray.nodes() if node.get("Alive")
               and node["Resources"].get(kind_resource(kind))
               and node["Resources"].get(SLOT_RESOURCE))


def cluster_kinds() -> list[str]:
    """Every machine kind an alive node of the cluster declares, sorted."""
    kinds = {name.removeprefix(KIND_PREFIX) for node in ray.nodes() if node.get("Alive")
             for name in node["Resources"] if name.startswith(KIND_PREFIX)}
    return sorted(kinds)


def chosen_kinds(requested: list[str]) -> list[str]:
    """The requested machine kinds (default: every kind in the cluster); a UsageError names
    a kind no alive node declares, and the kinds there are."""
    available = cluster_kinds()
    if not available:
        raise UsageError(f"no node of the Ray cluster declares a machine kind: {START_HINT}")
    for kind in requested:
        if kind not in available:
            raise UsageError(f"no alive node of machine kind {kind!r} in the Ray cluster; "
                             f"kinds there: {', '.join(available)}")
    return list(dict.fromkeys(requested)) or available
