"""Columns of the results tables, their schema version and the cell status vocabulary."""

from __future__ import annotations

import enum

from dlbench.core.declarations import systems

#: 2: config_id, a hash of what a cell measures (dlbench/core/declarations/identity.py), beside
#: cell_id.
SCHEMA_VERSION = 2

#: Columns that identify a cell; shared by the cell table and the observation table.
CELL_KEY_COLUMNS: list[str] = [
    "run_id",
    "cell_id",
    "config_id",
    "experiment",
    "workload",
    "framework",
    "backend",
    "precision",
    "mode",
    "batch_size",
    "workers",
    "export_format",
    "device",
]

#: The variant columns: what distinguishes cells of one experiment, workload and framework.
VARIANT_COLUMNS: list[str] = ["precision", "mode", "batch_size", "workers", "export_format"]

#: One row per observation (long format).
OBSERVATION_COLUMNS: list[str] = (
    ["schema_version"] + CELL_KEY_COLUMNS + ["repeat", "step", "metric", "value", "unit"]
)

#: One row per cell: its configuration, status and fairness manifest.
CELL_COLUMNS: list[str] = (
    ["schema_version"]
    + CELL_KEY_COLUMNS
    + [
        "status",
        "reason",
        "stderr_tail",
        "repeats",
        "wall_time_s",
        "started_at",
        "threads",
        "code_path",
        "code_sha256",
        "config_json",
        "fairness_json",
        "details_json",
    ]
)

#: One row per worker process of a run: its order, times and the quiet-machine readings
#: taken before and after it (written by the runner; older runs have no such table).
PROCESS_COLUMNS: list[str] = [
    "schema_version", "run_id", "cell_id", "repeat", "order_index", "attempt", "status",
    "started_at", "ended_at", "wall_time_s", "load_before", "load_after", "runnable_before",
    "runnable_after", "steal_share", "other_cpu_cores", "gpu_util_before", "gpu_util_after",
    "busy", "code_files_json", "timed_steal_share", "fresh_memory_gibs",
]

INTEGER_COLUMNS = {"schema_version", "batch_size", "workers", "repeat", "step", "repeats",
                   "threads", "order_index", "attempt"}
FLOAT_COLUMNS = {"value", "wall_time_s", "load_before", "load_after", "runnable_before",
                 "runnable_after", "steal_share", "other_cpu_cores", "gpu_util_before",
                 "gpu_util_after", "timed_steal_share", "fresh_memory_gibs"}


def system_label(name: str) -> str:
    """A system (or any contender: a precision, a mode) as a person reads it: its declared
    label (dlbench.core.declarations.systems), or the name itself."""
    return systems.label(name)


class CellStatus(enum.Enum):
    """How a cell ended."""

    OK = "ok"
    FAILED = "failed"  # raised, crashed or timed out: a fault of the harness or framework
    SKIPPED = "skipped"  # could not be attempted here (framework not installed, no GPU)
    UNSUPPORTED = "unsupported"  # attempted; the framework itself refused the combination

