"""`dlbench run`'s parsed flags as the typed value runner/ takes (dlbench.runner.driver.commands.run_arguments)."""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.cli.bounds import (MAX_BUSY_RETRIES, MAX_MODEL_STEPS, MAX_PROCESSES, MAX_THREADS,
                                MAX_TIMEOUT_S, bounded_int, bounded_seconds)
from dlbench.core.text.errors import UsageError
from dlbench.runner.driver.commands.run_arguments import RunArguments
from dlbench.runner.driver.plan.request import RunRequest


def run_arguments(args: argparse.Namespace) -> RunArguments:
    """The typed request of `dlbench run`; UsageError for a flag out of its bounds."""
    check_run_flags(args)
    request = RunRequest(
        suite=args.suite, experiments=list(args.experiment), workloads=list(args.workload),
        frameworks=list(args.framework), device=args.device, repeats=args.repeats,
        threads=args.threads, timeout_s=args.timeout, data_dir=args.data_dir)
    return RunArguments(
        request=request, plan_file=Path(args.plan) if args.plan else None, results_dir=Path(args.results_dir),
        progress=not args.no_progress, resume=args.resume, remeasure=args.remeasure,
        cells=tuple(args.cell), reason=args.reason, busy_retries=args.busy_retries,
        seed=args.seed, executor=args.executor, address=args.address,
        machine_kinds=tuple(args.machine_kind), model=args.model,
        input_shape=args.input_shape, input_dtype=args.input_dtype, data_file=args.data,
        batch_size=args.batch_size, steps=args.steps)


def check_run_flags(args: argparse.Namespace) -> None:
    """Refuse, in one line, a number a run cannot meet or an empty run ID, before anything is
    written or the machine is locked."""
    bounded_int("--repeats", args.repeats, 1, MAX_PROCESSES)
    bounded_int("--threads", args.threads, 1, MAX_THREADS)
    bounded_int("--busy-retries", args.busy_retries, 0, MAX_BUSY_RETRIES)
    bounded_int("--steps", args.steps, 1, MAX_MODEL_STEPS)
    bounded_seconds("--timeout", args.timeout, MAX_TIMEOUT_S)
    for flag, value in (("--resume", args.resume), ("--remeasure", args.remeasure)):
        if value is not None and not value.strip():
            raise UsageError(f"{flag} is empty; expected a run ID (or latest)")


def check_run_paths(args: argparse.Namespace) -> None:
    """Refuse, in one line, a --plan that is not a file and a --data-dir without data."""
    if args.plan is not None and not Path(args.plan).is_file():
        what = "a folder" if Path(args.plan).is_dir() else "no such file"
        raise UsageError(f"--plan {args.plan}: {what}; expected a device plan file (JSON), "
                         "e.g. scripts/gpu_plan.json")
    if args.data_dir:
        _check_data_dir(Path(args.data_dir))


def _check_data_dir(path: Path) -> None:
    """A --data-dir must be a folder holding files (mnist.npz, CIFAR-10 batches)."""
    if not path.is_dir():
        what = "not a folder" if path.exists() else "no such folder"
        raise UsageError(f"--data-dir {path}: {what}; expected a folder holding mnist.npz or "
                         "the CIFAR-10 batches")
    if not any(path.iterdir()):
        raise UsageError(f"--data-dir {path} is empty; expected a folder holding mnist.npz or "
                         "the CIFAR-10 batches")
