"""The A/A controls' count on the home page: false winners, twins shown alike, and twins whose
machine was too noisy to separate the threshold, each counted."""

from __future__ import annotations

from dlbench.core.judging.decisions import judge_pair
from dlbench.core.declarations.metrics import Direction
from dlbench.core.judging.verdict_engine import Control
from dlbench.report.verdicts.verdict_table import controls_summary


def control(a: list[float], b: list[float]) -> Control:
    return Control("r1", "inference", "inference_latency", "c", "c-aa", False,
                   judge_pair(a, b, Direction.LOWER))


def test_each_outcome_of_an_a_a_control_is_counted():
    alike = control([1.0, 1.001, 0.999, 1.0], [1.0, 1.002, 0.998, 1.001])
    noisy = control([1.0, 1.4, 0.7, 1.1], [1.0, 1.5, 0.8, 1.2])
    false_winner = control([1.0, 1.001, 0.999], [2.0, 2.001, 1.999])
    summary = controls_summary([alike, noisy, false_winner])
    assert (summary["total"], summary["named"], summary["alike"], summary["too_noisy"]) == \
        (3, 1, 1, 1)
    assert controls_summary([]) is None
