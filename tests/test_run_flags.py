"""Flags a run cannot meet are refused in one line, exit 2, before anything is written or
the machine is locked: bounded numbers, no NaN or infinity, no empty run ID, a plan that is
a file, a data folder that holds data."""

from __future__ import annotations

from pathlib import Path

import pytest

from dlbench.cli import main

QUICK = ["--suite", "quick", "--experiment", "training", "--workload", "mlp-digits",
         "--framework", "pytorch"]


@pytest.mark.parametrize("flags, expected", [
    (["--repeats", "1000000000"], "--repeats 1000000000 is out of range; expected 1 to 1000"),
    (["--repeats", "0"], "--repeats 0 is out of range"),
    (["--threads", "0"], "--threads 0 is out of range"),
    (["--busy-retries", "-1"], "--busy-retries -1 is out of range"),
    (["--timeout", "nan"], "--timeout nan is not a number of seconds"),
    (["--timeout", "inf"], "--timeout inf is not a number of seconds"),
    (["--timeout", "-5"], "--timeout -5.0 is not a number of seconds"),
    (["--resume", ""], "--resume is empty; expected a run ID"),
    (["--remeasure", " "], "--remeasure is empty"),
    (["--plan", "{tmp}"], ": a folder; expected a device plan file"),
    (["--data-dir", "{tmp}/empty"], "is empty; expected a folder holding mnist.npz"),
    (["--data-dir", "{tmp}/none"], "no such folder"),
])
def test_a_flag_a_run_cannot_meet_is_refused_before_anything_is_written(
        flags: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DLBENCH_LOCK_FILE", str(tmp_path / "lock"))
    (tmp_path / "empty").mkdir()
    results = tmp_path / "results"
    argv = ["run", *QUICK, *[f.format(tmp=tmp_path) for f in flags], "--results-dir",
            str(results)]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert expected in error, error
    assert error.count("\n") == 1
    assert not results.exists() and not (tmp_path / "lock").exists()


def test_reproduce_bounds_its_processes(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    argv = ["reproduce", "2026.12-0001", "--ratio", "--processes", "1000000000",
            "--results-dir", str(tmp_path)]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "--processes 1000000000 is out of range; expected 2 to 1000" in error
    assert error.count("\n") == 1 and not list(tmp_path.iterdir())


def test_an_empty_environment_or_missing_run_file_is_named(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.site_fixtures import RUN_A, golden_results

    monkeypatch.setenv("DLBENCH_LOCK_FILE", str(tmp_path / "lock"))
    results = golden_results(tmp_path)
    run = results / "runs" / RUN_A
    (run / "environment.json").write_text("")
    for argv in (["results", "show", RUN_A], ["run", "--resume", RUN_A]):
        assert main([*argv, "--results-dir", str(results)]) == 2
        error = capsys.readouterr().err
        assert f"{run / 'environment.json'}: an empty file" in error, error
        assert error.count("\n") == 1
    (run / "run.json").unlink()
    assert main(["results", "show", RUN_A, "--results-dir", str(results)]) == 2
    error = capsys.readouterr().err
    assert f"{run / 'run.json'}: file not found" in error and error.count("\n") == 1


def test_a_request_that_plans_no_cell_is_refused_and_leaves_no_run_folder(
        tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard on a CPU leaves the execution-mode experiment to the full suite: asking for it
    alone names why, instead of an empty run."""
    monkeypatch.setenv("DLBENCH_LOCK_FILE", str(tmp_path / "lock"))
    results = tmp_path / "results"
    argv = ["run", "--suite", "standard", "--experiment", "execution-mode", "--device", "cpu",
            "--results-dir", str(results)]
    assert main(argv) == 2
    error = capsys.readouterr().err
    assert "nothing to measure: the standard suite has no execution-mode cell on cpu" in error
    assert error.count("\n") == 1
    assert not results.exists()
