"""Reading and writing the tidy results tables: atomic, versioned, validated."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from dlbench.core.storage.atomic import atomic_write_bytes
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.declarations.identity import config_id
from dlbench.core.declarations.metrics import get_metric
from dlbench.core.storage.schema import (
    CELL_COLUMNS,
    FLOAT_COLUMNS,
    INTEGER_COLUMNS,
    OBSERVATION_COLUMNS,
    PROCESS_COLUMNS,
    SCHEMA_VERSION,
)

TABLE_COLUMNS: dict[str, list[str]] = {
    "observations": OBSERVATION_COLUMNS,
    "cells": CELL_COLUMNS,
    "processes": PROCESS_COLUMNS,
}

#: Columns a table gained within its schema version: a table written before them lacks them
#: and reads (and is rewritten) with them empty, as records from before them build them.
ADDED_COLUMNS: dict[str, tuple[str, ...]] = {
    "processes": ("timed_steal_share", "fresh_memory_gibs"),
}

_META_TABLE = b"dlbench.table"
_META_VERSION = b"dlbench.schema_version"


def _add_config_id(frame: pd.DataFrame, origin: str) -> pd.DataFrame:
    """1 -> 2: config_id from a cells table's config_json; observations get it from their cells
    when read through dlbench.core.storage.layout (an observations table alone has no
    configuration)."""
    if "config_id" in frame.columns:
        return frame
    if "config_json" in frame.columns:
        ids = [config_id(text) for text in frame["config_json"]]
    else:
        ids = [None] * len(frame)
    frame = frame.copy()
    frame.insert(frame.columns.get_loc("cell_id") + 1, "config_id",
                 pd.Series(ids, index=frame.index, dtype="string"))
    return frame


#: Upgrades from an older schema version to the next one, keyed by the older version.
MIGRATIONS: dict[int, Callable[[pd.DataFrame, str], pd.DataFrame]] = {1: _add_config_id}


#: A JSON file of a run is far smaller and flatter than these (its largest, run.json, holds
#: a few hundred kB at depth 5); a file past them is refused, not parsed into memory.
MAX_JSON_BYTES = 64 << 20
MAX_JSON_DEPTH = 64
_TOO_DEEP = object()


def read_json(path: Path) -> dict:
    """Read a JSON object written by us, or raise ResultsFileError saying what is wrong."""
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise ResultsFileError(f"{path}: {path.stat().st_size} bytes, over the limit of "
                                   f"{MAX_JSON_BYTES} for a JSON file of a run")
        text = path.read_text()
        value = json.loads(text)
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: file not found") from None
    except json.JSONDecodeError as error:
        what = "an empty file" if not text.strip() else f"not valid JSON ({error})"
        raise ResultsFileError(f"{path}: {what}; expected a JSON object written by dlbench") \
            from None
    except UnicodeDecodeError as error:
        raise ResultsFileError(f"{path}: not valid JSON ({error})") from None
    except RecursionError:
        value = _TOO_DEEP  # nested deeper than the parser goes: far past MAX_JSON_DEPTH
    if value is _TOO_DEEP or json_depth(value) > MAX_JSON_DEPTH:
        raise ResultsFileError(f"{path}: JSON nested deeper than {MAX_JSON_DEPTH} levels; a "
                               "dlbench file is a few levels deep")
    if not isinstance(value, dict):
        raise ResultsFileError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


def json_depth(value: object) -> int:
    """How deep lists and objects nest in a parsed JSON value (a number or string: 0)."""
    deepest, level = 0, [(value, 1)]
    while level:
        item, depth = level.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(
            item, list) else None
        if children is not None:
            deepest = max(deepest, depth)
            level.extend((child, depth + 1) for child in children)
    return deepest


def conform(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """Order and type the columns of a table of `kind`; reject missing columns."""
    columns = TABLE_COLUMNS[kind]
    frame = with_added_columns(frame.copy(), kind)
    frame["schema_version"] = SCHEMA_VERSION
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise ValueError(f"{kind} table is missing columns: {', '.join(missing)}")
    frame = frame[columns]
    for column in columns:
        if column in INTEGER_COLUMNS:
            frame[column] = frame[column].astype("Int64")
        elif column in FLOAT_COLUMNS:
            frame[column] = frame[column].astype("float64")
        else:
            frame[column] = frame[column].astype("string")
    return frame


def validate_observations(frame: pd.DataFrame) -> None:
    """Every metric registered and every unit the registered one."""
    for (metric_name, unit), _ in frame.groupby(["metric", "unit"], dropna=False):
        metric = get_metric(str(metric_name))
        if unit != metric.unit:
            raise ValueError(
                f"metric {metric_name!r} has unit {unit!r}; the registry says {metric.unit!r}"
            )


def write_table(frame: pd.DataFrame, stem: Path, kind: str, csv: bool = True) -> None:
    """Write a table as `<stem>.parquet` and (unless `csv` is False: a release builds its CSV
    from the Parquet, `csv_of`) `<stem>.csv`, atomically, after validation."""
    frame = conform(frame, kind)
    if kind == "observations":
        validate_observations(frame)
    table = pa.Table.from_pandas(frame, preserve_index=False)
    metadata = dict(table.schema.metadata or {})
    metadata[_META_TABLE] = kind.encode()
    metadata[_META_VERSION] = str(SCHEMA_VERSION).encode()
    table = table.replace_schema_metadata(metadata)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    atomic_write_bytes(stem.with_suffix(".parquet"), buffer.getvalue())
    if csv:
        atomic_write_bytes(stem.with_suffix(".csv"), frame.to_csv(index=False).encode())


def _parquet(path: Path) -> pa.Table:
    """The Parquet table at `path`; ResultsFileError when it is missing or unreadable."""
    try:
        return pq.read_table(path)
    except FileNotFoundError:
        raise ResultsFileError(f"{path}: file not found") from None
    except (pa.ArrowInvalid, OSError) as error:
        raise ResultsFileError(f"{path}: not a readable Parquet file ({error})") from None


def csv_of(parquet: Path) -> bytes:
    """The CSV twin of one of our Parquet tables, byte for byte as `write_table` writes it
    (every committed table's CSV was checked to be exactly this)."""
    return _parquet(parquet).to_pandas().to_csv(index=False).encode()


def read_table(path: Path, kind: str) -> pd.DataFrame:
    """Read one of our Parquet tables of `kind`, migrating older schema versions."""
    table = _parquet(path)
    metadata = table.schema.metadata or {}
    if metadata.get(_META_TABLE) != kind.encode():
        raise ResultsFileError(
            f"{path}: not a dlbench {kind} table (no '{_META_TABLE.decode()}={kind}' metadata)"
        )
    try:
        version = int(metadata.get(_META_VERSION, b"0"))
    except ValueError:
        raise ResultsFileError(f"{path}: schema version "
                               f"{metadata[_META_VERSION][:20].decode(errors='replace')!r} is not "
                               f"a number; a dlbench table records 1 to {SCHEMA_VERSION}") from None
    frame = table.to_pandas()
    try:
        return with_added_columns(migrate(frame, version, str(path)), kind)
    except (TypeError, ValueError, KeyError) as error:  # an old table holding what none did
        raise ResultsFileError(f"{path}: schema version {version} cannot be migrated "
                               f"({' '.join(str(error).split())[:200]})") from None


def with_added_columns(frame: pd.DataFrame, kind: str) -> pd.DataFrame:
    """`frame` with every column its kind gained since it was written, empty."""
    missing = [c for c in ADDED_COLUMNS.get(kind, ()) if c not in frame.columns]
    return frame.assign(**dict.fromkeys(missing, float("nan"))) if missing else frame


def migrate(frame: pd.DataFrame, version: int, origin: str) -> pd.DataFrame:
    """Bring a table from `version` to the current schema, or fail saying why."""
    if version > SCHEMA_VERSION:
        raise ResultsFileError(
            f"{origin}: schema version {version} is newer than this dlbench reads "
            f"({SCHEMA_VERSION}); upgrade dlbench"
        )
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise ResultsFileError(
                f"{origin}: schema version {version} cannot be migrated to {SCHEMA_VERSION}"
            )
        frame = step(frame, origin)
        version += 1
    return frame
