"""The tables of a run, built from its process records.

- cells: one row per cell that has at least one process record. Its status combines its
  processes' (failed > unsupported > skipped > ok); `repeats` is how many processes were
  recorded (the number behind its intervals); details_json carries the first process's
  details, its shared worker process when it had one, and a "processes" summary (planned,
  recorded, ok, busy).
- observations: one row per observation of the ok processes of ok cells; `repeat` is the
  process index the harness labelled it with (spec.repeat_index).
- processes: one row per process: order, times, attempt, quiet-machine readings.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import asdict
from typing import TYPE_CHECKING

import pandas as pd

from dlbench.core.declarations.measured_batch import measured_batch
from dlbench.core.storage.schema import CellStatus

if TYPE_CHECKING:
    from dlbench.runner.cell.spec import CellSpec
    from dlbench.runner.driver.store.record import CellRecord

#: When a cell's processes end differently, the cell takes the first of these present.
STATUS_PRECEDENCE = (CellStatus.FAILED, CellStatus.UNSUPPORTED, CellStatus.SKIPPED,
                     CellStatus.OK)


def by_cell(records: list[CellRecord]) -> dict[str, list[CellRecord]]:
    """Records grouped by cell ID, each group in process order."""
    groups: dict[str, list[CellRecord]] = defaultdict(list)
    for record in sorted(records, key=lambda r: (r.spec.cell_id, r.spec.repeat_index)):
        groups[record.spec.cell_id].append(record)
    return dict(groups)


def cell_status(records: list[CellRecord]) -> tuple[CellStatus, str, str]:
    """(status, reason, stderr tail) of a cell from its processes' records."""
    for status in STATUS_PRECEDENCE:
        matching = [r for r in records if r.outcome.status is status]
        if matching:
            first = matching[0]
            reason = first.outcome.reason
            if status is not CellStatus.OK and len(records) > 1:
                reason = f"process {first.spec.repeat_index}: {reason}"
            return status, reason, first.stderr_tail
    raise ValueError("a cell without process records")


def _processes_summary(records: list[CellRecord]) -> dict:
    return {
        "planned": max(r.spec.repeats for r in records),
        "recorded": len(records),
        "ok": sum(r.outcome.status is CellStatus.OK for r in records),
        "busy": [r.spec.repeat_index for r in records if r.busy_reasons],
        "order": [r.order_index for r in records],
    } | _seeds(records)


def _seeds(records: list[CellRecord]) -> dict:
    """{"seeds": [...]}: each process's seed as its worker reported it (what makes identical
    values across processes exact rather than a rerun: dlbench.core.judging.seeds); empty for
    records written before workers reported it, so their tables rebuild as published."""
    seeds = [r.outcome.details.get("seed") for r in records]
    return {"seeds": seeds} if any(s is not None for s in seeds) else {}


def _shared_process(record: CellRecord) -> dict:
    """{"shared_process": ...} when the cell shared its worker process (a quick run's
    preview), so the cells table says so; empty otherwise."""
    shared = record.outcome.shared_process
    return {"shared_process": asdict(shared)} if shared else {}


def cells_frame(records: list[CellRecord], run_id: str) -> pd.DataFrame:
    """One row per cell."""
    rows = []
    for group in by_cell(records).values():
        first = group[0]
        status, reason, tail = cell_status(group)
        fairness = next((r.outcome.fairness for r in group if r.outcome.fairness), None)
        fairness_json = json.dumps(asdict(fairness) if fairness else {}, sort_keys=True)
        details = first.outcome.details | _shared_process(first) | {
            "processes": _processes_summary(group)}
        rows.append(first.spec.key_columns(run_id) | {
            "status": status.value,
            "reason": reason,
            "stderr_tail": tail,
            "repeats": max(r.spec.repeats for r in group),
            "wall_time_s": round(sum(r.wall_time_s for r in group), 3),
            "started_at": min(r.started_at for r in group),
            "threads": first.spec.threads,
            "code_path": first.code_path,
            "code_sha256": first.code_sha256,
            "config_json": first.spec.to_json(),
            "fairness_json": fairness_json,
            "details_json": json.dumps(details, sort_keys=True),
        })
    return _frame(rows, "cells")


def observed_batch(spec: CellSpec, metric: str) -> int:
    """The batch an observation was measured at (dlbench.core.declarations.measured_batch: the
    serving batch for throughput, one sample per call for latency, else the cell's)."""
    return measured_batch(metric, spec.batch_size, spec.params, spec.experiment)


def observations_frame(records: list[CellRecord], run_id: str) -> pd.DataFrame:
    """One row per observation of the ok processes of ok cells."""
    from dlbench.core.declarations.metrics import get_metric

    rows = []
    for group in by_cell(records).values():
        if cell_status(group)[0] is not CellStatus.OK:
            continue
        spec = group[0].spec
        keys = spec.key_columns(run_id)
        for record in group:
            for obs in record.outcome.observations:
                rows.append(keys | {"batch_size": observed_batch(spec, obs.metric),
                                    "repeat": obs.repeat, "step": obs.step,
                                    "metric": obs.metric, "value": obs.value,
                                    "unit": get_metric(obs.metric).unit})
    return _frame(rows, "observations")


def processes_frame(records: list[CellRecord], run_id: str) -> pd.DataFrame:
    """One row per worker process: when, in what order, and how quiet the machine was."""
    rows = []
    for record in sorted(records, key=lambda r: (r.order_index, r.spec.cell_id)):
        machine = record.machine
        before, after = machine.get("before", {}), machine.get("after", {})
        rows.append({
            "run_id": run_id,
            "cell_id": record.spec.cell_id,
            "repeat": record.spec.repeat_index,
            "order_index": record.order_index,
            "attempt": record.attempt,
            "status": record.outcome.status.value,
            "started_at": record.started_at,
            "ended_at": record.ended_at,
            "wall_time_s": record.wall_time_s,
            "load_before": before.get("loadavg_1min"),
            "load_after": after.get("loadavg_1min"),
            "runnable_before": before.get("other_runnable"),
            "runnable_after": after.get("other_runnable"),
            "steal_share": machine.get("steal_share"),
            "other_cpu_cores": machine.get("other_cpu_cores"),
            "gpu_util_before": before.get("gpu_utilization"),
            "gpu_util_after": after.get("gpu_utilization"),
            "busy": "; ".join(record.busy_reasons),
            "code_files_json": json.dumps(record.code_files, sort_keys=True),
            "timed_steal_share": machine.get("timed_steal_share"),
            "fresh_memory_gibs": machine.get("fresh_memory_gibs"),
        })
    return _frame(rows, "processes")


def _frame(rows: list[dict], kind: str) -> pd.DataFrame:
    from dlbench.core.storage.tables import TABLE_COLUMNS

    columns = [c for c in TABLE_COLUMNS[kind] if c != "schema_version"]
    return pd.DataFrame(rows, columns=columns)
