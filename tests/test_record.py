"""One record from worker to store: the outcome's typed code record and shared-process timing
go into the process file once, come back the same, and records written before them (a
published release's) still read and rebuild the tables the release published."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd

from dlbench.core.storage.schema import CellStatus
from dlbench.core.storage.tables import read_table
from dlbench.runner.cell.outcome import CellOutcome, Fairness, Observation, SharedProcess
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord, RunStore

ROOT = Path(__file__).resolve().parent.parent
#: The latest committed release whose run kept its process records.
RELEASE_RUN = ROOT / "results" / "releases" / "2027.02" / "runs" / "20261203T171654Z-cpu"
CODE_FILES = {"runner/cell/spec.py": "a" * 64, "runner/worker/entry.py": "b" * 64}
SHARED = SharedProcess(pid=4242, position=1, cells=3, started_at="2026-12-02T10:00:05",
                       ended_at="2026-12-02T10:00:07", wall_time_s=2.125)


def shared_record(index: int = 0) -> CellRecord:
    spec = CellSpec("training", "mlp-digits", "pytorch", "pytorch", "cpu", batch_size=32,
                    repeats=1, repeat_index=index, params={"epochs": 1})
    fairness = Fairness("the epoch", "fp32", "eager", "in memory", threads=1, batch_size=32)
    outcome = CellOutcome(CellStatus.OK, [Observation("steady_epoch_time", 0.5, index)],
                          fairness, details={"flops_per_sample": 12.0},
                          code_files=CODE_FILES, shared_process=SHARED)
    return CellRecord(spec, outcome, SHARED.started_at, SHARED.wall_time_s, "", "x.py",
                      "0" * 64, ended_at=SHARED.ended_at, order_index=0)


def test_a_record_comes_back_from_its_file_as_it_went_in(tmp_path):
    store = RunStore(tmp_path / "run")
    record = shared_record()
    store.save_record(record)
    assert store.load_records() == [record]


def test_the_process_file_holds_the_code_record_once_and_no_typed_field_in_details(tmp_path):
    store = RunStore(tmp_path / "run")
    record = shared_record()
    store.save_record(record)
    stored = json.loads(store.record_path(record.spec).read_text())
    assert json.dumps(stored).count('"runner/worker/entry.py"') == 1
    assert stored["outcome"]["code_files"] == CODE_FILES
    assert stored["outcome"]["shared_process"]["pid"] == SHARED.pid
    assert stored["outcome"]["details"] == {"flops_per_sample": 12.0}


def test_the_cells_table_says_a_cell_shared_its_process(tmp_path):
    store = RunStore(tmp_path / "run")
    store.save_record(shared_record())
    store.rebuild_tables()
    details = json.loads(read_table(store.root / "cells.parquet", "cells")["details_json"][0])
    assert details["shared_process"] == {"pid": 4242, "position": 1, "cells": 3,
                                         "started_at": SHARED.started_at,
                                         "ended_at": SHARED.ended_at, "wall_time_s": 2.125}
    assert "code_files" not in details and details["flops_per_sample"] == 12.0
    processes = read_table(store.root / "processes.parquet", "processes")
    assert json.loads(processes["code_files_json"][0]) == CODE_FILES


def test_a_record_in_the_layout_before_typed_fields_reads_into_them():
    new = shared_record().to_dict()
    old = new | {"code_files": CODE_FILES, "outcome": {
        key: value for key, value in new["outcome"].items()
        if key not in ("code_files", "shared_process")} | {
        "details": {"flops_per_sample": 12.0, "code_files": CODE_FILES,
                    "shared_process": new["outcome"]["shared_process"]}}}
    assert CellRecord.from_dict(old) == shared_record()


def test_a_published_runs_records_rebuild_the_tables_it_published(tmp_path):
    run = tmp_path / RELEASE_RUN.name
    shutil.copytree(RELEASE_RUN / "processes", run / "processes")
    store = RunStore(run)
    first = json.loads(next((run / "processes").glob("*.json")).read_text())
    assert "code_files" in first["outcome"]["details"]  # the layout before typed fields
    store.rebuild_tables()
    for stem in ("cells", "observations", "processes"):
        published = read_table(RELEASE_RUN / f"{stem}.parquet", stem)
        rebuilt = read_table(run / f"{stem}.parquet", stem)
        assert list(rebuilt.columns) == list(published.columns)
        added = ["timed_steal_share", "fresh_memory_gibs"] if stem == "processes" else []
        # columns added after the run: its table reads them empty, as its records build them
        assert rebuilt[added].isna().all().all() and published[added].isna().all().all()
        if stem == "observations":  # issue 32: a rate is filed under the batch it ran at
            moved = rebuilt["batch_size"] != published["batch_size"]
            one_sample = {"artifact_latency", "latency_p50", "latency_p90", "latency_p99",
                          "inference_latency"}  # issue 53: a precision cell's latency too
            assert set(rebuilt.loc[moved, "metric"]) <= {"inference_throughput", *one_sample}
            assert (rebuilt.loc[moved & rebuilt["metric"].isin(one_sample),
                                "batch_size"] == 1).all()
            published = published.assign(batch_size=rebuilt["batch_size"])
        pd.testing.assert_frame_equal(rebuilt[list(published.columns)], published)
