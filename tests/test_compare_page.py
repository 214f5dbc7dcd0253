"""The site's comparison page applies compare's rule: unlike configurations are not compared."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.stats_fixtures import training_cells, write_run

from dlbench.core.storage.releases import freeze_release
from dlbench.report.pages.compare import compare_blocks
from dlbench.report.render.jinja import environment, render
from dlbench.report.inputs.source import load_draft, load_release

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
TIMES = {"pytorch": 1.0, "tensorflow": 1.2}


def test_a_quick_draft_against_a_standard_release_lists_cells_as_not_comparable(tmp_path):
    rng = np.random.default_rng(0)
    write_run(tmp_path, "20261201T000000Z-cpu", training_cells(rng, TIMES, params={"epochs": 8}))
    freeze_release(tmp_path, "2026.12", ["20261201T000000Z-cpu"], "2026-12-01", "T", "cff\n")
    fast = {name: 0.1 for name in TIMES}
    write_run(tmp_path, "20261202T000000Z-cpu", training_cells(rng, fast, params={"epochs": 2}))
    draft = load_draft(tmp_path, ["20261202T000000Z-cpu"])
    [block] = compare_blocks(draft, tmp_path)
    assert block["compared"] == 0 and block["rows"] == []
    assert [row["differences"] for row in block["not_comparable"]] == \
        ["A and B differ in epochs: 8 in A, 2 in B."] * 2  # a sentence in words (issues 53, 66)
    page = render(environment(TEMPLATES), "compare.md.j2", source=draft,
                  comparisons=[block])
    assert "Not comparable: 2 cells with a name in common" in page
    assert "| faster" not in page and "No significant change." in page


def test_a_release_against_itself_compares_every_cell(tmp_path):
    rng = np.random.default_rng(1)
    write_run(tmp_path, "20261201T000000Z-cpu", training_cells(rng, TIMES))
    freeze_release(tmp_path, "2026.11", ["20261201T000000Z-cpu"], "2026-11-01", "T", "cff\n")
    freeze_release(tmp_path, "2026.12", ["20261201T000000Z-cpu"], "2026-12-01", "T", "cff\n")
    [block] = compare_blocks(load_release(tmp_path, "2026.12"), tmp_path)
    assert block["not_comparable"] == [] and block["compared"] == len(TIMES)


def test_a_draft_of_two_runs_measuring_one_cell_two_ways_is_refused(tmp_path):
    from dlbench.report.inputs.source import SourceError

    rng = np.random.default_rng(2)
    write_run(tmp_path, "20261201T000000Z-cpu", training_cells(rng, TIMES, params={"epochs": 8}))
    write_run(tmp_path, "20261202T000000Z-cpu", training_cells(rng, TIMES, params={"epochs": 2}))
    with pytest.raises(SourceError, match="different configurations \\(params.epochs 8→2\\)"):
        load_draft(tmp_path, ["20261201T000000Z-cpu", "20261202T000000Z-cpu"])
