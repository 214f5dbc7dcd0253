"""Saving a measured process the moment it ends: the code files it imported, then its record
(the run's tables are rebuilt from the records once per look, and when a run stops or ends:
dlbench.runner.driver.commands.run); and what a run does when the filesystem refuses (dlbench.runner.driver.commands.run
and the cluster dispatcher)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from dlbench.core.storage.atomic import saving
from dlbench.core.text.errors import SaveError
from dlbench.runner import PROJECT_ROOT
from dlbench.runner.driver.plan.schedule import process_label
from dlbench.runner.driver.store.run_store import CellRecord, RunStore


def persist(store: RunStore, record: CellRecord) -> None:
    """Keep the code files the process imported (one copy per content; a file edited since it
    ran is not stored as if it had run), then its record; a SaveError says which of them the
    filesystem refused."""
    label = process_label(record.spec)
    files = {}
    for relative, digest in record.code_files.items():
        path = PROJECT_ROOT / relative
        data = path.read_bytes() if path.is_file() else b""
        if data and _sha256(data) == digest:
            files[relative] = data
    with saving(f"the code files of process {label}"):
        store.save_code_files(files)
    with saving(f"the record of process {label}"):
        store.save_record(record)


def persist_all(store: RunStore, records: list[CellRecord],
                saved: Callable[[], None] = lambda: None) -> None:
    """Persist each record, calling `saved` after each; one the filesystem refuses is kept
    in memory and tried once more after the others are written, then its SaveError goes up."""
    refused = []
    for record in records:
        try:
            persist(store, record)
        except SaveError:
            refused.append(record)
            continue
        saved()
    for record in refused:
        persist(store, record)
        saved()


def kept_for_resume(store: RunStore, error: SaveError) -> SaveError:
    """`error` saying how many processes are kept and how to go on; the run is marked
    interrupted where the filesystem still lets us."""
    try:
        store.save_run_info(store.load_run_info() | {"status": "interrupted"})
    except SaveError:
        pass  # run.json keeps "running": --resume goes on from it alike
    kept = len(store.finished_processes())
    return error.about("", f"kept {kept} saved process{'' if kept == 1 else 'es'}: free "
                           "space or make the folder writable, then "
                           f"`dlbench run --resume {store.run_id}`")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
