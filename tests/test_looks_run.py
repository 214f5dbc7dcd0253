"""The verdict design end to end on a tiny real run: an A/A control measured beside its
twin, the first look judged, undecided pairs topped up in recorded second and third looks;
a resumed run keeps the design it recorded."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.sequential import SUITE_DESIGNS, three_looks, two_looks
from dlbench.core.storage.tables import read_table
from dlbench.core.judging.verdict_engine import judge_controls, repeat_rows
from dlbench.runner.driver.commands.looks import next_look, with_recorded_looks
from dlbench.runner.driver.plan.request import RunRequest
from dlbench.runner.driver.commands.run import recorded_design, run_cells
from dlbench.runner.driver.store.run_store import RunStore
from tests.test_processes_run import tiny

REQUEST = RunRequest(suite="standard", experiments=["training"], workloads=["mlp-digits"],
                     frameworks=["pytorch"], device="cpu", repeats=None, threads=1,
                     timeout_s=None, data_dir="")


def test_recorded_looks_give_their_cells_the_look_s_processes():
    cells = [tiny(32, repeats=3), tiny(64, repeats=3)]
    info = {"looks": [{"look": 2, "processes": 6, "cells": [cells[1].cell_id]}]}
    assert [c.repeats for c in with_recorded_looks(cells, info)] == [3, 6]
    assert next_look({}) == 1 and next_look(info) == 2


def test_a_resumed_run_keeps_the_design_it_recorded():
    recorded = {"processes_policy": {"design": two_looks(3, 6).record()}}
    assert recorded_design(recorded, REQUEST) == two_looks(3, 6)
    assert recorded_design({}, REQUEST) == SUITE_DESIGNS["standard"]
    assert SUITE_DESIGNS["standard"] == three_looks(3, 6, 12)


@pytest.mark.slow
def test_an_a_a_control_is_judged_and_undecided_pairs_get_the_later_looks(tmp_path,
                                                                         monkeypatch):
    # Other tests run beside this one (pytest -n auto): their load would flag every process
    # busy and leave it out of the verdicts. The busy rule has tests of its own.
    import dlbench.runner.driver.plan.repeats
    import dlbench.runner.driver.launch.execute

    assess = dlbench.runner.driver.launch.execute.assess
    monkeypatch.setattr(dlbench.runner.driver.launch.execute, "assess",
                        lambda *args, **kwargs: assess(*args, **kwargs) | {"busy": []})
    design = three_looks(3, 4, 5)  # the standard suite's three looks, one process a step
    monkeypatch.setattr(dlbench.runner.driver.plan.repeats, "design_for", lambda suite, override=None: design)
    cell = tiny(32, repeats=3)
    cells = [cell, replace(cell, control="aa")]
    store = RunStore(tmp_path / "runs" / "looks")
    store.root.mkdir(parents=True)
    run_cells(store, REQUEST, "cpu", cells, progress=False, busy_retries=0, seed=3)
    info = json.loads((store.root / "run.json").read_text())
    assert info["processes_policy"]["design"] == {"looks": [3, 4, 5], "alphas": [0.0221] * 3}
    look, *third = info["looks"]
    assert look["look"] == 2 and look["processes"] == 4
    assert set(look["cells"]) <= {c.cell_id for c in cells}
    last = set()
    if third:  # recorded only after the second look topped some cells up
        assert look["cells"] and third[0]["look"] == 3 and third[0]["processes"] == 5
        last = set(third[0]["cells"])
        assert last <= set(look["cells"])  # only what is still undecided
    processes = read_table(store.root / "processes.parquet", "processes")
    counts = processes.groupby("cell_id")["repeat"].nunique().to_dict()
    for c in cells:
        assert counts[c.cell_id] == (5 if c.cell_id in last else
                                     4 if c.cell_id in look["cells"] else 3)
    observations = read_table(store.root / "observations.parquet", "observations")
    cells_table = read_table(store.root / "cells.parquet", "cells")
    controls = judge_controls(repeat_rows(observations, cells_table, processes), cells_table,
                              design)
    epoch = [c for c in controls if c.metric == "steady_epoch_time"]
    assert len(epoch) == 1 and epoch[0].cell_b.endswith("-aa:cpu")
    assert not epoch[0].named_winner  # one configuration: never a winner
    if look["cells"]:  # the undecided A/A pair was judged again on its topped-up processes
        assert epoch[0].judgement.look >= 2 or epoch[0].judgement.decision is not \
            Outcome.UNDECIDED
