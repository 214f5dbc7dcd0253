"""The release checks of issue 38 work (no time is asserted): the suite's whole-run projection
lies between its first look and its bound, and the re-judge names the training cells whose
processes missed their target."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pandas as pd

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def benchmark(name: str):
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_projection_lies_between_the_first_look_and_the_bound(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["suite_estimate.py", "--suite", "standard",
                                      "--experiment", "training"])
    benchmark("suite_estimate").main()
    out = capsys.readouterr().out
    first = float(re.search(r"first look: \d+ processes, (\d+) min", out)[1])
    projected, bound = map(float, re.search(r"projected (\d+) min; at most (\d+) min", out)
                           .groups())
    assert first < projected < bound  # 2027.02's shares: some, not all, cells topped up
    assert len(re.findall(r"^look \d", out, re.M)) == 2  # standard's three looks: two later


def test_shares_given_replace_2027_02_s(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["suite_estimate.py", "--suite", "standard",
                                      "--experiment", "training", "--share", "0",
                                      "--share", "0"])
    benchmark("suite_estimate").main()
    out = capsys.readouterr().out
    first = re.search(r"first look: \d+ processes, (\d+) min", out)[1]
    assert f"projected {first} min" in out  # nothing topped up: the first look alone


def test_training_cells_with_a_missed_target_are_named_with_their_processes():
    rows = pd.DataFrame({
        "cell_id": ["training:a", "training:a", "training:b", "training:b", "training:a"],
        "repeat": [0, 1, 0, 1, 1],
        "metric": ["reached_target"] * 4 + ["test_accuracy"],
        "value": [1.0, 0.0, 1.0, 1.0, 0.4],
    })
    lines = benchmark("rejudge_release").target_lines(rows)
    assert lines == ["training targets: 1 of 2 cells with a process that missed",
                     "  training:a: processes [1]"]
    reached = rows.assign(value=1.0)
    assert benchmark("rejudge_release").target_lines(reached) == [
        "training targets: 0 of 2 cells with a process that missed"]


def test_the_headline_table_reads_a_release_s_stored_verdicts_without_derived_answers():
    from dlbench.report.verdicts.stored import read_verdicts

    root = BENCHMARKS.parent / "results" / "releases" / "2027.02"
    verdicts = read_verdicts((root / "verdicts.csv").read_bytes())
    lines = benchmark("headline_table").table_lines(verdicts, ["training-speed",
                                                               "training-throughput"])
    rows = lines[2:]
    assert rows and all(row.startswith("| training-speed |") for row in rows)  # derived: out
    lstm = next(row for row in rows if "lstm-tokens, batch size 32, plain" in row)
    assert "| winner | pytorch |" in lstm and lstm.count("x (") == 4
    assert "keras-jax 0.464x (0.337-0.638; 3/3)" in lstm  # the stored ratio and interval
    mlp = next(row for row in lines if "mlp-digits, batch size 32, plain" in row)
    assert " 0.0x" not in mlp and " 0.00x" not in mlp  # small ratios keep their digits

