"""`dlbench reproduce A B` (two result IDs) and `dlbench reproduce ID --ratio`: reproduce a
verdict, not only a number.

Absolute times belong to one machine (two machines of one kind measured 192 and 259 GFLOP/s
and 2.5x apart on one latency); what a release promises to reproduce is its ratios. Both
cells are rerun here, their processes interleaved in a seeded order, and the new ratio (of
geometric means, Welch on log values as the verdicts use) is checked against the verdict the
release's pages show for that pair (its stored row: ratio, adjusted interval, look and
processes), or, for a pair no verdict judged, the two cells' 95% interval on every process. It
is reproduced when the new ratio lies inside that interval, and the report says when the two
intervals are disjoint. A single result is judged as its ratio to a reference cell of the same
run (PyTorch's cell of the same workload and metric, else the first other system), measured
in the same reproduction. The report first says how this machine differs from the release's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from dlbench.core.judging.decisions import PairTest, pair_test
from dlbench.core.machine.fma_peak import measured_fp32_flops
from dlbench.core.storage.layout import load_run, release_dir, release_run_dir
from dlbench.core.storage.releases import VERDICTS
from dlbench.core.storage.schema import CellStatus
from dlbench.runner.driver.commands.reproduce import (PublishedResult, ReproduceError,
                                                      load_published, store_records)
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.driver.store.run_store import CellRecord

#: Worker processes per cell in a reproduction of a ratio.
DEFAULT_PROCESSES = 3
#: Fraction by which this machine's measured peak may differ before the report says so.
PEAK_TOLERANCE = 0.10


@dataclass(frozen=True)
class PublishedPair:
    """What the release's pages show for a pair: the stored verdict row, A over B."""

    ratio: float
    interval: tuple[float, float]
    confidence: float
    look: int
    processes: tuple[int, int]
    decision: str
    stored: bool  # False: no verdict judged this pair; the cells' interval on every process


@dataclass(frozen=True)
class RatioReproduction:
    """Two cells rerun side by side and what their new ratio says of the published one."""

    a: PublishedResult
    b: PublishedResult
    published: PairTest
    published_interval: tuple[float, float]
    new: PairTest | None
    new_interval: tuple[float, float]
    inside: bool
    machine: list[str]  # how this machine differs from the release's
    new_run_id: str
    failure: str = ""  # why no new ratio, when there is none
    busy: tuple[str, ...] = ()  # the busy reasons of processes measured on a busy machine
    shown: PublishedPair | None = None  # the verdict the pages show, when one judged the pair

    @property
    def disjoint(self) -> bool:
        """Whether the new interval and the published one do not meet."""
        low, high = self.published_interval
        new_low, new_high = self.new_interval
        return self.new is not None and (new_high < low or new_low > high)


def machine_differences(published: dict, here: dict) -> list[str]:
    """How this machine differs from the release's: CPU model, cores, measured peak, GPU."""
    notes = []
    then_cpu, now_cpu = published.get("cpu") or {}, here.get("cpu") or {}
    for key, words in (("model", "CPU"), ("logical_cores", "logical cores")):
        if then_cpu.get(key) != now_cpu.get(key):
            notes.append(f"{words}: {then_cpu.get(key)} in the release, {now_cpu.get(key)} here")
    then_peak = measured_fp32_flops(published.get("compute_peak"))
    now_peak = measured_fp32_flops(here.get("compute_peak"))
    if then_peak and now_peak and abs(now_peak / then_peak - 1) > PEAK_TOLERANCE:
        notes.append(f"measured fp32 peak: {then_peak / 1e9:.0f} GFLOP/s in the release, "
                     f"{now_peak / 1e9:.0f} here ({now_peak / then_peak:.2f}x): absolute "
                     "times are not comparable, ratios are")
    then_gpus = [g.get("model") for g in published.get("gpus") or []]
    now_gpus = [g.get("model") for g in here.get("gpus") or []]
    if then_gpus != now_gpus:
        notes.append(f"GPUs: {then_gpus or 'none'} in the release, {now_gpus or 'none'} here")
    return notes


def published_pair(a: PublishedResult, b: PublishedResult,
                   results_dir: Path) -> PublishedPair:
    """The verdict row the release's pages show for A against B (either order), else the two
    cells' 95% interval on every process they hold."""
    path = release_dir(results_dir, a.release) / VERDICTS
    if path.is_file():
        import pandas as pd

        rows = pd.read_csv(path, dtype=str, keep_default_na=False)
        for first, second, flip in ((a, b, False), (b, a, True)):
            found = rows[(rows["row"] == "pair") & (rows["result_id_a"] == first.result_id)
                         & (rows["result_id_b"] == second.result_id)]
            if not found.empty:
                return _from_row(found.iloc[0], flip)
    test = pair_test(a.values, b.values)
    return PublishedPair(test.ratio, test.interval(0.05), 0.95, 0, (test.n_a, test.n_b), "",
                         False)


def _from_row(row, flip: bool) -> PublishedPair:
    ratio, low, high = (float(row[k]) for k in ("ratio", "ci_low", "ci_high"))
    counts = (int(float(row["processes_a"])), int(float(row["processes_b"])))
    if flip:
        ratio, low, high, counts = 1 / ratio, 1 / high, 1 / low, counts[::-1]
    return PublishedPair(ratio, (low, high), float(row["confidence"]),
                         int(float(row["look"] or 0)), counts, str(row["decision"]), True)


def reference_for(published: PublishedResult, results_dir: Path) -> PublishedResult:
    """The cell a single result is reproduced against: PyTorch's cell of the same experiment,
    workload, precision, batch size and metric in the same run, else another system's."""
    run = load_run(release_run_dir(release_dir(results_dir, published.release),
                                   published.run_id))
    cells, _ = run.tables()
    spec = published.spec
    mine = cells[(cells["experiment"] == spec.experiment) & (cells["workload"] == spec.workload)
                 & (cells["precision"] == spec.precision) & (cells["status"] == "ok")
                 & (cells["batch_size"] == spec.batch_size)
                 & (cells["cell_id"] != published.cell_id)]
    mine = mine[~mine["config_json"].str.contains('"control": "aa"')]
    if mine.empty:
        raise ReproduceError(f"{published.result_id}: no other cell of {spec.experiment} "
                             f"{spec.workload} in its run to measure a ratio against")
    preferred = mine.sort_values(by=["framework", "cell_id"], key=lambda column: column.map(
        lambda value: (value != "pytorch", value)) if column.name == "framework" else column)
    ids = _ids_of_run(published, results_dir)
    for cell_id in preferred["cell_id"]:
        found = ids.get((str(cell_id), published.metric))
        if found:
            return load_published(found, results_dir)
    raise ReproduceError(f"{published.result_id}: no reference cell has a {published.metric} "
                         "result")


def _ids_of_run(published: PublishedResult, results_dir: Path) -> dict[tuple[str, str], str]:
    from dlbench.core.storage.releases import read_result_ids

    ids = read_result_ids(release_dir(results_dir, published.release))
    ids = ids[ids["run_id"] == published.run_id]
    return {(str(c), str(m)): str(i) for c, m, i in
            zip(ids["cell_id"], ids["metric"], ids["result_id"], strict=True)}


def interleaved(specs: list[CellSpec], processes: int, seed: int) -> list[CellSpec]:
    """Process k of every spec, round by round, shuffled within each round from `seed`."""
    order = []
    for index in range(processes):
        round_specs = [replace(spec, repeat_index=index, repeats=processes) for spec in specs]
        random.Random(f"{seed}:{index}").shuffle(round_specs)
        order += round_specs
    return order


def _values(records: list[CellRecord], spec: CellSpec, metric: str) -> np.ndarray:
    return np.array([o.value for r in records if r.spec.cell_id == spec.cell_id
                     and r.outcome.status is CellStatus.OK
                     for o in r.outcome.observations if o.metric == metric and o.step is None],
                    dtype=float)


def _again_where_busy(records: list[CellRecord],
                      measure: Callable[[CellSpec], CellRecord]) -> list[CellRecord]:
    """Each process that ran on a busy machine measured once more after the others, as a
    run's look does, in its place; one busy again stays busy (and the ratio no result)."""
    return [measure(record.spec) if record.busy_reasons else record for record in records]


def reproduce_ratio(a_id: str, b_id: str | None, results_dir: Path = Path("results"),
                    processes: int = DEFAULT_PROCESSES, seed: int = 0,
                    measure: Callable[[CellSpec], CellRecord] | None = None,
                    environment: dict | None = None) -> RatioReproduction:
    """Rerun A and B (B: the reference cell when None) interleaved, and judge the new ratio
    against the published one's 95% interval."""
    from dlbench.runner.driver.machine.environment import capture_environment
    from dlbench.runner.driver.launch.execute import PROJECT_ROOT, execute_cell

    a = load_published(a_id, results_dir)
    b = load_published(b_id, results_dir) if b_id else reference_for(a, results_dir)
    _check_pair(a, b)
    published = pair_test(a.values, b.values)
    shown = published_pair(a, b, results_dir)
    environment = capture_environment(PROJECT_ROOT) if environment is None else environment
    measure = measure or execute_cell
    records = _again_where_busy([measure(spec) for spec in
                                 interleaved([a.spec, b.spec], processes, seed)], measure)
    run_id = store_records(results_dir, a, records, environment,
                           f"{a.result_id} against {b.result_id}")
    machine = machine_differences(a.environment, environment)
    new_a, new_b = _values(records, a.spec, a.metric), _values(records, b.spec, b.metric)
    low, high = shown.interval
    if new_a.size < 2 or new_b.size < 2:
        failed = next((r.outcome.reason for r in records
                       if r.outcome.status is not CellStatus.OK), "too few values")
        return RatioReproduction(a, b, published, (low, high), None, (np.nan, np.nan), False,
                                 machine, run_id, failed, shown=shown)
    new = pair_test(new_a, new_b)
    busy = tuple(f"{r.spec.cell_id}#{r.spec.repeat_index}: {'; '.join(r.busy_reasons)}"
                 for r in records if r.busy_reasons)
    return RatioReproduction(a, b, published, (low, high), new, new.interval(0.05),
                             bool(low <= new.ratio <= high) and not busy, machine, run_id,
                             busy=busy, shown=shown)


def _check_pair(a: PublishedResult, b: PublishedResult) -> None:
    """Refuse two results that are not one comparison of one release and metric."""
    if a.release != b.release or a.metric != b.metric or a.cell_id == b.cell_id:
        raise ReproduceError(f"{a.result_id} and {b.result_id} are not one comparison: give two "
                             "results of one release and metric, in two different cells")


def explain_ratio(result: RatioReproduction) -> list[str]:
    """The report as lines: machine first, then the published and the new ratio."""
    lines = [f"this machine differs from release {result.a.release}'s: {note}"
             for note in result.machine] or [f"this machine matches release "
                                             f"{result.a.release}'s CPU and measured peak"]
    lines.append(_published_line(result))
    if result.new is None:
        return lines + [f"rerun {result.new_run_id}: no new ratio: {result.failure}"]
    new_low, new_high = result.new_interval
    lines.append(f"now (run {result.new_run_id}, interleaved): {result.new.ratio:.3g}x "
                 f"(95% CI {new_low:.3g}-{new_high:.3g}x, {result.new.n_a} and "
                 f"{result.new.n_b} processes)")
    if result.busy:
        total = result.new.n_a + result.new.n_b
        return lines + [f"not a result: {len(result.busy)} of {total} processes ran on a busy "
                        "machine; measure again alone"] + [
            f"  - {reason}" for reason in result.busy]
    verdict = "reproduced" if result.inside else "not reproduced"
    where = "inside" if result.inside else "outside"
    apart = ("; the two intervals are disjoint" if result.disjoint else
             "; the two intervals overlap" if not result.inside else "")
    return lines + [f"{verdict}: the new ratio lies {where} the published ratio's "
                    f"interval{apart}"]


def _published_line(result: RatioReproduction) -> str:
    """The published side of the report: the verdict the pages show, or the cells' ratio."""
    shown, (low, high) = result.shown, result.published_interval
    head = f"published: {result.a.cell_id} / {result.b.cell_id}, {result.a.metric}: "
    if shown is None or not shown.stored:
        return (head + f"{result.published.ratio:.3g}x (95% CI {low:.3g}-{high:.3g}x, "
                f"{result.published.n_a} and {result.published.n_b} processes; no verdict of "
                "the release judged this pair)")
    return (head + f"{shown.ratio:.3g}x ({shown.confidence:.1%} CI {low:.3g}-{high:.3g}x, "
            f"{shown.decision} at look {shown.look} on {shown.processes[0]} and "
            f"{shown.processes[1]} processes: the verdict its pages show)")

