"""The precision experiment's accuracy answer on the site: a tiny real run of the machine
suite's bf16 accuracy cell (the digits MLP trained to its target in bf16 and in fp32 from the
same weights, paired by seed), built into the site by mkdocs, read from the Precision page
and the home page's FP16/BF16 founding question."""

from __future__ import annotations

import html
import re
import subprocess
import sys
from dataclasses import replace

import pytest

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.storage.tables import read_table
from dlbench.runner.driver.plan.cells import plan_cells
from dlbench.runner.driver.plan.request import RunRequest
from tests.site_fixtures import SITE_URL, TEMPLATES, site_config

RUN_ID = "20261207T000000Z-cpu"
SEEDS = 3


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """PyTorch's bf16 accuracy cell as the machine suite plans it, 3 seeds of 10 epochs (the
    MLP reaches its target in 10), in real worker processes."""
    from dlbench.runner.driver.commands.run import run_cells
    from dlbench.runner.driver.store.run_store import RunStore

    request = RunRequest(suite="machine", experiments=["precision"], workloads=["mlp-digits"],
                         frameworks=["pytorch"], device="cpu", repeats=SEEDS, threads=1)
    cells = [replace(c, params=c.params | {"epochs": 10, "latency_calls": 5,
                                           "throughput_batch": 64})
             for c in plan_cells(request, "cpu")]
    assert [c.precision for c in cells] == ["bf16"]  # no fp32 cell: each process holds both
    results = tmp_path_factory.mktemp("precision") / "results"
    store = RunStore(results / "runs" / RUN_ID)
    store.root.mkdir(parents=True)
    run_cells(store, request, "cpu", cells, progress=False, busy_retries=0)
    return results, store.root


@pytest.fixture(scope="module")
def built(tiny_run, tmp_path_factory):
    """The run's site, built by mkdocs in strict mode: (home, precision page) as text."""
    from dlbench.report.inputs.source import load_draft
    from dlbench.report.site.build import build_site

    results, _ = tiny_run
    tmp = tmp_path_factory.mktemp("precision-site")
    docs = tmp / "site_src"
    build_site(load_draft(results, [RUN_ID]), docs, TEMPLATES, SITE_URL)
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "-f",
                           str(site_config(tmp, docs))], capture_output=True, text=True,
                          check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return tuple(_text((tmp / "site" / page).read_text())
                 for page in ("index.html", "experiments/precision/index.html"))


def _text(page: str) -> str:
    """A built page's words, without its markup."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", page)).split())


@pytest.mark.slow
def test_the_answer_pairs_each_seeds_bf16_and_fp32_accuracy(tiny_run):
    from dlbench.report.verdicts.precision_answers import precision_answers

    _, root = tiny_run
    observations = read_table(root / "observations.parquet", "observations")
    cells = read_table(root / "cells.parquet", "cells")
    assert (cells["status"] == "ok").all(), cells["reason"].tolist()
    [found] = precision_answers(observations, cells)
    assert found.system == "pytorch" and found.seeds == SEEDS
    assert found.answer.outcome is not Outcome.MISSED_TARGET  # fp32 learned
    change = observations[observations["metric"] == "accuracy_change_vs_fp32"]["value"]
    assert found.reduced_mean - found.fp32_mean == pytest.approx(change.mean())


@pytest.mark.slow
def test_the_precision_page_and_the_home_page_show_the_accuracy_change(tiny_run, built):
    from dlbench.report.verdicts.precision_answers import precision_answers

    _, root = tiny_run
    [found] = precision_answers(read_table(root / "observations.parquet", "observations"),
                                read_table(root / "cells.parquet", "cells"))
    home, precision = built
    decision = found.answer.outcome.value
    assert "Does reduced precision cost accuracy?" in precision
    row = re.search(r"PyTorch bf16 3 (\d\.\d{3}) (\d\.\d{3}) ([+-]\d+\.\d) ", precision)
    assert row, precision[:3000]
    assert float(row.group(1)) == pytest.approx(found.fp32_mean, abs=5e-4)
    assert float(row.group(2)) == pytest.approx(found.reduced_mean, abs=5e-4)
    assert f"bf16 {decision} in PyTorch" in precision
    ask = "Does half precision (BF16) train faster, use less memory or lose accuracy against FP32?"
    founding = home.split(ask, 1)[1].split("Does FP16 train faster than FP32?", 1)[0]
    assert f"bf16 {decision} in PyTorch" in founding
    assert "Not measured in this release" not in founding
