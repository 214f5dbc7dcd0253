"""`dlbench run`'s parsed flags as the typed value runner/ takes (runner.commands.run_arguments)."""

from __future__ import annotations

import argparse
from pathlib import Path

from runner.commands.run_arguments import RunArguments


def run_arguments(args: argparse.Namespace) -> RunArguments:
    return RunArguments(
        suite=args.suite, experiments=tuple(args.experiment), workloads=tuple(args.workload),
        frameworks=tuple(args.framework), device=args.device, repeats=args.repeats,
        threads=args.threads, timeout_s=args.timeout, data_dir=args.data_dir,
        plan_file=Path(args.plan) if args.plan else None, results_dir=Path(args.results_dir),
        progress=not args.no_progress, resume=args.resume, remeasure=args.remeasure,
        cells=tuple(args.cell), reason=args.reason, busy_retries=args.busy_retries,
        seed=args.seed, executor=args.executor, address=args.address,
        machine_kinds=tuple(args.machine_kind), model=args.model,
        input_shape=args.input_shape, input_dtype=args.input_dtype, data_file=args.data,
        batch_size=args.batch_size)
