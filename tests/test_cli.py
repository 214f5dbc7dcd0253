"""Bad input: one line naming what was wrong and what is accepted, exit status 2."""

from __future__ import annotations

import re

import pytest

from dlbench.cli import main


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["run", "--suite", "huge"], "unknown suite 'huge'; valid: quick, standard, machine, full"),
        (["run", "--experiment", "speed"], "unknown experiment 'speed'; valid: training"),
        (["run", "--framework", "mxnet"], "unknown framework 'mxnet'; valid: pytorch"),
        (["run", "--workload", "resnet"], "unknown workload 'resnet'; valid: mlp-digits"),
        (["run", "--device", "tpu"], "unknown device 'tpu'; valid: auto, cpu, cuda"),
        (["run", "--repeats", "0"], "--repeats 0 is out of range; expected 1 to 1000"),
        (["run", "--workload", "mlp-mnist"], "pass --data-dir DIR"),
        (["run", "--resume", "no-such-run"], "no run 'no-such-run'"),
    ],
)
def test_bad_run_arguments_exit_2_with_one_line(argv, expected, capsys, tmp_path):
    code = main([*argv, "--results-dir", str(tmp_path)])
    error = capsys.readouterr().err
    assert code == 2
    assert expected in error
    assert len(error.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_list_names_every_framework_and_whether_installed(capsys):
    import io

    from rich.console import Console

    from dlbench.cli import listing
    from dlbench.runner.cell.frameworks import FRAMEWORKS, missing_modules

    buffer = io.StringIO()
    listing.print_listing(Console(file=buffer, width=200))
    out = buffer.getvalue()
    for name in ("pytorch", "tensorflow", "keras-tensorflow", "keras-torch", "keras-jax",
                 "mlp-digits", "cnn-digits", "training"):
        assert name in out
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in out.splitlines() if line.count("│") == 3}
    for framework in FRAMEWORKS:
        missing = missing_modules(framework)
        expected = "no: missing " + ", ".join(missing) if missing else "yes"
        assert rows[framework.name] == expected
    assert main(["list"]) == 0


def test_the_machine_suite_is_listed_dry_run_and_in_the_readme(capsys, tmp_path, monkeypatch):
    """`dlbench list` names the machine suite; `--dry-run` prints its cells and projected
    minutes, locks and writes nothing; the README's run section says what it measures."""
    from pathlib import Path

    from dlbench.runner.driver.plan.experiments import precision as precision_plan

    # a CPU with bf16 units and no fp16 units (the AMD EPYC of release 2027.04)
    monkeypatch.setattr(precision_plan, "cpu_flags", lambda: {"avx512f", "avx512_bf16"})

    assert main(["list"]) == 0
    assert "machine" in capsys.readouterr().out.split("suites:")[1]
    code = main(["run", "--suite", "machine", "--dry-run", "--device", "cpu",
                 "--results-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert "dry run of the machine suite on cpu" in out and "citable" in out
    assert "precision, resnet50-synthetic: 11 cells, 5 not measured here" in out  # fp16
    assert "precision, bert-base-tokens: 0 cells, 15 not measured here" in out
    assert "parity, resnet50-synthetic: 5 cells" in out and "defaults-accuracy" in out
    # where the suite's minutes go, per experiment and workload (issue 62)
    assert re.search(r"execution-mode, resnet50-synthetic: \d+ cells, 4 not measured here; "
                     r"first look about \d+ min", out)
    assert re.search(r"data-parallel, mlp-digits: \d+ cells, 4 not measured here; first look "
                     r"about \d+ min", out)
    assert "look 2 (3 -> 5 processes)" in out and "whole run: projected" in out
    assert "look shares: release 2027.02's (0.65); no earlier machine run of this kind" in out
    assert not any(tmp_path.iterdir())
    assert main(["run", "--suite", "machine", "--dry-run", "--model", "m.py:build",
                 "--results-dir", str(tmp_path)]) == 2
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    assert "**machine** (what one" in readme
    assert "--suite machine --dry-run" in readme
