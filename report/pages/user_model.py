"""The page of a user's own model (`dlbench run --model`): its answers (the one verdict
engine's, dlbench/core/judging/model_answers.py), the table of every backend and mode, the charts,
the parity result, the regime and the machine. A draft of a run without a model has none."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pandas as pd

from dlbench.core.judging.model_answers import (INFERENCE, TRAINING, model_answers,
                                                no_answer_reason, parity_table, path_words,
                                                system_words)
from dlbench.core.judging.sequential import design_from_policy
from dlbench.core.judging.summaries import result_centres
from dlbench.report.inputs.source import RunData, source_processes
from dlbench.report.inputs.labelled import format_number
from dlbench.report.pages.registry import Page, PageInputs, page
from dlbench.report.render.charts import result_chart
from dlbench.report.render.jinja import ChartBlock, chart_block, render
from dlbench.report.render.user_text import inert_record

MODEL_FILE = "model.json"
#: The table's columns: metric -> heading.
COLUMNS = {"latency_p50": "latency, batch 1 (ms)",
           "inference_throughput": "throughput (samples/s)",
           "first_call_time": "first call (s)", "steady_step_time": "training step (ms)",
           "compile_time": "compile (s)", "working_memory": "working memory (MiB)"}
CHARTS = {"latency_p50": "Median batch-1 latency", "inference_throughput": "Throughput",
          "steady_step_time": "Training step time"}


def model_runs(inputs: PageInputs) -> list[RunData]:
    """The source's runs that measured a user's model."""
    return [run for run in inputs.source.runs if (run.root / MODEL_FILE).is_file()]


def cell_rows(cells: pd.DataFrame, observations: pd.DataFrame) -> pd.DataFrame:
    """One row per timed cell of one run: system, mode, status, processes and each metric's
    summary (median, min, max, processes: dlbench.core.judging.summaries.result_centres)."""
    rows, stats = [], result_centres(observations).set_index(["cell_id", "metric"])
    timed = cells[cells["experiment"].isin([INFERENCE, TRAINING])]
    for _, cell in timed.sort_values(["experiment", "cell_id"]).iterrows():
        system = f"keras-{cell['backend']}" if cell["framework"] == "keras" \
            else str(cell["framework"])
        row = {"cell_id": cell["cell_id"], "experiment": cell["experiment"],
               "system": system, "variant": path_words(system, str(cell["mode"])),
               "status": cell["status"], "reason": html.escape(cell["reason"] or ""),
               "control": "-aa" in str(cell["cell_id"])}
        for metric in COLUMNS:
            if (cell["cell_id"], metric) in stats.index:
                found = stats.loc[(cell["cell_id"], metric)]
                row[metric] = (float(found["median"]), float(found["low"]),
                               float(found["high"]), int(found["n"]))
        rows.append(row)
    return pd.DataFrame(rows)


def chart_blocks(table: pd.DataFrame, run_id: str) -> list[ChartBlock]:
    """One chart per timed metric some cell measured."""
    blocks = []
    for metric, title in CHARTS.items():
        if metric not in table:
            continue
        have = table[table[metric].notna() & ~table["control"]]
        if have.empty:
            continue
        frame = pd.DataFrame({
            "system": have["system"], "variant": have["variant"],
            "median": [v[0] for v in have[metric]], "low": [v[1] for v in have[metric]],
            "high": [v[2] for v in have[metric]], "n": [v[3] for v in have[metric]],
            "result_id": have["cell_id"]})
        chart = result_chart(frame, metric, f"{title}: your model")
        blocks.append(chart_block(f"model-{run_id}-{metric}".replace("_", "-"), chart))
    return blocks


def regime(facts: dict, table: pd.DataFrame, environment: dict) -> str:
    """The fraction of the machine's measured peak the fastest throughput reaches."""
    flops = facts.get("flops_per_sample")
    peak = (environment.get("compute_peak") or {}).get("fp32_flops")
    if not flops:
        return f"FLOPs per sample {facts.get('flops_note') or 'not counted'}: the regime " \
               "(fraction of the machine's peak) cannot be given."
    if "inference_throughput" not in table or not peak:
        return f"{format_number(flops)} FLOPs per sample; no throughput or peak to compare."
    best = max(v[0] for v in table["inference_throughput"].dropna())
    fraction = best * flops / peak
    kind = "per-call overhead dominates (below 10% of peak)" if fraction < 0.1 \
        else "the machine's arithmetic dominates"
    return (f"{format_number(flops)} FLOPs per sample ({facts.get('flops_note')}); the "
            f"fastest throughput reaches {fraction:.1%} of the measured fp32 peak "
            f"({peak / 1e9:.1f} GFLOP/s): {kind}.")


def model_section(inputs: PageInputs, run: RunData) -> tuple[dict, list[ChartBlock]]:
    """The page's part for one model run."""
    model = inert_record(json.loads((run.root / MODEL_FILE).read_text()))  # from anyone
    source = inputs.source
    cells = source.cells[source.cells["run_id"] == run.run_id]
    observations = source.observations[source.observations["run_id"] == run.run_id]
    processes = source_processes(source)
    design = design_from_policy(run.info.get("processes_policy"))
    answers = model_answers(observations, cells, processes, design)
    table = cell_rows(cells, observations)
    parity = parity_table(cells, observations)
    parity["reason"] = [html.escape(str(r)) for r in parity["reason"]]
    parity = parity.astype(object).where(parity.notna(), None)
    charts = chart_blocks(table, run.run_id) if len(table) else []
    environment = run.environment
    section = {
        "run_id": run.run_id, "model": model, "facts": model["facts"],
        "file": model_file_words(model["request"]),
        "answers": [{"title": a.question.title, "sentence": a.sentence()} for a in answers],
        "no_answer": "" if answers else no_answer_reason(cells, _of_run(processes, run.run_id)),
        "rows": [_table_row(r) for _, r in table.iterrows()] if len(table) else [],
        "columns": list(COLUMNS.values()), "parity": parity.to_dict("records"),
        "parity_labels": {s: system_words(s) for s in parity["system"]},
        "regime": regime(model["facts"], table, environment),
        "machine": _machine(environment, run.info),
        "beside": beside_words(_of_run(processes, run.run_id)),
        "charts": [{"html": c.html, "svg": c.svg} for c in charts]}
    return section, charts


def beside_words(processes: pd.DataFrame | None) -> str:
    """What ran beside the measurement: how many processes the load checks flagged busy."""
    if processes is None or not len(processes) or "busy" not in processes:
        return "No load readings were recorded for this run."
    flagged = processes[processes["busy"].fillna("").astype(str) != ""]
    example = f" (for example: {html.escape(str(flagged['busy'].iloc[0]))})" if len(flagged) \
        else ""
    return (f"{len(flagged)} of {len(processes)} worker processes were measured while other "
            f"programs ran beside them{example}; a flagged process is left out of every "
            "answer.")


def _of_run(processes: pd.DataFrame | None, run_id: str) -> pd.DataFrame | None:
    return None if processes is None else processes[processes["run_id"] == run_id]


def model_file_words(request: dict) -> str:
    """The user's file (and NAME) as the page shows it: its name, in safe characters only."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(request["path"]).name)
    return f"{name}:{request['name']}" if request.get("name") else name


def _table_row(row: pd.Series) -> dict:
    values = []
    for metric in COLUMNS:
        value = row.get(metric)
        values.append(format_number(value[0]) if isinstance(value, tuple) else "")
    n = next((v[3] for v in (row.get(m) for m in COLUMNS) if isinstance(v, tuple)), 0)
    what = "A/A control" if row["control"] else row["variant"]
    return {"what": what, "experiment": row["experiment"].removeprefix("model-"),
            "status": row["status"], "reason": row["reason"], "values": values, "n": n}


def _machine(environment: dict, info: dict) -> str:
    cpu = environment.get("cpu", {})
    peak = (environment.get("compute_peak") or {}).get("fp32_flops")
    packages = environment.get("packages", {})
    versions = ", ".join(f"{k} {packages[k]}" for k in ("keras", "tensorflow", "jax", "torch",
                                                         "onnxruntime", "openvino")
                         if packages.get(k))
    peak_words = f", measured fp32 peak {peak / 1e9:.1f} GFLOP/s" if peak else ""
    return (f"{cpu.get('model', 'unknown CPU')}, {cpu.get('usable_cores', '?')} usable cores"
            f"{peak_words}; {versions}; run {info.get('run_id', '')} "
            f"({info.get('request', {}).get('suite', '')} suite)")


@page("model.md")
def model_page(inputs: PageInputs) -> Page | None:
    """The model page, when the source has a run of a user's model."""
    runs = model_runs(inputs)
    if not runs:
        return None
    sections, charts = [], []
    for run in runs:
        section, blocks = model_section(inputs, run)
        sections.append(section)
        charts += blocks
    return Page(render(inputs.env, "model.md.j2", sections=sections, **inputs.common),
                tuple(charts))
