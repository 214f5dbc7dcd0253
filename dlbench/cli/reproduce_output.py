"""`dlbench reproduce RESULT_ID` on the console: the report lines of runner.reproduce."""

from __future__ import annotations

import argparse
from pathlib import Path

from dlbench.errors import UsageError
from runner.reproduce import ReproduceError, explain, reproduce


def reproduce_command(args: argparse.Namespace) -> int:
    """`dlbench reproduce RESULT_ID`: exit 0 if reproduced, 1 if not, 2 on bad input."""
    try:
        result = reproduce(args.result_id, Path(args.results_dir))
    except ReproduceError as error:
        raise UsageError(str(error)) from None
    for line in explain(result):
        print(line)
    return 0 if result.inside else 1
