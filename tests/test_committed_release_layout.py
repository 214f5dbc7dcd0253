"""The committed release 2026.12 read through the results layout (kept apart from unit tests).

Its files are never rewritten: schema 1 tables get their config_id when read.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from tests.stats_fixtures import FakeCell, write_run
from tests.test_identity import assert_config_ids_added_on_read

from dlbench.cli import main
from dlbench.core.judging.compare import compare

ROOT = Path(__file__).resolve().parents[1]
RELEASE_RUN = ROOT / "results/releases/2026.12/runs/20261202T135525Z-cpu"


def test_release_2026_12_gets_config_ids_without_rewriting_its_files():
    assert_config_ids_added_on_read(RELEASE_RUN)


def test_compare_the_release_with_a_quick_run_fits_80_columns(tmp_path, capsys):
    """`dlbench compare 2026.12 latest` after `make`: one screenful a person can read."""
    from dlbench.core.storage.layout import release_runs, run_tables
    from dlbench.runner.driver.plan.cells import plan_cells
    from dlbench.runner.driver.plan.request import RunRequest
    from dlbench.runner.cell.spec import CellSpec

    shutil.copytree(ROOT / "results" / "releases", tmp_path / "releases")
    quick = plan_cells(RunRequest(suite="quick", experiments=[], workloads=[], frameworks=[],
                                  device="cpu", repeats=None, threads=None, timeout_s=None,
                                  data_dir=""), "cpu")
    published, _ = run_tables(release_runs(tmp_path, "2026.12"))
    quick_ids = {cell.cell_id for cell in quick}
    alike = [CellSpec.from_json(text) for text in published["config_json"]
             if CellSpec.from_json(text).cell_id not in quick_ids][:4]
    rng = np.random.default_rng(0)
    cells = [FakeCell(s, {"steady_epoch_time": list(rng.normal(0.5, 0.01, 5))})
             for s in [*quick, *alike]]
    write_run(tmp_path, "20261203T000000Z-cpu", cells)
    assert main(["compare", "2026.12", "latest", "--results-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    assert len(lines) <= 50
    text = "\n".join(lines)
    assert "cells not comparable (same name, other configuration; never compared)" in text
    assert "A and B differ in epochs: " in text, text  # in words, not the raw key
    report = compare("2026.12", "latest", tmp_path)
    assert set(report.metrics["cell_id"]) <= {s.cell_id for s in alike}
    assert not set(report.metrics["cell_id"]) & set(report.not_comparable["cell_id"])
