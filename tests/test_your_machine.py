"""A draft of the reader's own run placed beside the newest release's machines
(report/pages/your_machine.py): the same pairs' ratios per machine, settings and code that
differ said in words, and no such page for a release."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dlbench.report.inputs.source import load_draft, load_release
from dlbench.report.site.build import site_files
from tests.machine_fixtures import AMD_AVX2, INTEL_AMX, machine_run
from tests.site_fixtures import RUN_A, SITE_URL, TEMPLATES, freeze, golden_results


@pytest.fixture(scope="module")
def beside(tmp_path_factory) -> tuple[dict[str, bytes], Path]:
    """Release 2027.04 of two machines, and a draft of a third run whose PyTorch is 3x slower
    (its settings changed too: a quick run's fewer epochs)."""
    results = golden_results(tmp_path_factory.mktemp("beside"))
    released = [machine_run(results, RUN_A, "20261201T120000Z-amx", INTEL_AMX),
                machine_run(results, RUN_A, "20261201T130000Z-avx2", AMD_AVX2)]
    freeze(results, "2027.04", released, "2027-01-10")
    mine = machine_run(results, RUN_A, "20261202T090000Z-reader", AMD_AVX2 | {
        "model": "AMD Ryzen 7 5800X"}, {"pytorch": 3.0})
    cells = results / "runs" / mine / "cells.parquet"
    _change_epochs(cells)
    return site_files(load_draft(results, [mine]), TEMPLATES, SITE_URL, results), results


def _change_epochs(cells_path: Path) -> None:
    from dlbench.core.storage.tables import read_table, write_table

    cells = read_table(cells_path, "cells")
    configs = [json.loads(c) for c in cells["config_json"]]
    for config in configs:
        config.setdefault("params", {})["epochs"] = 2
    cells["config_json"] = [json.dumps(c, sort_keys=True) for c in configs]
    write_table(cells, cells_path.with_suffix(""), "cells")


def _rows(page: str) -> list[list[str]]:
    lines = [line for line in page.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_the_draft_names_its_machine_and_the_releases_machines(beside):
    page = beside[0]["your-machine.md"].decode()
    assert page.startswith("# Your machine beside release 2027.04")
    assert "measured on **AMD Ryzen, 2 cores, AVX2 only**" in page
    assert "**Intel Xeon, 2 cores, AMX, AVX-512 BF16**, **AMD EPYC, 2 cores, AVX2 only**" in page
    assert "one side kept no code record" in page  # the golden runs keep none
    assert "(your-machine.md)" in beside[0]["index.md"].decode()


def test_each_pair_judged_here_shows_the_same_pair_on_every_release_machine(beside):
    header, _, *rows = _rows(beside[0]["your-machine.md"].decode())
    assert header[4:6] == ["Intel Xeon, 2 cores, AMX, AVX-512 BF16", "AMD EPYC, 2 cores, AVX2 only"]
    cnn = next(r for r in rows if r[0] == "Which framework trains fastest?"
               and r[1].startswith("CNN") and r[2] == "TensorFlow against PyTorch")
    here = float(re.match(r"([\d.]+)x", cnn[3]).group(1))
    there = [float(v.rstrip("x")) for v in cnn[4:6]]
    assert here == pytest.approx(3 * there[0], rel=0.05) and there[0] == there[1]
    assert cnn[6] == "2 of 2 outside this machine's interval"
    assert "epochs: 2 here" in cnn[7]


def test_a_release_has_no_your_machine_page(beside):
    results = beside[1]
    files = site_files(load_release(results, "2027.04"), TEMPLATES, SITE_URL, results)
    assert "your-machine.md" not in files
    assert "(your-machine.md)" not in files["index.md"].decode()
