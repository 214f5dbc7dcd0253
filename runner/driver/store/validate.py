"""Whether a run directory reads as a run's files: its run and environment files, every
process record, the three tables and its code record, every file against its hash
(`dlbench import-run` checks an archive's run with it before moving it into results/runs)."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

from dlbench.core.storage import layout
from dlbench.core.storage.code_archive import CodeRecord, read_code_record
from dlbench.core.judging.sequential import design_from_policy
from dlbench.core.declarations.systems import DEVICES
from dlbench.core.text.typed_text import is_iso_time
from dlbench.core.text.errors import ResultsFileError
from dlbench.core.storage.tables import read_json, read_table
from dlbench.core.text.visible import shown_name
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.store.consistency import (check_code_matches_records, check_code_text,
                                                     check_no_duplicates,
                                                     check_tables_match_records)
from dlbench.runner.driver.store.record_types import check_record_types, same_json
from dlbench.runner.driver.store.run_store import CellRecord, RunStore
from dlbench.runner.driver.store.table_checks import check_measured, check_table

TABLES = ("cells", "observations", "processes")
#: The longest text a run's JSON holds in one string (an environment variable's value).
MAX_TEXT = 1 << 16
#: The longest key (a package's or an environment variable's name).
MAX_KEY = 256
_TEXT, _NUMBER, _FLAG = (str, type(None)), (int, float, type(None)), (bool, type(None))
#: The shapes pages and commands read of run.json and environment.json beyond
#: dlbench.core.storage.layout's top-level types: a dict per field, "*" for every key, a list's
#: items as its one element.
RUN_SHAPE: dict = {"workload_words": {"*": _TEXT}, "request": {}, "processes_policy": {},
                   "remeasured": [{"reason": _TEXT, "cells": [_TEXT], "at": _TEXT}],
                   "looks": [{}], "process_order": [_TEXT], "planned_cells": [_TEXT]}
ENVIRONMENT_SHAPE: dict = {
    "cpu": {"model": _TEXT, "arch": _TEXT, "logical_cores": _NUMBER, "physical_cores": _NUMBER,
            "usable_cores": _NUMBER, "framework_kernels": {"*": {}},
            "*": _FLAG + (str, int)},
    "gpus": [{"model": _TEXT, "*": _TEXT + _NUMBER + _FLAG}],
    "compute_peak": {"fp32_flops": _NUMBER, "bf16_flops": _NUMBER, "fp16_flops": _NUMBER,
                     "probe": _TEXT, "probes": {"torch_version": _TEXT, "*": _NUMBER}},
    "packages": {"*": _TEXT}, "frameworks": {"*": _TEXT}, "environment_variables": {"*": _TEXT},
    "git": {"commit": _TEXT, "*": _FLAG + _TEXT},
}

#: A model run's model.json (runner/worker/user_model/build_once.py writes its facts): what
#: its page reads, each key required.
MODEL_SHAPE: dict = {
    "request": {"path": (str,), "name": _TEXT, "data_file": _TEXT},
    "facts": {"kind": (str,), "model_id": (str,), "batch_size": (int,), "batch_chosen": (bool,),
              "input_shape": [_TEXT + _NUMBER], "input_dtype": (str,),
              "output_shape": [_TEXT + _NUMBER], "parameters": (int, float),
              "repeat_max_abs": (int, float), "trains": (bool,), "no_training": _TEXT,
              "flops_per_sample": _NUMBER, "flops_note": _TEXT, "class_name": (str,)},
}
MODEL_FILE = "model.json"


def validate_run(run_root: Path, origin: str) -> str:
    """The run ID of the run directory `run_root` if every file of it reads as a run's file;
    else ResultsFileError naming the first that does not."""
    if not layout.is_run(run_root):
        raise ResultsFileError(f"{origin}: no {layout.RUN_INFO} in {run_root.name}/ (not a run)")
    if not (run_root / layout.ENVIRONMENT).is_file():
        raise ResultsFileError(f"{origin}: no {layout.ENVIRONMENT} in {run_root.name}/")
    info = layout.read_run_info(run_root)
    check_json(info, RUN_SHAPE, f"{origin}: run.json")
    check_json(layout.read_environment(run_root), ENVIRONMENT_SHAPE, f"{origin}: environment.json")
    if info["run_id"] != run_root.name:
        raise ResultsFileError(f"{origin}: run.json names run {info['run_id']!r} but the "
                               f"archive holds {run_root.name!r}")
    check_run_fields(info, f"{origin}: run.json")
    if (run_root / MODEL_FILE).exists():
        check_model_file(read_json(run_root / MODEL_FILE), f"{origin}: {MODEL_FILE}")
    records = _check_records(run_root, origin)
    tables = {}
    for stem in TABLES:
        table = tables[stem] = read_table(run_root / f"{stem}.parquet", stem)
        check_table(table, stem, f"{origin}: {stem}.parquet")
        named = set(table["run_id"])
        if named - {info["run_id"]}:
            raise ResultsFileError(f"{origin}: {stem}.parquet names run(s) "
                                   f"{', '.join(map(repr, sorted(map(str, named))))} but "
                                   f"run.json names {info['run_id']!r}")
        check_no_duplicates(table, stem, origin)
    check_measured(tables["cells"], tables["observations"], origin)
    check_tables_match_records(tables, records, info["run_id"], origin)
    code = _check_code(run_root, origin)
    check_code_matches_records(code, records, origin)
    check_code_text(code, origin)
    return info["run_id"]


def check_model_file(model: dict, where: str) -> None:
    """ResultsFileError where a model run's model.json lacks a fact its page reads, or holds
    one of another type."""
    for part, keys in MODEL_SHAPE.items():
        missing = [key for key in keys if key not in (model.get(part) or {})
                   and not (part == "request" and key != "path")]
        if missing:
            raise ResultsFileError(f"{where}: no {part}.{missing[0]} (a model run records "
                                   f"{', '.join(keys)} in its {part})")
    check_json(model, MODEL_SHAPE, where)


def check_run_fields(info: dict, where: str) -> None:
    """ResultsFileError where run.json lacks what resuming, drafting or judging the run
    reads: its device, an ISO start time, a request the runner can read, a process policy
    whose looks grow."""
    if info.get("device") not in DEVICES:
        raise ResultsFileError(f"{where}: device is {shown_name(str(info.get('device')))}; "
                               f"expected one of {', '.join(DEVICES)}")
    if not is_iso_time(str(info.get("started_at"))):
        raise ResultsFileError(f"{where}: started_at is {shown_name(str(info.get('started_at')))}"
                               "; expected an ISO 8601 time, as 2026-12-01T10:00:00+00:00")
    try:
        request = RunRequest(**info.get("request", {}))
    except TypeError as error:
        raise ResultsFileError(f"{where}: request is not one the runner records ({error}); "
                               f"its keys are {', '.join(f.name for f in fields(RunRequest))}") \
            from None
    check_record_types(request, where, "request")
    try:
        design_from_policy(info.get("processes_policy"))
    except (TypeError, ValueError, KeyError) as error:
        raise ResultsFileError(f"{where}: processes_policy holds no design the verdicts can "
                               f"read ({shown_name(str(error), 80)}); expected looks that "
                               "grow, each with its level") from None


def _check_records(run_root: Path, origin: str) -> list[CellRecord]:
    """Every process record parses as one (dlbench.runner.driver.store.run_store reads them),
    each field of its declared type."""
    store = RunStore(run_root)
    if not list(store.processes_dir.glob("*.json")):
        raise ResultsFileError(f"{origin}: no process records in {run_root.name}/processes/")
    records = store.load_records()
    for record in records:
        where = f"{origin}: process record {shown_name(record.spec.cell_id)}"
        check_record_types(record, where)
        path = store.record_path(record.spec)
        if not path.is_file():
            raise ResultsFileError(f"{where} #{record.spec.repeat_index} is not in its file "
                                   f"{path.name} (a record is named for its process)")
        if not same_json(json.loads(json.dumps(record.to_dict())), read_json(path)):
            raise ResultsFileError(f"{where} #{record.spec.repeat_index} holds what a process "
                                   "record never does (a field of another form or name)")
    store.load_superseded()
    return records


def _check_code(run_root: Path, origin: str) -> CodeRecord:
    """The code record reads (dlbench/core/storage/code_archive.py): every file matches its hash and
    every path names one, in the archive or the older code/ and code-objects/ form."""
    return read_code_record(run_root, origin)


def check_json(value: object, shape: object, where: str) -> None:
    """ResultsFileError where `value` is not of `shape` (RUN_SHAPE's form) or holds a string
    over MAX_TEXT characters."""
    _check_shape(value, shape, where)
    _check_lengths(value, where)


def _check_shape(value: object, shape: object, where: str) -> None:
    if isinstance(shape, tuple):
        if not isinstance(value, shape) or (isinstance(value, bool) and bool not in shape):
            accepted = " or ".join(t.__name__ for t in shape if t is not type(None))
            raise ResultsFileError(f"{where} is {type(value).__name__}, expected {accepted}")
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise ResultsFileError(f"{where} is {type(value).__name__}, expected a list")
        for index, item in enumerate(value):
            _check_shape(item, shape[0], f"{where}[{index}]")
    elif isinstance(shape, dict):
        if not isinstance(value, dict):
            raise ResultsFileError(f"{where} is {type(value).__name__}, expected an object")
        for key, item in value.items():
            if key in shape or "*" in shape:
                _check_shape(item, shape.get(key, shape.get("*")), f"{where}.{_key(key)}")


def _key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() and key.isascii() and \
        len(key) < 64 else shown_name(key)


def _check_lengths(value: object, where: str) -> None:
    if isinstance(value, str) and len(value) > MAX_TEXT:
        raise ResultsFileError(f"{where} holds {len(value)} characters of text, over the limit "
                               f"of {MAX_TEXT}")
    for key in value if isinstance(value, dict) else ():
        if len(str(key)) > MAX_KEY:
            raise ResultsFileError(f"{where} holds a key of {len(str(key))} characters, over "
                                   f"the limit of {MAX_KEY}")
    for item in value.values() if isinstance(value, dict) else value if isinstance(
            value, list) else ():
        _check_lengths(item, where)
