"""Cell identity: a hash of what a cell measures, stable for the same measurement."""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path

import pytest

from dlbench.core.declarations.identity import config_differences, config_id, differences_text
from dlbench.core.storage.layout import load_run
from dlbench.core.storage.tables import read_table
from dlbench.runner.cell.spec import CellSpec

ROOT = Path(__file__).resolve().parents[1]
GOLDEN_RUN = ROOT / "tests/data/golden/runs/20261201T100000Z-fixture"
BASE = CellSpec(experiment="training", workload="mlp-digits", framework="pytorch",
                backend="pytorch", device="cpu", batch_size=32, repeats=3, params={"epochs": 2})


@pytest.mark.parametrize("change", [
    {"repeat_index": 3}, {"repeats": 9}, {"timeout_s": 1.0}, {"data_dir": "/data"},
    {"threads": 16},
])
def test_how_a_cell_is_run_does_not_change_its_identity(change):
    assert config_id(replace(BASE, **change).to_json()) == config_id(BASE.to_json())


def test_a_cell_recorded_with_the_retired_repeat_policy_keeps_its_id():
    """Release 2026.12's training cells carry max_repeats and target_ci in their params:
    read today, they keep the IDs they were published with."""
    old = replace(BASE, params={"epochs": 2, "max_repeats": 6, "target_ci": 0.05})
    assert config_id(old.to_json()) == config_id(BASE.to_json())
    assert config_differences(old.to_json(), BASE.to_json()) == []


@pytest.mark.parametrize("change", [
    {"params": {"epochs": 8}}, {"params": {"epochs": 2, "data_size": 512}}, {"batch_size": 64},
    {"precision": "bf16"}, {"mode": "compiled"}, {"device": "cuda"}, {"workload": "cnn-digits"},
])
def test_what_a_cell_measures_changes_its_identity(change):
    assert config_id(replace(BASE, **change).to_json()) != config_id(BASE.to_json())


def test_a_field_added_later_with_an_empty_default_keeps_old_ids():
    config = json.loads(BASE.to_json())
    assert config_id(json.dumps(config | {"new_field": ""})) == config_id(BASE.to_json())
    assert config_id(json.dumps(config | {"new_field": "x"})) != config_id(BASE.to_json())


def test_differences_name_each_parameter():
    quick = replace(BASE, params={"epochs": 2, "data_size": 512})
    standard = replace(BASE, params={"epochs": 8}, repeats=5)
    differences = config_differences(quick.to_json(), standard.to_json())
    assert differences == [("params.data_size", 512, None), ("params.epochs", 2, 8)]
    assert differences_text(differences) == "params.data_size 512→—, params.epochs 2→8"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def assert_config_ids_added_on_read(run: Path) -> None:
    """An older run's tables read with config IDs computed from config_json; files untouched."""
    before = {p.name: _digest(p) for p in run.glob("*.parquet")}
    cells, observations = load_run(run).tables()
    raw = read_table(run / "cells.parquet", "cells")
    assert list(cells["config_id"]) == [config_id(text) for text in raw["config_json"]]
    by_cell = dict(zip(cells["cell_id"], cells["config_id"], strict=True))
    assert observations["config_id"].notna().all()
    assert (observations["config_id"] == observations["cell_id"].map(by_cell)).all()
    assert {p.name: _digest(p) for p in run.glob("*.parquet")} == before


def test_older_tables_get_config_ids_without_rewriting_their_files():
    assert_config_ids_added_on_read(GOLDEN_RUN)


def test_a_new_cell_records_the_same_id_as_its_configuration():
    assert BASE.key_columns("r")["config_id"] == config_id(BASE.to_json())
