"""Adaptive repeats: measure until the key metric's confidence interval is tight enough.

A cell runs at least `spec.repeats` repeats and, where its grid asks for it
(params `max_repeats`, `target_ci`), more until the 95% CI of the key metric's median has a
relative half-width at or below the target, or the cap is reached. The decision is recorded.
"""

from __future__ import annotations

from collections.abc import Callable

from dlbench.stats import RepeatDecision, repeat_decision
from runner.outcome import Observation
from runner.spec import CellSpec

DEFAULT_TARGET_CI = 0.05


def adaptive_repeats(spec: CellSpec, measure_one: Callable[[int], list[Observation]],
                     key_metric: str) -> tuple[list[Observation], RepeatDecision]:
    """Call `measure_one(repeat)` until the stopping rule says enough; return all observations."""
    max_repeats = max(spec.repeats, int(spec.params.get("max_repeats", spec.repeats)))
    target = float(spec.params.get("target_ci", DEFAULT_TARGET_CI))
    observations: list[Observation] = []
    key_values: list[float] = []
    repeat = 0
    while True:
        new = measure_one(repeat)
        observations += new
        key_values += [o.value for o in new if o.metric == key_metric and o.step is None]
        repeat += 1
        decision = repeat_decision(key_values, target, max_repeats,
                                   min_repeats=min(spec.repeats, max_repeats))
        if not decision.more:
            return observations, decision


def decision_details(decision: RepeatDecision, key_metric: str) -> dict:
    """The stopping decision as it is stored with the cell."""
    return {
        "repeats": {
            "key_metric": key_metric,
            "done": decision.n,
            "stopped_because": decision.reason.value,
            "relative_half_width": decision.relative_half_width,
            "target_relative_half_width": decision.target_relative_half_width,
        }
    }
