"""The verdict rule (dlbench/core/judging/decisions.py), the looks
(dlbench/core/judging/verdict_engine.py) and the calibration (dlbench/core/judging/calibration.py):
each outcome, and the error rate by simulation."""

import math

import numpy as np
import pytest

from dlbench.core.judging.calibration import false_winner_rate, power, simulate
from dlbench.core.judging.decisions import (decide_family, detectable_ratio, holm_levels, pair_test,
                                            processes_needed)
from dlbench.core.judging.outcomes import Outcome
from dlbench.core.declarations.metrics import Direction
from dlbench.core.judging.sequential import (SUITE_DESIGNS, Design, design_from_policy, single_look,
                                             three_looks, two_looks)
from dlbench.core.judging.verdict_engine import Sample, decide_sequential, look_reached


def spread(centre: float, n: int, sd: float, seed: int) -> np.ndarray:
    """n positive values around `centre` with a log spread of `sd`."""
    return centre * np.exp(np.random.default_rng(seed).normal(0, sd, n))


def decide_one(a, b, threshold=0.05, alpha=0.05, direction=Direction.LOWER):
    return decide_family([pair_test(a, b)], direction, threshold, alpha)[0]


def test_a_clear_gap_names_the_faster_side_with_an_interval_beyond_the_threshold():
    decision = decide_one(spread(1.0, 6, 0.02, 1), spread(2.0, 6, 0.02, 2))
    assert decision.decision is Outcome.A_BETTER
    assert decision.ci_high < 1 / 1.05  # A is at least 5% lower, with the whole interval
    assert decide_one(spread(2.0, 6, 0.02, 1), spread(1.0, 6, 0.02, 2)).decision \
        is Outcome.B_BETTER


def test_higher_is_better_names_the_higher_side():
    decision = decide_one(spread(2.0, 6, 0.02, 1), spread(1.0, 6, 0.02, 2),
                          direction=Direction.HIGHER)
    assert decision.decision is Outcome.A_BETTER


def test_a_significant_gap_inside_the_threshold_is_not_a_winner():
    # 3% apart with almost no spread: significant as a difference, not beyond 5%
    decision = decide_one(spread(1.0, 6, 0.002, 1), spread(1.03, 6, 0.002, 2))
    assert pair_test(spread(1.0, 6, 0.002, 1), spread(1.03, 6, 0.002, 2)).p_value < 1e-6
    assert decision.decision is Outcome.NO_MEANINGFUL_DIFFERENCE
    assert 1 / 1.05 <= decision.ci_low and decision.ci_high <= 1.05


def test_a_noisy_gap_is_undecided_and_says_how_many_processes_would_decide_it():
    decision = decide_one(spread(1.0, 3, 0.3, 1), spread(1.4, 3, 0.3, 2))
    assert decision.decision is Outcome.UNDECIDED
    assert "processes cannot tell" in decision.reason
    needed = processes_needed(decision.test, 0.05, decision.alpha)
    assert needed is not None and needed > 3


def test_a_larger_threshold_turns_a_winner_into_undecided():
    a, b = spread(1.0, 3, 0.03, 1), spread(1.15, 3, 0.03, 2)
    assert decide_one(a, b, threshold=0.05).decision is Outcome.A_BETTER
    assert decide_one(a, b, threshold=0.30).decision is not Outcome.A_BETTER


@pytest.mark.parametrize("a, b, words", [
    ([1.0], [2.0, 2.1], "1 process on a side"),
    ([0.97] * 3, [0.95] * 3, "deterministic rerun"),
    ([0.0, 0.1, 0.2], [1.0, 1.1, 1.2], "zero or negative"),
])
def test_untestable_pairs_are_inconclusive_with_the_reason(a, b, words):
    decision = decide_one(a, b)
    assert decision.decision is Outcome.INCONCLUSIVE and words in decision.reason


def test_holm_steps_down_and_stops_at_the_first_pair_it_keeps():
    rejected, levels, adjusted = holm_levels([0.001, 0.06, 0.02], 0.05)
    assert rejected == [True, False, True]  # 0.001 < 0.05/3, 0.02 < 0.05/2, 0.06 >= 0.05
    assert levels == [0.05 / 3, 0.05, 0.05 / 2]
    assert adjusted == pytest.approx([0.003, 0.06, 0.04])  # monotone: max(0.04, 1 x 0.06)
    rejected, levels, _ = holm_levels([0.03, 0.001, 0.04], 0.05)
    assert rejected == [False, True, False] and levels[0] == levels[2] == 0.05 / 2


def test_a_winner_is_exactly_a_pair_whose_printed_interval_is_beyond_the_threshold():
    rng = np.random.default_rng(7)
    for _ in range(200):
        tests = [pair_test(spread(1.0, 3, 0.1, rng.integers(1e9)),
                           spread(rng.uniform(1, 2), 3, 0.1, rng.integers(1e9)))
                 for _ in range(3)]
        for decision in decide_family(tests, Direction.LOWER, 0.05, 0.05):
            beyond = decision.ci_high < 1 / 1.05 or decision.ci_low > 1.05
            assert (decision.decision in (Outcome.A_BETTER, Outcome.B_BETTER)) == beyond


def samples(values: np.ndarray) -> Sample:
    return Sample(np.arange(len(values)), np.asarray(values, float))


def test_the_second_look_decides_a_pair_the_first_could_not():
    design = two_looks(3, 6)
    a, b = spread(1.0, 6, 0.1, 11), spread(1.4, 6, 0.1, 111)
    at_first = decide_sequential([(samples(a[:3]), samples(b[:3]))], Direction.LOWER, 0.05,
                                 design)[0]
    both = decide_sequential([(samples(a), samples(b))], Direction.LOWER, 0.05, design)[0]
    assert at_first.decision is Outcome.UNDECIDED and at_first.look == 1
    assert both.decision is Outcome.A_BETTER and both.look == 2
    assert both.alpha == 0.0294  # Pocock's level of the second look, one pair open


def test_a_pair_decided_at_the_first_look_is_judged_again_on_every_later_process():
    design = two_looks(3, 6)
    a, b = spread(1.0, 6, 0.01, 3), spread(2.0, 6, 0.01, 4)
    decision = decide_sequential([(samples(a), samples(b))], Direction.LOWER, 0.05, design)[0]
    assert decision.decision is Outcome.A_BETTER and decision.look == 2
    assert decision.test.n_a == decision.test.n_b == 6  # every process, not the first look's


def test_later_processes_overturn_a_first_look_winner():
    """2027.04's AMD EPYC run: PyTorch against Keras on TensorFlow, ResNet-50 training steps
    (steady epoch time, s). On the first three processes a side the rule named PyTorch 2.41x
    faster; the cells' five processes say otherwise, and Keras on TensorFlow's split in two."""
    torch_side = [7.09, 7.31, 6.96, 6.88, 7.12]
    keras_tf = [17.6, 16.9, 17.2, 6.66, 6.42]
    design = two_looks(3, 5)
    first = decide_sequential([(samples(torch_side[:3]), samples(keras_tf[:3]))],
                              Direction.LOWER, 0.05, design)[0]
    every = decide_sequential([(samples(torch_side), samples(keras_tf))], Direction.LOWER,
                              0.05, design)[0]
    assert first.decision is Outcome.A_BETTER and first.look == 1
    assert every.decision is Outcome.UNDECIDED and every.look == 2
    assert "the second side's processes split into two clusters (2 at 6.42-6.66, 3 at " \
        "16.9-17.6" in every.reason


def test_a_look_s_level_follows_the_processes_a_pair_holds():
    design = two_looks(3, 5)
    three, five = samples(np.ones(3)), samples(np.ones(5))
    uneven = Sample(np.array([0, 1, 2, 4]), np.ones(4))  # process 3 failed, 4 ran
    assert look_reached(three, three, design) == 0
    assert look_reached(three, five, design) == 1
    assert look_reached(uneven, three, design) == 1
    assert look_reached(samples(np.ones(9)), three, design) == 1  # beyond the last look


def test_a_split_side_withholds_a_decision_that_one_of_its_clusters_would_reverse():
    steady = spread(1.0, 10, 0.01, 5)
    split = np.concatenate([spread(1.5, 8, 0.01, 7), spread(0.95, 2, 0.01, 8)])
    whole = decide_family([pair_test(steady, split)], Direction.LOWER, 0.05, 0.05)[0]
    withheld = decide_sequential([(samples(steady), samples(split))], Direction.LOWER, 0.05,
                                 single_look(10))[0]
    assert whole.decision is Outcome.A_BETTER  # Welch's t on the whole split side
    assert withheld.decision is Outcome.UNDECIDED  # its fast cluster (0.95) beats 1.0
    assert withheld.reason.startswith("the second side's processes split into two clusters "
                                      "(2 at ")


def test_a_lead_that_every_cluster_keeps_is_decided():
    far = spread(0.1, 6, 0.01, 9)
    split = np.concatenate([spread(0.9, 3, 0.01, 7), spread(1.6, 3, 0.01, 8)])
    decision = decide_sequential([(samples(far), samples(split))], Direction.LOWER, 0.05,
                                 single_look(6))[0]
    assert decision.decision is Outcome.A_BETTER and not decision.reason


def test_a_tie_with_a_split_side_is_no_tie():
    steady = spread(1.0, 6, 0.01, 5)
    tied = decide_sequential([(samples(steady), samples(steady * 1.001))], Direction.LOWER,
                             0.2, single_look(6))[0]
    assert tied.decision is Outcome.NO_MEANINGFUL_DIFFERENCE
    split = np.concatenate([spread(0.95, 5, 0.001, 7), spread(1.25, 5, 0.001, 8)])
    near = decide_sequential([(samples(split), samples(split * 1.001))], Direction.LOWER, 0.2,
                             single_look(10))[0]
    assert near.decision is Outcome.UNDECIDED and "split" in near.reason


def test_a_paired_metric_is_never_withheld_as_split():
    """Accuracy at the same seed is tested paired: seeds that land in two clusters move both
    sides alike, which the paired test already carries."""
    seeds = np.array([0.6, 0.62, 0.61, 0.9, 0.91, 0.92])
    decision = decide_sequential([(samples(seeds * 1.05), samples(seeds))], Direction.HIGHER,
                                 0.0, single_look(6), paired=True)[0]
    assert decision.decision is Outcome.A_BETTER


def test_designs_come_from_the_run_policy_and_older_runs_had_one_look():
    assert design_from_policy(None) == single_look(1)
    assert design_from_policy({"processes_per_cell": 3}) == Design((3,), (0.05,))
    recorded = {"design": {"looks": [3, 6], "alphas": [0.0294, 0.0294]}}
    assert design_from_policy(recorded) == two_looks(3, 6)
    with pytest.raises(ValueError):
        Design((6, 3), (0.03, 0.03))


@pytest.mark.parametrize("design", [single_look(3), two_looks(3, 6), SUITE_DESIGNS["standard"],
                                    SUITE_DESIGNS["full"]])
@pytest.mark.parametrize("contenders", [2, 5])
def test_false_winners_stay_under_five_percent_at_observed_spreads(design, contenders):
    # 2027.01's process spreads ran from about 0.01 to 0.3 on the log scale
    for sd in (0.02, 0.1, 0.3):
        rate = false_winner_rate(np.full(contenders, sd), design, 0.05, replications=3000)
        assert rate <= 0.05


def test_power_grows_with_the_ratio_and_with_the_second_look():
    sds = np.full(3, 0.1)
    low, high = power(sds, 1.25, two_looks(3, 6), 0.05, 2000), power(sds, 2.0, two_looks(3, 6),
                                                                     0.05, 2000)
    assert low[1] > low[0] and high[1] >= high[0] and high[1] > low[1]
    assert high[1] > 0.9


def test_the_simulation_matches_the_engine_on_the_same_draws():
    """The vectorised calibration applies the same rule as decide_sequential."""
    rng = np.random.default_rng(5)
    design, sds = two_looks(3, 6), np.array([0.1, 0.1])
    named = 0
    replications = 300
    for _ in range(replications):
        x = np.exp(rng.normal(np.log([1.0, 1.15])[:, None], sds[:, None], (2, 6)))
        first = decide_sequential([(samples(x[0, :3]), samples(x[1, :3]))], Direction.LOWER,
                                  0.05, design)[0]
        counts = 6 if first.decision is Outcome.UNDECIDED else 3
        logs = np.log(x[:, :counts]).mean(axis=1)  # the leader by geometric mean
        best, other = (0, 1) if logs[0] <= logs[1] else (1, 0)
        final = decide_sequential([(samples(x[best, :counts]), samples(x[other, :counts]))],
                                  Direction.LOWER, 0.05, design)[0]
        named += final.decision is Outcome.A_BETTER and best == 0
    engine_rate = named / replications
    simulated = simulate(sds, np.log([1.0, 1.15]), design, 0.05, 4000).true_winner_rate
    assert abs(engine_rate - simulated) < 0.08


def test_detectable_ratio_shrinks_with_more_processes():
    three, ten = detectable_ratio(0.1, 3), detectable_ratio(0.1, 10)
    assert 1 < ten < three and math.isnan(detectable_ratio(0.1, 1))


def test_the_third_look_decides_a_pair_the_second_could_not():
    design = three_looks(3, 6, 12)
    a, b = spread(1.0, 12, 0.15, 21), spread(1.3, 12, 0.15, 22)
    second = decide_sequential([(samples(a[:6]), samples(b[:6]))], Direction.LOWER, 0.05,
                               design)[0]
    third = decide_sequential([(samples(a), samples(b))], Direction.LOWER, 0.05, design)[0]
    assert second.decision is Outcome.UNDECIDED
    assert third.decision is Outcome.A_BETTER and third.look == 3
    assert third.alpha == 0.0221  # Pocock's level for three looks


def test_accuracy_paired_by_seed_decides_what_unpaired_cannot():
    # each seed moves both systems alike (spread 5%); A is 3% better on every seed
    seeds = spread(0.9, 6, 0.05, 31)
    a, b = seeds * 1.03 * np.exp(np.random.default_rng(32).normal(0, 0.001, 6)), seeds
    unpaired = decide_sequential([(samples(a), samples(b))], Direction.HIGHER, 0.0,
                                 single_look(6))[0]
    paired = decide_sequential([(samples(a), samples(b))], Direction.HIGHER, 0.0,
                               single_look(6), paired=True)[0]
    assert unpaired.decision is Outcome.UNDECIDED and not unpaired.test.paired
    assert paired.decision is Outcome.A_BETTER and paired.test.paired
    assert paired.test.df == 5


def test_a_paired_test_uses_only_the_seeds_both_sides_have():
    a = Sample(np.array([0, 1, 2, 3]), np.array([1.0, 1.1, 1.2, 1.3]))
    b = Sample(np.array([1, 2, 3, 4]), np.array([1.2, 1.3, 1.4, 9.0]))
    decision = decide_sequential([(a, b)], Direction.LOWER, 0.05, single_look(4), True)[0]
    assert decision.test.n_a == decision.test.n_b == 3 and decision.test.paired
    with pytest.raises(ValueError, match="one value per seed"):
        pair_test([1.0, 2.0], [1.0, 2.0, 3.0], paired=True)


def test_the_simulation_s_holm_is_holm_levels_row_by_row():
    from dlbench.core.judging.calibration import _holm

    rng = np.random.default_rng(9)
    p = rng.uniform(0, 0.08, (300, 4))
    p[rng.uniform(size=p.shape) < 0.3] = np.inf  # pairs outside a row's family
    rejected, levels = _holm(p, 0.05)
    for row in range(p.shape[0]):
        family = np.flatnonzero(np.isfinite(p[row]))
        passed, at, _ = holm_levels(list(p[row, family]), 0.05)
        assert list(rejected[row, family]) == passed
        assert levels[row, family] == pytest.approx(at)


def _undecided_precision_cells(environment: dict) -> set[str]:
    """The cells a later look would top up for one close fp32-against-bf16 pair."""
    from tests.judging_fixtures import noisy, tables

    from dlbench.core.judging.verdict_engine import QUESTIONS, undecided_cells

    cells = [{"system": "pytorch", "experiment": "precision", "precision": precision,
              "values": {"steady_epoch_time": noisy(time, seed, n=3, spread=0.2)}}
             for seed, (precision, time) in enumerate({"fp32": 1.0, "bf16": 1.1}.items())]
    observations, cell_table = tables(cells)
    return undecided_cells(observations, cell_table, None, three_looks(3, 6, 12), QUESTIONS,
                           {"r1": environment})


def test_a_look_tops_up_a_precision_pair_only_where_the_cpu_has_units_for_it():
    with_units = _undecided_precision_cells({"cpu": {"avx512_bf16": True}, "gpus": []})
    without = _undecided_precision_cells({"cpu": {"avx512_bf16": False}, "gpus": []})
    assert sorted(c.split(":")[3].split("-")[0] for c in with_units) == ["bf16", "fp32"]
    assert without == set()
