"""Compare two result sets (runs, releases, or two machines of one release) cell by cell.

A side is named as a run ID (results/runs/<id>/), a release name (results/releases/<name>/),
or RELEASE@RUN_ID for one machine of a release (`latest` is the newest run). Cells are
matched by their `cell_id` and compared only when their configurations are equal (their
`config_id`, see dlbench.core.declarations.identity): a cell measured with other sizes in B (a quick
run against a standard one) is listed as not comparable, with the parameters that differ, never
as faster or slower. For every metric with per-repeat values (rows without a step) the
repeats of B are compared with those of A by the one verdict rule (dlbench.core.judging.decisions):
the ratio of geometric means B/A, Welch's t on log values, the minimum-effect test at a 5%
practical threshold with Holm's step-down over the report's comparisons, and the interval at
the level Holm tested the pair at. The medians are shown, not tested. B is read as "the new
one": "slower" means B is slower than A.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.decisions import Family, judge_together
from dlbench.core.text.errors import CompareError, LayoutError, ResultsFileError
from dlbench.core.machine.fma_peak import measured_fp32_flops
from dlbench.core.declarations.identity import config_differences, differences_text
from dlbench.core.storage.layout import (
    LATEST, RunData, is_release, is_run, known_names, load_run, release_dir, release_runs,
    find_run, resolve_run_id, run_tables,
)
from dlbench.core.declarations.metrics import METRICS, Direction, get_metric
from dlbench.core.declarations.metrics import is_timing_unit
from dlbench.core.storage.schema import CELL_KEY_COLUMNS
from dlbench.core.declarations.systems import system_of, systems_of
from dlbench.core.judging.summaries import repeat_values

#: Environment keys that differ on every run and explain nothing.
VOLATILE_KEY_PARTS = ("captured_at", "started_at", "finished_at", "timestamp", "run_id",
                      "available", "boot_time", "pid")

#: What identifies a compared cell, beside its ID.
IDENTITY_COLUMNS = ["experiment", "workload", "system", "framework", "backend", "precision",
                    "mode", "batch_size", "workers", "export_format", "device"]

NOT_COMPARABLE_COLUMNS = ["cell_id", "experiment", "workload", "system", "config_id_a",
                          "config_id_b", "parameters", "differences", "changes"]

COMPARISON_COLUMNS = [
    "cell_id", "config_id", *IDENTITY_COLUMNS, "metric", "unit", "direction",
    "n_a", "n_b", "median_a", "median_b", "ratio", "ratio_ci_low", "ratio_ci_high",
    "change_pct", "p_value", "significant", "change", "note",
]


@dataclass(frozen=True)
class Side:
    """One side of a comparison: its tables and the environments of its runs."""

    label: str
    run_ids: tuple[str, ...]
    cells: pd.DataFrame
    observations: pd.DataFrame
    environments: dict[str, dict]


@dataclass(frozen=True)
class ComparisonReport:
    """Everything `dlbench compare` shows; the site renders the same frames."""

    a: str
    b: str
    metrics: pd.DataFrame  # COMPARISON_COLUMNS, one row per (cell, metric) alike in both sides
    not_comparable: pd.DataFrame  # NOT_COMPARABLE_COLUMNS: same cell ID, other configuration
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    status_changes: pd.DataFrame  # cell_id, status_a, status_b
    environment: pd.DataFrame  # key, a, b
    machines_differ: tuple[str, ...] = ()  # how A's machine differs from B's, in words
    across_machines: bool = False  # speed changes named although the machines differ

    def count(self, change: Outcome) -> int:
        """How many (cell, metric) rows changed this way."""
        return int((self.metrics["change"] == change.value).sum())


def _side_from_runs(label: str, runs: list[RunData]) -> Side:
    cells, observations = run_tables(runs)
    duplicated = cells.loc[cells["cell_id"].duplicated(), "cell_id"]
    if len(duplicated):
        choices = ", ".join(f"{label}@{run.run_id}" for run in runs)
        raise CompareError(
            f"{label!r} holds cell {duplicated.iloc[0]!r} in several runs (machines); "
            f"name one machine: {choices}"
        )
    return Side(label, tuple(run.run_id for run in runs), cells, observations,
                {run.run_id: run.environment for run in runs})


def side_runs(name: str, results_dir: Path = Path("results")) -> tuple[str, list[RunData]]:
    """A run ID (or `latest`), a release name or RELEASE@RUN_ID: its label and its runs."""
    release, _, run_id = name.partition("@")
    try:
        if run_id:
            runs = release_runs(results_dir, release)
            known = [run.run_id for run in runs]
            if run_id not in known:
                raise CompareError(
                    f"release {release!r} has no run {run_id!r}; its runs: {', '.join(known)}")
            return name, [runs[known.index(run_id)]]
        if is_release(release_dir(results_dir, name)):
            return name, release_runs(results_dir, name)
        if name and (name == LATEST or is_run(find_run(results_dir, name))):
            resolved = resolve_run_id(results_dir, name)
            return resolved, [load_run(find_run(results_dir, resolved))]
    except (LayoutError, ResultsFileError) as error:
        raise CompareError(str(error)) from None
    raise CompareError(f"unknown run or release {name!r}; {known_names(results_dir)} "
                       f"(or {LATEST}, or RELEASE@RUN_ID for one machine of a release)")


def load_side(name: str, results_dir: Path = Path("results")) -> Side:
    """Resolve a run ID (or `latest`), a release name or RELEASE@RUN_ID to its tables."""
    return _side_from_runs(*side_runs(name, results_dir))


def change_of(decision: Outcome, unit: str) -> Outcome:
    """Phrase a judged pair (B against A, dlbench.core.judging.decisions) as a change of B."""
    timed = is_timing_unit(unit)
    if decision is Outcome.A_BETTER:
        return Outcome.FASTER if timed else Outcome.BETTER
    if decision is Outcome.B_BETTER:
        return Outcome.SLOWER if timed else Outcome.WORSE
    if decision is Outcome.DIFFERENT:
        return Outcome.DIFFERENT
    return Outcome.NO_SIGNIFICANT_DIFFERENCE


def _cell_columns(cells: pd.DataFrame) -> pd.DataFrame:
    keys = cells[[c for c in CELL_KEY_COLUMNS if c != "run_id"]].drop_duplicates("cell_id")
    keys = keys.set_index("cell_id")
    keys["system"] = systems_of(keys)
    return keys


def _row(family: Family, keys: pd.Series, cell_id: str, metric: str, a: pd.Series,
         b: pd.Series) -> dict:
    registered = METRICS.get(metric)
    direction = registered.direction if registered else Direction.NEITHER
    judgement = family.judge((cell_id, metric), b.to_numpy(), a.to_numpy(), direction)
    unit = registered.unit if registered else ""
    ratio = judgement.ratio
    return {
        "cell_id": cell_id, "config_id": keys["config_id"],
        **{k: keys[k] for k in IDENTITY_COLUMNS},
        "metric": metric, "unit": unit, "direction": direction.value,
        "n_a": judgement.test.n_b, "n_b": judgement.test.n_a,
        "median_a": float(np.nanmedian(a.to_numpy(float))),
        "median_b": float(np.nanmedian(b.to_numpy(float))),
        "ratio": ratio, "ratio_ci_low": judgement.ci_low, "ratio_ci_high": judgement.ci_high,
        "change_pct": (ratio - 1) * 100 if not math.isnan(ratio) else math.nan,
        "p_value": judgement.p_adjusted,
        "significant": judgement.named,
        "change": change_of(judgement.decision, unit).value, "note": judgement.reason,
    }


def match_cells(a: Side, b: Side) -> tuple[list[str], pd.DataFrame]:
    """Cell IDs in both sides with equal configurations, and those whose configurations differ."""
    first_a = a.cells.drop_duplicates("cell_id").set_index("cell_id")
    first_b = b.cells.drop_duplicates("cell_id").set_index("cell_id")
    alike, rows = [], []
    for cell_id in sorted(set(first_a.index) & set(first_b.index)):
        cell_a, cell_b = first_a.loc[cell_id], first_b.loc[cell_id]
        if cell_a["config_id"] == cell_b["config_id"]:
            alike.append(cell_id)
            continue
        differences = config_differences(cell_a["config_json"], cell_b["config_json"])
        rows.append({"cell_id": cell_id, "experiment": cell_a["experiment"],
                     "workload": cell_a["workload"],
                     "system": system_of(cell_a),
                     "config_id_a": cell_a["config_id"], "config_id_b": cell_b["config_id"],
                     "parameters": ", ".join(key for key, _, _ in differences),
                     "differences": differences_text(differences),
                     "changes": json.dumps(differences, default=str)})
    return alike, pd.DataFrame(rows, columns=NOT_COMPARABLE_COLUMNS)


def compare_metrics(a: Side, b: Side, metrics: list[str] | None = None) -> pd.DataFrame:
    """One row per (cell, metric) in both sides with equal configurations, B compared with A."""
    for name in metrics or []:
        get_metric(name)
    alike, _ = match_cells(a, b)
    values_a, values_b = (repeat_values(side.observations) for side in (a, b))
    values_a = values_a[values_a["cell_id"].isin(alike)]
    keys = _cell_columns(pd.concat([a.cells, b.cells], ignore_index=True))
    grouped_b = dict(iter(values_b.groupby(["cell_id", "metric"])))
    pairs = [(cell_id, metric, group_a["value"], grouped_b[(cell_id, metric)]["value"])
             for (cell_id, metric), group_a in values_a.groupby(["cell_id", "metric"])
             if (cell_id, metric) in grouped_b and not (metrics and metric not in metrics)]
    rows = judge_together(lambda family: [
        _row(family, keys.loc[cell_id], str(cell_id), str(metric), a_values, b_values)
        for cell_id, metric, a_values, b_values in pairs])
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    order = frame["ratio"].map(lambda r: -abs(math.log(r)) if r and r > 0 else 0.0)
    return frame.assign(_sig=~frame["significant"].astype(bool), _order=order).sort_values(
        ["_sig", "_order", "cell_id", "metric"]).drop(columns=["_sig", "_order"]).reset_index(
        drop=True)


def flatten(value: object, prefix: str = "") -> dict[str, str]:
    """A nested environment record as dotted keys and string values."""
    if isinstance(value, dict):
        flat: dict[str, str] = {}
        for key in sorted(value, key=str):
            flat.update(flatten(value[key], f"{prefix}{key}."))
        return flat
    if isinstance(value, list) and any(isinstance(v, dict | list) for v in value):
        flat = {}
        for index, item in enumerate(value):
            flat.update(flatten(item, f"{prefix}{index}."))
        return flat
    if isinstance(value, list):  # a list of words reads as words, not as Python's list
        return {prefix.rstrip("."): ", ".join(str(v) for v in value)}
    return {prefix.rstrip("."): "" if value is None else str(value)}


def _merged_environment(environments: list[dict]) -> dict[str, str]:
    flats = [flatten(env) for env in environments]
    merged: dict[str, str] = {}
    for key in sorted(set().union(*flats)) if flats else []:
        values = sorted({flat.get(key, "—") for flat in flats})
        merged[key] = values[0] if len(values) == 1 else "varies: " + " | ".join(values)
    return merged


def diff_environments(a: list[dict], b: list[dict]) -> pd.DataFrame:
    """Keys (versions, hardware, threads, variables) whose values differ between A and B."""
    env_a, env_b = _merged_environment(a), _merged_environment(b)
    rows = []
    for key in sorted(set(env_a) | set(env_b)):
        if any(part in key.lower() for part in VOLATILE_KEY_PARTS):
            continue
        value_a, value_b = env_a.get(key, "—"), env_b.get(key, "—")
        if value_a != value_b:
            rows.append({"key": key, "a": value_a, "b": value_b})
    return pd.DataFrame(rows, columns=["key", "a", "b"])


def environment_differences(a: Side, b: Side) -> pd.DataFrame:
    """Environment differences between the runs of two sides."""
    return diff_environments(list(a.environments.values()), list(b.environments.values()))


def _status_changes(a: Side, b: Side, alike: list[str]) -> pd.DataFrame:
    status_a = a.cells.set_index("cell_id")["status"]
    status_b = b.cells.set_index("cell_id")["status"]
    rows = [{"cell_id": c, "status_a": status_a[c], "status_b": status_b[c]}
            for c in alike if status_a[c] != status_b[c]]
    return pd.DataFrame(rows, columns=["cell_id", "status_a", "status_b"])


#: Measured fp32 peaks further apart than this (relative) are two different machines.
PEAK_TOLERANCE = 0.10


def _machine(environment: dict) -> tuple[str, str, float | None]:
    """CPU model, GPU model and measured fp32 peak (FLOP/s) of one run's machine."""
    peak = measured_fp32_flops(environment.get("compute_peak"))
    gpus = environment.get("gpus") or [{}]
    return (str((environment.get("cpu") or {}).get("model") or "unknown CPU"),
            str(gpus[0].get("model") or "no GPU"), peak)


def machine_differences(a: Side, b: Side) -> tuple[str, ...]:
    """How the machines of A and B differ (CPU or GPU model, measured peak), in words; empty
    when both sides ran on machines of one kind and peak."""
    machines_a = {_machine(env) for env in a.environments.values()}
    machines_b = {_machine(env) for env in b.environments.values()}
    found = []
    for index, what in ((0, "CPU"), (1, "GPU")):
        models_a, models_b = {m[index] for m in machines_a}, {m[index] for m in machines_b}
        if models_a != models_b:
            found.append(f"{what} {' / '.join(sorted(models_a))} → "
                         f"{' / '.join(sorted(models_b))}")
    peaks_a = [m[2] for m in machines_a if m[2]]
    peaks_b = [m[2] for m in machines_b if m[2]]
    if peaks_a and peaks_b and abs(max(peaks_b) / max(peaks_a) - 1) > PEAK_TOLERANCE:
        found.append(f"measured fp32 peak {max(peaks_a) / 1e9:.0f} → "
                     f"{max(peaks_b) / 1e9:.0f} GFLOP/s")
    elif bool(peaks_a) != bool(peaks_b):
        found.append("the fp32 peak was measured on one side only")
    return tuple(found)


def compare(a_name: str, b_name: str, results_dir: Path = Path("results"),
            metrics: list[str] | None = None,
            across_machines: bool = False) -> ComparisonReport:
    """Load both sides and compare them cell by cell, with environment differences; speed
    changes between different machines are not named unless `across_machines`."""
    return compare_sides(load_side(a_name, results_dir), load_side(b_name, results_dir),
                         metrics, across_machines)


def compare_sides(a: Side, b: Side, metrics: list[str] | None = None,
                  across_machines: bool = False) -> ComparisonReport:
    """Compare two loaded sides cell by cell (compare, and dlbench.core.judging.compare_kinds)."""
    cells_a, cells_b = set(a.cells["cell_id"]), set(b.cells["cell_id"])
    alike, not_comparable = match_cells(a, b)
    machines = machine_differences(a, b)
    frame = compare_metrics(a, b, metrics)
    if machines and not across_machines:
        speed = frame["change"].isin([Outcome.FASTER.value, Outcome.SLOWER.value])
        frame.loc[speed, "change"] = Outcome.OTHER_MACHINE.value
    return ComparisonReport(
        a=a.label, b=b.label, metrics=frame, machines_differ=machines,
        across_machines=across_machines,
        not_comparable=not_comparable,
        only_in_a=tuple(sorted(cells_a - cells_b)), only_in_b=tuple(sorted(cells_b - cells_a)),
        status_changes=_status_changes(a, b, alike), environment=environment_differences(a, b),
    )
