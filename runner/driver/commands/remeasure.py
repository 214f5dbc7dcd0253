"""`dlbench run --remeasure RUN_ID --cell CELL_ID [--reason TEXT]`: measure cells of a run
again. Their earlier process records move to the run's superseded/ with the reason and the
time, and run.json lists the re-measurement; the new processes follow the run's order rules.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from dlbench.core.text.errors import UsageError
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord, RunStore


def records_of(store: RunStore, cell_ids: list[str]) -> dict[str, list[CellRecord]]:
    """Each named cell's current process records; UsageError for a cell the run lacks."""
    records = store.load_records()
    found = {cell_id: [r for r in records if r.spec.cell_id == cell_id] for cell_id in cell_ids}
    missing = [cell_id for cell_id, mine in found.items() if not mine]
    if missing:
        raise UsageError(f"run {store.run_id} has no cell {missing[0]!r}; "
                         f"`dlbench results show {store.run_id}` lists its cells")
    return found


def supersede_cells(store: RunStore, found: dict[str, list[CellRecord]], reason: str) -> None:
    """Move every record of the named cells to superseded/ and note it in run.json."""
    for records in found.values():
        for record in records:
            store.supersede(record, reason)
    info = store.load_run_info()
    entry = {"cells": sorted(found), "reason": reason,
             "at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    store.save_run_info(info | {"remeasured": info.get("remeasured", []) + [entry]})


def cells_to_remeasure(store: RunStore, cell_ids: list[str], reason: str) -> list[CellSpec]:
    """Supersede the named cells' processes in the run; return the cells to measure again."""
    if not cell_ids:
        raise UsageError("--remeasure needs at least one --cell CELL_ID")
    found = records_of(store, list(dict.fromkeys(cell_ids)))
    supersede_cells(store, found, reason or "re-measured on request")
    return [replace(records[0].spec, repeat_index=0) for records in found.values()]
