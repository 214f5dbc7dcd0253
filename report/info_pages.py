"""Environment, methodology (fairness manifest) and downloads (data dictionary) contexts."""

from __future__ import annotations

import json

from dlbench.schema import CELL_COLUMNS, OBSERVATION_COLUMNS
from report.experiment_page import experiment_title
from report.source import Source
from report.summary import SUMMARY_COLUMNS, machine_label, system_name, variant_label

#: What each column of the downloadable tables means (the data dictionary).
COLUMN_DESCRIPTIONS = {
    "schema_version": "Version of the table layout; older versions are migrated on load.",
    "run_id": "The run (one invocation of the runner on one machine) the row comes from.",
    "cell_id": "Stable ID of the cell: experiment:workload:framework:variant:device.",
    "config_id": "Hash of everything the cell measures (sizes, epochs, timing windows, "
                 "variant, device, parameters): cells compare only when it is equal.",
    "experiment": "The question measured, e.g. training.",
    "workload": "Model × dataset × hyper-parameters, e.g. mlp-digits.",
    "framework": "pytorch, tensorflow or keras.",
    "backend": "The backend Keras ran on (tensorflow, torch, jax); else the framework itself.",
    "system": "Framework and backend as one name, e.g. keras-torch.",
    "variant": "The variant columns as one label.",
    "precision": "Numeric precision policy: fp32, bf16 or fp16.",
    "mode": "Execution mode, e.g. default, eager, graph, compiled.",
    "batch_size": "Samples per batch.",
    "workers": "Data-parallel workers.",
    "export_format": "Export format, for the export experiment; else empty.",
    "device": "cpu or cuda.",
    "machine": "The device's hardware, from the run's environment.",
    "repeat": "Index of the repeat (independent measurement) of the cell.",
    "step": "Epoch index for per-epoch metrics; empty for per-repeat values.",
    "metric": "Name of the metric; see the metrics dictionary.",
    "value": "The measured value, in the metric's unit.",
    "unit": "Unit of the value.",
    "status": "How the cell ended: ok, failed, skipped or unsupported.",
    "reason": "Why a cell failed, was skipped or is unsupported.",
    "stderr_tail": "The last lines the cell's process wrote to stderr.",
    "repeats": "Repeats asked for.",
    "wall_time_s": "Wall time of the whole cell process, in seconds.",
    "started_at": "When the cell started (ISO 8601, UTC).",
    "threads": "Threads every framework was given.",
    "code_path": "The framework code file the cell ran, relative to the project.",
    "code_sha256": "SHA-256 of that file as it ran.",
    "config_json": "The cell's full configuration, as JSON.",
    "fairness_json": "The cell's fairness manifest, as JSON.",
    "details_json": "Extra facts the cell reported (e.g. parity outputs), as JSON.",
    "ci_low": "Lower end of the 95% bootstrap confidence interval of the median.",
    "ci_high": "Upper end of the 95% bootstrap confidence interval of the median.",
    "result_id": "Permanent ID of the result, <release>-NNNN.",
    "n": "Number of repeats summarised.",
    "median": "Median of the repeats.",
    "low": "Minimum of the repeats.",
    "high": "Maximum of the repeats.",
    "cv": "Coefficient of variation of the repeats (standard deviation / mean).",
    "detectable_ratio": "The smallest ratio these processes detect against an equally noisy "
                        "cell with as many processes (80% power at the 5% level, Welch on log "
                        "values): the result's resolution.",
}

LONG_LIST = 8  # longer lists are shortened on the environment page (downloads keep them)

TABLES = [
    ("results", "one result: a metric of a cell in a run, summarised over repeats"),
    ("observations", "one measured value: a metric of a cell in one repeat (and epoch)"),
    ("cells", "one cell of a run: configuration, status and fairness manifest"),
]


def _flatten(value: object, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, dict):
        rows = []
        for key in sorted(value):
            rows += _flatten(value[key], f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        rows = []
        for index, item in enumerate(value):
            rows += _flatten(item, f"{prefix}[{index}]")
        return rows
    if isinstance(value, list) and len(value) > LONG_LIST:
        value = [f"{len(value)} entries:", *value[:3], "…", value[-1]]
    text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
    return [(prefix or "value", text if text else "(empty)")]


def _groups(value: dict, general: str) -> list[dict]:
    """Top-level scalars as one group, then one group per nested section."""
    scalars = {k: v for k, v in value.items() if not isinstance(v, (dict, list))
               or (isinstance(v, list) and not any(isinstance(i, dict) for i in v))}
    groups = [{"title": general, "rows": _flatten(scalars)}] if scalars else []
    for key in sorted(k for k in value if k not in scalars):
        rows = _flatten(value[key])
        groups.append({"title": key.replace("_", " "),
                       "rows": rows or [("(none)", "(empty)")]})
    return groups


def environment_runs(source: Source) -> list[dict]:
    """Each run's environment and run settings, as titled groups of setting/value rows."""
    runs = []
    for run in source.runs:
        devices = sorted(set(source.cells.loc[source.cells["run_id"] == run.run_id, "device"]))
        machine = "; ".join(machine_label(run.environment, d) for d in devices or ["cpu"])
        groups = _groups(run.environment, "machine") + _groups(run.info, "run")
        runs.append({"run_id": run.run_id, "machine": machine, "groups": groups})
    return runs


def manifest_blocks(source: Source) -> list[dict]:
    """The fairness manifest of every cell, one block per experiment."""
    blocks = []
    cells = source.cells.sort_values(["experiment", "workload", "framework", "backend"])
    for experiment, group in cells.groupby("experiment", sort=True):
        rows = []
        for _, cell in group.iterrows():
            fairness = json.loads(cell["fairness_json"] or "{}")
            rows.append({
                "machine": machine_label(source.run(cell["run_id"]).environment, cell["device"]),
                "workload": cell["workload"],
                "system": system_name(cell["framework"], cell["backend"]),
                "variant": variant_label(cell), "status": cell["status"],
                **{key: fairness.get(key, "—") for key in (
                    "timer_includes", "precision_policy", "compile_mode", "data_pipeline",
                    "notes")},
                "threads": fairness.get("threads", cell["threads"]),
                "batch_size": fairness.get("batch_size", cell["batch_size"]),
            })
            rows[-1]["notes"] = rows[-1]["notes"] or "—"
        blocks.append({"title": experiment_title(str(experiment)),
                       "anchor": f"fairness-{experiment}", "rows": rows})
    return blocks


def column_rows() -> list[dict]:
    """The data dictionary of the columns of every downloadable table."""
    tables = {"results": SUMMARY_COLUMNS, "observations": OBSERVATION_COLUMNS,
              "cells": CELL_COLUMNS}
    names: list[str] = []
    for columns in tables.values():
        names += [c for c in columns if c not in names]
    return [{
        "name": name,
        "tables": ", ".join(t for t, columns in tables.items() if name in columns),
        "description": COLUMN_DESCRIPTIONS.get(name, "(undocumented column)"),
    } for name in names]

