"""Running `dlbench run` in-process from a test, as the user-model tests do."""

from __future__ import annotations

from pathlib import Path

from dlbench.cli import main


def run_cli(argv: list[str], results: Path, capsys) -> tuple[int, str]:
    """`dlbench run ARGV` into `results`, without progress: its exit code and stderr."""
    code = main(["run", *argv, "--results-dir", str(results), "--no-progress"])
    return code, capsys.readouterr().err
