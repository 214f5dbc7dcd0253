"""The page of one experiment: charts and tables per metric, curves, failures, code tabs."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Set

import pandas as pd

from dlbench.core.declarations.experiments import Experiment, by_name, title
from dlbench.core.declarations.metrics import Direction, get_metric
from dlbench.core.declarations.modes import FASTEST, mode_class
from dlbench.core.storage.schema import CellStatus, system_label
from dlbench.core.declarations.systems import system_of, systems_of
from dlbench.report.render.charts import curve_chart, empty_reason, is_accuracy, result_chart
from dlbench.report.render.labels import (format_label, metric_ids_in_words, reason_label,
                                          status_label, workload_label)
from dlbench.report.pages.defaults_accuracy import defaults_blocks
from dlbench.report.pages.precision_accuracy import precision_blocks
from dlbench.report.pages.registry import Page, SourceInputs, pages_before_verdicts
from dlbench.report.render.jinja import ChartBlock, chart_block, render
from dlbench.report.inputs.source import Source
from dlbench.report.inputs.labelled import (format_number, hardware_words, machine_labels,
                                            variant_label)
from dlbench.core.judging.verdict_engine import QUESTIONS
from dlbench.core.judging.targets import MISSED_NOTE, missed_target, recorded_target


def result_anchor(result_id: str) -> str:
    """The HTML id of a result's row: 'r-' and the result ID."""
    return f"r-{result_id}"


def cell_anchor(cell_id: str, metric: str) -> str:
    """The HTML id of a cell's metric, the same in every release: 'c-' and a slug."""
    return "c-" + re.sub(r"[^a-z0-9]+", "-", f"{cell_id} {metric}".lower()).strip("-")


def short_hash(text: str) -> str:
    """Six hex digits naming a machine label in file names."""
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def experiment_title(name: str) -> str:
    """'execution-mode' -> 'Execution mode' (dlbench.core.declarations.experiments.title)."""
    return title(name)


def experiment_question(experiment: str) -> str:
    """The question an experiment's page answers ('' for an undeclared one)."""
    return _declared(experiment).question if _declared(experiment) else ""


def page_sections(experiment: str) -> tuple[str, ...]:
    """The sections of its own an experiment's page adds (none for an undeclared one, an
    older release's)."""
    return _declared(experiment).sections if _declared(experiment) else ()


def _declared(experiment: str) -> Experiment | None:
    try:
        return by_name(experiment)
    except ValueError:
        return None


def _rows(rows: pd.DataFrame, missed: Set[tuple[str, str]],
          facts: Mapping[tuple[str, str], Mapping[str, str]] | None = None) -> list[dict]:
    out, seen = [], set()
    for row in rows.itertuples(index=False):
        note = MISSED_NOTE if (str(row.run_id), str(row.cell_id)) in missed else ""
        stable = cell_anchor(row.cell_id, row.metric)
        known = (facts or {}).get((str(row.run_id), str(row.cell_id))) or {}
        workload = workload_label(row.workload, str(getattr(row, "device", "")))
        out.append({  # values without unit: the unit stands in the column header
            "result_id": row.result_id, "anchor": result_anchor(row.result_id),
            "cell_anchor": stable, "first": stable not in seen,  # the one that holds its id
            "config": known.get("config", ""), "kind": known.get("kind", row.machine),
            "words": (f"{get_metric(row.metric).words}: {system_label(row.system)}, "
                      f"{workload}, {row.variant}"),
            "machine": row.machine, "workload": workload,
            "system": system_label(row.system),
            "variant": row.variant, "median": format_number(row.median),
            "ci": f"{format_number(row.ci_low)}–{format_number(row.ci_high)}",
            "spread": f"{format_number(row.low)}–{format_number(row.high)}",
            "n": row.n, "cv": "n/a" if math.isnan(row.cv) else f"{row.cv:.1%}",
            "detects": ("n/a" if math.isnan(row.detectable_ratio)
                        else f"{format_number(row.detectable_ratio)}x"),
            "note": note,
        })
        seen.add(stable)
    return out


#: Columns of a result table: header, row key, right-aligned? The value comes right after
#: the framework, so a phone shows it without scrolling the table.
RESULT_COLUMNS = [("Framework", "system", False), ("Median", "median", True),
                  ("95% CI", "ci", False), ("Workload", "workload", False),
                  ("Variant", "variant", False), ("Machine", "machine", False),
                  ("Min–max", "spread", False), ("Processes", "n", True), ("CV", "cv", True),
                  ("Detects", "detects", True), ("Note", "note", False)]
#: Columns that are left out when every row has the same value (said once above the table).
CONSTANT_COLUMNS = ("machine", "variant")
UNIT_COLUMNS = ("median", "ci", "spread")
#: Columns left out when every row leaves them empty.
OPTIONAL_COLUMNS = ("note",)


def table_columns(rows: list[dict], unit: str) -> tuple[list[tuple[str, str, bool]], str]:
    """The columns worth showing (value headers carry `unit`), and a sentence naming the
    values every row shares."""
    shared = {key: rows[0][key] for key in CONSTANT_COLUMNS
              if rows and len({row[key] for row in rows}) == 1}
    empty = {key for key in OPTIONAL_COLUMNS if not any(row.get(key) for row in rows)}
    columns = [(f"{header} ({unit})" if key in UNIT_COLUMNS else header, key, right)
               for header, key, right in RESULT_COLUMNS if key not in shared.keys() | empty]
    common = "; ".join(f"{key}: {value}" for key, value in shared.items())
    return columns, (f"Every row: {common}." if common else "")


#: Metrics that only mean something for a compiled (fastest) mode against its eager one.
FASTEST_ONLY = ("break_even_steps",)


def fastest_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of a fastest (compiled) mode; the others' break-even is not a result."""
    keep = [mode_class(e, f, m) == FASTEST for e, f, m in
            zip(rows["experiment"], rows["framework"], rows["mode"], strict=True)]
    return rows[keep]


def accuracy_marks(cells: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per workload, the chance level and target accuracy (label, value) its cells recorded
    (dlbench/core/judging/targets.py); a workload with neither has none."""
    marks: dict[str, pd.DataFrame] = {}
    for workload, group in cells.groupby("workload", sort=True):
        records = []
        for column in ("config_json", "details_json"):
            for text in group[column].dropna():
                record = json.loads(text or "{}")
                records.append({**record, **(record.get("params") or {})})
        notes = [json.loads(text or "{}").get("notes", "")
                 for text in group.get("fairness_json", pd.Series(dtype=str)).dropna()]
        facts = recorded_target(str(workload), records, notes)
        lines = []
        if facts.get("classes"):
            lines.append(("chance", 1 / float(facts["classes"])))
        if facts.get("target_accuracy"):
            lines.append(("target", float(facts["target_accuracy"])))
        if lines:
            marks[str(workload)] = pd.DataFrame(lines, columns=["label", "value"])
    return marks


def _charts(rows: pd.DataFrame, metric_name: str, experiment: str,
            marks: dict[str, pd.DataFrame]) -> tuple[list[ChartBlock], list[str]]:
    """A chart per machine and workload, or a sentence where a chart would show nothing."""
    metric = get_metric(metric_name)
    charts, notes = [], []
    for (machine, workload), group in rows.groupby(["machine", "workload"], sort=True):
        words = workload_label(str(workload), str(group["device"].iloc[0]))
        title = f"{words}: {metric.words} on {machine}"
        if reason := empty_reason(group, metric_name):
            notes.append(f"{words} on {machine}: {reason}")
            continue
        chart = result_chart(group, metric_name, title,
                             marks.get(str(workload)) if is_accuracy(metric_name) else None)
        chart_id = f"{experiment}-{metric_name}-{workload}-{short_hash(machine)}"
        charts.append(chart_block(chart_id, chart))
    return charts, notes


def main_metrics(experiment: str) -> list[str]:
    """The metrics an experiment's questions are judged on (their stand-ins after them), in
    question order: its page opens with these."""
    asked = [q for q in QUESTIONS if q.experiment == experiment]
    return list(dict.fromkeys([q.metric for q in asked] + [q.stand_in for q in asked
                                                           if q.stand_in]))


#: The baseline a metric "against fp32" is measured against: its own rows compare a cell
#: with itself (always 0) and describe nothing.
BASELINE_SUFFIX, BASELINE = "_vs_fp32", "fp32"


def against_another(rows: pd.DataFrame, metric_name: str) -> pd.DataFrame:
    """The rows of a metric measured against fp32 that are not fp32 itself (bf16, fp16 against
    fp32); every other metric's rows unchanged."""
    if not metric_name.endswith(BASELINE_SUFFIX) or "precision" not in rows:
        return rows
    return rows[rows["precision"].astype(str) != BASELINE]


def metric_sections(summary: pd.DataFrame, experiment: str,
                    marks: dict[str, pd.DataFrame] | None = None,
                    missed: Set[tuple[str, str]] = frozenset(),
                    facts: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
                    ) -> list[dict]:
    """One section per scalar metric: a chart per machine and workload, then a table whose
    rows of a cell in `missed` (run_id, cell_id) say it did not reach its target; `facts`
    ((run_id, cell_id) -> its configuration ID and machine kind in words: cell_facts) let the
    version selector tell another configuration or machine."""
    sections = []
    main = main_metrics(experiment)
    for metric_name in sorted(summary["metric"].unique(),
                              key=lambda m: (main.index(m) if m in main else len(main), m)):
        metric = get_metric(metric_name)
        best_first = metric.direction is not Direction.HIGHER
        rows = summary[summary["metric"] == metric_name].sort_values(
            ["machine", "workload", "median", "system"], ascending=[True, True, best_first, True])
        notes = []
        if metric_name in FASTEST_ONLY:
            rows = fastest_rows(rows)
            notes.append("Shown for each framework's fastest (compiled) mode only: an eager "
                         "or default mode has nothing to pay back.")
        rows = against_another(rows, metric_name)
        if rows.empty:
            continue
        charts, empty = _charts(rows, metric_name, experiment, marks or {})
        table = _rows(rows, missed, facts or {})
        columns, common = table_columns(table, metric.unit)
        sections.append({
            "heading": metric.heading, "anchor": f"metric-{metric.name}",
            "short": metric.words[:1].upper() + metric.words[1:],  # the page's index says this
            "description": metric_ids_in_words(metric.description), "charts": charts, "rows": table,
            "columns": columns, "common": common, "notes": notes + empty,
            "main": metric_name in main,
        })
    return sections


def curve_blocks(source: Source, experiment: str) -> list[ChartBlock]:
    """Per-epoch curves (metrics recorded per step), one chart per metric, workload, machine."""
    obs = source.observations
    stepped = obs[(obs["experiment"] == experiment) & obs["step"].notna()].copy()
    if stepped.empty:
        return []
    stepped["system"] = systems_of(stepped)
    cells = source.cells.drop_duplicates(["run_id", "cell_id"])
    records = {(r, c): row for (r, c), row in
               zip(zip(cells["run_id"], cells["cell_id"], strict=True), cells.to_dict("records"),
                   strict=True)}
    stepped["variant"] = [variant_label(records[(r, c)], str(m)) for r, c, m in
                          zip(stepped["run_id"], stepped["cell_id"], stepped["metric"],
                              strict=True)]
    labels = machine_labels(source)
    stepped["machine"] = [labels[(str(r), str(d))]
                          for r, d in zip(stepped["run_id"], stepped["device"], strict=True)]
    blocks = []
    keys = ["metric", "workload", "machine"]
    for (metric_name, workload, machine), group in stepped.groupby(keys, sort=True):
        unit = "epoch" if str(metric_name).startswith("epoch_") else "step"
        words = get_metric(str(metric_name)).words
        words += "" if words.endswith(f"per {unit}") else f" per {unit}"
        title = (f"{workload_label(str(workload), str(group['device'].iloc[0]))}: {words} "
                 f"on {machine}")
        chart_id = f"{experiment}-{metric_name}-{workload}-{short_hash(machine)}-curve"
        blocks.append(chart_block(chart_id, curve_chart(group, str(metric_name), title)))
    return blocks


def not_ok_rows(source: Source, experiment: str) -> list[dict]:
    """Cells that failed, were skipped or unsupported, with the recorded reason."""
    cells = source.cells
    cells = cells[(cells["experiment"] == experiment) & (cells["status"] != CellStatus.OK.value)]
    rows, labels = [], machine_labels(source)
    for _, cell in cells.sort_values(["workload", "framework", "backend"]).iterrows():
        rows.append({
            "machine": labels[(str(cell["run_id"]), str(cell["device"]))],
            "workload": workload_label(cell["workload"], cell["device"]),
            "system": system_label(system_of(cell)),
            "variant": variant_label(cell),
            "status": status_label(cell["status"], cell["reason"] or ""),
            "reason": reason_label(cell["status"], cell["reason"] or ""),
        })
    return rows


def code_tabs(source: Source, experiment: str) -> list[dict]:
    """One tab per code file the experiment's cells ran, from the run's snapshot."""
    cells = source.cells[source.cells["experiment"] == experiment]
    tabs: dict[str, dict] = {}
    for _, cell in cells.sort_values(["framework", "run_id"]).iterrows():
        path = cell["code_path"]
        if not isinstance(path, str) or not path or path in tabs:
            continue
        code = source.run(cell["run_id"]).code_text(path)
        if code is None:
            continue
        longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
        tabs[path] = {
            "name": cell["framework"], "path": path, "code": code.rstrip("\n"),
            "sha256": hashlib.sha256(code.encode()).hexdigest(),
            "fence": "`" * max(3, longest + 1),
        }
    return list(tabs.values())


def history_rows(summary: pd.DataFrame, past: pd.DataFrame) -> tuple[list[str], list[dict]]:
    """The releases, and one row per cell and metric of this page that another release also
    holds: its labels and each release's result ID and median."""
    known = past[past["cell_id"].isin(set(summary["cell_id"]))]
    held = known.groupby(["cell_id", "metric"])["release"].nunique()
    known = known.set_index(["cell_id", "metric"]).loc[held[held > 1].index].reset_index()
    releases = sorted(set(known["release"]))
    # by cell alone: a metric another release measured for a cell of this page is labelled
    # by the cell's words too, never by its ID
    labels = summary.drop_duplicates("cell_id").set_index("cell_id")
    # the variant names the batch its metric was measured at: that metric's row where this
    # release holds one
    variants = {(c, m): v for c, m, v in zip(summary["cell_id"], summary["metric"],
                                             summary["variant"], strict=True)}
    rows = []
    for (cell_id, metric), group in known.groupby(["cell_id", "metric"], sort=True):
        here = labels.loc[cell_id]
        by_release = {r.release: f"{r.result_id}: {format_number(r.median)}"
                      for r in group.itertuples(index=False)}
        rows.append({
            "what": (f"{workload_label(here['workload'], here['device'])} · "
                     f"{system_label(here['system'])} · "
                     f"{variants.get((cell_id, metric), here['variant'])}"),
            "metric": get_metric(str(metric)).label if metric in summary["metric"].values
            else str(metric).replace("_", " "),
            "cells": [by_release.get(r, "—") for r in releases],
        })
    return releases, rows


def page_caveats(source: Source, experiment: str) -> list[str]:
    """What a reader must know before reading this experiment's numbers."""
    cells = source.cells[source.cells["experiment"] == experiment]
    declared = _declared(experiment)
    caveats = []
    if declared and declared.cpu_caveat and set(cells["device"]) <= {"cpu"}:
        caveats.append(declared.cpu_caveat)
    if "formats" in page_sections(experiment) and len(cells):
        batches = ", ".join(str(b) for b in sorted(set(cells["batch_size"])))
        caveats.append(f"**Batch sizes.** Artifact latency is one sample per call (batch 1); "
                       f"artifact throughput runs at the batch size the rows name "
                       f"({batches}).")
    return caveats


def export_formats(source: Source, summary: pd.DataFrame, experiment: str) -> list[dict]:
    """Which export formats work in each framework: status, and the artifact's largest
    difference from the eager model (the "formats" section)."""
    cells = source.cells[source.cells["experiment"] == experiment]
    deviation = summary[summary["metric"] == "artifact_max_abs_diff"].set_index(
        ["run_id", "cell_id"])["median"]
    rows = []
    for cell in cells.sort_values(["framework", "backend", "export_format"]).to_dict("records"):
        key = (cell["run_id"], cell["cell_id"])
        works = cell["status"] == CellStatus.OK.value
        rows.append({
            "system": system_label(system_of(cell)),
            "format": format_label(str(cell["export_format"])),
            "works": "yes" if works else status_label(cell["status"], cell["reason"] or ""),
            "deviation": f"{deviation[key]:.3g}" if key in deviation.index else "—",
            "reason": "" if works else reason_label(cell["status"], cell["reason"] or ""),
        })
    return rows


@pages_before_verdicts("experiments/")
def experiment_pages(inputs: SourceInputs) -> dict[str, Page]:
    """The page of every experiment the source measured, by path."""
    return {f"experiments/{name}.md": experiment_page(inputs, str(name))
            for name in sorted(set(inputs.source.cells["experiment"]))}


def cell_facts(source: Source) -> dict[tuple[str, str], dict[str, str]]:
    """(run_id, cell_id) -> the cell's configuration ID ('config', where recorded) and its
    machine kind in words ('kind'): what the version selector compares across releases."""
    cells = source.cells
    configs = cells["config_id"] if "config_id" in cells else [""] * len(cells)
    pairs = set(zip(cells["run_id"].astype(str), cells["device"].astype(str), strict=True))
    kinds = {(r, d): hardware_words(source.run(r).environment, d) for r, d in pairs}
    return {(str(r), str(c)): {"config": "" if pd.isna(i) else str(i),
                               "kind": kinds[(str(r), str(d))]}
            for r, c, d, i in zip(cells["run_id"], cells["cell_id"], cells["device"], configs,
                                  strict=True)}


def experiment_page(inputs: SourceInputs, experiment: str) -> Page:
    """One experiment's page and its charts; `inputs.past` (every release's results) adds
    the same cells in other releases."""
    source, summary, past = inputs.source, inputs.summary, inputs.past
    mine = summary[summary["experiment"] == experiment]
    sections = metric_sections(mine, experiment, accuracy_marks(source.cells),
                               missed_target(source.observations), cell_facts(source))
    curves = curve_blocks(source, experiment)
    not_ok = not_ok_rows(source, experiment)
    index = [(s["short"], s["anchor"]) for s in sections]
    index += [("curves per epoch or step", "curves")] if curves else []
    index += [("cells without results", "not-ok")] if not_ok else []
    releases, history = history_rows(mine, past) \
        if past is not None and not source.draft else ([], [])
    index += [("other releases", "history")] if history else []
    index += [("code", "code")]
    text = render(
        inputs.env, "experiment.md.j2", title=experiment_title(experiment),
        question=experiment_question(experiment),
        machines=sorted(set(mine["machine"])) or ["(no results)"],
        anchor=f"fairness-{experiment}", sections=sections, curves=curves, not_ok=not_ok,
        index=index, code_tabs=code_tabs(source, experiment), citable=not source.draft,
        caveats=page_caveats(source, experiment),
        formats=(export_formats(source, summary, experiment)
                 if "formats" in page_sections(experiment) else []),
        defaults=(defaults_blocks(source) if "defaults" in page_sections(experiment) else []),
        precision_accuracy_blocks=(precision_blocks(source) if "precision-accuracy"
                                   in page_sections(experiment) else []),
        history_releases=releases, history_rows=history,
    )
    return Page(text, tuple(c for s in sections for c in s["charts"]) + tuple(curves))
