"""Every suite's plan stays what it was: restructuring the code must not change what is
measured (cell IDs, config IDs, processes per cell)."""

from __future__ import annotations

import json

from tests.data.make_plan_ids import SNAPSHOT, suite_plans


def test_every_suite_plans_the_cells_of_the_snapshot():
    expected = json.loads(SNAPSHOT.read_text())
    planned = suite_plans()
    assert sorted(planned) == sorted(expected)
    for key, cells in expected.items():
        assert planned[key] == cells, f"{key}: the plan changed"


def test_the_snapshot_covers_every_experiment():
    experiments = {cell_id.split(":")[0] for cells in json.loads(SNAPSHOT.read_text()).values()
                   for cell_id, _, _ in cells}
    from dlbench.runner.driver.plan.experiments import experiment_names

    assert experiments == set(experiment_names())
