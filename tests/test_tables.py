"""Results tables: atomic, versioned, validated, never clobbering a file that is not ours."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dlbench.core.declarations.metrics import UnknownMetricError
from dlbench.core.storage.schema import CELL_KEY_COLUMNS, SCHEMA_VERSION
from dlbench.core.storage.tables import (MIGRATIONS, ResultsFileError, read_table, write_table)


def observation_rows(**overrides) -> pd.DataFrame:
    row = {column: "x" for column in CELL_KEY_COLUMNS}
    row |= {"batch_size": 32, "workers": 1, "repeat": 0, "step": None,
            "metric": "steady_epoch_time", "value": 0.25, "unit": "s"}
    row |= overrides
    return pd.DataFrame([row])


def test_round_trip_keeps_values_types_and_version(tmp_path):
    write_table(observation_rows(), tmp_path / "observations", "observations")
    frame = read_table(tmp_path / "observations.parquet", "observations")
    assert frame.loc[0, "value"] == 0.25
    assert frame.loc[0, "schema_version"] == SCHEMA_VERSION
    assert pd.isna(frame.loc[0, "step"])
    csv = pd.read_csv(tmp_path / "observations.csv")
    assert list(csv.columns) == list(frame.columns)
    assert not list(tmp_path.glob(".*.tmp")), "temporary files left behind"


def test_unregistered_metric_is_refused_and_nothing_written(tmp_path):
    with pytest.raises(UnknownMetricError, match="registered metrics"):
        write_table(observation_rows(metric="speed"), tmp_path / "obs", "observations")
    assert not list(tmp_path.iterdir())


def test_wrong_unit_is_refused(tmp_path):
    with pytest.raises(ValueError, match="registry says 's'"):
        write_table(observation_rows(unit="ms"), tmp_path / "obs", "observations")


def test_corrupt_file_gives_clear_error(tmp_path):
    path = tmp_path / "observations.parquet"
    path.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(ResultsFileError, match="not a readable Parquet file"):
        read_table(path, "observations")


def test_foreign_parquet_is_not_ours(tmp_path):
    path = tmp_path / "observations.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), path)
    with pytest.raises(ResultsFileError, match="not a dlbench observations table"):
        read_table(path, "observations")


def _with_version(path, version: int) -> None:
    table = pq.read_table(path)
    metadata = dict(table.schema.metadata) | {b"dlbench.schema_version": str(version).encode()}
    pq.write_table(table.replace_schema_metadata(metadata), path)


def test_newer_schema_is_refused(tmp_path):
    write_table(observation_rows(), tmp_path / "observations", "observations")
    _with_version(tmp_path / "observations.parquet", SCHEMA_VERSION + 1)
    with pytest.raises(ResultsFileError, match="newer than this dlbench reads"):
        read_table(tmp_path / "observations.parquet", "observations")


def test_older_schema_is_migrated_or_refused(tmp_path, monkeypatch):
    write_table(observation_rows(), tmp_path / "observations", "observations")
    path = tmp_path / "observations.parquet"
    _with_version(path, 0)
    with pytest.raises(ResultsFileError, match="cannot be migrated"):
        read_table(path, "observations")

    def upgrade(frame: pd.DataFrame, origin: str) -> pd.DataFrame:
        return frame.assign(value=frame["value"] * 2)

    monkeypatch.setitem(MIGRATIONS, 0, upgrade)
    assert read_table(path, "observations").loc[0, "value"] == 0.5
