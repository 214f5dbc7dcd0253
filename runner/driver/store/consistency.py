"""A run checked as one consistent whole before `dlbench import-run` stores it: its tables are
exactly the tables its process records build (no row counted twice, none added, none
changed), and its code record holds exactly the files those records say the processes
imported, at their hashes, and nothing else (the site shows a path's first version kept).
A run this checkout measured always passes: its tables are rebuilt from its records after
every process, and its archive is written from them."""

from __future__ import annotations

import pandas as pd

from dlbench.core.storage.code_archive import CodeRecord
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.tables import conform
from dlbench.core.text.visible import shown_name
from dlbench.runner.driver.store.record import CellRecord
from dlbench.runner.driver.store.run_frames import (cells_frame, observations_frame,
                                                    processes_frame)

#: What one row of each table stands for: no two rows may share it.
ROW_KEYS = {"cells": ("cell_id",), "observations": ("cell_id", "repeat", "step", "metric"),
            "processes": ("cell_id", "repeat")}
BUILDERS = {"cells": cells_frame, "observations": observations_frame,
            "processes": processes_frame}


def check_no_duplicates(frame: pd.DataFrame, kind: str, origin: str) -> None:
    """ResultsFileError naming the first row of a `kind` table that another row repeats."""
    keys = list(ROW_KEYS[kind])
    twice = frame[frame.duplicated(keys, keep=False)]
    if len(twice):
        first = twice.iloc[0]
        said = ", ".join(f"{key} {shown_name(str(first[key]))}" for key in keys)
        raise ResultsFileError(f"{origin}: {kind}.parquet holds {said} more than once "
                               f"({len(twice)} rows); a run holds each once")


def check_tables_match_records(tables: dict[str, pd.DataFrame], records: list[CellRecord],
                               run_id: str, origin: str) -> None:
    """ResultsFileError where a table differs from the one the process records build."""
    for kind, build in BUILDERS.items():
        stored = tables[kind].reset_index(drop=True)
        built = conform(build(records, run_id), kind).reset_index(drop=True)
        difference = _first_difference(stored, built)
        if difference:
            raise ResultsFileError(f"{origin}: {kind}.parquet does not match the run's process "
                                   f"records ({difference}); a run's tables are built from "
                                   "its records")


def _first_difference(stored: pd.DataFrame, built: pd.DataFrame) -> str:
    """Where two tables of one kind first differ, in words; '' where they do not."""
    if len(stored) != len(built):
        return f"{len(stored)} rows where the records make {len(built)}"
    for column in built.columns:
        try:
            pd.testing.assert_series_equal(stored[column], built[column], check_dtype=False,
                                           check_exact=True, check_names=False)
        except AssertionError:
            equal = stored[column].astype("string").fillna("\0") == \
                built[column].astype("string").fillna("\0")
            row = int((~equal).to_numpy().argmax())
            return (f"column {column} of cell {shown_name(str(built['cell_id'].iloc[row]))}: "
                    f"{shown_name(str(stored[column].iloc[row]), 40)} where the records say "
                    f"{shown_name(str(built[column].iloc[row]), 40)}")
    return ""


def check_code_matches_records(code: CodeRecord, records: list[CellRecord],
                               origin: str) -> None:
    """ResultsFileError where the code record and the process records disagree: a file a
    record names at another hash than the archive's, or a file version no record names (a
    file edited while the run measured is not kept at all: dlbench.runner.driver.store.persist)."""
    named: dict[str, set[str]] = {}
    for record in records:
        files = dict(record.code_files)
        if record.code_path and record.code_sha256:
            files.setdefault(record.code_path, record.code_sha256)
        for path, digest in files.items():
            named.setdefault(path, set()).add(digest)
            kept = code.files.get(path, ())
            if kept and digest not in kept:  # none kept: edited while it ran (persist)
                raise ResultsFileError(
                    f"{origin}: process {record.spec.cell_id} #{record.spec.repeat_index} "
                    f"imported {shown_name(path)} at {shown_name(digest, 16)}, which code.tar "
                    "does not hold; a run's code record holds what its processes imported")
    for path, versions in code.files.items():
        extra = [digest for digest in versions if digest not in named.get(path, set())]
        if extra:
            raise ResultsFileError(f"{origin}: code.tar holds {shown_name(path)} at "
                                   f"{extra[0][:16]}, which no process record names; a run's "
                                   "code record holds only what its processes imported")


def check_code_text(code: CodeRecord, origin: str) -> None:
    """ResultsFileError for a source file of the code record that is not UTF-8 text (the
    site and `dlbench code` show it as text)."""
    for path, versions in code.files.items():
        for digest in versions:
            try:
                code.objects[digest].decode()
            except UnicodeDecodeError:
                raise ResultsFileError(f"{origin}: code.tar holds {shown_name(path)} as bytes "
                                       "that are not UTF-8 text; a code file is source text") \
                    from None
