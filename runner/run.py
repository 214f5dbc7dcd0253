"""`dlbench run`: plan the cells, measure each in its own process, persist each as it ends."""

from __future__ import annotations

import argparse
import signal
import time
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)
from rich.table import Table

from dlbench.errors import UsageError
from dlbench.tables import ResultsFileError
from runner.environment import capture_environment
from runner.execute import PROJECT_ROOT, code_of, execute_cell, status_counts
from runner.plan import PlanError, RunRequest, plan_cells, resolve_device
from runner.spec import CellSpec
from runner.store import CellRecord, RunStore

console = Console(stderr=True)


def new_run_id(device: str) -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + f"-{device}"


def request_from_args(args: argparse.Namespace) -> RunRequest:
    return RunRequest(suite=args.suite, experiments=args.experiment, workloads=args.workload,
                      frameworks=args.framework, device=args.device, repeats=args.repeats,
                      threads=args.threads, timeout_s=args.timeout, data_dir=args.data_dir)


def open_run(results_dir: Path, args: argparse.Namespace) -> tuple[RunStore, RunRequest, str]:
    """A new run directory, or the existing one named by --resume with its original request."""
    runs = results_dir / "runs"
    if args.resume:
        store = RunStore(runs / args.resume)
        if not (store.root / "run.json").exists():
            known = sorted(p.name for p in runs.glob("*") if (p / "run.json").exists())
            raise UsageError(f"no run {args.resume!r} under {runs}; runs: {', '.join(known) or 'none'}")
        info = store.load_run_info()
        return store, RunRequest(**info["request"]), info["device"]
    request = request_from_args(args)
    try:
        from runner.plan import validate

        validate(request)
    except PlanError as error:
        raise UsageError(str(error)) from None
    device = resolve_device(request.device)
    store = RunStore(runs / new_run_id(device))
    store.root.mkdir(parents=True, exist_ok=False)
    return store, request, device


def _stop_on_sigterm() -> None:
    """Treat SIGTERM like Ctrl-C: stop the worker, keep every finished cell, say how to resume."""
    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def run_command(args: argparse.Namespace) -> int:
    """Entry point of `dlbench run`."""
    _stop_on_sigterm()
    store, request, device = open_run(Path(args.results_dir), args)
    try:
        cells = plan_cells(request, device)
    except (PlanError, ValueError) as error:
        raise UsageError(str(error)) from None
    try:
        records = run_cells(store, request, device, cells, progress=not args.no_progress)
    except ResultsFileError as error:
        raise UsageError(str(error)) from None
    print_summary(store, records)
    return 0


def run_cells(store: RunStore, request: RunRequest, device: str, cells: list[CellSpec],
              progress: bool = True) -> list[CellRecord]:
    """Measure every cell not yet finished in `store`; each is persisted as soon as it ends."""
    info = _start_info(store, request, device, cells)
    if not (store.root / "environment.json").exists():
        store.save_environment(capture_environment(PROJECT_ROOT))
    done = store.finished_cell_ids()
    todo = [cell for cell in cells if cell.cell_id not in done]
    started = time.perf_counter()
    try:
        with _progress(progress) as bar:
            task = bar.add_task("starting", total=len(cells), completed=len(cells) - len(todo))
            for cell in todo:
                bar.update(task, description=cell.cell_id)
                _persist(store, execute_cell(cell))
                bar.advance(task)
    except KeyboardInterrupt:
        store.rebuild_tables()  # the records are the truth; a stop between them must not lag
        store.save_run_info(info | {"status": "interrupted"})
        console.print(f"interrupted: finished cells are kept; continue with "
                      f"`dlbench run --resume {store.run_id}`")
        raise
    store.rebuild_tables()
    store.save_run_info(info | {"status": "complete",
                                "finished_at": _now(),
                                "wall_time_s": round(time.perf_counter() - started, 1)})
    return store.load_records()


def _persist(store: RunStore, record: CellRecord) -> None:
    relative, text, _ = code_of(record.spec)
    store.save_code(relative, text)
    store.save_record(record)
    store.rebuild_tables()


def _start_info(store: RunStore, request: RunRequest, device: str, cells: list[CellSpec]) -> dict:
    existing = store.load_run_info() if (store.root / "run.json").exists() else {}
    info = existing or {"run_id": store.run_id, "started_at": _now(), "device": device,
                        "request": asdict(request)}
    info = info | {"status": "running", "planned_cells": [c.cell_id for c in cells]}
    store.save_run_info(info)
    return info


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _progress(enabled: bool) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                    console=console, disable=not enabled)


def print_summary(store: RunStore, records: list[CellRecord]) -> None:
    """Cells ok / failed / skipped / unsupported, wall time, and where the results are."""
    counts = status_counts(records)
    table = Table(title=f"run {store.run_id}")
    for status in counts:
        table.add_column(status, justify="right")
    table.add_column("wall time", justify="right")
    info = store.load_run_info()
    table.add_row(*(str(n) for n in counts.values()), f"{info.get('wall_time_s', 0):.0f} s")
    console.print(table)
    for record in records:
        if record.outcome.status.value in ("failed",):
            console.print(f"[red]failed[/red] {record.spec.cell_id}: {record.outcome.reason}")
    console.print(f"results: {store.root}")
