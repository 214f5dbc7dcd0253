"""`dlbench code TARGET [PATH]`: the code a result or a run ran, read back from its run's code
record (dlbench/core/storage/result_code.py): without PATH the files, with their hashes and lines;
with PATH that file, byte for byte (on a terminal, its control characters shown as escapes)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dlbench.core.text.errors import UsageError
from dlbench.core.storage.result_code import chosen_file, target_code
from dlbench.core.text.visible import visible_controls


def code_command(args: argparse.Namespace) -> int:
    """List the files TARGET ran, or print the one named PATH exactly as it ran."""
    results_dir = Path(args.results_dir)
    if not results_dir.is_dir():
        raise UsageError(f"--results-dir {results_dir}: no such folder; pass the folder that "
                         "holds runs/ and releases/ (default: results)")
    if args.sha256 and not args.path:
        raise UsageError("--sha256 chooses a version of a file: name its PATH too")
    code = target_code(results_dir, args.target)
    terminal = sys.stdout.isatty()
    if args.path:
        chosen = chosen_file(code, args.path, args.sha256)
        sys.stdout.buffer.write(shown_code(chosen.data or b"", terminal))
        sys.stdout.flush()
        return 0
    print(visible_controls(f"{code.words}: {len(code.files)} files (sha256, lines, path)"))
    for file in code.files:
        lines = str(file.data.count(b"\n")) if file.data is not None else "not kept"
        print(visible_controls(f"{file.sha256[:12]}  {lines:>8}  {file.path}"))
    return 0


def shown_code(data: bytes, terminal: bool) -> bytes:
    """`data` as written to stdout: unchanged into a pipe or file; on a terminal, decoded
    with its control characters (ESC, bidi overrides) as visible escapes."""
    if not terminal:
        return data
    return visible_controls(data.decode("utf-8", "replace")).encode()
