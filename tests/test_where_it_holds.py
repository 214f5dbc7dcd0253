"""The cross-machine rule (dlbench/core/judging/where_it_holds.py), one test per outcome, on
synthetic per-machine answers."""

from __future__ import annotations

import math

from dlbench.core.judging.outcomes import Outcome
from dlbench.core.judging.where_it_holds import Lead, MachineAnswer, lead_range, where_it_holds

AMX, AVX512, AVX2 = "Intel Xeon, AMX", "AMD EPYC, AVX-512 BF16", "AMD EPYC, AVX2"


def won(machine: str, winner: str, lead: Lead, other: str = "keras-tensorflow",
        threshold: float = 0.05) -> MachineAnswer:
    return MachineAnswer(machine, Outcome.WINNER, winner, winner, {other: lead}, threshold)


def test_one_machine_is_too_few_to_say_where_an_answer_holds():
    reading = where_it_holds([won(AVX2, "pytorch", Lead(5.9, 5.0, 7.0))])
    assert reading.holds is Outcome.ONE_MACHINE and reading.winner == "pytorch"


def test_a_machine_that_could_not_measure_does_not_count_as_a_second_machine():
    reading = where_it_holds([won(AVX2, "pytorch", Lead(5.9, 5.0, 7.0)),
                              MachineAnswer(AMX, Outcome.NOT_MEASURABLE, "")])
    assert reading.holds is Outcome.ONE_MACHINE
    assert [a.machine for a in reading.not_answered] == [AMX]


def test_the_same_winner_with_alike_leads_holds_everywhere():
    reading = where_it_holds([won(AVX2, "pytorch", Lead(1.6, 1.3, 2.0)),
                              won(AVX512, "pytorch", Lead(1.5, 1.2, 1.9)),
                              won(AMX, "pytorch", Lead(2.1, 1.7, 2.6))])
    assert reading.holds is Outcome.EVERYWHERE and reading.winner == "pytorch"
    assert lead_range(reading) == (1.5, 2.1)


def test_a_lead_whose_size_differs_beyond_noise_makes_the_margin_depend_on_the_machine():
    reading = where_it_holds([won(AVX2, "pytorch", Lead(5.9, 5.2, 6.7)),
                              won(AVX512, "pytorch", Lead(1.5, 1.3, 1.8))])
    assert reading.holds is Outcome.MARGIN_DEPENDS
    assert reading.margin_against == "keras-tensorflow" and reading.winner == "pytorch"


def test_disjoint_intervals_within_the_threshold_are_not_a_different_margin():
    # intervals apart, but 1.10x against 1.12x is within a 5% threshold of each other
    reading = where_it_holds([won(AVX2, "pytorch", Lead(1.10, 1.095, 1.105)),
                              won(AVX512, "pytorch", Lead(1.12, 1.115, 1.125))])
    assert reading.holds is Outcome.EVERYWHERE


def test_different_decided_winners_make_the_winner_depend_on_the_machine():
    reading = where_it_holds([won(AVX2, "pytorch", Lead(1.6, 1.3, 2.0), "tensorflow"),
                              won(AMX, "tensorflow", Lead(1.4, 1.2, 1.7), "pytorch")])
    assert reading.holds is Outcome.WINNER_DEPENDS and reading.winner == ""


def test_a_winner_on_some_machines_and_undecided_on_others_holds_where_decided():
    reading = where_it_holds([won(AVX2, "pytorch", Lead(1.6, 1.3, 2.0)),
                              MachineAnswer(AMX, Outcome.INCONCLUSIVE, "pytorch", "",
                                            {"keras-tensorflow": Lead(1.2, 0.9, 1.6)})])
    assert reading.holds is Outcome.WHERE_DECIDED and reading.winner == "pytorch"
    assert lead_range(reading) == (1.6, 1.6)


def test_no_meaningful_difference_on_every_machine():
    reading = where_it_holds([MachineAnswer(AVX2, Outcome.NO_MEANINGFUL_DIFFERENCE, "jax"),
                              MachineAnswer(AMX, Outcome.NO_MEANINGFUL_DIFFERENCE, "pytorch")])
    assert reading.holds is Outcome.NO_DIFFERENCE_EVERYWHERE
    assert lead_range(reading) is None


def test_machines_that_all_fail_to_decide_decide_nowhere():
    reading = where_it_holds([MachineAnswer(AVX2, Outcome.INCONCLUSIVE, "pytorch"),
                              MachineAnswer(AMX, Outcome.NO_MEANINGFUL_DIFFERENCE, "pytorch")])
    assert reading.holds is Outcome.DECIDED_NOWHERE


def test_a_lead_without_a_ratio_never_decides_a_margin():
    reading = where_it_holds([won(AVX2, "pytorch", Lead(math.nan, math.nan, math.nan)),
                              won(AMX, "pytorch", Lead(1.5, 1.3, 1.8))])
    assert reading.holds is Outcome.EVERYWHERE


def replicate(kind: str, run: int, answer: MachineAnswer) -> MachineAnswer:
    """`answer` as run `run` of machine kind `kind`."""
    return MachineAnswer(f"{kind} (run {run})", answer.outcome, answer.best, answer.winner,
                         answer.leads, answer.threshold, kind)


def test_two_runs_of_one_kind_are_one_kind_and_its_replication():
    reading = where_it_holds([replicate(AMX, 1, won(AMX, "pytorch", Lead(1.6, 1.3, 2.0))),
                              replicate(AMX, 2, won(AMX, "pytorch", Lead(1.4, 1.2, 1.7)))])
    assert reading.holds is Outcome.ONE_MACHINE  # one kind: too few kinds to say
    assert [a.machine for a in reading.answers] == [AMX]
    assert reading.replicated == ((AMX, True),)
    assert reading.answers[0].leads["keras-tensorflow"].low == 1.2  # the hull of the two
    assert reading.answers[0].leads["keras-tensorflow"].high == 2.0


def test_runs_of_one_kind_that_disagree_decide_nothing_on_that_kind():
    """Two runs of the Intel kind naming different winners are run-to-run noise, not a
    winner that depends on the machine."""
    reading = where_it_holds([
        replicate(AMX, 1, won(AMX, "pytorch", Lead(1.3, 1.1, 1.5), "tensorflow")),
        replicate(AMX, 2, won(AMX, "tensorflow", Lead(1.2, 1.1, 1.4), "pytorch")),
        won(AVX512, "pytorch", Lead(1.4, 1.2, 1.6), "tensorflow")])
    assert reading.holds is Outcome.WHERE_DECIDED and reading.winner == "pytorch"
    assert [(a.machine, a.outcome) for a in reading.answered] == [(AMX, Outcome.INCONCLUSIVE),
                                                                  (AVX512, Outcome.WINNER)]
    assert reading.replicated == ((AMX, False),)


def test_a_margin_is_compared_between_kinds_that_decided_even_where_a_third_did_not():
    reading = where_it_holds([won(AMX, "pytorch", Lead(2.41, 2.21, 2.62)),
                              won(AVX512, "pytorch", Lead(1.26, 1.07, 1.48)),
                              MachineAnswer(AVX2, Outcome.INCONCLUSIVE, "pytorch")])
    assert reading.holds is Outcome.WHERE_DECIDED
    assert reading.margin_against == "keras-tensorflow"
