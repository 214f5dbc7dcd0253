"""Whether a cell's processes each ran a seed of their own (dlbench/core/judging/seeds.py), from the
seeds the runner records or, for cells measured before that record, the protocol's words;
and what it changes in a paired test (dlbench/core/judging/decisions.py)."""

import json

import pandas as pd
import pytest

from dlbench.core.judging.decisions import IDENTICAL_REPEATS, pair_test
from dlbench.core.judging.seeds import PER_PROCESS_SEEDS, cells_with_own_seeds


def cells(*rows: tuple[str, dict, dict]) -> pd.DataFrame:
    return pd.DataFrame([{"cell_id": cell_id, "details_json": json.dumps(details),
                          "fairness_json": json.dumps(fairness)}
                         for cell_id, details, fairness in rows])


@pytest.mark.parametrize(("seeds", "own"), [
    ([7, 8, 9], True),
    ([7, 7, 7], False),  # one seed rerun three times
    ([7, 8, 7], False),  # a seed repeated: not every process its own
    ([None, None], False),  # a workload the catalog does not declare
    ([7], False),  # one process: nothing to compare its seed with
])
def test_recorded_seeds_say_whether_each_process_ran_its_own(seeds, own):
    table = cells(("a", {"processes": {"seeds": seeds}}, {}))
    assert cells_with_own_seeds(table) == ({"a"} if own else set())


def test_without_recorded_seeds_the_protocol_s_words_decide():
    table = cells(("2027.02", {"processes": {"ok": 3}},
                   {"notes": f"SGD lr=0.1; {PER_PROCESS_SEEDS}; 2 epochs"}),
                  ("2027.01", {"processes": {"ok": 3}},
                   {"notes": "SGD lr=0.1; same initial weights and epoch order"}),
                  ("no manifest", {}, {}))
    assert cells_with_own_seeds(table) == {"2027.02"}


def test_recorded_seeds_outrank_the_protocol_s_words():
    table = cells(("a", {"processes": {"seeds": [3, 3]}}, {"notes": PER_PROCESS_SEEDS}))
    assert cells_with_own_seeds(table) == set()


def test_a_cells_table_without_manifests_has_no_cell_with_own_seeds():
    assert cells_with_own_seeds(pd.DataFrame({"cell_id": ["a"]})) == set()


def test_identical_values_are_exact_only_paired_across_own_seeds():
    same, other = [1.0, 1.0, 1.0], [0.9, 0.9, 0.9]
    assert pair_test(same, other, paired=True).note == IDENTICAL_REPEATS
    assert pair_test(same, other, own_seeds=True).note == IDENTICAL_REPEATS  # not paired
    exact = pair_test(same, other, paired=True, own_seeds=True)
    assert exact.testable and exact.standard_error == 0
    assert exact.ratio == pytest.approx(1 / 0.9)
    varying = pair_test(same, [0.9, 1.0, 0.8], paired=True, own_seeds=True)
    assert varying.testable and varying.standard_error > 0 and varying.df == 2
