"""`dlbench run`: plan the cells, measure each cell in several independent worker processes
(interleaved in a seeded random order), persist each process as it ends."""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.table import Table
from rich.text import Text

from dlbench.core.declarations import experiments as declared_experiments
from dlbench.core.storage import layout
from dlbench.core.storage.atomic import make_dir
from dlbench.core.text.errors import LayoutError, SaveError, UsageError
from dlbench.core.storage.schema import CellStatus
from dlbench.core.judging.sequential import Design, design_from_policy
from dlbench.core.judging.verdict_engine import QUESTIONS, Question
from dlbench.core.storage.tables import ResultsFileError
from dlbench.core.text.visible import visible_controls
from dlbench.runner.driver.machine.environment import capture_environment
from dlbench.runner.driver.plan.estimate import estimate, machine_history
from dlbench.runner.driver.plan.look_shares import second_look_share
from dlbench.runner.driver.plan.projection import error_line, project
from dlbench.runner import PROJECT_ROOT
from dlbench.runner.driver.launch.execute import execute_cells
from dlbench.runner.driver.machine.lock import MachineLockedError, measurement_lock
from dlbench.runner.cell.outcome import utc_timestamp
from dlbench.runner.driver.store.persist import kept_for_resume, persist_all
from dlbench.runner.driver.plan.cells import PlanError, plan_cells, resolve_device, validate
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.commands.remeasure import cells_to_remeasure
from dlbench.runner.driver.commands.resume_checks import refuse_foreign_run
from dlbench.runner.driver.commands.progress_lines import ProgressLines, lines_wanted
from dlbench.runner.driver.commands.run_arguments import RunArguments
from dlbench.runner.driver.commands.looks import (cells_to_top_up, look_record,
                                                  most_processes_added, next_look, recorded_looks,
                                                  with_recorded_looks)
from dlbench.runner.driver.plan.schedule import new_seed, process_label, process_order
from dlbench.runner.driver.plan.sharing import batch_label, worker_batches
from dlbench.runner.cell.spec import CellSpec
from dlbench.runner.workloads.catalog import workload_words
from dlbench.runner.driver.launch.stop import raise_if_stop_requested, stop_on_signals
from dlbench.runner.driver.store.run_store import CellRecord, RunStore
from dlbench.runner.driver.store.run_frames import by_cell, cell_status

console = Console(stderr=True)

#: How many times a process measured on a busy machine is measured again at the end.
DEFAULT_BUSY_RETRIES = 2
#: Statuses a framework gives every process of a cell alike: the others are not started.
SAME_FOR_EVERY_PROCESS = (CellStatus.SKIPPED, CellStatus.UNSUPPORTED)


def new_run_id(device: str) -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{device}"


def request_of(arguments: RunArguments) -> RunRequest:
    """The request run.json records: the selection, or a device plan's steps."""
    if arguments.plan_file is None:
        return arguments.request
    return replace(arguments.request, plan=_plan_steps(arguments.plan_file))


def _plan_steps(path: Path) -> list[dict]:
    """The steps of the device plan file `path` (--plan) that this machine's GPUs can
    measure."""
    from dlbench.runner.driver.machine.environment import gpu_facts
    from dlbench.runner.driver.plan.device import PlanFileError, load_plan, plan_selections

    try:
        plan = load_plan(path)
        return plan_selections(plan, len(gpu_facts()) if plan.device == "cuda" else None)
    except PlanFileError as error:
        raise UsageError(str(error)) from None


def existing_run(results_dir: Path, name: str) -> RunStore:
    """The store of an earlier run ('latest' works), or a UsageError listing the runs there are."""
    try:
        run_id = layout.resolve_run_id(results_dir, name)
    except LayoutError as error:
        raise UsageError(str(error)) from error
    if not layout.is_run(layout.run_dir(results_dir, run_id)):
        raise UsageError(f"run {run_id} is released ({layout.find_run(results_dir, run_id)}) "
                         "and a release never changes: measure a new run instead")
    layout.read_environment(layout.run_dir(results_dir, run_id))  # an empty one is named now
    return RunStore(layout.run_dir(results_dir, run_id))


def check_arguments(arguments: RunArguments) -> None:
    """Refuse bad input before taking the machine's lock or writing anything."""
    if (arguments.input_shape or arguments.data_file or arguments.batch_size is not None
            or arguments.steps is not None):
        raise UsageError("--input-shape, --data, --batch-size and --steps describe a model's "
                         "measurement: use them with --model PATH.py:NAME")
    if arguments.cells and not arguments.remeasure:
        raise UsageError("--cell names a cell to re-measure: use it with --remeasure RUN_ID")
    if arguments.remeasure and arguments.resume:
        raise UsageError("--remeasure and --resume each name a run: give one of them")
    busy_retries_of(arguments)
    _check_executor(arguments)
    given = arguments.request
    if arguments.plan_file and (given.experiments or given.workloads or given.frameworks
                                or given.repeats):
        raise UsageError("--plan names the cells: give it without --experiment, --workload, "
                         "--framework or --repeats")
    earlier = arguments.remeasure or arguments.resume
    if earlier:
        existing_run(arguments.results_dir, earlier)
        return
    try:
        validate(request_of(arguments))
    except PlanError as error:
        raise UsageError(str(error)) from None


def open_run(arguments: RunArguments) -> tuple[RunStore, RunRequest, str]:
    """A new run directory (not yet made: it is made once the request plans cells), or the
    existing one named by --resume with its original request."""
    if arguments.resume:
        store = existing_run(arguments.results_dir, arguments.resume)
        refuse_foreign_run(store)
        info = store.load_run_info()
        return store, RunRequest(**info["request"]), info["device"]
    request = request_of(arguments)
    device = resolve_device(request.device)
    store = RunStore(layout.run_dir(arguments.results_dir, new_run_id(device)))
    return store, request, device


def run_command(arguments: RunArguments,
                measure: Callable[[RunArguments], int] | None = None) -> int:
    """Entry point of `dlbench run`: holds the machine's measurement lock while it measures
    (on this machine, or with `measure`, e.g. on a Ray cluster)."""
    stop_on_signals()
    check_arguments(arguments)
    try:
        with measurement_lock():
            if arguments.remeasure:
                return _remeasure(arguments)
            return (measure or _measure)(arguments)
    except MachineLockedError as error:
        raise UsageError(str(error)) from None


def _measure(arguments: RunArguments) -> int:
    store, request, device = open_run(arguments)
    try:
        cells = plan_cells(request, device)
    except (PlanError, ValueError) as error:
        raise UsageError(str(error)) from None
    if not arguments.resume:  # only a new request that plans cells leaves a run folder
        make_dir(store.root)
    try:
        records = run_cells(store, request, device, cells, progress=arguments.progress,
                            busy_retries=busy_retries_of(arguments), seed=arguments.seed)
    except ResultsFileError as error:
        raise UsageError(str(error)) from None
    print_summary(store, records)
    return 0


def _remeasure(arguments: RunArguments) -> int:
    """--remeasure RUN_ID --cell ...: the cells' earlier processes become superseded, and the
    cells are measured again under the run's original request."""
    store = existing_run(arguments.results_dir, arguments.remeasure)
    refuse_foreign_run(store, "re-measured")
    retries = busy_retries_of(arguments)
    cells = cells_to_remeasure(store, list(arguments.cells), arguments.reason)
    info = store.load_run_info()
    records = run_cells(store, RunRequest(**info["request"]), info["device"], cells,
                        progress=arguments.progress, busy_retries=retries, record_plan=False)
    print_summary(store, records)
    return 0


def executor_of(arguments: RunArguments) -> str:
    """local or ray: what --executor says, or for --resume what the run was measured with."""
    given = arguments.executor
    if not arguments.resume:
        return given or "local"
    store = existing_run(arguments.results_dir, arguments.resume)
    recorded = store.load_run_info().get("executor", "local")
    if given and given != recorded:
        raise UsageError(f"run {store.run_id} was measured with --executor {recorded}: "
                         "resume it with that executor, or leave out --executor")
    return recorded


def _check_executor(arguments: RunArguments) -> None:
    """--address and --machine-kind belong to --executor ray (a resumed cluster run keeps
    its machine kind); --remeasure measures on this machine."""
    executor = executor_of(arguments)
    if executor == "ray" and arguments.remeasure:
        raise UsageError("--remeasure measures on this machine: leave out --executor ray")
    if executor != "ray" and (arguments.address or arguments.machine_kinds):
        raise UsageError("--address and --machine-kind need --executor ray")
    if arguments.resume and arguments.machine_kinds:
        raise UsageError("--resume goes on with the run's own machine kind: leave out "
                         "--machine-kind")


def busy_retries_of(arguments: RunArguments) -> int:
    """--busy-retries, or its default; a negative count is refused."""
    retries = arguments.busy_retries
    if retries is None:
        return DEFAULT_BUSY_RETRIES
    if retries < 0:
        raise UsageError(f"--busy-retries must be 0 or more, got {retries}")
    return retries


def run_cells(store: RunStore, request: RunRequest, device: str, cells: list[CellSpec],
              progress: bool = True, busy_retries: int = DEFAULT_BUSY_RETRIES,
              seed: int | None = None, record_plan: bool = True,
              questions: tuple[Question, ...] = QUESTIONS) -> list[CellRecord]:
    """Measure every process of `cells` not yet recorded in `store`, in the run's interleaved
    order; each is persisted as soon as it ends. Busy processes are measured again at the end
    of each look; after a look, the cells of `questions`' undecided pairs get the next look's
    processes."""
    info = start_info(store, request, device, cells, seed, record_plan)
    projected = _projected_here(store, info, cells, request) if record_plan else None
    design = recorded_design(info, request)
    cells = with_recorded_looks(cells, info)
    if record_plan and next_look(info) < len(design.looks):
        _print_top_up_bound(store, cells, design, request.suite)
    started = time.perf_counter()
    try:
        if not (store.root / "environment.json").exists():  # a stop while it reads the
            store.save_environment(capture_environment(PROJECT_ROOT))  # frameworks: interrupted
        with _progress(progress) as bar:
            _measure_look(store, cells, info["order_seed"], bar, busy_retries, request.suite)
            for look in range(next_look(info), len(design.looks) if record_plan else 0):
                topped = cells_to_top_up(store, cells, design, look, questions)
                _record_look(store, look_record(look, design, topped, _now()))
                if not topped:
                    break
                console.print(f"look {look + 1}: {len(topped)} cells of undecided pairs get "
                              f"{design.looks[look]} processes each")
                by_id = {cell.cell_id: cell for cell in topped}
                cells = [by_id.get(cell.cell_id, cell) for cell in cells]
                _measure_look(store, cells, info["order_seed"], bar, busy_retries,
                              request.suite)
    except KeyboardInterrupt:
        mark_interrupted(store)
        raise
    except SaveError as error:
        raise kept_for_resume(store, error) from None
    mark_complete(store, started, projected)
    return store.load_records()


def _projected_here(store: RunStore, info: dict, cells: list[CellSpec],
                    request: RunRequest) -> float | None:
    """A new run's projected minutes, printed and recorded in run.json (`estimate`), for
    its error to be said at the end; None for a run started by an earlier invocation."""
    if "estimate" in info:
        return None
    history = machine_history(store.root.parent.parent)
    second, source = second_look_share(store.root.parent.parent, history.kind, request.suite)
    projection = project(cells, request.suite, history.times,
                         override=None if request.plan else request.repeats, second=second)
    console.print(history.sentence())
    console.print(source)
    console.print(projection.lines()[-1])
    store.save_run_info(store.load_run_info() | {"estimate": projection.record()
                                                 | {"machine_factor": round(history.factor, 3),
                                                    "second_look_share": round(second, 3)}})
    return projection.projected_min


def recorded_design(info: dict, request: RunRequest) -> Design:
    """The design run.json pre-registered (a resumed run keeps the looks it started with),
    or the suite's where none is recorded."""
    policy = info.get("processes_policy") or {}
    if policy.get("design"):
        return design_from_policy(policy)
    return request.design()


def _measure_look(store: RunStore, cells: list[CellSpec], order_seed: int, bar: Progress,
                  busy_retries: int, suite: str) -> None:
    """Every process of `cells` not yet recorded, in the run's order, then the busy re-runs,
    then the tables."""
    order = process_order(cells, order_seed)
    done = store.finished_processes()
    todo = [spec for spec in order if (spec.cell_id, spec.repeat_index) not in done]
    batches = worker_batches(todo, suite)
    history = machine_history(store.root.parent.parent).times
    console.print(estimate(batches, history).sentence())
    task = bar.add_task("starting", total=len(order), completed=len(order) - len(todo))
    lines = (ProgressLines(len(order), len(order) - len(todo))
             if lines_wanted(not bar.disable) else None)
    for position, batch in enumerate(batches):
        raise_if_stop_requested()
        bar.update(task, description=batch_label(batch))
        records = _measure_processes(store, batch)
        persist_all(store, records, lambda: bar.advance(task))
        if lines:
            lines.finished(records, estimate(batches[position + 1:], history).seconds)
    if lines:
        lines.flush()
    _rerun_busy(store, {cell.cell_id for cell in cells}, busy_retries, bar, suite)
    store.rebuild_tables()  # once per look: each process's record was saved as it ended


def _print_top_up_bound(store: RunStore, cells: list[CellSpec], design: Design,
                        suite: str) -> None:
    """The most the later looks could add, if every pair stayed undecided."""
    added = most_processes_added(cells, design)
    if added:
        bound = estimate(worker_batches(added, suite),
                         machine_history(store.root.parent.parent).times)
        console.print(f"later looks: at most {len(added)} more processes (about "
                      f"{bound.seconds / 60:.0f} min) if every pair stayed undecided; only "
                      "the cells of undecided pairs get them")


def _record_look(store: RunStore, look: dict) -> None:
    """Add a decided look to run.json."""
    info = store.load_run_info()
    store.save_run_info(info | {"looks": [*recorded_looks(info), look]})


def mark_interrupted(store: RunStore) -> None:
    """Tables up to date with the kept records, the run marked interrupted, and how to go on."""
    store.rebuild_tables()  # the records are the truth; a stop between them must not lag
    store.save_run_info(store.load_run_info() | {"status": "interrupted"})
    console.print(f"interrupted: finished processes are kept; continue with "
                  f"`dlbench run --resume {store.run_id}`")


def mark_complete(store: RunStore, started: float, projected_min: float | None = None) -> None:
    """Final tables, and the run marked complete with its wall time since `started` (and,
    for a run projected by this invocation, the projection's error, printed too)."""
    store.rebuild_tables()
    wall = round(time.perf_counter() - started, 1)
    done = {"status": "complete", "finished_at": _now(), "wall_time_s": wall}
    if projected_min:
        console.print(error_line(projected_min, wall))
        done["estimate_error"] = round(wall / 60 / projected_min - 1, 3)
    store.save_run_info(store.load_run_info() | done)


def _measure_processes(store: RunStore, batch: list[CellSpec],
                       attempt: int = 0) -> list[CellRecord]:
    """Measure the processes of `batch` in one worker process (dlbench.runner.driver.plan.sharing), each record
    labelled with its place in the run's order; a process whose cell was refused earlier is
    recorded as not started instead."""
    first_index = store.next_order_index()
    records = [not_started_record(store, spec, first_index + offset, attempt)
               for offset, spec in enumerate(batch)]
    to_run = [offset for offset, record in enumerate(records) if record is None]
    measured = execute_cells([batch[offset] for offset in to_run]) if to_run else []
    for offset, record in zip(to_run, measured, strict=True):
        records[offset] = labelled(record, first_index + offset, attempt)
    return records


def not_started_record(store: RunStore, spec: CellSpec, order_index: int,
                       attempt: int = 0) -> CellRecord | None:
    """The record of a process not started because an earlier process of its cell was
    skipped or refused by the framework; None when none was."""
    sibling = _same_for_every_process(store, spec)
    if sibling is None:
        return None
    ended = f"process {sibling.spec.repeat_index} ended {sibling.outcome.status.value}"
    outcome = replace(sibling.outcome, reason=f"{sibling.outcome.reason} (not started: {ended})")
    now = utc_timestamp()
    return replace(sibling, spec=spec, outcome=outcome, order_index=order_index,
                   attempt=attempt, wall_time_s=0.0, machine={}, started_at=now, ended_at=now)


def labelled(record: CellRecord, order_index: int, attempt: int = 0) -> CellRecord:
    """A measured process's record with its place in the order (its observations already
    carry its process index: the harness labels them with spec.repeat_index)."""
    return replace(record, order_index=order_index, attempt=attempt)


def _same_for_every_process(store: RunStore, spec: CellSpec) -> CellRecord | None:
    """An earlier process of the same cell that the framework refused or could not start."""
    for record in store.load_records():
        if (record.spec.cell_id == spec.cell_id and record.spec.repeat_index != spec.repeat_index
                and record.outcome.status in SAME_FOR_EVERY_PROCESS):
            return record
    return None


def _rerun_busy(store: RunStore, cell_ids: set[str], retries: int, bar: Progress,
                suite: str) -> None:
    """Measure again, up to `retries` times, each process flagged as measured on a busy
    machine; the earlier record is kept in superseded/ with the reason."""
    for attempt in range(1, retries + 1):
        flagged = busy_flagged(store, cell_ids, attempt)
        if not flagged:
            continue
        task = bar.add_task(f"busy re-run {attempt}", total=len(flagged))
        by_label = {process_label(record.spec): record for record in flagged}
        for batch in worker_batches([record.spec for record in flagged], suite):
            bar.update(task, description=f"busy re-run {attempt}: {batch_label(batch)}")
            for spec in batch:
                record = by_label[process_label(spec)]
                store.supersede(record, "machine busy: " + "; ".join(record.busy_reasons))
            persist_all(store, _measure_processes(store, batch, attempt),
                        lambda: bar.advance(task))


def busy_flagged(store: RunStore, cell_ids: set[str], attempt: int) -> list[CellRecord]:
    """The processes of `cell_ids` flagged busy on attempt `attempt - 1`, to measure again."""
    return [r for r in store.load_records() if r.busy_reasons
            and r.spec.cell_id in cell_ids and r.attempt == attempt - 1
            and r.outcome.status not in SAME_FOR_EVERY_PROCESS]


def start_info(store: RunStore, request: RunRequest, device: str, cells: list[CellSpec],
                seed: int | None, record_plan: bool) -> dict:
    existing = store.load_run_info() if (store.root / "run.json").exists() else {}
    info = existing or {"run_id": store.run_id, "started_at": _now(), "device": device,
                        "request": asdict(request)}
    info.setdefault("order_seed", new_seed() if seed is None else seed)
    info["status"] = "running"
    if record_plan:
        policy = request.policy()
        info |= {"planned_cells": [c.cell_id for c in cells], "processes_policy": policy,
                 "citable": policy["citable"], "workload_words": planned_words(cells, device),
                 "process_order": [process_label(s)
                                   for s in process_order(cells, info["order_seed"])]}
    store.save_run_info(info)
    return info


def planned_words(cells: list[CellSpec], device: str) -> dict[str, str]:
    """Each planned workload's words at the run's device (dlbench.runner.workloads.catalog, or
    the TASKS of the experiment package that declares a task of its own), for its pages to
    label it by; a workload without declared words is left out."""
    names = dict.fromkeys((cell.workload, cell.experiment) for cell in cells)
    words = {name: workload_words(name, device) or own_task_words(experiment, name)
             for name, experiment in names}
    return {name: text for name, text in words.items() if text}


def own_task_words(experiment: str, workload: str) -> str:
    """The words an experiment's package gives a task of its own (its TASKS: the
    defaults-accuracy task is not a catalog workload), or ''."""
    if experiment not in declared_experiments.experiment_names():  # a user's model: none
        return ""
    package = importlib.import_module(declared_experiments.by_name(experiment).plans)
    return str(dict(getattr(package, "TASKS", {})).get(workload, ""))


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=console, disable=not enabled)


def print_summary(store: RunStore, records: list[CellRecord]) -> None:
    """Cells ok / failed / skipped / unsupported, wall time, and where the results are."""
    statuses = {cell_id: cell_status(group) for cell_id, group in by_cell(records).items()}
    table = Table(title=f"run {store.run_id}")
    for status in CellStatus:
        table.add_column(status.value, justify="right")
    table.add_column("processes", justify="right")
    table.add_column("busy", justify="right")
    table.add_column("wall time", justify="right")
    info = store.load_run_info()
    table.add_row(*(str(sum(s[0] is status for s in statuses.values())) for status in CellStatus),
                  str(len(records)), str(sum(bool(r.busy_reasons) for r in records)),
                  f"{info.get('wall_time_s', 0):.0f} s")
    console.print(table)
    for cell_id, (status, reason, _) in statuses.items():
        if status is CellStatus.FAILED:
            console.print(Text.assemble(("failed", "red"), f" {cell_id}: ",
                                        visible_controls(reason)))  # never read as markup
    if not info.get("processes_policy", {}).get("citable", True):
        console.print("preview, not to cite: a quick suite, or fewer processes per cell "
                      "than its suite's (standard or full suite for citable results)")
    console.print(Text(f"results: {store.root}"))
