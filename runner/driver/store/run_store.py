"""The run directory: one JSON record per finished worker process, and the tables built
from them.

Each process of a cell writes its own atomic record the moment it ends
(`processes/<cell>__p<k>.json`), so an interrupted run loses at most the process in
progress. The tables are rebuilt from the records after every process:
`cells` (one row per cell, its status combined from its processes), `observations`
(repeat = the process index) and `processes` (when and in what order each process ran, and
how quiet the machine was around it). A re-measured or busy process's earlier record moves
to `superseded/` with the reason. The code files the processes imported are kept in one
archive, each distinct file once (`code.tar`, dlbench/core/storage/code_archive.py).
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from pathlib import Path

from dlbench.core.storage import layout
from dlbench.core.storage.atomic import atomic_write_json
from dlbench.core.storage.code_archive import (ARCHIVE, CodeRecord, convert_legacy,
                                               read_code_record, write_code_record)
from dlbench.core.storage.tables import ResultsFileError, read_json, read_table, write_table
from dlbench.runner.driver.store.record import CellRecord
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_frames import cells_frame, observations_frame, processes_frame

__all__ = ["CellRecord", "RunStore", "cells_frame", "observations_frame", "processes_frame"]


def record_filename(cell_id: str, repeat_index: int = 0) -> str:
    """A file name for one process of a cell (cell IDs contain ':')."""
    return f"{cell_id.replace(':', '__')}__p{repeat_index}.json"


def process_key(spec: CellSpec) -> tuple[str, int]:
    """(cell ID, process index): what identifies one process within a run."""
    return spec.cell_id, spec.repeat_index


class RunStore:
    """Reads and writes one run directory."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.run_id = root.name
        self._parsed: dict[Path, tuple[tuple[int, int, int], CellRecord]] = {}
        self._code: tuple[tuple[int, int, int], CodeRecord] | None = None

    @property
    def processes_dir(self) -> Path:
        return self.root / "processes"

    @property
    def superseded_dir(self) -> Path:
        return self.root / "superseded"

    def save_run_info(self, info: dict) -> None:
        layout.write_run_info(self.root, info)

    def load_run_info(self) -> dict:
        return layout.read_run_info(self.root)

    def save_environment(self, environment: dict) -> None:
        layout.write_environment(self.root, environment)

    def record_path(self, spec: CellSpec) -> Path:
        return self.processes_dir / record_filename(spec.cell_id, spec.repeat_index)

    def save_record(self, record: CellRecord) -> None:
        atomic_write_json(self.record_path(record.spec), record.to_dict())

    def load_records(self) -> list[CellRecord]:
        """Every current process record, in cell then process order."""
        records = [self._record_at(path) for path in self.processes_dir.glob("*.json")]
        return sorted(records, key=lambda r: process_key(r.spec))

    def _record_at(self, path: Path) -> CellRecord:
        """The record in `path`, parsed again only when the file changed (a run reads its
        records after every process)."""
        version = _version(path)
        cached = self._parsed.get(path)
        if cached is None or cached[0] != version:
            cached = (version, _read_record(path))
            self._parsed[path] = cached
        return cached[1]

    def finished_processes(self) -> set[tuple[str, int]]:
        """(cell ID, process index) of every process with a current record."""
        return {process_key(record.spec) for record in self.load_records()}

    def supersede(self, record: CellRecord, reason: str) -> Path:
        """Move a process record to superseded/, with why and when; return its new path."""
        now = datetime.now(timezone.utc)
        source = self.record_path(record.spec)
        target = self.superseded_dir / f"{source.stem}__{now:%Y%m%dT%H%M%S%fZ}.json"
        atomic_write_json(target, {"reason": reason,
                                   "superseded_at": now.isoformat(timespec="seconds"),
                                   "record": record.to_dict()})
        source.unlink()
        return target

    def load_superseded(self) -> list[dict]:
        """Every superseded process record with its reason and time, oldest first."""
        entries = [read_json(path) for path in sorted(self.superseded_dir.glob("*.json"))]
        if any(not isinstance(entry.get("superseded_at"), str) for entry in entries):
            raise ResultsFileError(f"{self.superseded_dir}: a superseded record without the "
                                   "time it was superseded (superseded_at)")
        return sorted(entries, key=lambda e: e["superseded_at"])

    def next_order_index(self) -> int:
        """The place of the next process in the order this run measured in (superseded ones
        included, so a place is never given twice)."""
        used = [r.order_index for r in self.load_records()]
        used += [int(e["record"].get("order_index", -1)) for e in self.load_superseded()]
        return 1 + max(used, default=-1)

    def save_code(self, relative_path: str, text: str) -> None:
        """Keep a copy of the code a cell ran, so the site shows exactly that code."""
        self.save_code_file(relative_path, text.encode())

    def save_code_file(self, relative_path: str, data: bytes) -> str:
        """Keep `data` as a version of `relative_path` in the run's code archive (once by
        content); its SHA-256."""
        self.save_code_files({relative_path: data})
        return hashlib.sha256(data).hexdigest()

    def save_code_files(self, files: dict[str, bytes]) -> None:
        """Add `files` (path -> bytes) to the run's code archive, rewritten atomically only
        when one of them is new to it (a run begun in the older form is converted first)."""
        if self._code is None:
            convert_legacy(self.root)
        record = current = self.code_record()
        for relative_path, data in files.items():
            record = record.with_file(relative_path, data)
        if record is not current:
            write_code_record(self.root, record)
            self._code = (_version(self.root / ARCHIVE), record)

    def code_record(self) -> CodeRecord:
        """The run's code record, read again only when its archive changed."""
        archive = self.root / ARCHIVE
        version = _version(archive) if archive.exists() else (0, 0, 0)
        if self._code is None or self._code[0] != version:
            self._code = (version, read_code_record(self.root))
        return self._code[1]

    def rebuild_tables(self) -> None:
        """Rewrite the tables from the records; never clobber a corrupt or foreign file."""
        for stem in ("cells", "observations", "processes"):
            existing = self.root / f"{stem}.parquet"
            if existing.exists():
                read_table(existing, stem)  # raises on a corrupt or foreign file
        records = self.load_records()
        write_table(cells_frame(records, self.run_id), self.root / "cells", "cells")
        write_table(observations_frame(records, self.run_id), self.root / "observations",
                    "observations")
        write_table(processes_frame(records, self.run_id), self.root / "processes", "processes")


def _version(path: Path) -> tuple[int, int, int]:
    """What tells a file's versions apart: its inode, change time and size."""
    stat = path.stat()
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _read_record(path: Path) -> CellRecord:
    try:
        return CellRecord.from_dict(read_json(path))
    except (KeyError, TypeError, ValueError) as error:
        raise ResultsFileError(f"{path}: not a dlbench process record ({error})") from None
