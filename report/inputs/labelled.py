"""The results table the pages read: each result's summary (dlbench.core.judging.summaries: median
and spread over its processes) with the labels a reader needs."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping

import pandas as pd

from dlbench.core.declarations.experiments import title
from dlbench.core.machine.machines import machine_kind
from dlbench.core.declarations.measured_batch import batch_words, cell_batch_words, params_of
from dlbench.core.storage.schema import VARIANT_COLUMNS, system_label
from dlbench.core.declarations.systems import system_of, systems_of
from dlbench.core.judging.summaries import result_stats
from dlbench.core.judging.verdict_engine import is_control
from dlbench.report.render.labels import format_label, mode_label, workload_label
from dlbench.report.inputs.source import Source

__all__ = ["SUMMARY_COLUMNS", "BatchIndex", "Machine", "batch_index", "cell_label",
           "format_number", "hardware_words", "labelled_results", "machine_label",
           "machine_labels", "told_apart", "value_batch", "variant_label"]

SUMMARY_COLUMNS = [
    "result_id", "run_id", "cell_id", "experiment", "workload", "system", "framework",
    "backend", "variant", *VARIANT_COLUMNS, "device", "machine", "metric", "unit", "n",
    "median", "ci_low", "ci_high", "low", "high", "cv", "detectable_ratio",
]


def variant_label(row: pd.Series | dict, metric: str = "") -> str:
    """The variant columns that are set, in words, with the batch `metric` was measured at
    (dlbench.core.declarations.measured_batch; without a metric, every batch the cell measured at),
    e.g. 'fp32 · inference mode · batch 64'."""
    params, experiment = params_of(row.get("config_json")), str(row.get("experiment") or "")
    batch = (batch_words(metric, int(row["batch_size"]), params, experiment) if metric
             else cell_batch_words(experiment, int(row["batch_size"]), params))
    parts = [str(row["precision"]), mode_label(str(row["mode"])), batch]
    if int(row["workers"]) != 1:
        parts.append(f"{row['workers']} workers")
    if isinstance(row["export_format"], str) and row["export_format"]:
        parts.append(format_label(row["export_format"]))
    if is_control(row.get("config_json")):  # an A/A twin: the same configuration again
        parts.append("A/A control")
    return " · ".join(parts)


#: (run_id, cell_id) -> the cell's experiment, batch size and recorded parameters.
BatchIndex = dict[tuple[str, str], tuple[str, int, dict]]


def batch_index(cells: pd.DataFrame) -> BatchIndex:
    """What each cell's values need to say their batch, by (run_id, cell_id)."""
    return {(str(r), str(c)): (str(e), int(b), params_of(j)) for r, c, e, b, j in zip(
        cells["run_id"], cells["cell_id"], cells["experiment"], cells["batch_size"],
        cells["config_json"], strict=True)}


def value_batch(index: BatchIndex, run_id: str, cell_id: str, metric: str) -> str:
    """The batch a cell's `metric` was measured at in words ('batch 8'), '' for a cell the
    index does not hold."""
    known = index.get((str(run_id), str(cell_id)))
    if known is None:
        return ""
    experiment, batch, params = known
    return batch_words(metric, batch, params, experiment)


def cell_label(cell: pd.Series | dict) -> str:
    """A cell of the cells table in words, e.g. 'Inference: MLP, 8x8 digits · Keras on JAX ·
    fp32 · call · batch 1', ' · A/A control' for a control's twin (its ID ends in '-aa')."""
    words = [workload_label(str(cell["workload"]), str(cell["device"])),
             system_label(system_of(cell)), variant_label(cell)]
    return f"{title(str(cell['experiment']))}: {' · '.join(words)}"


def machine_label(environment: dict, device: str) -> str:
    """The hardware a device of a run is, with its device, e.g. 'cpu: AMD EPYC, 2 cores, AVX2
    only' (the CPU's kind in words, as every page names a machine: hardware_words)."""
    return f"{device}: {hardware_words(environment, device)}"


#: A machine of a release: (run ID, device).
Machine = tuple[str, str]


def told_apart(words: Mapping[Machine, str]) -> dict[Machine, str]:
    """Each machine's words (in the release's run order) made unique within the release: a
    kind measured in several runs is told apart by its run's number within that kind,
    'Intel Xeon, 2 cores, AMX (run 2)', as the home page's caption numbers each kind's runs
    and ties each to the Environment page. The one place a run of a kind gets its label."""
    kinds = Counter(words.values())
    seen: Counter[str] = Counter()
    named = {}
    for machine, name in words.items():
        seen[name] += 1
        named[machine] = f"{name} (run {seen[name]})" if kinds[name] > 1 else name
    return named


def machine_labels(source: Source) -> dict[Machine, str]:
    """(run, device) -> the machine's label ('cpu: Intel Xeon, 2 cores, AMX (run 1)'), two
    runs of one kind told apart, for every device each run of the source measured on."""
    cells = source.cells
    measured = set(zip(cells["run_id"].astype(str), cells["device"].astype(str), strict=True)) \
        if "device" in cells else None  # a table without devices: every device of each run
    return told_apart({(run.run_id, device): machine_label(run.environment, device)
                       for run in source.runs for device in ("cpu", "cuda")
                       if measured is None or (run.run_id, device) in measured})


def hardware_words(environment: dict, device: str) -> str:
    """The machine a device of a run is, in words: the GPU's model, or the CPU's kind
    ('AMD EPYC, 2 cores, AVX2 only': dlbench/core/machine/machines.py)."""
    if device == "cuda":
        gpus = environment.get("gpus") or [{}]
        return f"{gpus[0].get('model') or 'unknown'} GPU" + (
            f" (x{len(gpus)})" if len(gpus) > 1 else "")
    return machine_kind(environment).words


def labelled_results(source: Source) -> pd.DataFrame:
    """One row per result (run × cell × scalar metric): median, 95% CI, min–max, n and CV,
    with its ID and the labels of its cell, system, variant and machine."""
    stats = result_stats(source.observations)
    cells = source.cells.drop_duplicates(["run_id", "cell_id"])
    keys = ["run_id", "cell_id", "metric"]
    frame = stats.merge(cells, on=["run_id", "cell_id"], how="left")
    frame = frame.merge(source.result_ids, on=keys, how="left")
    frame["system"] = systems_of(frame)
    frame["variant"] = [variant_label(row, str(row["metric"])) for _, row in frame.iterrows()]
    labels = machine_labels(source)
    frame["machine"] = [labels[(str(r), str(d))]
                        for r, d in zip(frame["run_id"], frame["device"], strict=True)]
    frame = frame[SUMMARY_COLUMNS].sort_values("result_id", kind="stable")
    return frame.reset_index(drop=True)


def format_number(value: float) -> str:
    """Three significant digits, thousands grouped: 0.0123, 4.56, 1,234."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    magnitude = abs(value)
    if magnitude >= 1000:
        return f"{value:,.0f}"
    if magnitude == 0:
        return "0"
    decimals = max(0, 2 - int(math.floor(math.log10(magnitude))))
    return f"{value:.{decimals}f}"

