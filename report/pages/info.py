"""The environment, methodology (fairness manifest), downloads (data dictionary) and cite pages."""

from __future__ import annotations

import json
from collections.abc import Mapping

from dlbench.core.machine.achieved import cell_rates, probe_fractions, run_bounds
from dlbench.core.machine.fma_peak import ABOVE_BOUND_WORDS, bound_words
from dlbench.report.pages.release_design import experiments_present, release_designs
from dlbench.report.verdicts.defaults_answers import EXPERIMENT as DEFAULTS_EXPERIMENT
from dlbench.core.judging.calibration import POWER_RATIOS
from dlbench.core.declarations.metrics import METRICS
from dlbench.core.storage.schema import CELL_COLUMNS, OBSERVATION_COLUMNS, system_label
from dlbench.core.declarations.systems import frameworks, keras_backends, system_of
from dlbench.report.pages.cite import example_row, result_citation
from dlbench.report.pages.experiment import experiment_title
from dlbench.report.render.labels import (IDENTIFIER_GROUPS, cell_words, environment_key,
                                          environment_value, metric_ids_in_words, status_label,
                                          settings_as_code, workload_label)
from dlbench.report.pages.registry import Page, PageInputs, page
from dlbench.report.render.jinja import render, slug
from dlbench.report.render.paragraphs import identifiers_as_code, short_paragraphs
from dlbench.report.inputs.source import Source
from dlbench.report.inputs.labelled import (SUMMARY_COLUMNS, Machine, cell_label, machine_label,
                                            machine_labels, variant_label)
from dlbench.report.verdicts.verdict_table import control_rows

#: What each column of the downloadable tables means (the data dictionary).
COLUMN_DESCRIPTIONS = {
    "schema_version": "Version of the table layout; older versions are migrated on load.",
    "run_id": "The run (one invocation of the runner on one machine) the row comes from.",
    "cell_id": "Stable ID of the cell: experiment:workload:framework:variant:device.",
    "config_id": "Hash of everything the cell measures (sizes, epochs, timing windows, "
                 "variant, device, parameters): cells compare only when it is equal.",
    "experiment": "The question measured, e.g. training.",
    "workload": "Model × dataset × hyper-parameters, e.g. mlp-digits.",
    "framework": f"{', '.join(frameworks())}.",
    "backend": f"The backend Keras ran on ({', '.join(keras_backends())}); else empty.",
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


def _labelled(rows: list[tuple[str, str]], group: str) -> list[tuple[str, str]]:
    """Setting/value rows in a reader's words (dlbench.report.render.labels)."""
    return [(environment_key(key, group), environment_value(key, value, group))
            for key, value in rows]


def _groups(value: dict, general: str) -> list[dict]:
    """Top-level scalars as one group, then one group per nested section."""
    scalars = {k: v for k, v in value.items() if not isinstance(v, (dict, list))
               or (isinstance(v, list) and not any(isinstance(i, dict) for i in v))}
    groups = ([{"title": general, "rows": _labelled(_flatten(scalars), ""), "code_keys": False}]
              if scalars else [])
    for key in sorted(k for k in value if k not in scalars):
        rows = _labelled(_flatten(value[key]), key)
        groups.append({"title": environment_key(key), "anchor": slug(key) or "group",
                       "rows": rows or [("(none)", "none")],
                       "code_keys": key in IDENTIFIER_GROUPS and bool(rows)})
    if groups:
        groups[0]["anchor"] = general
    return groups


def unique_anchors(groups: list[dict]) -> list[dict]:
    """`groups` with each anchor (a slug of a key from the run, never the key itself) told
    apart from an earlier equal one by a number: two keys may make one slug."""
    seen: set[str] = set()
    for group in groups:
        anchor, number = group["anchor"], 1
        while anchor in seen:
            number += 1
            anchor = f"{group['anchor']}-{number}"
        seen.add(anchor)
        group["anchor"] = anchor
    return groups


#: Run settings that list identifiers (cell IDs, process labels): a count on the page, the
#: list in the run's run.json.
COUNTED_SETTINGS = {"planned_cells": "cells", "process_order": "processes"}


#: Run settings that list events (re-measured cells, looks), each naming its cells.
EVENT_SETTINGS = ("remeasured", "looks")


def _counted(items: list, noun: str) -> str:
    """A list of identifiers as the page shows it: its length, and where it is kept."""
    return f"{len(items)} {noun} (listed in the run's run.json, kept with its results)"


def _event_cells(cells: list, names: dict[str, str]) -> str:
    """The cells an event names, in words ('; ' between cells, whose words hold commas), or
    their count when there are more than LONG_LIST."""
    if len(cells) > LONG_LIST:
        return _counted(cells, "cells")
    return "; ".join(names.get(str(c)) or cell_words(str(c)) for c in cells)


def run_settings(info: dict, cell_names: dict[str, str] | None = None) -> dict:
    """A run's settings as the environment page shows them: identifier lists as counts, and
    the cells an event names in words (`cell_names`: cell ID -> words, else the ID's
    workload and framework), never as IDs."""
    shown = dict(info)
    for key, noun in COUNTED_SETTINGS.items():
        if isinstance(shown.get(key), list):
            shown[key] = _counted(shown[key], noun)
    for key in EVENT_SETTINGS:
        if isinstance(shown.get(key), list):
            shown[key] = [event | {"cells": _event_cells(event["cells"], cell_names or {})}
                          if isinstance(event, dict) and isinstance(event.get("cells"), list)
                          else event for event in shown[key]]
    return shown


def environment_runs(source: Source) -> list[dict]:
    """Each run's environment and run settings, as titled groups of setting/value rows."""
    runs, labels = [], machine_labels(source)
    for run in source.runs:
        devices = sorted(set(source.cells.loc[source.cells["run_id"] == run.run_id, "device"]))
        machine = "; ".join(labels.get((run.run_id, d)) or machine_label(run.environment, d)
                            for d in devices or ["cpu"])
        cells = source.cells[source.cells["run_id"] == run.run_id]
        names = {str(c["cell_id"]): cell_label(c) for c in cells.to_dict("records")}
        groups = unique_anchors(_groups(run.environment, "machine")
                                + rate_groups(source, run, names)
                                + _groups(run_settings(run.info, names), "run"))
        runs.append({"run_id": run.run_id, "machine": machine, "groups": groups})
    return runs


def _in_words(text: str, names: dict[str, str]) -> str:
    """`text` with each cell ID it names replaced by the cell's words."""
    for cell_id, words in names.items():
        text = text.replace(f"cell {cell_id}", words)
    return text


def rate_groups(source: Source, run, names: dict[str, str]) -> list[dict]:
    """A run's bound per precision with how it was derived, its matmul probes and each cell's
    achieved FLOP/s as shares of that bound, never clipped: a share above 100% is flagged as
    a defect to investigate (dlbench.core.machine.achieved)."""
    cells = source.cells[source.cells["run_id"] == run.run_id]
    rates = cell_rates(source.observations, cells)
    bounds = run_bounds(rates, {run.run_id: run.environment})
    device = str(run.info.get("device") or "cpu")
    rows = [(f"{key.removesuffix('_flops')} bound (GFLOP/s)",
             f"{bound.flops / 1e9:,.1f} = {bound.derivation}")
            for (_, key), bound in sorted(bounds.items())]
    rows += [(f"{key.removesuffix('_flops')} bound", bound_words(run.environment, key, device))
             for key in sorted({rate.peak_key for rate in rates.values()})
             if (run.run_id, key) not in bounds]  # why there is none
    rows += [(f"matmul probe {name.replace('_', ' ')}", _share_words(flops, share))
             for name, (flops, share)
             in sorted(probe_fractions(run.environment, device).items())]
    for (_, cell_id), rate in sorted(rates.items(), key=lambda item: names.get(item[0][1], "")):
        bound = bounds.get((run.run_id, rate.peak_key))
        share = rate.flops_per_second / bound.flops if bound else None
        winograd = "; convolutions counted as direct ones (Winograd not credited)" \
            if rate.note else ""
        rows.append((names.get(cell_id) or cell_words(cell_id),
                     _share_words(rate.flops_per_second, share) + winograd))
    if not rows:
        return []
    return [{"title": "Achieved compute rates", "anchor": "achieved-rates", "rows": rows,
             "code_keys": False}]


def _share_words(flops: float, share: float | None) -> str:
    """A rate in GFLOP/s with its share of the bound, flagged where above it."""
    if share is None:
        return f"{flops / 1e9:,.2f} GFLOP/s"
    flag = f", {ABOVE_BOUND_WORDS}" if share > 1 else ""
    return f"{flops / 1e9:,.2f} GFLOP/s, {share:.1%} of the bound{flag}"


#: The fairness manifest's columns: header and key, in reading order.
MANIFEST_COLUMNS = [
    ("Machine", "machine"), ("Workload", "workload"), ("Framework", "system"),
    ("Variant", "variant"), ("Status", "status"), ("Timer includes", "timer_includes"),
    ("Precision", "precision_policy"), ("Compile mode", "compile_mode"),
    ("Data pipeline", "data_pipeline"), ("Threads", "threads"), ("Batch", "batch_size"),
    ("Notes", "notes"),
]
BLANK = ("", "—", "None")
#: Long texts that repeat down a column are numbered, and each said once below the table.
LONG_TEXT = 60


def _footnotes(rows: list[dict], columns: list[tuple[str, str]]) -> list[dict]:
    """Replace each long repeated text of a column by its number; the texts by column."""
    legends = []
    for header, key in columns:
        texts = list(dict.fromkeys(row[key] for row in rows))
        if len(texts) == len(rows) or max(len(t) for t in texts) < LONG_TEXT:
            continue
        for row in rows:
            row[key] = f"{header[:1]}{texts.index(row[key]) + 1}"
        legends.append({"header": header, "texts": [(f"{header[:1]}{i + 1}", short_paragraphs(t))
                                                    for i, t in enumerate(texts)]})
    return legends


def _manifest_row(labels: Mapping[Machine, str], cell: dict) -> dict:
    """One cell's fairness manifest as the table's values."""
    fairness = json.loads(cell["fairness_json"] or "{}")
    row = {
        "machine": labels[(str(cell["run_id"]), str(cell["device"]))],
        "workload": workload_label(cell["workload"], cell["device"]),
        "system": system_label(system_of(cell)),
        "variant": variant_label(cell), "status": status_label(cell["status"],
                                                               cell["reason"] or ""),
        "threads": fairness.get("threads", cell["threads"]),
        "batch_size": fairness.get("batch_size", cell["batch_size"]),
    }
    for key in ("timer_includes", "precision_policy", "compile_mode", "data_pipeline", "notes"):
        row[key] = fairness.get(key) or "—"
    row = {key: metric_ids_in_words(str(value)) for key, value in row.items()}
    return row | {key: settings_as_code(row[key]) for key in ("compile_mode", "notes")}


def _merge_workloads(rows: list[dict], keys: list[str]) -> list[dict]:
    """Rows that differ only by workload, as one row naming every workload."""
    merged: dict[tuple, dict] = {}
    for row in rows:
        key = tuple(row[k] for k in keys if k != "workload")
        if key in merged:
            merged[key]["workload"] += "; " + row["workload"]
        else:
            merged[key] = dict(row)
    return list(merged.values())


def manifest_blocks(source: Source) -> list[dict]:
    """The fairness manifest of every cell, one compact table per experiment: blank columns
    dropped, a value every cell shares said once above the table."""
    blocks, labels = [], machine_labels(source)
    cells = source.cells.sort_values(["experiment", "workload", "framework", "backend"])
    for experiment, group in cells.groupby("experiment", sort=True):
        rows = [_manifest_row(labels, cell) for cell in group.to_dict("records")]
        shared = [(header, short_paragraphs(str(rows[0][key]))) for header, key in MANIFEST_COLUMNS
                  if len({row[key] for row in rows}) == 1 and rows[0][key] not in BLANK]
        columns = [(header, key) for header, key in MANIFEST_COLUMNS
                   if len({row[key] for row in rows}) > 1
                   and any(row[key] not in BLANK for row in rows)]
        rows = _merge_workloads(rows, [k for _, k in columns])
        legends = _footnotes(rows, columns)
        blocks.append({"title": experiment_title(str(experiment)),
                       "anchor": f"fairness-{experiment}", "cells": len(group),
                       "shared": shared, "columns": columns, "rows": rows,
                       "legends": legends})
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


def legacy_protocol_runs(source: Source) -> list[str]:
    """Runs measured before repeats were independent processes (no process policy recorded)."""
    return [run.run_id for run in source.runs if "processes_policy" not in run.info]


@page("environment.md")
def environment_page(inputs: PageInputs) -> Page:
    """The environment of each run."""
    return Page(render(inputs.env, "environment.md.j2", runs=environment_runs(inputs.source),
                       **inputs.common))


@page("methodology.md")
def methodology_page(inputs: PageInputs) -> Page:
    """The fairness manifest, the verdicts' error rates and the A/A controls."""
    return Page(render(inputs.env, "methodology.md.j2", manifests=manifest_blocks(inputs.source),
                       calibration=inputs.calibration.rows, power_ratios=POWER_RATIOS,
                       control_rows=control_rows(inputs.judged.controls),
                       legacy_runs=legacy_protocol_runs(inputs.source),
                       designs=release_designs(inputs.source),
                       has_defaults_accuracy=DEFAULTS_EXPERIMENT in experiments_present(
                           inputs.source), **inputs.common))


@page("downloads.md")
def downloads_page(inputs: PageInputs) -> Page:
    """The downloadable tables and their data dictionary."""
    return Page(render(inputs.env, "downloads.md.j2", metrics=list(METRICS.values()),
                       columns=column_rows(), tables=[{"name": n, "row": r} for n, r in TABLES],
                       **inputs.common))


@page("cite.md")
def cite_page(inputs: PageInputs) -> Page:
    """How to cite the release, with a serving or training result as the example (never an
    A/A control)."""
    row = None if inputs.source.draft else example_row(inputs.summary, inputs.source.cells)
    example = None if row is None else result_citation(row, inputs.cite)
    return Page(render(inputs.env, "cite.md.j2", example=example, **inputs.common))


@page("notes.md")
def notes_page(inputs: PageInputs) -> Page | None:
    """A release's notes in full (the home page shows their first paragraph)."""
    if not inputs.source.notes:
        return None
    return Page(render(inputs.env, "notes.md.j2",
                       notes=identifiers_as_code(short_paragraphs(inputs.source.notes)),
                       **inputs.common))
