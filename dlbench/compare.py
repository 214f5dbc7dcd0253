"""Compare two result sets (runs, releases, or two machines of one release) cell by cell.

A side is named as a run ID (results/runs/<id>/), a release name (results/releases/<name>/),
or RELEASE@RUN_ID for one machine of a release. Cells are matched by their `cell_id`, which
is stable across runs. For every metric with per-repeat values (rows without a step) the
repeats of B are compared with those of A: ratio of medians B/A with its bootstrap interval
and a Mann-Whitney test, judged by dlbench.judging (Holm over the report's comparisons, a 5%
practical threshold). B is read as "the new one": "slower" means B is slower than A.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from dlbench.metrics import METRICS, Direction, get_metric
from dlbench.schema import CELL_KEY_COLUMNS
from dlbench.judging import Decision, Family, judge_together
from dlbench.metrics import is_timing_unit
from dlbench.tables import ResultsFileError, read_json, read_table

RUNS = Path("runs")
RELEASES = Path("releases")

#: Environment keys that differ on every run and explain nothing.
VOLATILE_KEY_PARTS = ("captured_at", "started_at", "finished_at", "timestamp", "run_id",
                      "available", "boot_time", "pid")

#: What identifies a compared cell, beside its ID.
IDENTITY_COLUMNS = ["experiment", "workload", "system", "framework", "backend", "precision",
                    "mode", "batch_size", "workers", "export_format", "device"]

COMPARISON_COLUMNS = [
    "cell_id", *IDENTITY_COLUMNS, "metric", "unit", "direction",
    "n_a", "n_b", "median_a", "median_b", "ratio", "ratio_ci_low", "ratio_ci_high",
    "change_pct", "p_value", "significant", "change", "note",
]


class CompareError(ValueError):
    """A side that cannot be found or read, or that is ambiguous."""


class Change(enum.Enum):
    """How B differs from A for one metric of one cell."""

    FASTER = "faster"
    SLOWER = "slower"
    BETTER = "better"
    WORSE = "worse"
    DIFFERENT = "different"
    NO_SIGNIFICANT_DIFFERENCE = "no significant difference"


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
    metrics: pd.DataFrame  # COMPARISON_COLUMNS, one row per (cell, metric) in both sides
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    status_changes: pd.DataFrame  # cell_id, status_a, status_b
    environment: pd.DataFrame  # key, a, b

    def count(self, change: Change) -> int:
        """How many (cell, metric) rows changed this way."""
        return int((self.metrics["change"] == change.value).sum())


def _names(root: Path, marker: str) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / marker).is_file())


def _unknown(results_dir: Path, name: str) -> CompareError:
    runs = ", ".join(_names(results_dir / RUNS, "run.json")) or "none"
    releases = ", ".join(_names(results_dir / RELEASES, "release.json")) or "none"
    return CompareError(
        f"unknown run or release {name!r}; runs: {runs}; releases: {releases} "
        "(or RELEASE@RUN_ID for one machine of a release)"
    )


def _read_run(root: Path) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    try:
        cells = read_table(root / "cells.parquet", "cells")
        observations = read_table(root / "observations.parquet", "observations")
    except ResultsFileError as error:
        raise CompareError(str(error)) from None
    env_path = root / "environment.json"
    environment = read_json(env_path) if env_path.is_file() else {}
    return cells, observations, environment


def _side_from_runs(label: str, roots: list[Path]) -> Side:
    cells, observations, environments = [], [], {}
    for root in roots:
        run_cells, run_observations, environment = _read_run(root)
        cells.append(run_cells)
        observations.append(run_observations)
        environments[root.name] = environment
    all_cells = pd.concat(cells, ignore_index=True)
    duplicated = all_cells.loc[all_cells["cell_id"].duplicated(), "cell_id"]
    if len(duplicated):
        choices = ", ".join(f"{label}@{root.name}" for root in roots)
        raise CompareError(
            f"{label!r} holds cell {duplicated.iloc[0]!r} in several runs (machines); "
            f"name one machine: {choices}"
        )
    return Side(label, tuple(r.name for r in roots), all_cells,
                pd.concat(observations, ignore_index=True), environments)


def load_side(name: str, results_dir: Path = Path("results")) -> Side:
    """Resolve a run ID, a release name or RELEASE@RUN_ID to its tables."""
    release, _, run_id = name.partition("@")
    release_root = results_dir / RELEASES / release
    if run_id:
        if not (release_root / "release.json").is_file():
            raise _unknown(results_dir, release)
        known = read_json(release_root / "release.json").get("runs", [])
        if run_id not in known:
            raise CompareError(
                f"release {release!r} has no run {run_id!r}; its runs: {', '.join(known)}"
            )
        return _side_from_runs(name, [release_root / RUNS / run_id])
    if (release_root / "release.json").is_file():
        runs = read_json(release_root / "release.json").get("runs", [])
        return _side_from_runs(name, [release_root / RUNS / r for r in runs])
    run_root = results_dir / RUNS / name
    if name and (run_root / "run.json").is_file():
        return _side_from_runs(name, [run_root])
    raise _unknown(results_dir, name)


def repeat_values(observations: pd.DataFrame) -> pd.DataFrame:
    """Per-repeat rows only (no step): the values a comparison uses."""
    return observations[observations["step"].isna() & observations["value"].notna()]


def change_of(decision: Decision, unit: str) -> Change:
    """Phrase a judged pair (B against A, dlbench.judging) as a change of B."""
    timed = is_timing_unit(unit)
    if decision is Decision.A_BETTER:
        return Change.FASTER if timed else Change.BETTER
    if decision is Decision.B_BETTER:
        return Change.SLOWER if timed else Change.WORSE
    if decision is Decision.DIFFERENT:
        return Change.DIFFERENT
    return Change.NO_SIGNIFICANT_DIFFERENCE


def _cell_columns(cells: pd.DataFrame) -> pd.DataFrame:
    keys = cells[[c for c in CELL_KEY_COLUMNS if c != "run_id"]].drop_duplicates("cell_id")
    keys = keys.set_index("cell_id")
    keys["system"] = [f"keras-{b}" if f == "keras" else str(f)
                      for f, b in zip(keys["framework"], keys["backend"], strict=True)]
    return keys


def _row(family: Family, keys: pd.Series, cell_id: str, metric: str, a: pd.Series,
         b: pd.Series) -> dict:
    registered = METRICS.get(metric)
    direction = registered.direction if registered else Direction.NEITHER
    judgement = family.judge((cell_id, metric), b.to_numpy(), a.to_numpy(), direction)
    comparison = judgement.comparison
    unit = registered.unit if registered else ""
    ratio = comparison.ratio
    return {
        "cell_id": cell_id, **{k: keys[k] for k in IDENTITY_COLUMNS},
        "metric": metric, "unit": unit, "direction": direction.value,
        "n_a": comparison.n_b, "n_b": comparison.n_a,
        "median_a": comparison.median_b, "median_b": comparison.median_a,
        "ratio": ratio, "ratio_ci_low": comparison.ratio_ci_low,
        "ratio_ci_high": comparison.ratio_ci_high,
        "change_pct": (ratio - 1) * 100 if not math.isnan(ratio) else math.nan,
        "p_value": judgement.p_adjusted,
        "significant": judgement.decision in (Decision.A_BETTER, Decision.B_BETTER,
                                              Decision.DIFFERENT),
        "change": change_of(judgement.decision, unit).value, "note": judgement.reason,
    }


def compare_metrics(a: Side, b: Side, metrics: list[str] | None = None) -> pd.DataFrame:
    """One row per (cell, metric) present in both sides, B compared with A."""
    for name in metrics or []:
        get_metric(name)
    values_a, values_b = repeat_values(a.observations), repeat_values(b.observations)
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


def _status_changes(a: Side, b: Side) -> pd.DataFrame:
    status_a = a.cells.set_index("cell_id")["status"]
    status_b = b.cells.set_index("cell_id")["status"]
    common = sorted(set(status_a.index) & set(status_b.index))
    rows = [{"cell_id": c, "status_a": status_a[c], "status_b": status_b[c]}
            for c in common if status_a[c] != status_b[c]]
    return pd.DataFrame(rows, columns=["cell_id", "status_a", "status_b"])


def compare(a_name: str, b_name: str, results_dir: Path = Path("results"),
            metrics: list[str] | None = None) -> ComparisonReport:
    """Load both sides and compare them cell by cell, with environment differences."""
    a, b = load_side(a_name, results_dir), load_side(b_name, results_dir)
    cells_a, cells_b = set(a.cells["cell_id"]), set(b.cells["cell_id"])
    return ComparisonReport(
        a=a_name, b=b_name, metrics=compare_metrics(a, b, metrics),
        only_in_a=tuple(sorted(cells_a - cells_b)), only_in_b=tuple(sorted(cells_b - cells_a)),
        status_changes=_status_changes(a, b), environment=environment_differences(a, b),
    )


_STYLES = {Change.FASTER: "green", Change.BETTER: "green", Change.SLOWER: "red",
           Change.WORSE: "red", Change.DIFFERENT: "yellow",
           Change.NO_SIGNIFICANT_DIFFERENCE: "dim"}


def _number(value: float) -> str:
    return "—" if value is None or math.isnan(value) else f"{value:.4g}"


def change_text(row: pd.Series) -> str:
    """A reader's phrase for one row, e.g. '1.52× slower (CI 1.41–1.60×, p=0.008)'."""
    change = Change(row["change"])
    interval = f"{_number(row['ratio_ci_low'])}–{_number(row['ratio_ci_high'])}×"
    stats = f"ratio {_number(row['ratio'])}× (95% CI {interval}, Holm p={row['p_value']:.2g})"
    if change is Change.NO_SIGNIFICANT_DIFFERENCE:
        return f"no significant difference: {stats}"
    return f"{change.value}: {stats}"


def print_report(report: ComparisonReport, console: object | None = None,
                 significant_only: bool = False) -> None:
    """Print the comparison as rich tables: metric changes, cell changes, environment."""
    from rich.console import Console
    from rich.table import Table

    out = console if console is not None else Console()
    table = Table(title=f"{report.b} compared with {report.a} (ratio = B / A)")
    for column in ("cell", "metric", "A median", "B median", "ratio [95% CI]", "Holm p", "change"):
        table.add_column(column, overflow="fold")
    shown = report.metrics[report.metrics["significant"].astype(bool)] if significant_only \
        else report.metrics
    for _, row in shown.iterrows():
        change = Change(row["change"])
        table.add_row(
            str(row["cell_id"]), f"{row['metric']} ({row['unit']})", _number(row["median_a"]),
            _number(row["median_b"]),
            f"{_number(row['ratio'])} [{_number(row['ratio_ci_low'])}, "
            f"{_number(row['ratio_ci_high'])}]",
            f"{row['p_value']:.2g}", f"[{_STYLES[change]}]{change.value}[/]",
        )
    if len(shown):
        out.print(table)
    else:
        out.print("no significant change" if len(report.metrics) else
                  f"no cell with per-repeat values is in both {report.a} and {report.b}")
    counts = ", ".join(f"{report.count(c)} {c.value}" for c in Change if report.count(c))
    out.print(f"{len(report.metrics)} comparisons: {counts or 'none'}")
    out.print(f"a change is named when it exceeds 5% and its p-value, Holm-corrected over "
              f"these {len(report.metrics)} comparisons, is below 0.05")
    for label, cells in (("only in A", report.only_in_a), ("only in B", report.only_in_b)):
        if cells:
            out.print(f"cells {label}: {', '.join(cells)}")
    for _, row in report.status_changes.iterrows():
        out.print(f"status of {row['cell_id']}: {row['status_a']} → {row['status_b']}")
    environment = Table(title="environment differences")
    for column in ("key", "A", "B"):
        environment.add_column(column, overflow="fold")
    for _, row in report.environment.iterrows():
        environment.add_row(row["key"], row["a"], row["b"])
    if len(report.environment):
        out.print(environment)
    else:
        out.print("environment: no differences recorded")


def compare_command(args: object) -> int:
    """`dlbench compare A B`: print what got faster or slower, and why it might have."""
    from dlbench.cli import UsageError
    from dlbench.metrics import UnknownMetricError

    try:
        report = compare(args.a, args.b, Path(args.results_dir), args.metric or None)
    except (CompareError, UnknownMetricError) as error:
        raise UsageError(str(error)) from None
    print_report(report, significant_only=args.significant)
    return 0
