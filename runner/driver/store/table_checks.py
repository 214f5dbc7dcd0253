"""A run's tables checked as a form from a stranger, before `dlbench import-run` stores it:
every column the schema names, each of its type, the identifiers from their registries
(experiments, frameworks, devices, statuses, metrics with their units) and measured values
that a page can show. Each failure is one line naming the table, the column and a value."""

from __future__ import annotations

import math

import pandas as pd

from dlbench.core.text.errors import ResultsFileError
from dlbench.core.declarations.experiments import REQUESTED_ONLY, experiment_names
from dlbench.core.declarations.metrics import METRICS
from dlbench.core.storage.schema import FLOAT_COLUMNS, INTEGER_COLUMNS, CellStatus
from dlbench.core.declarations.systems import DEVICES, frameworks
from dlbench.core.storage.tables import TABLE_COLUMNS
from dlbench.core.text.visible import shown_name

#: Columns every row must fill, per table.
REQUIRED = {
    "cells": ("run_id", "cell_id", "experiment", "workload", "framework", "device", "status"),
    "observations": ("run_id", "cell_id", "experiment", "workload", "framework", "device",
                     "metric", "unit"),
    "processes": ("run_id", "cell_id"),
}
#: Columns whose values come from a registry, and what each accepts.
VOCABULARY = {
    "experiment": (*experiment_names(), *(e.name for e in REQUESTED_ONLY)),
    "framework": tuple(frameworks()),
    "device": DEVICES,
    "status": tuple(status.value for status in CellStatus),
}


def check_table(frame: pd.DataFrame, kind: str, origin: str) -> None:
    """ResultsFileError for the first thing in a `kind` table (cells, observations, processes)
    that a run's table never holds."""
    missing = [column for column in TABLE_COLUMNS[kind] if column not in frame.columns]
    if missing:
        raise ResultsFileError(f"{origin}: no column {', '.join(missing)} (a {kind} table has "
                               f"{', '.join(TABLE_COLUMNS[kind])})")
    for column in TABLE_COLUMNS[kind]:
        _check_type(frame[column], column, origin)
    for column in REQUIRED[kind]:
        if frame[column].isna().any():
            raise ResultsFileError(f"{origin}: column {column} is empty in some rows; every "
                                   f"row names its {column}")
    if kind == "processes":
        return
    for column, accepted in VOCABULARY.items():
        if column in frame.columns:
            unknown = sorted(set(frame[column].dropna().astype(str)) - set(accepted))
            if unknown:
                raise ResultsFileError(f"{origin}: column {column} holds "
                                       f"{shown_name(unknown[0])}; accepted: "
                                       f"{', '.join(accepted)}")
    if kind == "observations":
        check_observations(frame, origin)


def _check_type(values: pd.Series, column: str, origin: str) -> None:
    """Whole numbers, numbers or text, as the schema types the column."""
    present = values.dropna()
    if column in INTEGER_COLUMNS or column in FLOAT_COLUMNS:
        numbers = pd.to_numeric(present, errors="coerce")
        bad = present[numbers.isna()]
        if not len(bad) and column in INTEGER_COLUMNS:
            bad = present[[not float(n).is_integer() for n in numbers]]
        if len(bad):
            kind = "whole numbers" if column in INTEGER_COLUMNS else "numbers"
            raise ResultsFileError(f"{origin}: column {column} holds "
                                   f"{shown_name(str(bad.iloc[0]))}; expected {kind}")
        return
    bad = present[[not isinstance(value, str) for value in present]]
    if len(bad):
        raise ResultsFileError(f"{origin}: column {column} holds {type(bad.iloc[0]).__name__} "
                               f"{shown_name(str(bad.iloc[0]))}; expected text")


def check_observations(frame: pd.DataFrame, origin: str) -> None:
    """Each metric registered with its unit; no infinite value, and every cell's metric with
    at least one finite value (whether a run may have none: check_measured)."""
    for (metric, unit), _ in frame.groupby(["metric", "unit"], dropna=False):
        if metric not in METRICS:
            raise ResultsFileError(f"{origin}: metric {shown_name(str(metric))} is not in the "
                                   "metric registry (dlbench/core/declarations/metrics.py)")
        if unit != METRICS[metric].unit:
            raise ResultsFileError(f"{origin}: metric {metric} has unit "
                                   f"{shown_name(str(unit))}; the registry says "
                                   f"{METRICS[metric].unit!r}")
    values = pd.to_numeric(frame["value"], errors="coerce").astype(float)
    if values.isin([math.inf, -math.inf]).any():
        row = frame[values.isin([math.inf, -math.inf])].iloc[0]
        raise ResultsFileError(f"{origin}: {row['metric']} of cell {shown_name(row['cell_id'])} "
                               "is infinite; expected a finite number")
    finite = values.notna().groupby([frame["cell_id"], frame["metric"]]).any()
    if not finite.all():
        cell, metric = finite[~finite].index[0]
        raise ResultsFileError(f"{origin}: {metric} of cell {shown_name(str(cell))} has no "
                               "value (all NaN); a measured metric has at least one number")


def check_measured(cells: pd.DataFrame, observations: pd.DataFrame, origin: str) -> None:
    """A run names cells, and observations wherever a cell says it measured: a run whose every
    cell was skipped or failed (a GPU plan on a machine without one) holds none, and says
    why in its cells."""
    if cells.empty:
        raise ResultsFileError(f"{origin}: cells.parquet: no cells (a run that planned nothing "
                               "has nothing to import)")
    if observations.empty and (cells["status"].astype(str) == "ok").any():
        raise ResultsFileError(f"{origin}: observations.parquet: no observations, though "
                               "cells.parquet says cells measured ok")
