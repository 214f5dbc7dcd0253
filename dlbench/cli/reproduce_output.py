"""`dlbench reproduce RESULT_ID` on the console: the report lines of dlbench.runner.driver.commands.reproduce."""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.cli.bounds import MAX_PROCESSES, bounded_int
from dlbench.core.text.errors import UsageError
from dlbench.core.text.visible import visible_controls
from dlbench.runner.driver.commands.reproduce import ReproduceError, explain, reproduce
from dlbench.runner.driver.commands.reproduce_ratio import explain_ratio, reproduce_ratio


def reproduce_command(args: argparse.Namespace) -> int:
    """`dlbench reproduce RESULT_ID [OTHER_ID | --ratio]`: exit 0 if reproduced, 1 if not, 2
    on bad input. Two IDs (or --ratio) reproduce a ratio, measured side by side here."""
    if args.processes < 2:
        raise UsageError(f"--processes must be at least 2 (a ratio needs a spread), "
                         f"got {args.processes}")
    bounded_int("--processes", args.processes, 2, MAX_PROCESSES)
    try:
        if args.other_id or args.ratio:
            result = reproduce_ratio(args.result_id, args.other_id, Path(args.results_dir),
                                     args.processes, args.seed)
            lines, inside = explain_ratio(result), result.inside
        else:
            single = reproduce(args.result_id, Path(args.results_dir))
            lines, inside = explain(single), single.inside
    except ReproduceError as error:
        raise UsageError(str(error)) from None
    for line in lines:
        print(visible_controls(line))
    return 0 if inside else 1
